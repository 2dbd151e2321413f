package wasmvm

// hardenJS runs once, in the VM a snapshot captures, after the shim made the
// context (qjs_vm_new: ECMAScript intrinsics only, no eval, string code
// generation disabled in the engine, no SharedArrayBuffer or Atomics,
// queueMicrotask). It adds structuredClone, written against intrinsics
// captured here, so that a program's changes to prototypes do not change
// what it does.
const hardenJS = `(() => {
'use strict';
const {apply} = Reflect;
const O = Object, A = Array;
const getProto = O.getPrototypeOf, keys = O.keys, defineProperty = O.defineProperty;
const MapC = Map, SetC = Set, DateC = Date, RegExpC = RegExp, ABC = ArrayBuffer, DVC = DataView;
const mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapHas = Map.prototype.has;
const mapEntries = Map.prototype.entries, setValues = Set.prototype.values, setAdd = Set.prototype.add;
const iterNext = getProto(new Map().entries()).next, setIterNext = getProto(new Set().values()).next;
const dateGetTime = Date.prototype.getTime;
const abSlice = ArrayBuffer.prototype.slice;
const abByteLength = O.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
const TA = getProto(Uint8Array);
const taBuffer = O.getOwnPropertyDescriptor(TA.prototype, 'buffer').get;
const taByteOffset = O.getOwnPropertyDescriptor(TA.prototype, 'byteOffset').get;
const taLength = O.getOwnPropertyDescriptor(TA.prototype, 'length').get;
const dvBuffer = O.getOwnPropertyDescriptor(DataView.prototype, 'buffer').get;
const dvByteOffset = O.getOwnPropertyDescriptor(DataView.prototype, 'byteOffset').get;
const dvByteLength = O.getOwnPropertyDescriptor(DataView.prototype, 'byteLength').get;
const errors = {Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError};
const TypeErrorC = TypeError;
const taTag = O.getOwnPropertyDescriptor(TA.prototype, Symbol.toStringTag).get;
const typedArrays = {Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array,
  Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array};
if (typeof Float16Array === 'function') typedArrays.Float16Array = Float16Array;
const objToString = Object.prototype.toString;
const BooleanC = Boolean, NumberC = Number, StringC = String, BigIntC = BigInt;
const valueOf = {Boolean: Boolean.prototype.valueOf, Number: Number.prototype.valueOf,
  String: String.prototype.valueOf, BigInt: BigInt.prototype.valueOf};

function fail(v) {
  throw new TypeErrorC('structuredClone: ' + (typeof v === 'function' ? 'a function' :
    typeof v === 'symbol' ? 'a symbol' : apply(objToString, v, [])) + ' could not be cloned');
}

function clone(v, seen) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) {
    if (typeof v === 'symbol') fail(v);
    return v;
  }
  if (typeof v === 'function') fail(v);
  if (apply(mapHas, seen, [v])) return apply(mapGet, seen, [v]);
  const tag = apply(objToString, v, []);
  let out;
  switch (tag) {
  case '[object Array]':
    out = new A(v.length);
    apply(mapSet, seen, [v, out]);
    for (const k of keys(v)) out[k] = clone(v[k], seen);
    return out;
  case '[object Date]':
    out = new DateC(apply(dateGetTime, v, []));
    break;
  case '[object RegExp]':
    out = new RegExpC(v.source, v.flags);
    break;
  case '[object Boolean]': case '[object Number]': case '[object String]': case '[object BigInt]': {
    const name = tag.slice(8, -1);
    out = O(apply(valueOf[name], v, []));
    break;
  }
  case '[object Map]': {
    out = new MapC();
    apply(mapSet, seen, [v, out]);
    const it = apply(mapEntries, v, []);
    for (let r = apply(iterNext, it, []); !r.done; r = apply(iterNext, it, []))
      apply(mapSet, out, [clone(r.value[0], seen), clone(r.value[1], seen)]);
    return out;
  }
  case '[object Set]': {
    out = new SetC();
    apply(mapSet, seen, [v, out]);
    const it = apply(setValues, v, []);
    for (let r = apply(setIterNext, it, []); !r.done; r = apply(setIterNext, it, []))
      apply(setAdd, out, [clone(r.value, seen)]);
    return out;
  }
  case '[object ArrayBuffer]':
    out = apply(abSlice, v, [0, apply(abByteLength, v, [])]);
    break;
  case '[object DataView]': {
    const buf = clone(apply(dvBuffer, v, []), seen);
    out = new DVC(buf, apply(dvByteOffset, v, []), apply(dvByteLength, v, []));
    break;
  }
  case '[object Error]': {
    const C = errors[v.name] || Error;
    out = new C(v.message);
    apply(mapSet, seen, [v, out]);
    if ('stack' in v) defineProperty(out, 'stack', {value: v.stack, writable: true, configurable: true});
    if ('cause' in v) defineProperty(out, 'cause', {value: clone(v.cause, seen), writable: true, configurable: true});
    return out;
  }
  case '[object Object]': {
    // plain objects and class instances alike: own enumerable data, as a
    // plain object (as V8 does)
    out = {};
    apply(mapSet, seen, [v, out]);
    for (const k of keys(v)) out[k] = clone(v[k], seen);
    return out;
  }
  default: {
    let name;
    try { name = apply(taTag, v, []); } catch { fail(v); }
    if (name === undefined || !typedArrays[name]) fail(v);
    const buf = clone(apply(taBuffer, v, []), seen);
    out = new typedArrays[name](buf, apply(taByteOffset, v, []), apply(taLength, v, []));
    break;
  }
  }
  if (out === undefined) fail(v);
  apply(mapSet, seen, [v, out]);
  return out;
}

defineProperty(globalThis, 'structuredClone', {
  value: function structuredClone(value) {
    if (arguments.length === 0) throw new TypeErrorC('structuredClone: 1 argument required, but only 0 present');
    return clone(value, new MapC());
  },
  writable: true, configurable: true, enumerable: false,
});
})();
`
