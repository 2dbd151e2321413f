// The kernel of a sandbox. It runs once per VM, before any user code, as a
// global script whose value is the kernel object the host keeps. It
//
//   - captures the intrinsics it needs ("primordials"), so that user code that
//     later tampers with prototypes cannot redirect the kernel;
//   - hands the values it sends to the host to the shim's native encoder and
//     those it receives to the engine's JSON.parse (plain data) or the
//     shim's native decoder (internal/qjs/shim/codec.c);
//   - turns host function references into callable functions;
//   - readies the run of the entry module, which the shim compiles and
//     evaluates, and reports its outcome to the host.
//
// The realm is hardened by the shim before the kernel runs (no eval, the
// Function constructors refuse, no SharedArrayBuffer or Atomics,
// structuredClone and queueMicrotask: internal/qjs/shim/realm.c).
// The host dispatcher arrives as the global __airlock_host and is removed here.
// The shim runs the entry module itself (start, run, loadFailed).
(function () {
  "use strict";
  const g = globalThis;
  const host = g.__airlock_host;
  delete g.__airlock_host;
  // nativeEncode(v, shown) encodes a value going to the host, in C, into
  // an ArrayBuffer of the binary format the host reads (codec.c).
  const nativeEncode = g.__airlock_encode;
  delete g.__airlock_encode;
  // nativeDecode(buffer, makeFunction) builds the value of binary text the
  // host sent (codec.c); makeFunction(id, name, json) makes a host function.
  const nativeDecode = g.__airlock_decode;
  delete g.__airlock_decode;
  // makeHostFunction(kind, id) makes host function id, a C function that
  // calls the host directly with (kind, id, ...args) (shim.c, js_host_fn).
  const makeHostFunction = g.__airlock_hostfn;
  delete g.__airlock_hostfn;
  // jobsPending() reports whether a job (a promise reaction, a
  // queueMicrotask callback) is queued (shim.c, js_jobs_pending).
  const jobsPending = g.__airlock_pending;
  delete g.__airlock_pending;
  // nativeKind(object) names what an object is by its class (codec.c).
  const nativeKind = g.__airlock_kind;
  delete g.__airlock_kind;

  const FunctionPrototype = Function.prototype;
  const FunctionPrototypeCall = FunctionPrototype.call;
  const FunctionPrototypeBind = FunctionPrototype.bind;
  const ReflectApplyEarly = Reflect.apply;
  const uncurry = (f) => ReflectApplyEarly(FunctionPrototypeBind, FunctionPrototypeCall, [f]);
  const ObjectPrototype = Object.prototype;
  const ArrayPrototype = Array.prototype;
  const {
    keys: ObjectKeys, getPrototypeOf: ObjectGetPrototypeOf, setPrototypeOf: ObjectSetPrototypeOf,
    defineProperty: ObjectDefineProperty, create: ObjectCreate, freeze: ObjectFreeze, isFrozen: ObjectIsFrozen,
  } = Object;
  const ObjectHasOwn = Object.hasOwn;
  const { apply: ReflectApply, has: ReflectHas } = Reflect;
  const ArrayIsArray = Array.isArray;
  const JSONStringify = JSON.stringify;
  const JSONParse = JSON.parse;
  const StringCtor = String;
  const StringCharCodeAt = uncurry(String.prototype.charCodeAt);
  const StringSlice = uncurry(String.prototype.slice);
  const StringIndexOf = uncurry(String.prototype.indexOf);
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const ErrorIsError = Error.isError;
  const PromiseCtor = Promise;
  const PromisePrototypeThen = uncurry(Promise.prototype.then);
  const MapCtor = Map;
  const MapGet = uncurry(Map.prototype.get);
  const MapSet = uncurry(Map.prototype.set);
  const MapDelete = uncurry(Map.prototype.delete);
  const MapClear = uncurry(Map.prototype.clear);
  const SetCtor = Set;
  const SetAdd = uncurry(Set.prototype.add);
  const SetHas = uncurry(Set.prototype.has);
  const WeakMapCtor = WeakMap;
  const WeakMapGet = uncurry(WeakMap.prototype.get);
  const WeakMapSet = uncurry(WeakMap.prototype.set);
  const SymbolToString = uncurry(Symbol.prototype.toString);
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const Uint8ArrayFromBase64 = Uint8Array.fromBase64;

  // Arrays with no prototype: element writes cannot meet setters that user
  // code placed on Array.prototype or Object.prototype.
  const mk = () => ObjectSetPrototypeOf([], null);

  // functionKinds names a function by its prototype, as Node's console
  // does: [AsyncFunction: f].
  const functionKinds = new MapCtor();
  const FunctionToString = uncurry(FunctionPrototype.toString);
  MapSet(functionKinds, FunctionPrototype, "Function");
  MapSet(functionKinds, ObjectGetPrototypeOf(async function () {}), "AsyncFunction");
  MapSet(functionKinds, ObjectGetPrototypeOf(function* () {}), "GeneratorFunction");
  MapSet(functionKinds, ObjectGetPrototypeOf(async function* () {}), "AsyncGeneratorFunction");

  // --- codec --------------------------------------------------------------

  // kindOf names what an object is, for the console's fallback and for
  // thrown values that are not errors, by its class (codec.c).
  const kindOf = nativeKind;

  // Values going to the host are encoded natively (codec.c). Wire text from
  // the host that starts with "J" is plain JSON: the engine's own parser
  // builds it, with own data properties that no setter sees; any other
  // starts with "B", the binary format in base64, which the shim decodes
  // natively too, building each object with own properties that no setter
  // sees either.
  const encode = nativeEncode;
  const decode = (text) => StringCharCodeAt(text, 0) === 74 ? JSONParse(StringSlice(text, 1)) :
    nativeDecode(Uint8ArrayFromBase64(StringSlice(text, 1)).buffer, hostFunction);

  // --- host functions -----------------------------------------------------

  const pending = new MapCtor(); // promise id -> [resolve, reject, host function id]

  // hostErrors maps each error a host function call threw, or rejected its
  // promise with, to the id of the function: an executor tells a failing
  // tool from failing code by the identity of what was thrown.
  const hostErrors = new WeakMapCtor();
  const hostError = (e, fn) => {
    if ((typeof e === "object" && e !== null) || typeof e === "function") WeakMapSet(hostErrors, e, fn);
    return e;
  };

  // reply turns what the host dispatcher returned for a call of host
  // function fn into a value or a throw.
  const reply = (r, fn) => {
    if (typeof r !== "object" || r === null) return r;
    switch (r[0]) {
      case 0:
        try { return decode(r[1]); } catch (e) { throw hostError(e, fn); }
      case 1: throw hostError(new ErrorCtor(r[1]), fn);
      case 2: {
        const id = r[1];
        return new PromiseCtor((resolve, reject) => { MapSet(pending, id, [resolve, reject, fn]); });
      }
    }
    throw hostError(new TypeErrorCtor("airlock: malformed host reply"), fn);
  };

  const isRaw = (a) => {
    const t = typeof a;
    return t === "string" || t === "number" || t === "boolean" || t === "undefined" || a === null;
  };

  const callHost = (id, args) => {
    const n = args.length;
    let raw = true;
    for (let i = 0; i < n; i++) if (!isRaw(args[i])) { raw = false; break; }
    // The host function takes 16 arguments at most, two of them (0, id):
    // more primitives cross encoded, as other values do.
    if (!raw || n > 14) {
      let text;
      try { text = encode(args, SetHas(shownFunctions, id)); } catch (e) { throw hostError(e, id); }
      return reply(host(1, id, text), id);
    }
    switch (n) {
      case 0: return reply(host(0, id), id);
      case 1: return reply(host(0, id, args[0]), id);
      case 2: return reply(host(0, id, args[0], args[1]), id);
      case 3: return reply(host(0, id, args[0], args[1], args[2]), id);
    }
    const list = mk();
    list[0] = 0; list[1] = id;
    for (let i = 0; i < n; i++) list[i + 2] = args[i];
    return reply(ReflectApply(host, undefined, list), id);
  };

  // A host function is a C function of the shim that calls the host with
  // (9, id, ...args): the engine passes the arguments as they are, with no
  // JavaScript and no bound function in between. The host converts
  // primitives itself, and comes back to callHost for other arguments and
  // to reply for answers that are not primitives.
  // A JSON host function calls it with (10, id, ...args): its arguments cross as the
  // JSON text of their list, far cheaper than the codec, written by the
  // host from plain data or by the engine's JSON.stringify, and the host
  // parses a synchronous answer, JSON text, itself.
  // json is 2 for a function whose arguments are shown or stored, not
  // computed with (report, final_answer): the codec drops the functions and
  // symbols in them (see codec.c).
  const shownFunctions = new SetCtor();
  const boundHost = (id, name, json) => {
    const f = makeHostFunction(json === true ? 10 : 9, id);
    ObjectDefineProperty(f, "name", { value: name });
    return f;
  };
  const hostFunction = (id, name, json) => {
    if (json === 2) SetAdd(shownFunctions, id);
    return boundHost(id, name, json);
  };
  // The built-in report as host function 0, what decoding its usual wire
  // text makes, made once with the kernel: the global text "R" stands for
  // it (see start), and a run pays nothing to decode it. Its id is marked
  // shown only by a run that takes it.
  const builtinReport = boundHost(0, "", 2);

  // --- running ------------------------------------------------------------

  // The texts of a failure (an error's name, message, stack and file name,
  // a thrown value's text) are cut here, before they cross to the host:
  // each to maxText characters (UTF-16 code units, as a string's length
  // counts them), the head and the tail kept around the line that says how
  // much was cut, as the host's ClipText writes it; each line of a stack to
  // maxFrameText, the line's marker without line breaks. The host reads no
  // more than what is kept (engine.MaxErrorText, engine.MaxFrameText).
  const maxText = 20000, maxFrameText = 1000;
  const grouped = (n) => {
    let s = `${n}`, out = "";
    for (let i = 0; i < s.length; i++) out += (i > 0 && (s.length - i) % 3 === 0 ? "," : "") + s[i];
    return out;
  };
  const isLead = (c) => c >= 0xd800 && c <= 0xdbff;
  const isTrail = (c) => c >= 0xdc00 && c <= 0xdfff;
  // cutAround keeps s[from:to] if it has at most max code units, else its
  // head and tail around the marker (nl: the marker on a line of its own),
  // max code units in all; a surrogate pair is never split.
  const cutAround = (s, from, to, max, nl) => {
    const n = to - from;
    if (n <= max) return from === 0 && to === s.length ? s : StringSlice(s, from, to);
    const marker = (k) => (nl ? "\n" : "") + `... [truncated ${grouped(k)} characters] ...` + (nl ? "\n" : "");
    let keep = max;
    for (let i = 0; i < 3; i++) keep = max - marker(n - keep).length; // its length depends on the count
    let head = keep >> 1, tail = keep - head;
    for (;;) {
      if (head > 0 && isLead(StringCharCodeAt(s, from + head - 1))) head--;
      if (tail > 0 && isTrail(StringCharCodeAt(s, to - tail))) tail--;
      const m = marker(n - head - tail);
      if (head + tail + m.length <= max || head + tail === 0) {
        return StringSlice(s, from, from + head) + m + StringSlice(s, to - tail, to);
      }
      if (head > tail) head--; else tail--;
    }
  };
  const clip = (s) => cutAround(s, 0, s.length, maxText, true);
  // clipStack cuts each line of a stack to maxFrameText and the stack to
  // maxText: the innermost frames are kept, and a last line says how much
  // of the rest was cut.
  const clipStack = (s) => {
    const n = s.length;
    if (n <= maxFrameText) return s;
    let out = "";
    let i = 0;
    while (i < n) {
      let j = StringIndexOf(s, "\n", i);
      if (j < 0) j = n;
      const line = cutAround(s, i, j, maxFrameText, false);
      const sep = out === "" ? "" : "\n";
      // a line before the last leaves room for the marker
      if (out.length + sep.length + line.length > maxText - (j < n ? 64 : 0)) {
        out += sep + `... [truncated ${grouped(n - i)} characters] ...`;
        break;
      }
      out += sep + line;
      i = j + 1;
    }
    return out;
  };

  // textOf describes a thrown value that is not an Error without running
  // any of its code: no toString, no toJSON, only what structured clone reads.
  const textOf = (v) => {
    if (typeof v === "symbol") return SymbolToString(v);
    if (typeof v === "function") return "[function]";
    if (typeof v !== "object" || v === null) return StringCtor(v);
    const kind = kindOf(v);
    if (kind !== "object" && kind !== "array") return `[${kind}]`;
    let ks;
    try { ks = ObjectKeys(v); } catch { return `[${kind}]`; }
    let text = kind === "array" ? "[" : "{";
    for (let i = 0; i < ks.length && text.length < 300; i++) {
      let shown;
      try {
        const x = v[ks[i]];
        const t = typeof x;
        shown = t === "string" ? JSONStringify(clip(x)) : t === "function" ? "[function]" :
          t === "symbol" ? SymbolToString(x) : t === "object" && x !== null ? `[${kindOf(x)}]` : StringCtor(x);
      } catch { shown = "[unreadable]"; }
      text += (i > 0 ? ", " : "") + (kind === "array" ? "" : JSONStringify(ks[i]) + ": ") + shown;
    }
    return text + (kind === "array" ? "]" : "}");
  };

  const read = (o, k) => { try { const v = o[k]; return typeof v === "string" ? v : undefined; } catch { return undefined; } };
  const readNumber = (o, k) => { try { const v = o[k]; return typeof v === "number" ? v : 0; } catch { return 0; } };

  // fail reports a thrown value. phase 0: before any module body ran (a link
  // error); 1: while running. The last argument is the id of the host
  // function whose call threw the value, or -1.
  const fail = (phase, e) => {
    try { reportFailure(phase, e); } catch { host(5); }
  };
  const reportFailure = (phase, e) => {
    let fn = -1;
    if ((typeof e === "object" && e !== null) || typeof e === "function") fn = WeakMapGet(hostErrors, e) ?? -1;
    if (ErrorIsError(e)) {
      host(3, phase, clip(read(e, "name") ?? "Error"), clip(read(e, "message") ?? ""), clipStack(read(e, "stack") ?? ""),
        clip(read(e, "fileName") ?? ""), readNumber(e, "lineNumber"), readNumber(e, "columnNumber"), fn);
    } else {
      host(3, phase, "Error", clip(textOf(e)), "", "", 0, 0, fn);
    }
  };

  const finish = (value) => {
    if (isRaw(value)) { host(2, 0, value); return; }
    let text;
    try { text = encode(value, true); } catch (e) { fail(1, e); return; }
    host(2, 1, text);
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

  // nodeText is what Node's console prints for a function or a symbol
  // argument. The name is read from its own data property: no getter runs.
  const nodeText = (v) => {
    if (typeof v === "symbol") return SymbolToString(v);
    let name, kind = "Function", src = "";
    try {
      const d = ObjectGetOwnPropertyDescriptor(v, "name");
      if (d !== undefined && typeof d.value === "string" && d.value !== "") name = d.value;
      kind = MapGet(functionKinds, ObjectGetPrototypeOf(v)) ?? "Function";
      src = FunctionToString(v);
    } catch { }
    if (StringSlice(src, 0, 5) === "class" && (StringCharCodeAt(src, 5) === 32 || StringCharCodeAt(src, 5) === 123)) {
      return `[class ${name ?? "(anonymous)"}]`;
    }
    return name !== undefined ? `[${kind}: ${name}]` : `[${kind} (anonymous)]`;
  };

  // makeConsole builds the capturing console: each call goes to the host
  // with its arguments encoded as shown values (functions and symbols
  // inside dropped, see codec.c). A function or symbol argument is logged
  // as Node prints it, and an argument that cannot cross is logged as a
  // description instead of failing the program.
  const makeConsole = () => {
    const c = ObjectCreate(ObjectPrototype);
    const levels = ["log", "info", "warn", "error", "debug"];
    for (let i = 0; i < levels.length; i++) {
      const level = i;
      const f = (...args) => {
        for (let j = 0; j < args.length; j++) {
          const a = args[j];
          if (typeof a === "symbol" || (typeof a === "function" && kindOf(a) !== "Proxy")) args[j] = nodeText(a);
        }
        let text;
        try { text = encode(args, true); } catch (e) {
          const shown = mk();
          for (let j = 0; j < args.length; j++) {
            try { encode(args[j], true); shown[j] = args[j]; } catch { shown[j] = `[${kindOf(args[j])}]`; }
          }
          ObjectSetPrototypeOf(shown, ArrayPrototype);
          text = encode(shown, true);
        }
        host(6, level, text);
      };
      ObjectDefineProperty(f, "name", { value: levels[i] });
      ObjectDefineProperty(c, levels[i], { value: f, writable: true, enumerable: true, configurable: true });
    }
    return c;
  };

  // The session's tools: each global calls the host function in its slot.
  const toolSlots = new MapCtor();
  const callSlot = (slot, ...args) => ReflectApply(slot[0], undefined, args);

  // The console is the same for every run, so it is made with the VM.
  const capturingConsole = makeConsole();

  // select calls or reads export fn of the entry module's namespace ns
  // and finishes the run with its value once that settles. quiet: no job
  // is queued, so that a primitive value, which settles a promise with no
  // code of the program's run, finishes the run at once if the export's
  // call queued no job either: no job of the program's could have run
  // before the promise's.
  const select = (ns, fn, optional, args, quiet) => {
    if (!ReflectHas(ns, fn)) {
      if (optional) finish(undefined);
      else host(3, 2, "ReferenceError", `export '${fn}' not found`, "", "", 0, 0);
      return;
    }
    let v;
    try {
      v = ns[fn];
      if (typeof v === "function") v = ReflectApply(v, undefined, args);
      else if (args.length > 0) {
        throw new TypeErrorCtor(`export '${fn}' is not a function, so it takes no arguments`);
      }
    } catch (e) { fail(1, e); return; }
    if (quiet && isRaw(v) && !jobsPending()) {
      finish(v);
      return;
    }
    PromisePrototypeThen(new PromiseCtor((resolve) => resolve(v)), finish, (e) => fail(1, e));
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
    // the shim to compile, link and evaluate it (run_entry in shim.c: no
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
          for (let i = 0; i < texts.length; i++) {
            if (texts[i] === "R") {
              SetAdd(shownFunctions, 0);
              globals[i] = builtinReport;
            } else {
              globals[i] = decode(texts[i]);
            }
          }
          if (consoleIndex >= 0) globals[consoleIndex] = capturingConsole;
          payload = [globals, importsText === "J[]" ? [] : deepFreeze(decode(importsText))];
        }
      } catch (e) { fail(0, e); return undefined; }
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
      PromisePrototypeThen(PromisePrototypeThen(p, () => ns), (ns) => select(ns, fn, optional, args, false),
        (e) => fail(started ? 1 : 0, e));
    },
    // loadFailed reports what loading or linking the entry module threw.
    loadFailed(e) {
      selectedArgs = null;
      fail(started ? 1 : 0, e);
    },
    // settle resolves or rejects the promise of an asynchronous host call.
    settle(id, ok, kind, value) {
      const p = MapGet(pending, id);
      if (p === undefined) return;
      MapDelete(pending, id);
      if (!ok) { p[1](hostError(new ErrorCtor(value), p[2])); return; }
      let v = value;
      if (kind === 1) {
        try { v = decode(value); } catch (e) { p[1](hostError(e, p[2])); return; }
      }
      p[0](v);
    },
    // The executor's session: one VM, many runs.
    // exec reports how the promise of a step's script settles: its value
    // is { value }, an own data property (patch 0006).
    exec(p) {
      PromisePrototypeThen(p, (r) => {
        // a returned promise is awaited, as an async function's is
        PromisePrototypeThen(new PromiseCtor((resolve) => resolve(r.value)), finish, (e) => fail(1, e));
      }, (e) => fail(1, e));
    },
    // reset forgets the pending host calls of the last run: they never
    // settle.
    reset() { MapClear(pending); },
    // defineTool makes host function id the global name, read-only and
    // not configurable, so that no step's let, const or class can shadow
    // it; a name defined again calls the new host function.
    // shown: its arguments are shown or stored, not computed with (final_answer).
    defineTool(name, id, json, shown) {
      const f = hostFunction(id, name, shown ? 2 : json);
      const slot = MapGet(toolSlots, name);
      if (slot !== undefined) { slot[0] = f; return; }
      const s = mk();
      s[0] = f;
      const tool = ReflectApply(FunctionPrototypeBind, callSlot, [undefined, s]);
      ObjectDefineProperty(tool, "name", { value: name });
      ObjectDefineProperty(g, name, { value: ObjectFreeze(tool), writable: false, enumerable: false, configurable: false });
      MapSet(toolSlots, name, s);
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
    compileFailed(e) { fail(read(e, "name") === "SyntaxError" ? 0 : 1, e); },
    // handOver gives the globals module the run's [globals, imports].
    handOver() {
      started = true;
      const p = payload;
      payload = null;
      if (p === null) throw new TypeErrorCtor("airlock: the globals were already taken");
      return p;
    },
    // For the host's calls of host functions (op 9).
    callHost,
    reply,
  });
})
