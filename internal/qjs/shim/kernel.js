// The kernel of a sandbox: the glue of a run and of an executor's session.
// It runs once per VM, in the snapshot, before any user code, as a global
// script whose value is the kernel object the shim keeps and the host calls
// (internal/qjs/shim/kernel.c). It
//
//   - readies a run: decodes its arguments, globals and bridged modules,
//     which the native globals module hands to the program, and selects the
//     entry module's export once the shim has evaluated it;
//   - defines a session's tools and values, and its console;
//   - captures the intrinsics it uses ("primordials"), so that a program
//     that later tampers with prototypes cannot redirect it.
//
// Everything else is the shim's, in C, with no JavaScript on the way: the
// realm's hardening (realm.c), host calls and their replies (hostcall.c),
// the value codec (codec.c), the outcome told to the host with its texts
// cut (failure.c), the console (console.c). The kernel takes the shim's
// hooks from the global object and removes them; it names no operation of
// the host's.
(function () {
  "use strict";
  const g = globalThis;
  const take = (name) => {
    const v = g[name];
    delete g[name];
    return v;
  };
  // decode(text) is the value of wire text from the host (hostcall.c).
  const decode = take("__airlock_decode");
  // makeHostFunction(id, name, json, shown) makes host function id: json,
  // its arguments cross as JSON text; shown, they are shown or stored
  // (report, final_answer), their functions and symbols dropped.
  const makeHostFunction = take("__airlock_hostfn");
  // jobsPending() reports whether a job (a promise reaction, a
  // queueMicrotask callback) is queued.
  const jobsPending = take("__airlock_pending");
  // done(value) tells the host the run's value; linkFailed(e), failed(e)
  // and exportMissing(e) what it threw, before any module body ran, while
  // running, or that the selected export does not exist (failure.c).
  const done = take("__airlock_done");
  const linkFailed = take("__airlock_linkFailed");
  const failed = take("__airlock_failed");
  const exportMissing = take("__airlock_exportMissing");
  // The capturing console (console.c).
  const capturingConsole = take("__airlock_console");

  const ObjectDefineProperty = Object.defineProperty;
  const { freeze: ObjectFreeze, isFrozen: ObjectIsFrozen, keys: ObjectKeys, setPrototypeOf: ObjectSetPrototypeOf,
    getOwnPropertyDescriptor: ObjectGetOwnPropertyDescriptor } = Object;
  const { apply: ReflectApply, has: ReflectHas } = Reflect;
  const FunctionPrototypeBind = Function.prototype.bind;
  const JSONParse = JSON.parse;
  const TypeErrorCtor = TypeError;
  const ReferenceErrorCtor = ReferenceError;
  const PromiseCtor = Promise;
  const PromiseThen = Promise.prototype.then;
  const then = (p, f, r) => ReflectApply(PromiseThen, p, [f, r]);
  const MapCtor = Map;
  const MapGet = Map.prototype.get, MapSet = Map.prototype.set;

  // Arrays with no prototype: element writes cannot meet setters that user
  // code placed on Array.prototype or Object.prototype.
  const mk = () => ObjectSetPrototypeOf([], null);

  // The built-in report as host function 0, what decoding its usual wire
  // text makes, made once with the kernel: the global text "R" stands for
  // it (see start), and a run pays nothing to decode it.
  const builtinReport = makeHostFunction(0, "", false, true);

  const isRaw = (v) => {
    const t = typeof v;
    return t === "string" || t === "number" || t === "boolean" || t === "undefined" || v === null;
  };

  // deepFreeze freezes a decoded value and everything in it: bridged modules
  // are frozen copies, shared by every module that imports them.
  const deepFreeze = (root) => {
    const st = mk();
    let sp = 0;
    st[sp++] = root;
    while (sp > 0) {
      const v = st[--sp];
      if ((typeof v !== "object" && typeof v !== "function") || v === null || ObjectIsFrozen(v)) continue;
      ObjectFreeze(v);
      const ks = ObjectKeys(v);
      for (let i = 0; i < ks.length; i++) st[sp++] = v[ks[i]];
    }
    return root;
  };

  // The session's tools: each global calls the host function in its slot.
  const toolSlots = new MapCtor();
  const callSlot = (slot, ...args) => ReflectApply(slot[0], undefined, args);

  // select calls or reads export fn of the entry module's namespace ns
  // and finishes the run with its value once that settles. quiet: no job
  // is queued, so that a primitive value, which settles a promise with no
  // code of the program's run, finishes the run at once if the export's
  // call queued no job either: no job of the program's could have run
  // before the promise's.
  const select = (ns, fn, optional, args, quiet) => {
    if (!ReflectHas(ns, fn)) {
      if (optional) done(undefined);
      else exportMissing(new ReferenceErrorCtor(`export '${fn}' not found`));
      return;
    }
    let v;
    try {
      v = ns[fn];
      if (typeof v === "function") v = ReflectApply(v, undefined, args);
      else if (args.length > 0) {
        throw new TypeErrorCtor(`export '${fn}' is not a function, so it takes no arguments`);
      }
    } catch (e) { failed(e); return; }
    if (quiet && isRaw(v) && !jobsPending()) {
      done(v);
      return;
    }
    then(new PromiseCtor((resolve) => resolve(v)), done, failed);
  };

  // The run's globals and bridged modules, until the globals module takes
  // them: its evaluation, before any source module's body, starts the run.
  let payload = null;
  let started = false;
  // The selected export, its being optional and the arguments of the run
  // that start readied, for run.
  let selectedFn = "", selectedOptional = false, selectedArgs = null;

  return ObjectFreeze({
    __proto__: null,
    // start readies a run of the entry module and returns its name, for
    // the shim to compile, link and evaluate it (run_entry in run.c: no
    // import(), no job per step) and to hand the outcome to run or
    // loadFailed; undefined after it reported a failure. The selected
    // export is called once the module has evaluated; an optional export
    // that is missing gives undefined. globalsText is a JSON array of the
    // wire texts of the globals, one each ("R": the built-in report, host
    // function 0), or "" for none.
    start(entry, fn, optional, consoleIndex, argsText, globalsText, importsText) {
      let args;
      try {
        args = argsText === "J[]" ? [] : decode(argsText);
        // "": no module imports the globals module (a bare entry), so
        // there is nothing to hand over.
        if (globalsText !== "") {
          const texts = JSONParse(globalsText);
          const globals = mk();
          for (let i = 0; i < texts.length; i++) globals[i] = texts[i] === "R" ? builtinReport : decode(texts[i]);
          if (consoleIndex >= 0) globals[consoleIndex] = capturingConsole;
          payload = [globals, importsText === "J[]" ? [] : deepFreeze(decode(importsText))];
        }
      } catch (e) { linkFailed(e); return undefined; }
      selectedFn = fn;
      selectedOptional = optional;
      selectedArgs = args;
      return entry;
    },
    // run takes the entry module's evaluation promise and namespace. The
    // export is selected two jobs after the module evaluated, as the
    // promise of import() would give the namespace: a program's own
    // microtasks run in the same order as they would after an import().
    // quiet: the module has evaluated and no job is queued, so that
    // nothing could run before the selection, which is made at once.
    // A run with nothing to ready (no arguments, no globals) has no start:
    // fn and optional come with run, and the export takes no arguments.
    run(p, ns, quiet, fn = selectedFn, optional = selectedOptional) {
      const args = selectedArgs ?? [];
      selectedArgs = null;
      if (quiet) {
        select(ns, fn, optional, args, true);
        return;
      }
      then(then(p, () => ns), (ns) => select(ns, fn, optional, args, false), (e) => (started ? failed : linkFailed)(e));
    },
    // loadFailed reports what loading or linking the entry module threw.
    loadFailed(e) {
      selectedArgs = null;
      (started ? failed : linkFailed)(e);
    },
    // The executor's session: one VM, many runs.
    // exec reports how the promise of a step's script settles: its value
    // is { value }, an own data property (patch 0006).
    exec(p) {
      // a returned promise is awaited, as an async function's is
      then(p, (r) => { then(new PromiseCtor((resolve) => resolve(r.value)), done, failed); }, failed);
    },
    // defineTool makes host function id the global name, read-only and
    // not configurable, so that no step's let, const or class can shadow
    // it; a name defined again calls the new host function.
    // shown: its arguments are shown or stored, not computed with (final_answer).
    defineTool(name, id, json, shown) {
      const f = makeHostFunction(id, name, json, shown);
      const slot = ReflectApply(MapGet, toolSlots, [name]);
      if (slot !== undefined) { slot[0] = f; return; }
      const s = mk();
      s[0] = f;
      const tool = ReflectApply(FunctionPrototypeBind, callSlot, [undefined, s]);
      ObjectDefineProperty(tool, "name", { value: name });
      ObjectDefineProperty(g, name, { value: ObjectFreeze(tool), writable: false, enumerable: false, configurable: false });
      ReflectApply(MapSet, toolSlots, [name, s]);
    },
    // defineValue makes the decoded wire text the global name.
    // A name a step declared (a var: not configurable) takes the new value.
    defineValue(name, text) {
      const v = decode(text);
      const d = ObjectGetOwnPropertyDescriptor(g, name);
      if (d !== undefined && !d.configurable && d.writable) { g[name] = v; return; }
      ObjectDefineProperty(g, name, { value: v, writable: true, enumerable: false, configurable: true });
    },
    installConsole() {
      ObjectDefineProperty(g, "console", { value: capturingConsole, writable: true, enumerable: false, configurable: true });
    },
    // compileFailed reports what compiling a step threw: a SyntaxError is
    // a link error.
    compileFailed(e) {
      let name;
      try { name = e.name; } catch { }
      (name === "SyntaxError" ? linkFailed : failed)(e);
    },
    // handOver gives the globals module the run's [globals, imports].
    handOver() {
      started = true;
      const p = payload;
      payload = null;
      if (p === null) throw new TypeErrorCtor("airlock: the globals were already taken");
      return p;
    },
  });
})
