// The kernel of a sandbox. It runs once per VM, before any user code, as a
// global script whose value is the kernel object the host keeps. It
//
//   - captures the intrinsics it needs ("primordials"), so that user code that
//     later tampers with prototypes cannot redirect the kernel;
//   - hardens the realm: no eval, no Function constructors from strings, no
//     SharedArrayBuffer or Atomics, every Proxy registered so the codec can
//     refuse it before any trap runs, structuredClone and queueMicrotask added;
//   - decodes the values the host sends on the wire format (codec.go in the
//     root package) and hands those it sends to the shim's native encoder
//     (internal/qjs/shim/codec.c); structuredClone is the wire format's
//     encoder and decoder here;
//   - turns host function references into callable proxies;
//   - runs the entry module and reports its outcome to the host.
//
// The host dispatcher arrives as the global __airlock_host and is removed here.
// importModule is `(s) => import(s)`, compiled apart: the kernel's bytecode
// carries no debug information, and import() needs its caller's file name.
(function (importModule) {
  "use strict";
  const g = globalThis;
  const host = g.__airlock_host;
  delete g.__airlock_host;
  // arrayNames(a, n) lists the keys of array a after its first n: for a
  // dense array, its named properties (the shim's codec.c).
  const arrayNames = g.__airlock_array_names;
  delete g.__airlock_array_names;
  // nativeEncode(v, shown) encodes a value going to the host, in C, into
  // an ArrayBuffer of the binary format the host reads (codec.c).
  const nativeEncode = g.__airlock_encode;
  delete g.__airlock_encode;

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
  const NumberCtor = Number;
  const BigIntCtor = BigInt;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const EvalErrorCtor = EvalError;
  const ErrorIsError = Error.isError;
  const PromiseCtor = Promise;
  const PromisePrototypeThen = uncurry(Promise.prototype.then);
  const PromiseResolve = Promise.resolve.bind(Promise);
  const MapCtor = Map;
  const MapGet = uncurry(Map.prototype.get);
  const MapSet = uncurry(Map.prototype.set);
  const MapDelete = uncurry(Map.prototype.delete);
  const MapForEach = uncurry(Map.prototype.forEach);
  const MapClear = uncurry(Map.prototype.clear);
  const MapSize = uncurry(Object.getOwnPropertyDescriptor(Map.prototype, "size").get);
  const SetCtor = Set;
  const SetAdd = uncurry(Set.prototype.add);
  const SetHas = uncurry(Set.prototype.has);
  const SetForEach = uncurry(Set.prototype.forEach);
  const SetSize = uncurry(Object.getOwnPropertyDescriptor(Set.prototype, "size").get);
  const WeakSetCtor = WeakSet;
  const WeakSetAdd = uncurry(WeakSet.prototype.add);
  const WeakSetHas = uncurry(WeakSet.prototype.has);
  const WeakMapCtor = WeakMap;
  const WeakMapGet = uncurry(WeakMap.prototype.get);
  const WeakMapSet = uncurry(WeakMap.prototype.set);
  const DateCtor = Date;
  const DateGetTime = uncurry(Date.prototype.getTime);
  const ArrayBufferByteLength = uncurry(Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get);
  const SymbolToString = uncurry(Symbol.prototype.toString);
  const SymbolToStringTag = Symbol.toStringTag;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectCtor = Object;
  const StringIsWellFormed = uncurry(String.prototype.isWellFormed);
  const StringFromCharCode = String.fromCharCode;
  // Boxed primitives, regular expressions and data views are told by their
  // internal slots: each of these throws for any other object.
  const boxedValueOfs = [Number.prototype.valueOf, String.prototype.valueOf, Boolean.prototype.valueOf,
    BigInt.prototype.valueOf];
  const RegExpCtor = RegExp;
  const regExpGetter = (k) => uncurry(ObjectGetOwnPropertyDescriptor(RegExp.prototype, k).get);
  const RegExpSource = regExpGetter("source");
  // The flags in the order RegExp.prototype.flags gives them, each read by
  // its own getter: the flags getter reads properties a program can shadow.
  const regExpFlags = [["d", regExpGetter("hasIndices")], ["g", regExpGetter("global")],
    ["i", regExpGetter("ignoreCase")], ["m", regExpGetter("multiline")], ["s", regExpGetter("dotAll")],
    ["u", regExpGetter("unicode")], ["v", regExpGetter("unicodeSets")], ["y", regExpGetter("sticky")]];
  const DataViewCtor = DataView;
  const dataViewGetter = (k) => uncurry(ObjectGetOwnPropertyDescriptor(DataView.prototype, k).get);
  const DataViewBuffer = dataViewGetter("buffer"), DataViewOffset = dataViewGetter("byteOffset");
  const DataViewByteLength = dataViewGetter("byteLength");
  // The Error constructors a decoded error takes its prototype from, by name.
  const errorCtors = { __proto__: null };
  for (const C of [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError]) {
    errorCtors[C.name] = C;
  }
  // Typed arrays, for the codec: capturing them here keeps user code that
  // replaces a global or a prototype method out of the kernel.
  const TypedArrayPrototype = ObjectGetPrototypeOf(Int8Array.prototype);
  const typedGetter = (k) => uncurry(ObjectGetOwnPropertyDescriptor(TypedArrayPrototype, k).get);
  const typedTag = typedGetter(SymbolToStringTag), typedBuffer = typedGetter("buffer");
  const typedOffset = typedGetter("byteOffset"), typedByteLength = typedGetter("byteLength");
  const Uint8ArrayCtor = Uint8Array;
  const Uint8ArrayToBase64 = uncurry(Uint8Array.prototype.toBase64), Uint8ArrayFromBase64 = Uint8Array.fromBase64;
  const typedCtors = { __proto__: null };
  for (const C of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array,
    Uint32Array, Float16Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array]) {
    typedCtors[C.name] = C;
  }

  // Arrays with no prototype: element writes cannot meet setters that user
  // code placed on Array.prototype or Object.prototype.
  const mk = () => ObjectSetPrototypeOf([], null);

  // --- hardening ----------------------------------------------------------

  delete g.eval;
  delete g.SharedArrayBuffer;
  delete g.Atomics;

  // Function, AsyncFunction, GeneratorFunction and AsyncGeneratorFunction
  // compile source strings. Each is replaced by a constructor that throws,
  // which keeps its prototype so that `instanceof Function` still works.
  const disabledConstructor = (name) => {
    const C = function () {
      throw new EvalErrorCtor(`${name}: code generation from strings is not allowed in the sandbox`);
    };
    ObjectDefineProperty(C, "name", { value: name });
    return C;
  };
  const samples = [
    ["Function", function () {}],
    ["AsyncFunction", async function () {}],
    ["GeneratorFunction", function* () {}],
    ["AsyncGeneratorFunction", async function* () {}],
  ];
  // functionKinds names a function by its prototype, as Node's console
  // does: [AsyncFunction: f].
  const functionKinds = new MapCtor();
  const FunctionToString = uncurry(FunctionPrototype.toString);
  for (const [name, sample] of samples) {
    const proto = ObjectGetPrototypeOf(sample);
    MapSet(functionKinds, proto, name);
    const C = disabledConstructor(name);
    ObjectDefineProperty(C, "prototype", { value: proto });
    ObjectDefineProperty(proto, "constructor", { value: C, writable: false, configurable: false });
    if (name === "Function") {
      ObjectDefineProperty(g, "Function", { value: C, writable: true, configurable: true });
    }
  }

  // The engine's BigInt.asUintN returns a small negative BigInt unchanged
  // when bits >= 32: asUintN(64, -1n) gave -1n, not 2^64 - 1. The result
  // it gives is then congruent to the right one, and the wrapper adds 2^bits.
  {
    const nativeAsUintN = BigInt.asUintN;
    const MathTrunc = Math.trunc;
    const RangeErrorCtor = RangeError;
    BigInt.asUintN = {
      asUintN(bits, bigint) {
        const n = +bits, index = n !== n ? 0 : MathTrunc(n); // + throws for a BigInt, as ToIndex does
        if (!(index >= 0 && index <= 9007199254740991)) {
          throw new RangeErrorCtor("BigInt.asUintN: bits must be an integer from 0 to 2^53 - 1");
        }
        const r = ReflectApply(nativeAsUintN, BigIntCtor, [index, bigint]);
        return r < 0n ? r + (1n << BigIntCtor(index)) : r;
      },
    }.asUintN;
  }

  // Every Proxy the sandbox makes is remembered, so the codec can refuse one
  // before any of its traps runs.
  const proxies = new WeakSetCtor();
  const ProxyCtor = Proxy;
  const ProxyRevocable = Proxy.revocable;
  const SafeProxy = function Proxy(target, handler) {
    if (new.target === undefined) throw new TypeErrorCtor("Constructor Proxy requires 'new'");
    const p = new ProxyCtor(target, handler);
    WeakSetAdd(proxies, p);
    return p;
  };
  ObjectDefineProperty(SafeProxy, "prototype", { value: undefined, writable: false });
  ObjectDefineProperty(SafeProxy, "revocable", {
    value: function revocable(target, handler) {
      const r = ProxyRevocable(target, handler);
      WeakSetAdd(proxies, r.proxy);
      return r;
    },
    writable: true, configurable: true,
  });
  ObjectDefineProperty(g, "Proxy", { value: SafeProxy, writable: true, configurable: true });

  // --- codec --------------------------------------------------------------

  const cloneError = (what) => {
    const e = new ErrorCtor(`${what} could not be cloned`);
    e.name = "DataCloneError";
    return e;
  };

  // kindOf names what an object is, for the wire and for errors.
  const kindOf = (v) => {
    if (WeakSetHas(proxies, v)) return "Proxy";
    if (typeof v === "function") return "function";
    if (ArrayIsArray(v)) return "array";
    const proto = ObjectGetPrototypeOf(v);
    if (proto === ObjectPrototype || proto === null) return "object";
    if (typedTag(v) !== undefined) return "typed";
    try { ArrayBufferByteLength(v); return "buffer"; } catch { }
    try { MapSize(v); return "map"; } catch { }
    try { SetSize(v); return "set"; } catch { }
    try { DateGetTime(v); return "date"; } catch { }
    if (ErrorIsError(v)) return "error";
    try { RegExpSource(v); return "regexp"; } catch { }
    try { DataViewByteLength(v); return "dataview"; } catch { }
    for (let i = 0; typeof v === "object" && i < boxedValueOfs.length; i++) {
      try { ReflectApply(boxedValueOfs[i], v, []); return "boxed"; } catch { }
    }
    for (let p = proto; p !== null; p = ObjectGetPrototypeOf(p)) {
      if (p === ObjectPrototype) return "object"; // an instance of a user class
      if (p === ArrayPrototype) return "array";
      if (p === FunctionPrototype) return "function";
      if (ObjectHasOwn(p, "constructor")) {
        const c = p.constructor;
        if (typeof c === "function" && builtins()[c.name] === p) return c.name;
      }
    }
    return "object";
  };
  // Built-in prototypes whose instances carry internal state that does not
  // cross: Promise, WeakMap, RegExp and the rest.
  let builtinNames = null;
  const builtins = () => {
    if (builtinNames !== null) return builtinNames;
    builtinNames = { __proto__: null };
    for (const C of [Promise, WeakMap, WeakSet, WeakRef, FinalizationRegistry, RegExp, DataView,
      Boolean, Number, String, Symbol, BigInt]) {
      builtinNames[C.name] = C.prototype;
    }
    return builtinNames;
  };

  const encodeNumber = (v) => {
    if (v !== v) return ["n", "NaN"];
    if (v === 1 / 0) return ["n", "Infinity"];
    if (v === -1 / 0) return ["n", "-Infinity"];
    if (v === 0 && 1 / v < 0) return ["n", "-0"];
    return v;
  };

  const bytesOf = (buffer, offset, length) => Uint8ArrayToBase64(new Uint8ArrayCtor(buffer, offset, length));

  // A string with a lone surrogate crosses as ["w", code units]: JSON
  // text, and UTF-8, cannot carry one.
  const encodeString = (s) => {
    if (StringIsWellFormed(s)) return s;
    const units = mk();
    for (let i = 0; i < s.length; i++) units[i] = StringCharCodeAt(s, i);
    ObjectSetPrototypeOf(units, ArrayPrototype);
    return ["w", units];
  };
  const decodeUnits = (units) => {
    let s = "";
    for (let i = 0; i < units.length; i += 4096) {
      s += ReflectApply(StringFromCharCode, undefined, ReflectApply(ArrayPrototype.slice, units, [i, i + 4096]));
    }
    return s;
  };

  // encodeTree turns a value into a tree of plain arrays and primitives,
  // the wire format's, for structuredClone; values going to the host are
  // encoded natively (nativeEncode), which also drops the functions and
  // symbols of a value to be shown. Objects get ids in pre-order; a
  // repeated object is ["r", id].
  const encodeTree = (root) => {
    const seen = new MapCtor();
    let nextID = 0;
    const holder = mk();
    const st = mk();
    let sp = 0;
    // child writes a value read from a container: a plain primitive at once,
    // anything else onto the stack. The children of one container are pushed
    // in order and the run is then reversed, so that they are visited in
    // order, each subtree before the next sibling: ids follow the text.
    const child = (out, key, x) => {
      const t = typeof x;
      if ((t === "string" && StringIsWellFormed(x)) || t === "boolean" || x === null ||
        (t === "number" && x === x && x !== 1 / 0 && x !== -1 / 0 && (x !== 0 || 1 / x > 0))) {
        out[key] = x;
        return;
      }
      st[sp++] = out; st[sp++] = key; st[sp++] = x;
    };
    const reverseFrom = (base) => {
      for (let lo = base, hi = sp - 3; lo < hi; lo += 3, hi -= 3) {
        for (let j = 0; j < 3; j++) { const tmp = st[lo + j]; st[lo + j] = st[hi + j]; st[hi + j] = tmp; }
      }
    };
    st[sp++] = holder; st[sp++] = 0; st[sp++] = root;
    while (sp > 0) {
      const v = st[--sp], key = st[--sp], target = st[--sp];
      let out;
      switch (typeof v) {
        case "string": out = encodeString(v); break;
        case "boolean": out = v; break;
        case "number": out = encodeNumber(v); break;
        case "undefined": out = ["u"]; break;
        case "bigint": out = ["i", StringCtor(v)]; break;
        case "symbol":
          throw cloneError(SymbolToString(v));
        case "function":
          throw cloneError(WeakSetHas(proxies, v) ? "a Proxy" : `function ${typeof v.name === "string" && v.name !== "" ? v.name : "(anonymous)"}`);
        default: {
          if (v === null) { out = null; break; }
          const id = MapGet(seen, v);
          if (id !== undefined) { out = ["r", id]; break; }
          const kind = kindOf(v);
          out = mk();
          switch (kind) {
            case "object": {
              MapSet(seen, v, nextID++);
              out[0] = "o";
              const ks = ObjectKeys(v);
              const n = ks.length;
              const base = sp;
              for (let i = 0, m = 1; i < n; i++) {
                const x = v[ks[i]];
                out[m] = ks[i]; child(out, m + 1, x); m += 2;
              }
              reverseFrom(base);
              break;
            }
            case "array": {
              MapSet(seen, v, nextID++);
              const n = v.length;
              let dense = true;
              for (let i = 0; i < n; i++) if (!(i in v)) { dense = false; break; }
              // A named property (arr.total = 3) makes the array sparse
              // on the wire, where a key is an index or a name.
              const names = dense ? arrayNames(v, n) : undefined;
              if (dense && names === undefined) {
                out[0] = "a";
                const base = sp;
                for (let i = 0; i < n; i++) child(out, 1 + i, v[i]);
                reverseFrom(base);
              } else {
                out[0] = "h"; out[1] = n;
                let m = 0;
                const base = sp;
                // Each value is read once, a getter's too.
                const put = (k, x) => { out[2 + 2 * m] = k; child(out, 3 + 2 * m, x); m++; };
                if (dense) {
                  for (let i = 0; i < n; i++) put(i, v[i]);
                  for (let i = 0; i < names.length; i++) {
                    const x = v[names[i]];
                    put(names[i], x);
                  }
                } else {
                  const ks = ObjectKeys(v);
                  for (let i = 0; i < ks.length; i++) {
                    const k = ks[i];
                    const idx = NumberCtor(k);
                    const x = v[k];
                    if (StringCtor(idx >>> 0) === k && idx < 4294967295) put(idx, x);
                    else put(k, x);
                  }
                }
                reverseFrom(base);
              }
              break;
            }
            case "map": {
              MapSet(seen, v, nextID++);
              out[0] = "m";
              const entries = mk();
              let n = 0;
              MapForEach(v, (val, k) => { entries[n++] = k; entries[n++] = val; });
              const base = sp;
              for (let i = 0; i < n; i++) child(out, 1 + i, entries[i]);
              reverseFrom(base);
              break;
            }
            case "set": {
              MapSet(seen, v, nextID++);
              out[0] = "s";
              const items = mk();
              let n = 0;
              SetForEach(v, (val) => { items[n++] = val; });
              const base = sp;
              for (let i = 0; i < n; i++) child(out, 1 + i, items[i]);
              reverseFrom(base);
              break;
            }
            case "date": {
              MapSet(seen, v, nextID++);
              const t = DateGetTime(v);
              out[0] = "d"; out[1] = t === t ? t : null;
              break;
            }
            case "typed": {
              MapSet(seen, v, nextID++);
              out[0] = "x"; out[1] = typedTag(v);
              out[2] = bytesOf(typedBuffer(v), typedOffset(v), typedByteLength(v));
              break;
            }
            case "buffer": {
              MapSet(seen, v, nextID++);
              out[0] = "b"; out[1] = bytesOf(v, 0, ArrayBufferByteLength(v));
              break;
            }
            case "error": {
              MapSet(seen, v, nextID++);
              out[0] = "e";
              const name = v.name, message = v.message;
              out[1] = typeof name === "string" ? name : "Error";
              out[2] = typeof message === "string" ? message : "";
              break;
            }
            case "regexp": {
              MapSet(seen, v, nextID++);
              let flags = "";
              for (let i = 0; i < regExpFlags.length; i++) if (regExpFlags[i][1](v)) flags += regExpFlags[i][0];
              out[0] = "g"; out[1] = RegExpSource(v); out[2] = flags;
              break;
            }
            case "dataview": {
              MapSet(seen, v, nextID++);
              out[0] = "v"; out[1] = bytesOf(DataViewBuffer(v), DataViewOffset(v), DataViewByteLength(v));
              break;
            }
            case "boxed": {
              MapSet(seen, v, nextID++);
              out[0] = "p";
              let x;
              for (let i = 0; i < boxedValueOfs.length; i++) {
                try { x = ReflectApply(boxedValueOfs[i], v, []); break; } catch { }
              }
              child(out, 1, x);
              break;
            }
            case "Proxy": throw cloneError("a Proxy");
            case "function": throw cloneError("a function");
            default: throw cloneError(`a ${kind}`);
          }
        }
      }
      target[key] = out;
    }
    return holder[0];
  };

  // Values going to the host are encoded natively; encodeTree remains for
  // structuredClone, which decodeTree reads.
  const encode = nativeEncode;

  const specialNumbers = { __proto__: null, NaN: NaN, Infinity: 1 / 0, "-Infinity": -1 / 0, "-0": -0 };

  // decodeTree builds values from a wire tree. Containers are built without a
  // prototype and given their real one at the end, so that no setter user code
  // placed on a prototype sees the elements as they are written.
  const decodeTree = (w) => {
    if (typeof w !== "object" || w === null) return w;
    const refs = mk();
    let nref = 0;
    const fixups = mk(); // [object, prototype] pairs
    let nfix = 0;
    const fills = mk(); // [Map or Set, items, isMap] triples
    let nfill = 0;
    const holder = mk();
    const st = mk();
    let sp = 0;
    st[sp++] = holder; st[sp++] = 0; st[sp++] = w;
    while (sp > 0) {
      const node = st[--sp], key = st[--sp], target = st[--sp];
      let v;
      if (typeof node !== "object" || node === null) {
        v = node;
      } else {
        switch (node[0]) {
          case "u": v = undefined; break;
          case "n": v = specialNumbers[node[1]]; break;
          case "i": v = BigIntCtor(node[1]); break;
          case "w": v = decodeUnits(node[1]); break;
          case "r": v = refs[node[1]]; break;
          case "f": v = hostFunction(node[1], node[2], node[3]); break;
          case "o": {
            v = ObjectCreate(null);
            refs[nref++] = v;
            fixups[nfix++] = v; fixups[nfix++] = ObjectPrototype;
            for (let i = node.length - 2; i >= 1; i -= 2) { st[sp++] = v; st[sp++] = node[i]; st[sp++] = node[i + 1]; }
            break;
          }
          case "a": {
            v = mk();
            refs[nref++] = v;
            fixups[nfix++] = v; fixups[nfix++] = ArrayPrototype;
            for (let i = node.length - 1; i >= 1; i--) { st[sp++] = v; st[sp++] = i - 1; st[sp++] = node[i]; }
            break;
          }
          case "h": {
            v = mk();
            v.length = node[1];
            refs[nref++] = v;
            fixups[nfix++] = v; fixups[nfix++] = ArrayPrototype;
            for (let i = node.length - 2; i >= 2; i -= 2) { st[sp++] = v; st[sp++] = node[i]; st[sp++] = node[i + 1]; }
            break;
          }
          case "m": case "s": {
            v = node[0] === "m" ? new MapCtor() : new SetCtor();
            refs[nref++] = v;
            const items = mk();
            fills[nfill++] = v; fills[nfill++] = items; fills[nfill++] = node[0] === "m";
            for (let i = node.length - 1; i >= 1; i--) { st[sp++] = items; st[sp++] = i - 1; st[sp++] = node[i]; }
            break;
          }
          case "d": v = new DateCtor(node[1] === null ? NaN : node[1]); refs[nref++] = v; break;
          case "x": {
            const C = typedCtors[node[1]];
            const bytes = Uint8ArrayFromBase64(node[2]);
            v = C === Uint8ArrayCtor ? bytes : new C(bytes.buffer, 0, bytes.length / C.BYTES_PER_ELEMENT);
            refs[nref++] = v;
            break;
          }
          case "b": v = Uint8ArrayFromBase64(node[1]).buffer; refs[nref++] = v; break;
          case "v": v = new DataViewCtor(Uint8ArrayFromBase64(node[1]).buffer); refs[nref++] = v; break;
          case "g": v = new RegExpCtor(node[1], node[2]); refs[nref++] = v; break;
          case "p": {
            const x = node[1];
            v = ObjectCtor(typeof x !== "object" || x === null ? x : x[0] === "n" ? specialNumbers[x[1]] :
              x[0] === "i" ? BigIntCtor(x[1]) : decodeUnits(x[1]));
            refs[nref++] = v;
            break;
          }
          case "e": {
            // A built-in error's name gives its prototype (a TypeError
            // stays one); any other name is kept on an Error.
            const C = errorCtors[node[1]] ?? ErrorCtor;
            v = new C(node[2]);
            if (C === ErrorCtor && node[1] !== "Error") ObjectDefineProperty(v, "name", { value: node[1], writable: true, configurable: true });
            refs[nref++] = v;
            break;
          }
          default: throw new TypeErrorCtor("airlock: malformed value on the wire");
        }
      }
      target[key] = v;
    }
    for (let i = nfill - 3; i >= 0; i -= 3) {
      const c = fills[i], items = fills[i + 1];
      if (fills[i + 2]) for (let j = 0; j < items.length; j += 2) MapSet(c, items[j], items[j + 1]);
      else for (let j = 0; j < items.length; j++) SetAdd(c, items[j]);
    }
    for (let i = 0; i < nfix; i += 2) ObjectSetPrototypeOf(fixups[i], fixups[i + 1]);
    return holder[0];
  };

  // Wire text that starts with "J" is plain JSON: the engine's own parser
  // builds it, with own data properties that no setter sees.
  const decode = (text) =>
    StringCharCodeAt(text, 0) === 74 ? JSONParse(StringSlice(text, 1)) : decodeTree(JSONParse(text));

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

  // A host function is the host's C function bound to (9, id): the engine
  // passes the arguments as they are, with no JavaScript in between. The
  // host converts primitives itself, and comes back to callHost for other
  // arguments and to reply for answers that are not primitives.
  // A JSON host function is bound to (10, id): its arguments cross as the
  // JSON text of their list, far cheaper than the codec, written by the
  // host from plain data or by the engine's JSON.stringify, and the host
  // parses a synchronous answer, JSON text, itself.
  // json is 2 for a function whose arguments are shown or stored, not
  // computed with (report, final_answer): the codec drops the functions and
  // symbols in them (see encodeTree).
  const shownFunctions = new SetCtor();
  const hostFunction = (id, name, json) => {
    if (json === 2) SetAdd(shownFunctions, id);
    const f = ReflectApply(FunctionPrototypeBind, host, [undefined, json === true ? 10 : 9, id]);
    ObjectDefineProperty(f, "name", { value: name });
    return f;
  };

  // --- globals the sandbox keeps ------------------------------------------

  ObjectDefineProperty(g, "structuredClone", {
    value: function structuredClone(value) { return decodeTree(encodeTree(value)); },
    writable: true, configurable: true,
  });
  ObjectDefineProperty(g, "queueMicrotask", {
    value: function queueMicrotask(callback) {
      if (typeof callback !== "function") throw new TypeErrorCtor("queueMicrotask: callback is not a function");
      PromisePrototypeThen(PromiseResolve(), () => { callback(); });
    },
    writable: true, configurable: true,
  });

  // --- running ------------------------------------------------------------

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
        shown = t === "string" ? JSONStringify(x) : t === "function" ? "[function]" :
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
      host(3, phase, read(e, "name") ?? "Error", read(e, "message") ?? "", read(e, "stack") ?? "",
        read(e, "fileName") ?? "", readNumber(e, "lineNumber"), readNumber(e, "columnNumber"), fn);
    } else {
      host(3, phase, "Error", textOf(e), "", "", 0, 0, fn);
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
          if (typeof a === "symbol" || (typeof a === "function" && !WeakSetHas(proxies, a))) args[j] = nodeText(a);
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

  // The console is the same for every run, so it is made with the VM.
  const capturingConsole = makeConsole();

  // The run's globals and bridged modules, until the globals module takes
  // them: its evaluation, before any source module's body, starts the run.
  let payload = null;
  let started = false;

  return ObjectFreeze({
    __proto__: null,
    // start evaluates the entry module and calls the selected export.
    // An optional export that is missing gives undefined. globalsText is a
    // JSON array of the wire texts of the globals, one each.
    start(entry, fn, optional, consoleIndex, argsText, globalsText, importsText) {
      let args;
      try {
        args = argsText === "J[]" ? [] : decode(argsText);
        const texts = JSONParse(globalsText);
        const globals = mk();
        for (let i = 0; i < texts.length; i++) globals[i] = decode(texts[i]);
        if (consoleIndex >= 0) globals[consoleIndex] = capturingConsole;
        payload = [globals, importsText === "J[]" ? [] : deepFreeze(decode(importsText))];
      } catch (e) { fail(0, e); return; }
      PromisePrototypeThen(importModule(entry), (ns) => {
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
        PromisePrototypeThen(new PromiseCtor((resolve) => resolve(v)), finish, (e) => fail(1, e));
      }, (e) => fail(started ? 1 : 0, e));
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
    // exec runs the function a step's script evaluated to, with the global
    // object, and reports how its promise settles.
    exec(fn) {
      let p;
      try { p = ReflectApply(fn, undefined, [g]); } catch (e) { fail(1, e); return; }
      PromisePrototypeThen(p, finish, (e) => fail(1, e));
    },
    // reset forgets the pending host calls of the last run: they never
    // settle.
    reset() { MapClear(pending); },
    // defineTool makes host function id the global name, read-only.
    // shown: its arguments are shown or stored, not computed with (final_answer).
    defineTool(name, id, json, shown) {
      ObjectDefineProperty(g, name, { value: ObjectFreeze(hostFunction(id, name, shown ? 2 : json)), writable: false, enumerable: false, configurable: true });
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
    // lendOpsSpent puts opsSpent on the global object as name, for the
    // session's set-up script to bind and remove.
    lendOpsSpent(name) {
      ObjectDefineProperty(g, name, { value: () => { host(8); }, writable: false, enumerable: false, configurable: true });
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
