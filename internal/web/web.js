// The web platform's pure APIs for the sandbox, after the WHATWG
// specifications (Encoding, HTML's base64 utilities, DOM's events and
// aborting, Fetch's headers, requests and responses, the File API's Blob,
// URL's URL and URLSearchParams, High Resolution Time's performance, Web
// Cryptography's crypto, WebIDL's DOMException):
// TextEncoder, TextDecoder (UTF-8 and UTF-16LE), atob, btoa, DOMException,
// Event, EventTarget, AbortController, AbortSignal, Headers, Blob,
// URLSearchParams, URL, Request, Response, performance and crypto. They
// compute and reach nothing of the host but its entropy and its digests
// (host, the engine's host function for Intl and the web: host.go's Call).
//
// The script is a function expression; it runs once, in the snapshot,
// after Intl. It captures the intrinsics it uses, so that a program's
// changes to the built-ins do not reach its work.
(function (host) {
  "use strict";
  const g = globalThis;
  const O = Object, defineProperty = O.defineProperty, getOwnPropertyNames = O.getOwnPropertyNames;
  const getOwnPropertyDescriptor = O.getOwnPropertyDescriptor, setPrototypeOf = O.setPrototypeOf;
  const { apply } = Reflect;
  const TypeErrorC = TypeError, RangeErrorC = RangeError, StringC = String, ErrorC = Error;
  const Uint8ArrayC = Uint8Array, ArrayBufferC = ArrayBuffer, DataViewC = DataView;
  const fromCharCode = String.fromCharCode;
  const fromBase64 = Uint8Array.fromBase64, toBase64 = Uint8Array.prototype.toBase64;
  const strCharCodeAt = String.prototype.charCodeAt, strToLower = String.prototype.toLowerCase;
  const strReplace = String.prototype.replace, strSlice = String.prototype.slice;
  const reTest = RegExp.prototype.test;
  const isView = ArrayBuffer.isView;
  const taBuffer = getOwnPropertyDescriptor(O.getPrototypeOf(Uint8Array.prototype), "buffer").get;
  const taOffset = getOwnPropertyDescriptor(O.getPrototypeOf(Uint8Array.prototype), "byteOffset").get;
  const taLength = getOwnPropertyDescriptor(O.getPrototypeOf(Uint8Array.prototype), "byteLength").get;
  const dvBuffer = getOwnPropertyDescriptor(DataView.prototype, "buffer").get;
  const dvOffset = getOwnPropertyDescriptor(DataView.prototype, "byteOffset").get;
  const dvLength = getOwnPropertyDescriptor(DataView.prototype, "byteLength").get;
  const abLength = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  const u8Subarray = Uint8Array.prototype.subarray, u8Slice = Uint8Array.prototype.slice;
  const call = (f, t, ...a) => apply(f, t, a);
  // uncurry(f)(t, ...a) calls f with this t, as a bound function: no
  // argument array per call, where the loops call per character.
  const uncurry = (f) => call(O.getPrototypeOf(uncurry).bind, O.getPrototypeOf(uncurry).call, f);
  const charCodeAt = uncurry(String.prototype.charCodeAt);

  const captureStackTrace = ErrorC.captureStackTrace;

  // toString is WebIDL's DOMString conversion: a Symbol throws.
  const toString = (v) => {
    if (typeof v === "symbol") throw new TypeErrorC("Cannot convert a Symbol value to a string");
    return StringC(v);
  };

  // install defines the global name as the built-ins are: writable,
  // configurable, not enumerable.
  const install = (name, v) => defineProperty(g, name, { value: v, writable: true, configurable: true, enumerable: false });

  // iface gives a class the shape of a WebIDL interface: its prototype's
  // members enumerable, and its Symbol.toStringTag.
  const iface = (C, name) => {
    const p = C.prototype;
    for (const k of getOwnPropertyNames(p)) {
      if (k !== "constructor") {
        const d = getOwnPropertyDescriptor(p, k);
        d.enumerable = true;
        defineProperty(p, k, d);
      }
    }
    defineProperty(p, Symbol.toStringTag, { value: name, configurable: true });
    install(name, C);
  };

  // DOMException (WebIDL): a name, a message and the legacy code of the
  // name, if it has one. Its prototype inherits from Error.prototype.
  const codes = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
    NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InUseAttributeError: 10,
    InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14,
    InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20,
    URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
  };
  setPrototypeOf(codes, null);
  class DOMException {
    #name;
    #message;
    constructor(message = "", name = "Error") {
      this.#message = toString(message);
      this.#name = toString(name);
      // a stack, as Error's own: where it was made
      const holder = {};
      if (captureStackTrace) captureStackTrace(holder, new.target);
      else holder.stack = new ErrorC().stack;
      defineProperty(this, "stack", { value: holder.stack, writable: true, configurable: true, enumerable: false });
    }
    get name() {
      if (!(#name in this)) throw new TypeErrorC("Illegal invocation");
      return this.#name;
    }
    get message() {
      if (!(#message in this)) throw new TypeErrorC("Illegal invocation");
      return this.#message;
    }
    get code() {
      if (!(#name in this)) throw new TypeErrorC("Illegal invocation");
      return codes[this.#name] || 0;
    }
  }
  setPrototypeOf(DOMException.prototype, ErrorC.prototype);
  iface(DOMException, "DOMException");
  const legacy = [
    ["INDEX_SIZE_ERR", 1], ["DOMSTRING_SIZE_ERR", 2], ["HIERARCHY_REQUEST_ERR", 3], ["WRONG_DOCUMENT_ERR", 4],
    ["INVALID_CHARACTER_ERR", 5], ["NO_DATA_ALLOWED_ERR", 6], ["NO_MODIFICATION_ALLOWED_ERR", 7],
    ["NOT_FOUND_ERR", 8], ["NOT_SUPPORTED_ERR", 9], ["INUSE_ATTRIBUTE_ERR", 10], ["INVALID_STATE_ERR", 11],
    ["SYNTAX_ERR", 12], ["INVALID_MODIFICATION_ERR", 13], ["NAMESPACE_ERR", 14], ["INVALID_ACCESS_ERR", 15],
    ["VALIDATION_ERR", 16], ["TYPE_MISMATCH_ERR", 17], ["SECURITY_ERR", 18], ["NETWORK_ERR", 19],
    ["ABORT_ERR", 20], ["URL_MISMATCH_ERR", 21], ["QUOTA_EXCEEDED_ERR", 22], ["TIMEOUT_ERR", 23],
    ["INVALID_NODE_TYPE_ERR", 24], ["DATA_CLONE_ERR", 25],
  ];
  for (const [k, v] of legacy) {
    const d = { value: v, writable: false, enumerable: true, configurable: false };
    defineProperty(DOMException, k, d);
    defineProperty(DOMException.prototype, k, d);
  }

  // binary is the string whose code units are the bytes of b, in chunks
  // (an argument list has a bound).
  const binary = (b, from, to) => {
    let s = "";
    for (let i = from; i < to; i += 8192) {
      s += apply(fromCharCode, null, call(u8Subarray, b, i, i < to - 8192 ? i + 8192 : to));
    }
    return s;
  };

  // atob and btoa (HTML): forgiving base64 of a binary string.
  const asciiWhitespace = /[\t\n\f\r ]/g;
  const base64Body = /^[A-Za-z0-9+/]*$/;
  const invalid = (what) => new DOMException(what, "InvalidCharacterError");
  const { atob, btoa } = {
    atob(data) {
      if (arguments.length < 1) throw new TypeErrorC("atob: 1 argument required, but only 0 present.");
      let s = call(strReplace, toString(data), asciiWhitespace, "");
      if (s.length % 4 === 0) {
        if (call(strSlice, s, -2) === "==") s = call(strSlice, s, 0, -2);
        else if (call(strSlice, s, -1) === "=") s = call(strSlice, s, 0, -1);
      }
      if (s.length % 4 === 1 || !call(reTest, base64Body, s)) {
        throw invalid("The string to be decoded is not correctly encoded.");
      }
      const b = fromBase64(s, { lastChunkHandling: "loose" });
      return binary(b, 0, b.length);
    },
    btoa(data) {
      if (arguments.length < 1) throw new TypeErrorC("btoa: 1 argument required, but only 0 present.");
      const s = toString(data);
      const b = new Uint8ArrayC(s.length);
      for (let i = 0; i < s.length; i++) {
        const c = charCodeAt(s, i);
        if (c > 0xff) throw invalid("Invalid character");
        b[i] = c;
      }
      return call(toBase64, b);
    },
  };
  install("atob", atob);
  install("btoa", btoa);

  // utf8 writes the UTF-8 of s (lone surrogates as U+FFFD) into out from
  // offset at, at most room bytes, whole characters only; it returns the
  // code units read and the bytes written.
  const utf8 = (s, out, at, room) => {
    const n = s.length;
    let i = 0, w = at;
    const end = at + room;
    while (i < n) {
      let c = charCodeAt(s, i);
      if (c < 0x80) {
        if (w >= end) break;
        out[w++] = c;
        i++;
        continue;
      }
      let units = 1;
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = c <= 0xdbff && i + 1 < n ? charCodeAt(s, i + 1) : 0;
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          units = 2;
        } else {
          c = 0xfffd;
        }
      }
      if (c < 0x800) {
        if (w + 2 > end) break;
        out[w++] = 0xc0 | (c >> 6);
      } else if (c < 0x10000) {
        if (w + 3 > end) break;
        out[w++] = 0xe0 | (c >> 12);
        out[w++] = 0x80 | ((c >> 6) & 0x3f);
      } else {
        if (w + 4 > end) break;
        out[w++] = 0xf0 | (c >> 18);
        out[w++] = 0x80 | ((c >> 12) & 0x3f);
        out[w++] = 0x80 | ((c >> 6) & 0x3f);
      }
      out[w++] = 0x80 | (c & 0x3f);
      i += units;
    }
    return [i, w - at];
  };

  class TextEncoder {
    #utf8 = true;
    get encoding() {
      if (!(#utf8 in this)) throw new TypeErrorC("Illegal invocation");
      return "utf-8";
    }
    encode(input = "") {
      if (!(#utf8 in this)) throw new TypeErrorC("Illegal invocation");
      const s = toString(input);
      const out = new Uint8ArrayC(s.length * 3);
      const [, w] = utf8(s, out, 0, out.length);
      return w === out.length ? out : call(u8Slice, out, 0, w);
    }
    encodeInto(source, destination) {
      if (!(#utf8 in this)) throw new TypeErrorC("Illegal invocation");
      const s = toString(source);
      if (!isView(destination) || !(destination instanceof Uint8ArrayC)) {
        throw new TypeErrorC("TextEncoder.encodeInto: Argument 2 must be a Uint8Array");
      }
      const [read, written] = utf8(s, destination, 0, destination.length);
      return { read, written };
    }
  }
  iface(TextEncoder, "TextEncoder");

  // The labels of UTF-8 and UTF-16LE (Encoding, "Names and labels").
  const labels = {
    "unicode-1-1-utf-8": "utf-8", unicode11utf8: "utf-8", unicode20utf8: "utf-8", "utf-8": "utf-8", utf8: "utf-8",
    "x-unicode20utf8": "utf-8",
    csunicode: "utf-16le", "iso-10646-ucs-2": "utf-16le", "ucs-2": "utf-16le", unicode: "utf-16le",
    unicodefeff: "utf-16le", "utf-16": "utf-16le", "utf-16le": "utf-16le",
  };
  setPrototypeOf(labels, null);
  const trimLabel = /^[\t\n\f\r ]+|[\t\n\f\r ]+$/g;

  // bytesOf is the bytes a BufferSource views.
  const bytesOf = (input) => {
    if (input instanceof ArrayBufferC) return new Uint8ArrayC(input, 0, call(abLength, input));
    if (isView(input)) {
      if (input instanceof DataViewC) return new Uint8ArrayC(call(dvBuffer, input), call(dvOffset, input), call(dvLength, input));
      return new Uint8ArrayC(call(taBuffer, input), call(taOffset, input), call(taLength, input));
    }
    throw new TypeErrorC("TextDecoder.decode: The provided value is not of type '(ArrayBuffer or ArrayBufferView)'");
  };

  class TextDecoder {
    #encoding;
    #fatal;
    #ignoreBOM;
    // the decoder's state between calls with { stream: true }
    #cp = 0;
    #need = 0;
    #seen = 0;
    #lower = 0x80;
    #upper = 0xbf;
    #bomSeen = false;
    // UTF-16LE's state: a byte waiting for its pair, a lead surrogate
    // waiting for its trail (-1: none)
    #leadByte = -1;
    #leadSurrogate = -1;
    constructor(label = "utf-8", options = undefined) {
      const l = call(strToLower, call(strReplace, toString(label), trimLabel, ""));
      const enc = labels[l];
      if (enc === undefined) {
        throw new RangeErrorC(`TextDecoder: the encoding "${toString(label)}" is not supported (UTF-8 and UTF-16LE are)`);
      }
      this.#encoding = enc;
      if (options !== undefined && options !== null && typeof options !== "object" && typeof options !== "function") {
        throw new TypeErrorC("TextDecoder: options must be an object");
      }
      const o = options == null ? {} : options;
      this.#fatal = !!o.fatal;
      this.#ignoreBOM = !!o.ignoreBOM;
    }
    get encoding() {
      if (!(#fatal in this)) throw new TypeErrorC("Illegal invocation");
      return this.#encoding;
    }
    get fatal() {
      if (!(#fatal in this)) throw new TypeErrorC("Illegal invocation");
      return this.#fatal;
    }
    get ignoreBOM() {
      if (!(#fatal in this)) throw new TypeErrorC("Illegal invocation");
      return this.#ignoreBOM;
    }
    decode(input = undefined, options = undefined) {
      if (!(#fatal in this)) throw new TypeErrorC("Illegal invocation");
      const b = input === undefined ? new Uint8ArrayC(0) : bytesOf(input);
      if (options !== undefined && options !== null && typeof options !== "object" && typeof options !== "function") {
        throw new TypeErrorC("TextDecoder.decode: options must be an object");
      }
      const stream = options == null ? false : !!options.stream;
      let out = this.#encoding === "utf-8" ? this.#utf8(b, stream) : this.#utf16(b, stream);
      if (!this.#bomSeen && out.length > 0) {
        this.#bomSeen = true;
        if (!this.#ignoreBOM && call(strCharCodeAt, out, 0) === 0xfeff) out = call(strSlice, out, 1);
      }
      if (!stream) this.#reset();
      return out;
    }
    // fail is a decoding error: a TypeError if the decoder is fatal (its
    // state reset), else U+FFFD, which emit takes.
    #fail(emit) {
      if (this.#fatal) {
        this.#reset();
        throw new TypeErrorC(`TextDecoder.decode: The encoded data was not valid for encoding ${this.#encoding}`);
      }
      emit(0xfffd);
    }
    #utf16(b, stream) {
      let out = "";
      const units = [];
      const emit = (c) => {
        units[units.length] = c;
        if (units.length >= 8190) {
          out += apply(fromCharCode, null, units);
          units.length = 0;
        }
      };
      let lb = this.#leadByte, ls = this.#leadSurrogate;
      for (let i = 0; i < b.length; i++) {
        if (lb < 0) {
          lb = b[i];
          continue;
        }
        const u = lb | (b[i] << 8);
        lb = -1;
        if (ls >= 0) {
          const lead = ls;
          ls = -1;
          if (u >= 0xdc00 && u <= 0xdfff) {
            emit(lead);
            emit(u);
            continue;
          }
          this.#fail(emit); // the lone lead; u is read again below
        }
        if (u >= 0xd800 && u <= 0xdbff) ls = u;
        else if (u >= 0xdc00 && u <= 0xdfff) this.#fail(emit);
        else emit(u);
      }
      if (!stream && (lb >= 0 || ls >= 0)) {
        lb = ls = -1;
        this.#fail(emit);
      }
      this.#leadByte = lb;
      this.#leadSurrogate = ls;
      if (units.length) out += apply(fromCharCode, null, units);
      return out;
    }
    #utf8(b, stream) {
      // Encoding's UTF-8 decoder: a byte that cannot continue a sequence
      // ends it with U+FFFD and is read again.
      let cp = this.#cp, need = this.#need, seen = this.#seen, lower = this.#lower, upper = this.#upper;
      const n = b.length;
      let out = "";
      const units = [];
      const flush = () => {
        out += apply(fromCharCode, null, units);
        units.length = 0;
      };
      const emit = (c) => {
        if (c > 0xffff) {
          c -= 0x10000;
          units[units.length] = 0xd800 + (c >> 10);
          units[units.length] = 0xdc00 + (c & 0x3ff);
        } else {
          units[units.length] = c;
        }
        if (units.length >= 8190) flush();
      };
      const fail = () => this.#fail(emit);
      let i = 0;
      while (i < n) {
        const byte = b[i];
        if (need === 0) {
          // a run of ASCII at once
          if (byte < 0x80) {
            let j = i + 1;
            while (j < n && b[j] < 0x80) j++;
            if (units.length) flush();
            out += binary(b, i, j);
            i = j;
            continue;
          }
          if (byte >= 0xc2 && byte <= 0xdf) {
            need = 1;
            cp = byte & 0x1f;
          } else if (byte >= 0xe0 && byte <= 0xef) {
            if (byte === 0xe0) lower = 0xa0;
            if (byte === 0xed) upper = 0x9f;
            need = 2;
            cp = byte & 0xf;
          } else if (byte >= 0xf0 && byte <= 0xf4) {
            if (byte === 0xf0) lower = 0x90;
            if (byte === 0xf4) upper = 0x8f;
            need = 3;
            cp = byte & 0x7;
          } else {
            fail();
          }
          i++;
          continue;
        }
        if (byte < lower || byte > upper) {
          cp = need = seen = 0;
          lower = 0x80;
          upper = 0xbf;
          fail();
          continue; // the byte is read again
        }
        lower = 0x80;
        upper = 0xbf;
        cp = (cp << 6) | (byte & 0x3f);
        seen++;
        i++;
        if (seen === need) {
          const c = cp;
          cp = need = seen = 0;
          emit(c);
        }
      }
      if (!stream && need !== 0) {
        cp = need = seen = 0;
        lower = 0x80;
        upper = 0xbf;
        fail();
      }
      if (units.length) flush();
      this.#cp = cp;
      this.#need = need;
      this.#seen = seen;
      this.#lower = lower;
      this.#upper = upper;
      return out;
    }
    #reset() {
      this.#cp = this.#need = this.#seen = 0;
      this.#lower = 0x80;
      this.#upper = 0xbf;
      this.#leadByte = this.#leadSurrogate = -1;
      this.#bomSeen = false;
    }
  }
  iface(TextDecoder, "TextDecoder");

  // Event and EventTarget (DOM): dispatch to a target's own listeners (no
  // tree: the phase is "at target" only), with once, passive, signal and
  // handleEvent objects. An error a listener throws is thrown again in a
  // microtask, as Node reports it, and the dispatch goes on.
  const queue = queueMicrotask;
  const DateC = Date, dateNow = Date.now;
  // The sandbox's time origin, in milliseconds since the epoch: the time
  // it is first asked for in the sandbox (the image holds none, so each
  // sandbox, or each executor, sets its own; a sandbox's time is counted
  // from its first use, not from its start). Time is as coarse as
  // Date.now: whole milliseconds.
  let timeOrigin = null;
  const originTime = () => {
    if (timeOrigin === null) timeOrigin = call(dateNow, DateC);
    return timeOrigin;
  };
  const sinceOrigin = () => {
    const o = originTime();
    return call(dateNow, DateC) - o;
  };
  const MapC = Map, mapGet = Map.prototype.get, mapSet = Map.prototype.set;
  const arrIndexOf = Array.prototype.indexOf, arrSplice = Array.prototype.splice, arrSlice = Array.prototype.slice;
  const isObject = (v) => (typeof v === "object" && v !== null) || typeof v === "function";
  const illegal = () => new TypeErrorC("Illegal invocation");
  let dispatch;
  class Event {
    #type;
    #bubbles;
    #cancelable;
    #composed;
    #target = null;
    #current = null;
    #phase = 0;
    #canceled = false;
    #stop = false;
    #stopNow = false;
    #passive = false;
    #dispatching = false;
    #stamp;
    constructor(type, eventInitDict = undefined) {
      if (arguments.length < 1) throw new TypeErrorC('The "type" argument must be specified');
      this.#type = toString(type);
      const d = eventInitDict == null ? {} : eventInitDict;
      if (!isObject(d)) throw new TypeErrorC('The "eventInitDict" argument must be an object');
      this.#bubbles = !!d.bubbles;
      this.#cancelable = !!d.cancelable;
      this.#composed = !!d.composed;
      this.#stamp = sinceOrigin();
    }
    get type() { if (!(#type in this)) throw illegal(); return this.#type; }
    get target() { if (!(#type in this)) throw illegal(); return this.#target; }
    get srcElement() { if (!(#type in this)) throw illegal(); return this.#target; }
    get currentTarget() { if (!(#type in this)) throw illegal(); return this.#current; }
    composedPath() { if (!(#type in this)) throw illegal(); return this.#dispatching ? [this.#current] : []; }
    get eventPhase() { if (!(#type in this)) throw illegal(); return this.#phase; }
    stopPropagation() { if (!(#type in this)) throw illegal(); this.#stop = true; }
    get cancelBubble() { if (!(#type in this)) throw illegal(); return this.#stop; }
    set cancelBubble(v) { if (!(#type in this)) throw illegal(); if (v) this.#stop = true; }
    stopImmediatePropagation() { if (!(#type in this)) throw illegal(); this.#stop = this.#stopNow = true; }
    get bubbles() { if (!(#type in this)) throw illegal(); return this.#bubbles; }
    get cancelable() { if (!(#type in this)) throw illegal(); return this.#cancelable; }
    get returnValue() { if (!(#type in this)) throw illegal(); return !this.#canceled; }
    set returnValue(v) { if (!(#type in this)) throw illegal(); if (!v && this.#cancelable && !this.#passive) this.#canceled = true; }
    preventDefault() { if (!(#type in this)) throw illegal(); if (this.#cancelable && !this.#passive) this.#canceled = true; }
    get defaultPrevented() { if (!(#type in this)) throw illegal(); return this.#canceled; }
    get composed() { if (!(#type in this)) throw illegal(); return this.#composed; }
    get isTrusted() { if (!(#type in this)) throw illegal(); return false; }
    get timeStamp() { if (!(#type in this)) throw illegal(); return this.#stamp; }
    initEvent(type, bubbles = false, cancelable = false) {
      if (!(#type in this)) throw illegal();
      if (arguments.length < 1) throw new TypeErrorC('The "type" argument must be specified');
      if (this.#dispatching) return;
      this.#type = toString(type);
      this.#bubbles = !!bubbles;
      this.#cancelable = !!cancelable;
      this.#canceled = this.#stop = this.#stopNow = false;
      this.#target = null;
    }
    static {
      // dispatch runs listeners (a copy of the target's list) for target.
      dispatch = (ev, target, listeners) => {
        if (!isObject(ev) || !(#type in ev)) throw new TypeErrorC('The "event" argument must be an instance of Event');
        if (ev.#dispatching) throw new DOMException("The event is already being dispatched", "InvalidStateError");
        ev.#dispatching = true;
        ev.#target = ev.#current = target;
        ev.#phase = 2;
        try {
          for (const l of listeners) {
            if (ev.#stopNow) break;
            if (l.removed) continue;
            if (l.once) l.remove();
            ev.#passive = l.passive;
            try {
              const cb = l.callback;
              if (typeof cb === "function") call(cb, target, ev);
              else {
                const h = cb.handleEvent;
                if (typeof h !== "function") throw new TypeErrorC("The listener's handleEvent is not a function");
                call(h, cb, ev);
              }
            } catch (e) {
              queue(() => { throw e; });
            }
            ev.#passive = false;
          }
        } finally {
          ev.#dispatching = false;
          ev.#current = null;
          ev.#phase = 0;
          ev.#stop = ev.#stopNow = false;
        }
        return !ev.#canceled;
      };
    }
  }
  for (const [k, v] of [["NONE", 0], ["CAPTURING_PHASE", 1], ["AT_TARGET", 2], ["BUBBLING_PHASE", 3]]) {
    const d = { value: v, writable: false, enumerable: true, configurable: false };
    defineProperty(Event, k, d);
    defineProperty(Event.prototype, k, d);
  }
  iface(Event, "Event");

  // the options of addEventListener
  const listenerOptions = (o) => {
    if (!isObject(o)) return { capture: !!o, once: false, passive: false, signal: undefined };
    const signal = o.signal;
    if (signal !== undefined && !isSignal(signal)) {
      throw new TypeErrorC('The "options.signal" property must be an instance of AbortSignal');
    }
    return { capture: !!o.capture, once: !!o.once, passive: !!o.passive, signal };
  };
  class EventTarget {
    #listeners = new MapC();
    addEventListener(type, callback, options = undefined) {
      if (!(#listeners in this)) throw illegal();
      if (arguments.length < 2) throw new TypeErrorC('The "type" and "listener" arguments must be specified');
      type = toString(type);
      const o = listenerOptions(options);
      if (callback == null) return;
      if (!isObject(callback)) throw new TypeErrorC('The "listener" argument must be an object or a function');
      if (o.signal !== undefined && o.signal.aborted) return;
      let list = call(mapGet, this.#listeners, type);
      if (list === undefined) call(mapSet, this.#listeners, type, (list = []));
      for (const l of list) if (l.callback === callback && l.capture === o.capture) return;
      const l = {
        callback, capture: o.capture, once: o.once, passive: o.passive, removed: false,
        remove: () => {
          l.removed = true;
          const at = call(arrIndexOf, list, l);
          if (at >= 0) call(arrSplice, list, at, 1);
        },
      };
      list[list.length] = l;
      if (o.signal !== undefined) o.signal.addEventListener("abort", () => l.remove(), { once: true });
    }
    removeEventListener(type, callback, options = undefined) {
      if (!(#listeners in this)) throw illegal();
      if (arguments.length < 2) throw new TypeErrorC('The "type" and "listener" arguments must be specified');
      const list = call(mapGet, this.#listeners, toString(type));
      const capture = isObject(options) ? !!options.capture : !!options;
      if (list === undefined) return;
      for (const l of list) if (l.callback === callback && l.capture === capture) return l.remove();
    }
    dispatchEvent(event) {
      if (!(#listeners in this)) throw illegal();
      if (arguments.length < 1) throw new TypeErrorC('The "event" argument must be specified');
      const type = isObject(event) && event instanceof Event ? event.type : "";
      const list = call(mapGet, this.#listeners, type);
      return dispatch(event, this, list === undefined ? [] : call(arrSlice, list));
    }
  }
  iface(EventTarget, "EventTarget");

  // AbortController and AbortSignal (DOM). AbortSignal.timeout needs a
  // timer, which the sandbox has not of its own (airlock.Timers are the
  // caller's, and not here): it throws a NotSupportedError.
  let making = false, isSignal, signalAbort, newSignal;
  const abortReason = (reason) => (reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason);
  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason = undefined;
    #onabort = null;
    constructor() {
      if (!making) throw new TypeErrorC("Illegal constructor");
      making = false;
      super();
    }
    get aborted() { if (!(#aborted in this)) throw illegal(); return this.#aborted; }
    get reason() { if (!(#aborted in this)) throw illegal(); return this.#reason; }
    throwIfAborted() {
      if (!(#aborted in this)) throw illegal();
      if (this.#aborted) throw this.#reason;
    }
    get onabort() { if (!(#aborted in this)) throw illegal(); return this.#onabort; }
    set onabort(f) {
      if (!(#aborted in this)) throw illegal();
      if (this.#onabort !== null) this.removeEventListener("abort", this.#onabort);
      this.#onabort = isObject(f) ? f : null;
      if (this.#onabort !== null) this.addEventListener("abort", this.#onabort);
    }
    static abort(reason = undefined) {
      const s = newSignal();
      s.#aborted = true;
      s.#reason = abortReason(reason);
      return s;
    }
    static any(signals) {
      const s = newSignal();
      const list = [];
      for (const x of signals) {
        if (!isSignal(x)) throw new TypeErrorC('The "signals" argument must contain only AbortSignal objects');
        list[list.length] = x;
      }
      for (const x of list) {
        if (x.#aborted) {
          s.#aborted = true;
          s.#reason = x.#reason;
          return s;
        }
      }
      for (const x of list) x.addEventListener("abort", () => signalAbort(s, x.#reason), { once: true });
      return s;
    }
    static timeout(ms) {
      throw new DOMException("AbortSignal.timeout needs a timer, and the sandbox has none of its own", "NotSupportedError");
    }
    static {
      isSignal = (x) => isObject(x) && #aborted in x;
      signalAbort = (s, reason) => {
        if (s.#aborted) return;
        s.#aborted = true;
        s.#reason = abortReason(reason);
        s.dispatchEvent(new Event("abort"));
      };
      newSignal = () => {
        making = true;
        return new AbortSignal();
      };
    }
  }
  iface(AbortSignal, "AbortSignal");
  class AbortController {
    #signal = newSignal();
    get signal() { if (!(#signal in this)) throw illegal(); return this.#signal; }
    abort(reason = undefined) {
      if (!(#signal in this)) throw illegal();
      signalAbort(this.#signal, reason);
    }
  }
  iface(AbortController, "AbortController");

  // Headers (Fetch): a header list with no guard; names are tokens and
  // compared without case, values are trimmed of HTTP whitespace and may
  // hold no NUL, CR or LF. Iterating sorts the names and joins the values
  // of one name with ", ", but Set-Cookie's, which stay apart.
  const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const badValue = /[\0\r\n]/;
  const httpWhitespace = /^[\t\n\r ]+|[\t\n\r ]+$/g;
  const arrSort = Array.prototype.sort, objectKeys = O.keys;
  const headerName = (n) => {
    n = toString(n);
    if (!call(reTest, token, n)) throw new TypeErrorC(`Headers: invalid header name: "${n}"`);
    return call(strToLower, n);
  };
  const headerValue = (v) => {
    v = call(strReplace, toString(v), httpWhitespace, "");
    if (call(reTest, badValue, v)) throw new TypeErrorC("Headers: invalid header value");
    return v;
  };
  const IteratorProto = O.getPrototypeOf(O.getPrototypeOf([][Symbol.iterator]()));
  const weakGet = WeakMap.prototype.get, weakSet = WeakMap.prototype.set;
  // setPair is a list of [name, value] pairs with the first of name's
  // given value and the others removed, or the pair appended (the set of
  // Headers and of URLSearchParams).
  const setPair = (list, n, v) => {
    const kept = [];
    let done = false;
    for (const p of list) {
      if (p[0] !== n) kept[kept.length] = p;
      else if (!done) {
        kept[kept.length] = [n, v];
        done = true;
      }
    }
    if (!done) kept[kept.length] = [n, v];
    return kept;
  };
  // pairIterator gives the maker of an interface's pair iterators (WebIDL):
  // their prototype is tagged tag, and each step reads the pairs that
  // pairsOf gives of the object then, so that a change while iterating
  // shows.
  const pairIterator = (tag, pairsOf) => {
    const states = new WeakMap();
    const proto = O.create(IteratorProto, {
      next: {
        value: function next() {
          const st = this === null || typeof this !== "object" ? undefined : call(weakGet, states, this);
          if (st === undefined) throw illegal();
          const pairs = pairsOf(st.of);
          if (st.at >= pairs.length) return { value: undefined, done: true };
          const [k, v] = pairs[st.at++];
          return { value: st.kind === "key" ? k : st.kind === "value" ? v : [k, v], done: false };
        },
        writable: true, enumerable: true, configurable: true,
      },
      [Symbol.toStringTag]: { value: tag, configurable: true },
    });
    return (of, kind) => {
      const it = O.create(proto);
      call(weakSet, states, it, { of, kind, at: 0 });
      return it;
    };
  };
  let headersPairs;
  const headersIterator = pairIterator("Headers Iterator", (h) => headersPairs(h));
  class Headers {
    #list = []; // [lower-case name, value] in the order they came
    constructor(init = undefined) {
      if (init === undefined) return;
      if (!isObject(init)) throw new TypeErrorC("Headers: the init must be an object");
      if (init[Symbol.iterator] !== undefined) {
        for (const pair of init) {
          const p = [];
          for (const x of pair) p[p.length] = x;
          if (p.length !== 2) throw new TypeErrorC("Headers: each header of the init must be a [name, value] pair");
          this.append(p[0], p[1]);
        }
      } else {
        for (const k of objectKeys(init)) this.append(k, init[k]);
      }
    }
    append(name, value) {
      if (!(#list in this)) throw illegal();
      const n = headerName(name), v = headerValue(value);
      this.#list[this.#list.length] = [n, v];
    }
    delete(name) {
      if (!(#list in this)) throw illegal();
      const n = headerName(name);
      const kept = [];
      for (const p of this.#list) if (p[0] !== n) kept[kept.length] = p;
      this.#list = kept;
    }
    get(name) {
      if (!(#list in this)) throw illegal();
      const n = headerName(name);
      let out = null;
      for (const p of this.#list) if (p[0] === n) out = out === null ? p[1] : out + ", " + p[1];
      return out;
    }
    getSetCookie() {
      if (!(#list in this)) throw illegal();
      const out = [];
      for (const p of this.#list) if (p[0] === "set-cookie") out[out.length] = p[1];
      return out;
    }
    has(name) {
      if (!(#list in this)) throw illegal();
      const n = headerName(name);
      for (const p of this.#list) if (p[0] === n) return true;
      return false;
    }
    set(name, value) {
      if (!(#list in this)) throw illegal();
      const n = headerName(name), v = headerValue(value);
      this.#list = setPair(this.#list, n, v);
    }
    forEach(callback, thisArg = undefined) {
      if (!(#list in this)) throw illegal();
      if (typeof callback !== "function") throw new TypeErrorC("Headers.forEach: the callback must be a function");
      const pairs = headersPairs(this);
      for (let i = 0; i < pairs.length; i++) call(callback, thisArg, pairs[i][1], pairs[i][0], this);
    }
    entries() { if (!(#list in this)) throw illegal(); return headersIterator(this, "key+value"); }
    keys() { if (!(#list in this)) throw illegal(); return headersIterator(this, "key"); }
    values() { if (!(#list in this)) throw illegal(); return headersIterator(this, "value"); }
    static {
      // headersPairs is Fetch's "sort and combine".
      headersPairs = (h) => {
        const names = [];
        for (const p of h.#list) if (call(arrIndexOf, names, p[0]) < 0) names[names.length] = p[0];
        call(arrSort, names, (a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const out = [];
        for (const n of names) {
          if (n === "set-cookie") {
            for (const p of h.#list) if (p[0] === n) out[out.length] = [n, p[1]];
          } else {
            let v = null;
            for (const p of h.#list) if (p[0] === n) v = v === null ? p[1] : v + ", " + p[1];
            out[out.length] = [n, v];
          }
        }
        return out;
      };
    }
  }
  defineProperty(Headers.prototype, Symbol.iterator, {
    value: Headers.prototype.entries, writable: true, enumerable: false, configurable: true,
  });
  iface(Headers, "Headers");

  // Blob (File API): bytes in memory and a type. Its parts are copied:
  // buffers and views as they are, Blobs' bytes, anything else as the
  // UTF-8 of its string ("native" endings: LF). A type outside printable
  // ASCII is "".
  const blobType = (t) => {
    t = toString(t);
    for (let i = 0; i < t.length; i++) {
      const c = charCodeAt(t, i);
      if (c < 0x20 || c > 0x7e) return "";
    }
    return call(strToLower, t);
  };
  const lineEndings = /\r\n|\r/g;
  const PromiseC = Promise, promiseResolve = Promise.resolve, promiseReject = Promise.reject;
  let blobOf, makeBlob;
  class Blob {
    #bytes;
    #type;
    static {
      // blobOf is a Blob's bytes and type, or null for another value.
      blobOf = (b) => (isObject(b) && #bytes in b ? [b.#bytes, b.#type] : null);
      makeBlob = (bytes, type) => {
        const b = new Blob();
        b.#bytes = bytes;
        b.#type = type;
        return b;
      };
    }
    constructor(blobParts = undefined, options = undefined) {
      if (options !== undefined && options !== null && !isObject(options)) {
        throw new TypeErrorC("Blob: the options must be an object");
      }
      const native = options != null && toString(options.endings === undefined ? "transparent" : options.endings) === "native";
      if (options != null && options.endings !== undefined) {
        const e = toString(options.endings);
        if (e !== "native" && e !== "transparent") throw new TypeErrorC(`Blob: invalid endings "${e}"`);
      }
      const chunks = [];
      let size = 0;
      if (blobParts !== undefined) {
        if (!isObject(blobParts) || typeof blobParts[Symbol.iterator] !== "function") {
          throw new TypeErrorC("Blob: the parts must be a sequence");
        }
        for (const part of blobParts) {
          let b;
          if (part instanceof ArrayBufferC) b = call(u8Slice, new Uint8ArrayC(part));
          else if (isView(part)) b = call(u8Slice, bytesOf(part));
          else if (isObject(part) && #bytes in part) b = part.#bytes;
          else {
            let s = toString(part);
            if (native) s = call(strReplace, s, lineEndings, "\n");
            const out = new Uint8ArrayC(s.length * 3);
            const [, w] = utf8(s, out, 0, out.length);
            b = call(u8Slice, out, 0, w);
          }
          chunks[chunks.length] = b;
          size += b.length;
        }
      }
      const all = new Uint8ArrayC(size);
      let at = 0;
      for (const b of chunks) {
        call(u8Set, all, b, at);
        at += b.length;
      }
      this.#bytes = all;
      this.#type = options == null || options.type === undefined ? "" : blobType(options.type);
    }
    get size() { if (!(#bytes in this)) throw illegal(); return this.#bytes.length; }
    get type() { if (!(#bytes in this)) throw illegal(); return this.#type; }
    slice(start = undefined, end = undefined, contentType = undefined) {
      if (!(#bytes in this)) throw illegal();
      const n = this.#bytes.length;
      const rel = (v, d) => {
        if (v === undefined) return d;
        const x = toIntegerOrInfinity(v);
        return x < 0 ? (n + x > 0 ? n + x : 0) : x < n ? x : n;
      };
      const from = rel(start, 0), to = rel(end, n);
      const b = new Blob();
      b.#bytes = call(u8Slice, this.#bytes, from, to > from ? to : from);
      b.#type = contentType === undefined ? "" : blobType(contentType);
      return b;
    }
    text() {
      if (!(#bytes in this)) return call(promiseReject, PromiseC, illegal());
      return call(promiseResolve, PromiseC, new TextDecoder().decode(this.#bytes));
    }
    arrayBuffer() {
      if (!(#bytes in this)) return call(promiseReject, PromiseC, illegal());
      return call(promiseResolve, PromiseC, call(taBuffer, call(u8Slice, this.#bytes)));
    }
    bytes() {
      if (!(#bytes in this)) return call(promiseReject, PromiseC, illegal());
      return call(promiseResolve, PromiseC, call(u8Slice, this.#bytes));
    }
  }
  const u8Set = Uint8Array.prototype.set;
  const MathTrunc = Math.trunc, NumberC = Number;
  const toIntegerOrInfinity = (v) => {
    const x = NumberC(v);
    return x !== x ? 0 : MathTrunc(x);
  };
  iface(Blob, "Blob");

  // performance (High Resolution Time): now() and timeOrigin, as coarse as
  // Date.now; the constructor is illegal, as in browsers and Node.
  let makingPerformance = false;
  class Performance extends EventTarget {
    #brand = true;
    constructor() {
      if (!makingPerformance) throw new TypeErrorC("Illegal constructor");
      super();
    }
    now() { if (!(#brand in this)) throw illegal(); return sinceOrigin(); }
    get timeOrigin() { if (!(#brand in this)) throw illegal(); return originTime(); }
    toJSON() { if (!(#brand in this)) throw illegal(); return { timeOrigin: originTime() }; }
  }
  iface(Performance, "Performance");
  makingPerformance = true;
  install("performance", new Performance());
  makingPerformance = false;

  // crypto (Web Cryptography API): getRandomValues and randomUUID from the
  // host's crypto/rand, asked at each call (no generator state lives in the
  // image, which every sandbox is a copy of), and subtle.digest (SHA-1,
  // SHA-256, SHA-384, SHA-512) computed by the host. No other SubtleCrypto
  // method: keys, ciphers and signatures are not there.
  {
    const TypedArrayProto = O.getPrototypeOf(Uint8Array.prototype);
    const taName = getOwnPropertyDescriptor(TypedArrayProto, Symbol.toStringTag).get;
    const integerArrays = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
      "Uint32Array", "BigInt64Array", "BigUint64Array"];
    const hostCall = (op, ...texts) => apply(host, undefined, ["web." + op, ...texts]);
    const randomBytes = (n) => {
      const b64 = hostCall("random", StringC(n));
      if (typeof b64 !== "string" || (b64 === "" && n > 0)) throw new DOMException("The host gave no random bytes", "OperationError");
      return fromBase64(b64);
    };
    let making = false;
    const illegalConstructor = () => {
      if (!making) throw new TypeErrorC("Illegal constructor");
    };
    const digests = { __proto__: null, "SHA-1": true, "SHA-256": true, "SHA-384": true, "SHA-512": true };
    const toUpper = uncurry(String.prototype.toUpperCase);
    class SubtleCrypto {
      #brand = true;
      constructor() { illegalConstructor(); }
      digest(algorithm, data) {
        try {
          if (!(#brand in this)) throw illegal();
          if (arguments.length < 2) throw new TypeErrorC("SubtleCrypto.digest: 2 arguments required");
          if (isObject(algorithm) && algorithm.name === undefined) throw new TypeErrorC("SubtleCrypto.digest: the algorithm has no name");
          const name = isObject(algorithm) ? toString(algorithm.name) : toString(algorithm);
          const upper = toUpper(name);
          if (!(upper in digests)) throw new DOMException("Unrecognized algorithm name", "NotSupportedError");
          const bytes = bytesOf(data); // (a TypeError for what is not a BufferSource)
          const b64 = hostCall("digest", upper, call(toBase64, bytes));
          if (b64 === "") throw new DOMException("The digest was not computed", "OperationError");
          return call(promiseResolve, PromiseC, call(taBuffer, fromBase64(b64)));
        } catch (e) {
          return call(promiseReject, PromiseC, e);
        }
      }
    }
    iface(SubtleCrypto, "SubtleCrypto");
    making = true;
    const subtle = new SubtleCrypto();
    making = false;
    const hex = (b, from, to) => {
      let s = "";
      for (let i = from; i < to; i++) s += hexDigits[b[i] >> 4] + hexDigits[b[i] & 15];
      return s;
    };
    const toLowerHex = uncurry(String.prototype.toLowerCase);
    class Crypto {
      #brand = true;
      constructor() { illegalConstructor(); }
      get subtle() { if (!(#brand in this)) throw illegal(); return subtle; }
      getRandomValues(array) {
        if (!(#brand in this)) throw illegal();
        if (arguments.length < 1) throw new TypeErrorC("Crypto.getRandomValues: 1 argument required");
        if (!isView(array)) throw new TypeErrorC("Crypto.getRandomValues: the argument is not an ArrayBufferView");
        const name = call(taName, array);
        if (name === undefined || call(arrIndexOf, integerArrays, name) < 0) {
          throw new DOMException("The data argument must be an integer-type TypedArray", "TypeMismatchError");
        }
        const n = call(taLength, array);
        if (n > 65536) {
          throw new DOMException(`The ArrayBufferView's byte length (${n}) exceeds the number of bytes of entropy available via this API (65536)`, "QuotaExceededError");
        }
        if (n > 0) call(u8Set, new Uint8ArrayC(call(taBuffer, array), call(taOffset, array), n), randomBytes(n));
        return array;
      }
      randomUUID() {
        if (!(#brand in this)) throw illegal();
        const b = randomBytes(16);
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // the variant of RFC 9562
        return toLowerHex(hex(b, 0, 4) + "-" + hex(b, 4, 6) + "-" + hex(b, 6, 8) + "-" + hex(b, 8, 10) + "-" + hex(b, 10, 16));
      }
    }
    iface(Crypto, "Crypto");
    making = true;
    install("crypto", new Crypto());
    making = false;
  }

  // URLSearchParams (URL): application/x-www-form-urlencoded lists. Parsed
  // as bytes ("+" a space, %XX a byte, the whole UTF-8 without BOM, bad
  // sequences U+FFFD), serialized with the form's percent-encode set.
  const isHex = (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
  const hexValue = (c) => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10);
  // The bytes are decoded without BOM sniffing: a leading U+FEFF stays.
  const formDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const tdDecode = uncurry(TextDecoder.prototype.decode);
  // percentDecoded is the UTF-8 (without BOM sniffing) of the bytes
  // that percent-decoding the UTF-8 of s gives, "+" a space if plus (the
  // form's decoding; URL's host decodes without it).
  const percentDecoded = (s, plus) => {
    const out = new Uint8ArrayC(s.length * 3);
    const [, n] = utf8(s, out, 0, out.length);
    let w = 0;
    for (let i = 0; i < n; i++) {
      const c = out[i];
      if (plus && c === 0x2b) out[w++] = 0x20;
      else if (c === 0x25 && i + 2 < n && isHex(out[i + 1]) && isHex(out[i + 2])) {
        out[w++] = hexValue(out[i + 1]) * 16 + hexValue(out[i + 2]);
        i += 2;
      } else out[w++] = c;
    }
    return tdDecode(formDecoder, call(u8Subarray, out, 0, w));
  };
  const formSpecial = /[%+\uD800-\uDFFF]/;
  const formDecode = (s) => (call(reTest, formSpecial, s) ? percentDecoded(s, true) : s);
  const hexDigits = "0123456789ABCDEF";
  // formEncode is the form's serializer: ASCII alphanumerics and *-._ as
  // they are, a space as "+", every other byte of the UTF-8 as %XX.
  const formEncode = (s) => {
    const b = new Uint8ArrayC(s.length * 3);
    const [, n] = utf8(s, b, 0, b.length);
    let out = "";
    for (let i = 0; i < n; i++) {
      const c = b[i];
      if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ||
        c === 0x2a || c === 0x2d || c === 0x2e || c === 0x5f) out += fromCharCode(c);
      else if (c === 0x20) out += "+";
      else out += "%" + hexDigits[c >> 4] + hexDigits[c & 15];
    }
    return out;
  };
  const strIndexOfC = String.prototype.indexOf, strSplit = String.prototype.split;
  let paramsPairs, paramsAttach, paramsReset, paramsIs, paramsSerialize;
  const paramsIterator = pairIterator("URLSearchParams Iterator", (p) => paramsPairs(p));
  // parseForm is the form's parser: the name-value pairs of s.
  const parseForm = (s) => {
    const list = [];
    for (const part of call(strSplit, s, "&")) {
      if (part === "") continue;
      const eq = call(strIndexOfC, part, "=");
      const name = eq < 0 ? part : call(strSlice, part, 0, eq);
      const value = eq < 0 ? "" : call(strSlice, part, eq + 1);
      list[list.length] = [formDecode(name), formDecode(value)];
    }
    return list;
  };
  class URLSearchParams {
    #list = [];
    // #url is the URL record of the URL whose searchParams these are:
    // each change writes its query (URL's "update steps").
    #url = null;
    #update() {
      if (this.#url === null) return;
      const q = this.#serialize();
      this.#url.query = q === "" ? null : q;
    }
    #serialize() {
      let out = "";
      for (let i = 0; i < this.#list.length; i++) {
        if (i > 0) out += "&";
        out += formEncode(this.#list[i][0]) + "=" + formEncode(this.#list[i][1]);
      }
      return out;
    }
    constructor(init = "") {
      if (isObject(init)) {
        if (typeof init[Symbol.iterator] === "function") {
          for (const pair of init) {
            const p = [];
            for (const x of pair) p[p.length] = x;
            if (p.length !== 2) throw new TypeErrorC("URLSearchParams: each pair of the init must have two items");
            this.#list[this.#list.length] = [toString(p[0]), toString(p[1])];
          }
        } else {
          for (const k of objectKeys(init)) this.#list[this.#list.length] = [k, toString(init[k])];
        }
        return;
      }
      let s = toString(init);
      if (s.length > 0 && call(strCharCodeAt, s, 0) === 0x3f) s = call(strSlice, s, 1);
      this.#list = parseForm(s);
    }
    get size() { if (!(#list in this)) throw illegal(); return this.#list.length; }
    append(name, value) {
      if (!(#list in this)) throw illegal();
      if (arguments.length < 2) throw new TypeErrorC('The "name" and "value" arguments must be specified');
      this.#list[this.#list.length] = [toString(name), toString(value)];
      this.#update();
    }
    delete(name, value = undefined) {
      if (!(#list in this)) throw illegal();
      if (arguments.length < 1) throw new TypeErrorC('The "name" argument must be specified');
      const n = toString(name), v = value === undefined ? undefined : toString(value);
      const kept = [];
      for (const p of this.#list) if (p[0] !== n || (v !== undefined && p[1] !== v)) kept[kept.length] = p;
      this.#list = kept;
      this.#update();
    }
    get(name) {
      if (!(#list in this)) throw illegal();
      if (arguments.length < 1) throw new TypeErrorC('The "name" argument must be specified');
      const n = toString(name);
      for (const p of this.#list) if (p[0] === n) return p[1];
      return null;
    }
    getAll(name) {
      if (!(#list in this)) throw illegal();
      if (arguments.length < 1) throw new TypeErrorC('The "name" argument must be specified');
      const n = toString(name), out = [];
      for (const p of this.#list) if (p[0] === n) out[out.length] = p[1];
      return out;
    }
    has(name, value = undefined) {
      if (!(#list in this)) throw illegal();
      if (arguments.length < 1) throw new TypeErrorC('The "name" argument must be specified');
      const n = toString(name), v = value === undefined ? undefined : toString(value);
      for (const p of this.#list) if (p[0] === n && (v === undefined || p[1] === v)) return true;
      return false;
    }
    set(name, value) {
      if (!(#list in this)) throw illegal();
      if (arguments.length < 2) throw new TypeErrorC('The "name" and "value" arguments must be specified');
      const n = toString(name), v = toString(value);
      this.#list = setPair(this.#list, n, v);
      this.#update();
    }
    sort() {
      if (!(#list in this)) throw illegal();
      // by the names' code units, stable (as Array.prototype.sort is)
      call(arrSort, this.#list, (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.#update();
    }
    forEach(callback, thisArg = undefined) {
      if (!(#list in this)) throw illegal();
      if (typeof callback !== "function") throw new TypeErrorC("URLSearchParams.forEach: the callback must be a function");
      for (let i = 0; i < this.#list.length; i++) call(callback, thisArg, this.#list[i][1], this.#list[i][0], this);
    }
    entries() { if (!(#list in this)) throw illegal(); return paramsIterator(this, "key+value"); }
    keys() { if (!(#list in this)) throw illegal(); return paramsIterator(this, "key"); }
    values() { if (!(#list in this)) throw illegal(); return paramsIterator(this, "value"); }
    toString() {
      if (!(#list in this)) throw illegal();
      return this.#serialize();
    }
    static {
      paramsPairs = (p) => p.#list;
      paramsAttach = (p, url) => { p.#url = url; };
      paramsIs = (p) => isObject(p) && #list in p;
      paramsSerialize = (p) => p.#serialize();
      paramsReset = (p, query) => { p.#list = parseForm(query); };
    }
  }
  defineProperty(URLSearchParams.prototype, Symbol.iterator, {
    value: URLSearchParams.prototype.entries, writable: true, enumerable: false, configurable: true,
  });
  iface(URLSearchParams, "URLSearchParams");

  let URLC; // the URL class, for Request and Response.redirect
  // URL (WHATWG URL): the basic URL parser with its state overrides (the
  // setters), hosts (domains, IPv4, IPv6, opaque), the percent-encode
  // sets, serializing, origins, and the URL's URLSearchParams kept in step
  // with its query. Domains beyond ASCII are mapped with Unicode's NFKC
  // and lower case and written in Punycode: an approximation of UTS #46
  // (no mapping table, no bidi or joiner rules), which the tests measure
  // against the web-platform-tests' data.
  {
    const strFromCodePoint = String.fromCodePoint, strNormalize = uncurry(String.prototype.normalize);
    const toLower = uncurry(strToLower), strSliceU = uncurry(strSlice);
    const arrJoin = uncurry(Array.prototype.join);
    const numToString = uncurry(Number.prototype.toString);
    const strLastIndexOf = uncurry(String.prototype.lastIndexOf);
    const special = { __proto__: null, ftp: 21, file: null, http: 80, https: 443, ws: 80, wss: 443 };
    const isSpecialScheme = (s) => s in special;
    const defaultPort = (s) => (s in special ? special[s] : null);

    // codePoints is the code points of s, lone surrogates as U+FFFD
    // (WebIDL's USVString).
    const codePoints = (s) => {
      const out = [];
      const n = s.length;
      for (let i = 0; i < n; i++) {
        let c = charCodeAt(s, i);
        if (c >= 0xd800 && c <= 0xdfff) {
          const d = c <= 0xdbff && i + 1 < n ? charCodeAt(s, i + 1) : 0;
          if (d >= 0xdc00 && d <= 0xdfff) {
            c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            i++;
          } else c = 0xfffd;
        }
        out[out.length] = c;
      }
      return out;
    };
    const surrogate = /[\uD800-\uDFFF]/;
    const toUSV = (v) => {
      const s = toString(v);
      if (!call(reTest, surrogate, s)) return s;
      const cps = codePoints(s);
      let out = "";
      for (let i = 0; i < cps.length; i++) out += strFromCodePoint(cps[i]);
      return out;
    };
    const cpString = (cps, from = 0, to = cps.length) => {
      let out = "";
      for (let i = from; i < to; i++) out += strFromCodePoint(cps[i]);
      return out;
    };

    // The percent-encode sets, as predicates on an ASCII code point (every
    // set holds the C0 controls and every code point above U+007E).
    const c0Set = (c) => c < 0x20 || c > 0x7e;
    const fragmentSet = (c) => c0Set(c) || c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x60;
    const querySet = (c) => c0Set(c) || c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c || c === 0x3e;
    const specialQuerySet = (c) => querySet(c) || c === 0x27;
    const pathSet = (c) => querySet(c) || c === 0x3f || c === 0x5e || c === 0x60 || c === 0x7b || c === 0x7d;
    const userinfoSet = (c) => pathSet(c) || c === 0x2f || c === 0x3a || c === 0x3b || c === 0x3d || c === 0x40 ||
      (c >= 0x5b && c <= 0x5d) || c === 0x7c;
    const hex2 = (b) => "%" + hexDigits[b >> 4] + hexDigits[b & 15];
    // encode is the UTF-8 percent-encoding of code point c in set.
    const encode = (c, set) => {
      if (c < 0x80) return set(c) ? hex2(c) : fromCharCode(c);
      if (c < 0x800) return hex2(0xc0 | (c >> 6)) + hex2(0x80 | (c & 0x3f));
      if (c < 0x10000) return hex2(0xe0 | (c >> 12)) + hex2(0x80 | ((c >> 6) & 0x3f)) + hex2(0x80 | (c & 0x3f));
      return hex2(0xf0 | (c >> 18)) + hex2(0x80 | ((c >> 12) & 0x3f)) + hex2(0x80 | ((c >> 6) & 0x3f)) + hex2(0x80 | (c & 0x3f));
    };
    const encodeString = (s, set) => {
      const cps = codePoints(s);
      let out = "";
      for (let i = 0; i < cps.length; i++) out += encode(cps[i], set);
      return out;
    };
    // percentDecode is the UTF-8 (without BOM sniffing) of the bytes that
    // percent-decoding the UTF-8 of s gives.
    const percentDecode = (s) => (call(strIndexOfC, s, "%") < 0 ? s : percentDecoded(s, false)); // (s is a USVString)

    const isAlpha = (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    const isDigit = (c) => c >= 0x30 && c <= 0x39;
    const lowerCp = (c) => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c);
    const forbiddenHost = (c) => c === 0 || c === 9 || c === 0xa || c === 0xd || c === 0x20 || c === 0x23 || c === 0x2f ||
      c === 0x3a || c === 0x3c || c === 0x3e || c === 0x3f || c === 0x40 || c === 0x5b || c === 0x5c || c === 0x5d ||
      c === 0x5e || c === 0x7c;

    // IPv4 (URL, "IPv4 parser"): failure is null.
    const ipv4Number = (s) => {
      if (s === "") return null;
      let radix = 10, i = 0;
      if (s.length >= 2 && s[0] === "0" && (s[1] === "x" || s[1] === "X")) {
        radix = 16;
        i = 2;
      } else if (s.length >= 2 && s[0] === "0") {
        radix = 8;
        i = 1;
      }
      if (i === s.length) return 0;
      let n = 0;
      for (; i < s.length; i++) {
        const c = charCodeAt(s, i);
        const d = isHex(c) ? hexValue(c) : 99;
        if (d >= radix) return null;
        n = n * radix + d;
      }
      return n;
    };
    const endsInANumber = (s) => {
      const parts = call(strSplit, s, ".");
      if (parts[parts.length - 1] === "") {
        if (parts.length === 1) return false;
        parts.length--;
      }
      const last = parts[parts.length - 1];
      let digits = last !== "";
      for (let i = 0; i < last.length; i++) if (!isDigit(charCodeAt(last, i))) digits = false;
      if (digits) return true;
      return ipv4Number(last) !== null;
    };
    const parseIPv4 = (s) => {
      const parts = call(strSplit, s, ".");
      if (parts[parts.length - 1] === "" && parts.length > 1) parts.length--;
      if (parts.length > 4) return null;
      const nums = [];
      for (let i = 0; i < parts.length; i++) {
        const n = ipv4Number(parts[i]);
        if (n === null) return null;
        nums[i] = n;
      }
      for (let i = 0; i < nums.length - 1; i++) if (nums[i] > 255) return null;
      const last = nums[nums.length - 1];
      if (last >= 256 ** (5 - nums.length)) return null;
      let v = last;
      for (let i = 0; i < nums.length - 1; i++) v += nums[i] * 256 ** (3 - i);
      let out = "";
      for (let i = 3; i >= 0; i--) out += (i < 3 ? "." : "") + numToString(MathTrunc(v / 256 ** i) % 256);
      return out;
    };

    // IPv6 (URL, "IPv6 parser" and its serializer): failure is null.
    const parseIPv6 = (cps) => {
      const a = [0, 0, 0, 0, 0, 0, 0, 0];
      let piece = 0, compress = -1, p = 0;
      const n = cps.length;
      const at = (i) => (i < n ? cps[i] : -1);
      if (at(p) === 0x3a) {
        if (at(p + 1) !== 0x3a) return null;
        p += 2;
        compress = ++piece;
      }
      while (at(p) !== -1) {
        if (piece === 8) return null;
        if (at(p) === 0x3a) {
          if (compress !== -1) return null;
          p++;
          compress = ++piece;
          continue;
        }
        let value = 0, length = 0;
        while (length < 4 && isHex(at(p))) {
          const c = at(p);
          value = value * 16 + hexValue(c);
          p++;
          length++;
        }
        if (at(p) === 0x2e) {
          if (length === 0) return null;
          p -= length;
          if (piece > 6) return null;
          let seen = 0;
          while (at(p) !== -1) {
            let v4 = null;
            if (seen > 0) {
              if (at(p) === 0x2e && seen < 4) p++;
              else return null;
            }
            if (!isDigit(at(p))) return null;
            while (isDigit(at(p))) {
              const d = at(p) - 0x30;
              if (v4 === null) v4 = d;
              else if (v4 === 0) return null;
              else v4 = v4 * 10 + d;
              if (v4 > 255) return null;
              p++;
            }
            a[piece] = a[piece] * 0x100 + v4;
            seen++;
            if (seen === 2 || seen === 4) piece++;
          }
          if (seen !== 4) return null;
          break;
        } else if (at(p) === 0x3a) {
          p++;
          if (at(p) === -1) return null;
        } else if (at(p) !== -1) return null;
        a[piece++] = value;
      }
      if (compress !== -1) {
        let swaps = piece - compress;
        piece = 7;
        while (piece !== 0 && swaps > 0) {
          const t = a[piece];
          a[piece] = a[compress + swaps - 1];
          a[compress + swaps - 1] = t;
          piece--;
          swaps--;
        }
      } else if (piece !== 8) return null;
      // serialize: the first longest run of two or more zero pieces is "::"
      let best = -1, bestLen = 1;
      for (let i = 0; i < 8;) {
        if (a[i] !== 0) {
          i++;
          continue;
        }
        let j = i;
        while (j < 8 && a[j] === 0) j++;
        if (j - i > bestLen) {
          best = i;
          bestLen = j - i;
        }
        i = j;
      }
      let out = "[";
      let ignore0 = false;
      for (let i = 0; i < 8; i++) {
        if (ignore0 && a[i] === 0) continue;
        ignore0 = false;
        if (best === i) {
          out += i === 0 ? "::" : ":";
          ignore0 = true;
          continue;
        }
        out += numToString(a[i], 16);
        if (i !== 7) out += ":";
      }
      return out + "]";
    };

    // Punycode (RFC 3492), for domain labels.
    const puny = { base: 36, tmin: 1, tmax: 26, skew: 38, damp: 700, bias: 72, n: 128 };
    const adapt = (delta, numPoints, first) => {
      delta = first ? MathTrunc(delta / puny.damp) : delta >> 1;
      delta += MathTrunc(delta / numPoints);
      let k = 0;
      while (delta > ((puny.base - puny.tmin) * puny.tmax) >> 1) {
        delta = MathTrunc(delta / (puny.base - puny.tmin));
        k += puny.base;
      }
      return k + MathTrunc(((puny.base - puny.tmin + 1) * delta) / (delta + puny.skew));
    };
    const digitChar = (d) => fromCharCode(d < 26 ? d + 0x61 : d - 26 + 0x30);
    const punyEncode = (cps) => {
      let out = "";
      for (let i = 0; i < cps.length; i++) if (cps[i] < 0x80) out += fromCharCode(cps[i]);
      const b = out.length;
      let h = b;
      if (b > 0) out += "-";
      let n = puny.n, delta = 0, bias = puny.bias;
      while (h < cps.length) {
        let m = 0x7fffffff;
        for (let i = 0; i < cps.length; i++) if (cps[i] >= n && cps[i] < m) m = cps[i];
        delta += (m - n) * (h + 1);
        n = m;
        for (let i = 0; i < cps.length; i++) {
          const c = cps[i];
          if (c < n) delta++;
          if (c === n) {
            let q = delta;
            for (let k = puny.base; ; k += puny.base) {
              const t = k <= bias ? puny.tmin : k >= bias + puny.tmax ? puny.tmax : k - bias;
              if (q < t) break;
              out += digitChar(t + ((q - t) % (puny.base - t)));
              q = MathTrunc((q - t) / (puny.base - t));
            }
            out += digitChar(q);
            bias = adapt(delta, h + 1, h === b);
            delta = 0;
            h++;
          }
        }
        delta++;
        n++;
      }
      return out;
    };
    // punyDecode gives the code points of a label's Punycode, or null.
    const punyDecode = (s) => {
      const out = [];
      let basic = strLastIndexOf(s, "-");
      if (basic < 0) basic = 0;
      for (let j = 0; j < basic; j++) {
        const c = charCodeAt(s, j);
        if (c >= 0x80) return null;
        out[out.length] = c;
      }
      let n = puny.n, bias = puny.bias, i = 0;
      for (let at = basic > 0 ? basic + 1 : 0; at < s.length;) {
        const oldi = i;
        let w = 1;
        for (let k = puny.base; ; k += puny.base) {
          if (at >= s.length) return null;
          const c = charCodeAt(s, at++);
          const d = isDigit(c) ? c - 0x30 + 26 : c >= 0x61 && c <= 0x7a ? c - 0x61 : c >= 0x41 && c <= 0x5a ? c - 0x41 : -1;
          if (d < 0) return null;
          i += d * w;
          if (i > 0x10ffff * 4) return null;
          const t = k <= bias ? puny.tmin : k >= bias + puny.tmax ? puny.tmax : k - bias;
          if (d < t) break;
          w *= puny.base - t;
        }
        bias = adapt(i - oldi, out.length + 1, oldi === 0);
        n += MathTrunc(i / (out.length + 1));
        i %= out.length + 1;
        if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return null;
        call(arrSplice, out, i, 0, n);
        i++;
      }
      return out;
    };
    // The code points UTS #46 ignores, and the full stops it maps to ".".
    const ignored = (c) => c === 0xad || c === 0x34f || c === 0x115f || c === 0x1160 || c === 0x3164 || c === 0xffa0 || c === 0x17b4 || c === 0x17b5 ||
      (c >= 0x1d173 && c <= 0x1d17a) || (c >= 0x180b && c <= 0x180f) || c === 0x200b ||
      c === 0x2060 || c === 0x2064 || (c >= 0x206a && c <= 0x206f) || (c >= 0xfe00 && c <= 0xfe0f) || c === 0xfeff || (c >= 0x1bca0 && c <= 0x1bca3) ||
      (c >= 0xe0100 && c <= 0xe01ef);
    const fullStop = (c) => c === 0x3002 || c === 0xff0e || c === 0xff61;
    // validLabel checks a label's code points after mapping: no hyphen in
    // the 3rd and 4th places with an "xn--" decoded, no leading combining
    // mark, nothing UTS #46 disallows that this approximation knows of.
    const combining = /^\p{M}/u;
    const disallowedRe = /[\p{Cc}\p{Cn}\p{Co}\p{Cs}\p{Zs}\p{Zl}\p{Zp}\uFFFD\uFFFC\u2FF0-\u2FFF]|(?![\u200C\u200D])\p{Cf}/u;
    // A joiner (ZWJ, ZWNJ) only after a virama-like mark, or a ZWNJ
    // between two joining letters (CheckJoiners, approximated by the
    // Arabic and Syriac letters).
    const markRe = /^\p{Mn}$/u, joiningRe = /^[\u0620-\u064A\u066E-\u06D3\u06D5\u06EE\u06EF\u06FA-\u06FF\u0710-\u074F\u0750-\u077F]$/u;
    const joinersOK = (label) => {
      const cps = codePoints(label);
      for (let i = 0; i < cps.length; i++) {
        if (cps[i] !== 0x200c && cps[i] !== 0x200d) continue;
        const before = i > 0 ? strFromCodePoint(cps[i - 1]) : "";
        if (call(reTest, markRe, before)) continue;
        // (transparent marks between a ZWNJ and the letters are skipped)
        let b = i - 1, a = i + 1;
        while (b >= 0 && call(reTest, markRe, strFromCodePoint(cps[b]))) b--;
        while (a < cps.length && call(reTest, markRe, strFromCodePoint(cps[a]))) a++;
        if (cps[i] === 0x200c && b >= 0 && a < cps.length && call(reTest, joiningRe, strFromCodePoint(cps[b])) &&
          call(reTest, joiningRe, strFromCodePoint(cps[a]))) continue;
        return false;
      }
      return true;
    };
    const validLabel = (label, decoded) => {
      if (label === "") return true;
      if (call(reTest, combining, label)) return false;
      if (call(reTest, disallowedRe, label)) return false;
      if (!joinersOK(label)) return false;
      if (decoded && strNormalize(label, "NFC") !== label) return false;
      return true;
    };
    // The Bidi rule (RFC 5893, CheckBidi), approximated with the blocks of
    // the right-to-left scripts (less their marks and the extended
    // Arabic-Indic digits, which are European numbers): in a domain with a
    // right-to-left label, a label is right-to-left throughout or
    // left-to-right throughout.
    const letterRe = /^\p{L}$/u, digitRe = /^\p{Nd}$/u, anyMarkRe = /^\p{M}$/u;
    const is = (re, c) => call(reTest, re, strFromCodePoint(c));
    const isRTL = (c) => ((c >= 0x590 && c <= 0x8ff) || (c >= 0xfb1d && c <= 0xfdff) || (c >= 0xfe70 && c <= 0xfeff) ||
      (c >= 0x10800 && c <= 0x10fff) || (c >= 0x1e800 && c <= 0x1efff)) && !(c >= 0x6f0 && c <= 0x6f9) && !is(anyMarkRe, c);
    const bidiOK = (labels) => {
      const all = [];
      let bidi = false;
      for (let i = 0; i < labels.length; i++) {
        const cps = codePoints(labels[i]);
        for (let j = 0; j < cps.length; j++) if (isRTL(cps[j])) bidi = true;
        all[i] = cps;
      }
      if (!bidi) return true;
      for (let i = 0; i < all.length; i++) {
        const cps = all[i];
        if (cps.length === 0) continue;
        let last = cps.length - 1;
        while (last > 0 && is(anyMarkRe, cps[last])) last--;
        if (isRTL(cps[0])) {
          for (let j = 0; j < cps.length; j++) if (!isRTL(cps[j]) && is(letterRe, cps[j])) return false;
          if (!isRTL(cps[last]) && !is(digitRe, cps[last])) return false;
        } else {
          if (!is(letterRe, cps[0])) return false;
          for (let j = 0; j < cps.length; j++) if (isRTL(cps[j])) return false;
          if (!is(letterRe, cps[last]) && !is(digitRe, cps[last])) return false;
        }
      }
      return true;
    };
    // domainToASCII (URL, "domain to ASCII" with beStrict false); failure
    // is null.
    const domainToASCII = (domain) => {
      const ascii = !call(reTest, nonASCII, domain);
      // An ASCII domain is only lowered, "xn--" labels included (their
      // Punycode is not checked), as the URL Standard has it now.
      if (ascii) return toLower(domain);
      // map
      const cps = codePoints(domain);
      let mapped = "";
      for (let i = 0; i < cps.length; i++) {
        const c = cps[i];
        if (ignored(c)) continue;
        if (fullStop(c)) {
          mapped += ".";
          continue;
        }
        const ch = strFromCodePoint(c);
        // What maps to a full stop (U+2024 ONE DOT LEADER and the like)
        // is disallowed.
        if (c >= 0x80) {
          const k = strNormalize(ch, "NFKC");
          if (call(strIndexOfC, k, ".") >= 0 || call(strIndexOfC, k, "\u3002") >= 0) return null;
        }
        mapped += ch;
      }
      // (capital sigma is small sigma, never the final form lower case
      // gives at a word's end)
      mapped = strNormalize(toLower(call(strReplace, strNormalize(mapped, "NFKC"), /\u03A3/g, "\u03C3")), "NFKC");
      let m2 = "";
      const mc = codePoints(mapped);
      for (let i = 0; i < mc.length; i++) if (!ignored(mc[i])) m2 += fullStop(mc[i]) ? "." : strFromCodePoint(mc[i]);
      const labels = call(strSplit, m2, ".");
      const out = [];
      for (let i = 0; i < labels.length; i++) {
        const label = labels[i];
        if (strSliceU(label, 0, 4) === "xn--") {
          const rest = strSliceU(label, 4);
          if (rest === "") return null;
          for (let j = 0; j < rest.length; j++) if (charCodeAt(rest, j) >= 0x80) return null;
          const dec = punyDecode(rest);
          if (dec === null) return null;
          const u = cpString(dec);
          let allAscii = true;
          for (let j = 0; j < dec.length; j++) if (dec[j] >= 0x80) allAscii = false;
          if (allAscii) return null;
          if (!validLabel(u, true)) return null;
          if (toLower(strNormalize(u, "NFKC")) !== u) return null;
          out[i] = label;
          continue;
        }
        if (!validLabel(label, false)) return null;
        const lc = codePoints(label);
        let nonAscii = false;
        for (let j = 0; j < lc.length; j++) if (lc[j] >= 0x80) nonAscii = true;
        out[i] = nonAscii ? "xn--" + punyEncode(lc) : label;
      }
      if (!bidiOK(labels)) return null;
      const result = arrJoin(out, ".");
      return result === "" ? null : result;
    };

    // parseHost (URL, "host parser"): the serialized host, or null.
    const forbiddenDomainRe = /[\u0000-\u0020#%/:<>?@[\\\]^|\u007f]/;
    const nonASCII = /[^\u0000-\u007f]/;
    const parseHost = (input, notSpecial) => {
      if (input[0] === "[") {
        if (input[input.length - 1] !== "]") return null;
        const cps = codePoints(input);
        return parseIPv6(call(arrSlice, cps, 1, cps.length - 1));
      }
      if (notSpecial) {
        const cps = codePoints(input);
        let out = "";
        for (let i = 0; i < cps.length; i++) {
          if (forbiddenHost(cps[i])) return null;
          out += encode(cps[i], c0Set);
        }
        return out;
      }
      const domain = percentDecode(input);
      const ascii = domainToASCII(domain);
      if (ascii === null) return null;
      if (call(reTest, forbiddenDomainRe, ascii)) return null;
      if (endsInANumber(ascii)) return parseIPv4(ascii);
      return ascii;
    };

    const isWindowsDriveLetter = (s, normalizedOnly) =>
      s.length === 2 && isAlpha(charCodeAt(s, 0)) && (s[1] === ":" || (!normalizedOnly && s[1] === "|"));
    // startsWithDriveLetter: the code points from p on start with a
    // Windows drive letter, followed by the end, /, \, ? or #.
    const startsWithDriveLetter = (cps, p) => {
      if (cps.length - p < 2 || !isAlpha(cps[p]) || (cps[p + 1] !== 0x3a && cps[p + 1] !== 0x7c)) return false;
      if (cps.length - p === 2) return true;
      const c = cps[p + 2];
      return c === 0x2f || c === 0x5c || c === 0x3f || c === 0x23;
    };
    const singleDot = (s) => s === "." || toLower(s) === "%2e";
    const doubleDot = (s) => {
      const l = toLower(s);
      return l === ".." || l === ".%2e" || l === "%2e." || l === "%2e%2e";
    };
    const shorten = (url) => {
      const path = url.path;
      if (url.scheme === "file" && path.length === 1 && isWindowsDriveLetter(path[0], true)) return;
      if (path.length > 0) path.length--;
    };
    const newRecord = () => ({ scheme: "", username: "", password: "", host: null, port: null, path: [], query: null, fragment: null });
    const hasOpaquePath = (url) => typeof url.path === "string";
    const hasCredentials = (url) => url.username !== "" || url.password !== "";

    const S = {
      schemeStart: 1, scheme: 2, noScheme: 3, specialRelativeOrAuthority: 4, pathOrAuthority: 5, relative: 6,
      relativeSlash: 7, specialAuthoritySlashes: 8, specialAuthorityIgnoreSlashes: 9, authority: 10, host: 11,
      hostname: 12, port: 13, file: 14, fileSlash: 15, fileHost: 16, pathStart: 17, path: 18, opaquePath: 19,
      query: 20, fragment: 21,
    };
    const FAILURE = null;
    // (the sets that stop plain runs in the authority and host states)
    const never = () => false, isBackslash = (c) => c === 0x5c;
    const hostStop = (c) => c === 0x5b || c === 0x5d, hostSpecialStop = (c) => c === 0x5b || c === 0x5d || c === 0x5c;
    // parse is the basic URL parser. With url and override, it changes url
    // (a setter) and returns it, or FAILURE; the setters ignore failures.
    const parse = (input, base, url, override) => {
      const all = codePoints(input);
      let from = 0, to = all.length;
      if (!url) {
        url = newRecord();
        // leading and trailing C0 controls and spaces go
        while (from < to && all[from] <= 0x20) from++;
        while (to > from && all[to - 1] <= 0x20) to--;
      }
      const cps = [];
      for (let i = from; i < to; i++) {
        const c = all[i];
        if (c !== 9 && c !== 0xa && c !== 0xd) cps[cps.length] = c;
      }
      let state = override || S.schemeStart;
      let buffer = "";
      let atSignSeen = false, insideBrackets = false, passwordTokenSeen = false;
      const n = cps.length;
      // plain is the text of the code points from p on that are ASCII,
      // not in set and none of the stops (at most 4096 of them), which
      // go as they are; "" if cps[p] is not one.
      const plain = (p, set, s1, s2, s3, s4) => {
        let j = p;
        while (j < n && j - p < 4096) {
          const x = cps[j];
          if (x >= 0x80 || set(x) || x === s1 || x === s2 || x === s3 || x === s4) break;
          j++;
        }
        return j === p ? "" : apply(fromCharCode, undefined, call(arrSlice, cps, p, j));
      };
      for (let p = 0; ; p++) {
        const c = p < n ? cps[p] : -1;
        const isSpecial = isSpecialScheme(url.scheme);
        switch (state) {
          case S.schemeStart:
            if (isAlpha(c)) {
              buffer += fromCharCode(lowerCp(c));
              state = S.scheme;
            } else if (!override) {
              state = S.noScheme;
              p--;
            } else return FAILURE;
            break;
          case S.scheme:
            if (isAlpha(c) || isDigit(c) || c === 0x2b || c === 0x2d || c === 0x2e) {
              buffer += fromCharCode(lowerCp(c));
            } else if (c === 0x3a) {
              if (override) {
                if (isSpecialScheme(url.scheme) !== isSpecialScheme(buffer)) return url;
                if ((hasCredentials(url) || url.port !== null) && buffer === "file") return url;
                if (url.scheme === "file" && url.host === "") return url;
              }
              url.scheme = buffer;
              if (override) {
                if (url.port === defaultPort(url.scheme)) url.port = null;
                return url;
              }
              buffer = "";
              if (url.scheme === "file") state = S.file;
              else if (isSpecialScheme(url.scheme) && base && base.scheme === url.scheme) state = S.specialRelativeOrAuthority;
              else if (isSpecialScheme(url.scheme)) state = S.specialAuthoritySlashes;
              else if (p + 1 < n && cps[p + 1] === 0x2f) {
                state = S.pathOrAuthority;
                p++;
              } else {
                url.path = "";
                state = S.opaquePath;
              }
            } else if (!override) {
              buffer = "";
              state = S.noScheme;
              p = -1;
            } else return FAILURE;
            break;
          case S.noScheme:
            if (!base || (hasOpaquePath(base) && c !== 0x23)) return FAILURE;
            if (hasOpaquePath(base) && c === 0x23) {
              url.scheme = base.scheme;
              url.path = base.path;
              url.query = base.query;
              url.fragment = "";
              state = S.fragment;
            } else if (base.scheme !== "file") {
              state = S.relative;
              p--;
            } else {
              state = S.file;
              p--;
            }
            break;
          case S.specialRelativeOrAuthority:
            if (c === 0x2f && p + 1 < n && cps[p + 1] === 0x2f) {
              state = S.specialAuthorityIgnoreSlashes;
              p++;
            } else {
              state = S.relative;
              p--;
            }
            break;
          case S.pathOrAuthority:
            if (c === 0x2f) state = S.authority;
            else {
              state = S.path;
              p--;
            }
            break;
          case S.relative:
            url.scheme = base.scheme;
            if (c === 0x2f) state = S.relativeSlash;
            else if (isSpecialScheme(url.scheme) && c === 0x5c) state = S.relativeSlash;
            else {
              url.username = base.username;
              url.password = base.password;
              url.host = base.host;
              url.port = base.port;
              url.path = call(arrSlice, base.path);
              url.query = base.query;
              if (c === 0x3f) {
                url.query = "";
                state = S.query;
              } else if (c === 0x23) {
                url.fragment = "";
                state = S.fragment;
              } else if (c !== -1) {
                url.query = null;
                shorten(url);
                state = S.path;
                p--;
              }
            }
            break;
          case S.relativeSlash:
            if (isSpecial && (c === 0x2f || c === 0x5c)) state = S.specialAuthorityIgnoreSlashes;
            else if (c === 0x2f) state = S.authority;
            else {
              url.username = base.username;
              url.password = base.password;
              url.host = base.host;
              url.port = base.port;
              state = S.path;
              p--;
            }
            break;
          case S.specialAuthoritySlashes:
            state = S.specialAuthorityIgnoreSlashes;
            if (c === 0x2f && p + 1 < n && cps[p + 1] === 0x2f) p++;
            else p--;
            break;
          case S.specialAuthorityIgnoreSlashes:
            if (c !== 0x2f && c !== 0x5c) {
              state = S.authority;
              p--;
            }
            break;
          case S.authority:
            if (c === 0x40) {
              if (atSignSeen) buffer = "%40" + buffer;
              atSignSeen = true;
              const b = codePoints(buffer);
              for (let i = 0; i < b.length; i++) {
                if (b[i] === 0x3a && !passwordTokenSeen) {
                  passwordTokenSeen = true;
                  continue;
                }
                if (passwordTokenSeen) url.password += encode(b[i], userinfoSet);
                else url.username += encode(b[i], userinfoSet);
              }
              buffer = "";
            } else if (c === -1 || c === 0x2f || c === 0x3f || c === 0x23 || (isSpecial && c === 0x5c)) {
              if (atSignSeen && buffer === "") return FAILURE;
              p -= codePoints(buffer).length + 1;
              buffer = "";
              state = S.host;
            } else {
              const run = plain(p, isSpecial ? isBackslash : never, 0x40, 0x2f, 0x3f, 0x23);
              buffer += run === "" ? strFromCodePoint(c) : run;
              p += run === "" ? 0 : run.length - 1;
            }
            break;
          case S.host:
          case S.hostname:
            if (override && url.scheme === "file") {
              p--;
              state = S.fileHost;
            } else if (c === 0x3a && !insideBrackets) {
              if (buffer === "") return FAILURE;
              if (override === S.hostname) return FAILURE;
              const host = parseHost(buffer, !isSpecial);
              if (host === null) return FAILURE;
              url.host = host;
              buffer = "";
              state = S.port;
            } else if (c === -1 || c === 0x2f || c === 0x3f || c === 0x23 || (isSpecial && c === 0x5c)) {
              p--;
              if (isSpecial && buffer === "") return FAILURE;
              if (override && buffer === "" && (hasCredentials(url) || url.port !== null)) return FAILURE;
              const host = parseHost(buffer, !isSpecial);
              if (host === null) return FAILURE;
              url.host = host;
              buffer = "";
              state = S.pathStart;
              if (override) return url;
            } else if (c === 0x5b || c === 0x5d) {
              insideBrackets = c === 0x5b;
              buffer += fromCharCode(c);
            } else {
              const run = plain(p, isSpecial ? hostSpecialStop : hostStop, 0x3a, 0x2f, 0x3f, 0x23);
              buffer += run === "" ? strFromCodePoint(c) : run;
              p += run === "" ? 0 : run.length - 1;
            }
            break;
          case S.port:
            if (isDigit(c)) buffer += fromCharCode(c);
            else if (c === -1 || c === 0x2f || c === 0x3f || c === 0x23 || (isSpecial && c === 0x5c) || override) {
              if (buffer !== "") {
                let port = 0;
                for (let i = 0; i < buffer.length; i++) {
                  port = port * 10 + charCodeAt(buffer, i) - 0x30;
                  if (port > 65535) return FAILURE;
                }
                url.port = port === defaultPort(url.scheme) ? null : port;
                buffer = "";
                if (override) return url;
              }
              if (override) return FAILURE;
              state = S.pathStart;
              p--;
            } else return FAILURE;
            break;
          case S.file:
            url.scheme = "file";
            url.host = "";
            if (c === 0x2f || c === 0x5c) state = S.fileSlash;
            else if (base && base.scheme === "file") {
              url.host = base.host;
              url.path = call(arrSlice, base.path);
              url.query = base.query;
              if (c === 0x3f) {
                url.query = "";
                state = S.query;
              } else if (c === 0x23) {
                url.fragment = "";
                state = S.fragment;
              } else if (c !== -1) {
                url.query = null;
                if (!startsWithDriveLetter(cps, p)) shorten(url);
                else url.path = [];
                state = S.path;
                p--;
              }
            } else {
              state = S.path;
              p--;
            }
            break;
          case S.fileSlash:
            if (c === 0x2f || c === 0x5c) state = S.fileHost;
            else {
              if (base && base.scheme === "file") {
                url.host = base.host;
                if (!startsWithDriveLetter(cps, p) && base.path.length > 0 && isWindowsDriveLetter(base.path[0], true)) {
                  url.path[url.path.length] = base.path[0];
                }
              }
              state = S.path;
              p--;
            }
            break;
          case S.fileHost:
            if (c === -1 || c === 0x2f || c === 0x5c || c === 0x3f || c === 0x23) {
              p--;
              if (!override && isWindowsDriveLetter(buffer, false)) state = S.path;
              else if (buffer === "") {
                url.host = "";
                if (override) return url;
                state = S.pathStart;
              } else {
                let host = parseHost(buffer, false);
                if (host === null) return FAILURE;
                if (host === "localhost") host = "";
                url.host = host;
                if (override) return url;
                buffer = "";
                state = S.pathStart;
              }
            } else buffer += strFromCodePoint(c);
            break;
          case S.pathStart:
            if (isSpecial) {
              state = S.path;
              if (c !== 0x2f && c !== 0x5c) p--;
            } else if (!override && c === 0x3f) {
              url.query = "";
              state = S.query;
            } else if (!override && c === 0x23) {
              url.fragment = "";
              state = S.fragment;
            } else if (c !== -1) {
              state = S.path;
              if (c !== 0x2f) p--;
            } else if (override && url.host === null) url.path[url.path.length] = "";
            break;
          case S.path:
            if (c === -1 || c === 0x2f || (isSpecial && c === 0x5c) || (!override && (c === 0x3f || c === 0x23))) {
              const slash = c === 0x2f || (isSpecial && c === 0x5c);
              if (doubleDot(buffer)) {
                shorten(url);
                if (!slash) url.path[url.path.length] = "";
              } else if (singleDot(buffer) && !slash) {
                url.path[url.path.length] = "";
              } else if (!singleDot(buffer)) {
                if (url.scheme === "file" && url.path.length === 0 && isWindowsDriveLetter(buffer, false)) {
                  buffer = buffer[0] + ":";
                }
                url.path[url.path.length] = buffer;
              }
              buffer = "";
              if (c === 0x3f) {
                url.query = "";
                state = S.query;
              } else if (c === 0x23) {
                url.fragment = "";
                state = S.fragment;
              }
            } else {
              const run = plain(p, pathSet, 0x2f, 0x5c, 0x3f, 0x23);
              buffer += run === "" ? encode(c, pathSet) : run;
              p += run === "" ? 0 : run.length - 1;
            }
            break;
          case S.opaquePath:
            if (c === 0x3f) {
              url.query = "";
              state = S.query;
            } else if (c === 0x23) {
              url.fragment = "";
              state = S.fragment;
            } else if (c === 0x20) {
              const next = p + 1 < n ? cps[p + 1] : -1;
              url.path += next === 0x3f || next === 0x23 ? "%20" : " ";
            } else if (c !== -1) {
              const run = plain(p, c0Set, 0x3f, 0x23, 0x20, -1);
              url.path += run === "" ? encode(c, c0Set) : run;
              p += run === "" ? 0 : run.length - 1;
            }
            break;
          case S.query:
            // (each code point is encoded as it comes: the same as
            // encoding the buffer at the end, as the specification does)
            if ((!override && c === 0x23) || c === -1) {
              if (c === 0x23) {
                url.fragment = "";
                state = S.fragment;
              }
            } else {
              const set = isSpecial ? specialQuerySet : querySet;
              const run = plain(p, set, 0x23, -1, -1, -1);
              url.query += run === "" ? encode(c, set) : run;
              p += run === "" ? 0 : run.length - 1;
            }
            break;
          case S.fragment:
            if (c !== -1) {
              const run = plain(p, fragmentSet, -1, -1, -1, -1);
              url.fragment += run === "" ? encode(c, fragmentSet) : run;
              p += run === "" ? 0 : run.length - 1;
            }
            break;
        }
        if (p >= n) break; // the pointer is at the end after this state
      }
      return url;
    };

    const serializePath = (url) => {
      if (hasOpaquePath(url)) return url.path;
      let out = "";
      for (let i = 0; i < url.path.length; i++) out += "/" + url.path[i];
      return out;
    };
    const serialize = (url, excludeFragment) => {
      let out = url.scheme + ":";
      if (url.host !== null) {
        out += "//";
        if (hasCredentials(url)) {
          out += url.username;
          if (url.password !== "") out += ":" + url.password;
          out += "@";
        }
        out += url.host;
        if (url.port !== null) out += ":" + numToString(url.port);
      }
      if (url.host === null && !hasOpaquePath(url) && url.path.length > 1 && url.path[0] === "") out += "/.";
      out += serializePath(url);
      if (url.query !== null) out += "?" + url.query;
      if (!excludeFragment && url.fragment !== null) out += "#" + url.fragment;
      return out;
    };
    const originOf = (url) => {
      switch (url.scheme) {
        case "blob": {
          const inner = parse(serializePath(url), null);
          if (inner !== FAILURE && (inner.scheme === "http" || inner.scheme === "https")) return originOf(inner);
          return "null";
        }
        case "ftp": case "http": case "https": case "ws": case "wss":
          return url.scheme + "://" + url.host + (url.port !== null ? ":" + numToString(url.port) : "");
      }
      return "null";
    };
    const cannotHaveCredentials = (url) => url.host === null || url.host === "" || url.scheme === "file";

    const parseOrThrow = (url, base) => {
      let b = null;
      if (base !== undefined) {
        b = parse(toUSV(base), null);
        if (b === FAILURE) throw new TypeErrorC("Invalid base URL: " + toUSV(base));
      }
      const r = parse(toUSV(url), b);
      if (r === FAILURE) throw new TypeErrorC("Invalid URL: " + toUSV(url));
      return r;
    };

    class URL {
      #url;
      // #params is made at the first read of searchParams (from the query
      // then), and kept in step after it.
      #params = null;
      constructor(url, base = undefined) {
        if (arguments.length < 1) throw new TypeErrorC('The "url" argument must be specified');
        this.#url = parseOrThrow(url, base);

      }
      static canParse(url, base = undefined) {
        if (arguments.length < 1) throw new TypeErrorC('The "url" argument must be specified');
        try {
          parseOrThrow(url, base);
          return true;
        } catch {
          return false;
        }
      }
      static parse(url, base = undefined) {
        if (arguments.length < 1) throw new TypeErrorC('The "url" argument must be specified');
        try {
          return new URL(url, base);
        } catch {
          return null;
        }
      }
      get href() { if (!(#url in this)) throw illegal(); return serialize(this.#url, false); }
      set href(v) {
        if (!(#url in this)) throw illegal();
        const r = parse(toUSV(v), null);
        if (r === FAILURE) throw new TypeErrorC("Invalid URL: " + toUSV(v));
        this.#url = r;
        if (this.#params !== null) {
          paramsReset(this.#params, r.query === null ? "" : r.query);
          paramsAttach(this.#params, r);
        }
      }
      get origin() { if (!(#url in this)) throw illegal(); return originOf(this.#url); }
      get protocol() { if (!(#url in this)) throw illegal(); return this.#url.scheme + ":"; }
      set protocol(v) { if (!(#url in this)) throw illegal(); parse(toUSV(v) + ":", null, this.#url, S.schemeStart); }
      get username() { if (!(#url in this)) throw illegal(); return this.#url.username; }
      set username(v) {
        if (!(#url in this)) throw illegal();
        const s = toUSV(v);
        if (cannotHaveCredentials(this.#url)) return;
        this.#url.username = encodeString(s, userinfoSet);
      }
      get password() { if (!(#url in this)) throw illegal(); return this.#url.password; }
      set password(v) {
        if (!(#url in this)) throw illegal();
        const s = toUSV(v);
        if (cannotHaveCredentials(this.#url)) return;
        this.#url.password = encodeString(s, userinfoSet);
      }
      get host() {
        if (!(#url in this)) throw illegal();
        const u = this.#url;
        if (u.host === null) return "";
        return u.port === null ? u.host : u.host + ":" + numToString(u.port);
      }
      set host(v) {
        if (!(#url in this)) throw illegal();
        const s = toUSV(v);
        if (hasOpaquePath(this.#url)) return;
        parse(s, null, this.#url, S.host);
      }
      get hostname() { if (!(#url in this)) throw illegal(); return this.#url.host === null ? "" : this.#url.host; }
      set hostname(v) {
        if (!(#url in this)) throw illegal();
        const s = toUSV(v);
        if (hasOpaquePath(this.#url)) return;
        parse(s, null, this.#url, S.hostname);
      }
      get port() { if (!(#url in this)) throw illegal(); return this.#url.port === null ? "" : numToString(this.#url.port); }
      set port(v) {
        if (!(#url in this)) throw illegal();
        const s = toUSV(v);
        if (cannotHaveCredentials(this.#url)) return;
        if (s === "") this.#url.port = null;
        else parse(s, null, this.#url, S.port);
      }
      get pathname() { if (!(#url in this)) throw illegal(); return serializePath(this.#url); }
      set pathname(v) {
        if (!(#url in this)) throw illegal();
        const s = toUSV(v);
        if (hasOpaquePath(this.#url)) return;
        this.#url.path = [];
        parse(s, null, this.#url, S.pathStart);
      }
      get search() {
        if (!(#url in this)) throw illegal();
        const q = this.#url.query;
        return q === null || q === "" ? "" : "?" + q;
      }
      set search(v) {
        if (!(#url in this)) throw illegal();
        const s = toUSV(v);
        if (s === "") {
          this.#url.query = null;
          if (this.#params !== null) paramsReset(this.#params, "");
          return;
        }
        const input = s[0] === "?" ? strSliceU(s, 1) : s;
        this.#url.query = "";
        parse(input, null, this.#url, S.query);
        if (this.#params !== null) paramsReset(this.#params, input);
      }
      get searchParams() {
        if (!(#url in this)) throw illegal();
        if (this.#params === null) {
          this.#params = new URLSearchParams();
          paramsReset(this.#params, this.#url.query === null ? "" : this.#url.query);
          paramsAttach(this.#params, this.#url);
        }
        return this.#params;
      }
      get hash() {
        if (!(#url in this)) throw illegal();
        const f = this.#url.fragment;
        return f === null || f === "" ? "" : "#" + f;
      }
      set hash(v) {
        if (!(#url in this)) throw illegal();
        const s = toUSV(v);
        if (s === "") {
          this.#url.fragment = null;
          return;
        }
        const input = s[0] === "#" ? strSliceU(s, 1) : s;
        this.#url.fragment = "";
        parse(input, null, this.#url, S.fragment);
      }
      toString() { if (!(#url in this)) throw illegal(); return serialize(this.#url, false); }
      toJSON() { if (!(#url in this)) throw illegal(); return serialize(this.#url, false); }
    }
    iface(URL, "URL");
    URLC = URL;
    for (const k of ["canParse", "parse"]) {
      const d = getOwnPropertyDescriptor(URL, k);
      d.enumerable = true;
      defineProperty(URL, k, d);
    }
  }

  // Request and Response (Fetch), with bodies held in memory: text, JSON,
  // ArrayBuffer, bytes and Blob out; a string, a BufferSource, a Blob or
  // URLSearchParams in (with the Content-Type each implies). There is no
  // ReadableStream: no body getter and no stream bodies, and formData()
  // rejects. Headers have no guard.
  {
    const JSONC = JSON, jsonParse = JSON.parse, jsonStringify = JSON.stringify;
    const headersHas = uncurry(Headers.prototype.has), headersSet = uncurry(Headers.prototype.set);
    const headersGet = uncurry(Headers.prototype.get);
    const textDecoder = new TextDecoder();
    const utf8Bytes = (s) => {
      const out = new Uint8ArrayC(s.length * 3);
      const [, w] = utf8(s, out, 0, out.length);
      return call(u8Slice, out, 0, w);
    };
    // extract is Fetch's "extract a body": its bytes and the Content-Type it
    // implies (null: none).
    const extract = (body) => {
      if (body instanceof ArrayBufferC) return [call(u8Slice, new Uint8ArrayC(body)), null];
      if (isView(body)) return [call(u8Slice, bytesOf(body)), null];
      const blob = blobOf(body);
      if (blob !== null) return [blob[0], blob[1] === "" ? null : blob[1]];
      if (paramsIs(body)) return [utf8Bytes(paramsSerialize(body)), "application/x-www-form-urlencoded;charset=UTF-8"];
      return [utf8Bytes(toString(body)), "text/plain;charset=UTF-8"]; // (lone surrogates as U+FFFD)
    };
    // mimeSerialized is the MIME type s parses to, serialized (MIME
    // Sniffing's "parse a MIME type"), or "" if it does not parse.
    const mimeSerialized = (s) => {
      s = call(strReplace, s, httpWhitespace, "");
      const slash = call(strIndexOfC, s, "/");
      if (slash < 0) return "";
      const type = call(strSlice, s, 0, slash);
      let semi = call(strIndexOfC, s, ";", slash);
      if (semi < 0) semi = s.length;
      const subtype = call(strReplace, call(strSlice, s, slash + 1, semi), /[\t\n\r ]+$/, "");
      if (!call(reTest, token, type) || !call(reTest, token, subtype)) return "";
      let out = toLower(type) + "/" + toLower(subtype);
      const seen = [];
      let p = semi;
      while (p < s.length) {
        p++; // past ";"
        while (p < s.length && (s[p] === " " || s[p] === "\t" || s[p] === "\n" || s[p] === "\r")) p++;
        let q = p;
        while (q < s.length && s[q] !== ";" && s[q] !== "=") q++;
        const name = toLower(call(strSlice, s, p, q));
        p = q;
        if (p < s.length && s[p] === ";") continue;
        if (p >= s.length) break;
        p++; // past "="
        let value;
        if (s[p] === '"') {
          value = "";
          p++;
          while (p < s.length && s[p] !== '"') {
            if (s[p] === "\\" && p + 1 < s.length) p++;
            value += s[p++];
          }
          while (p < s.length && s[p] !== ";") p++;
        } else {
          q = p;
          while (q < s.length && s[q] !== ";") q++;
          value = call(strReplace, call(strSlice, s, p, q), /[\t\n\r ]+$/, "");
          p = q;
          if (value === "") continue;
        }
        if (name !== "" && call(reTest, token, name) && call(reTest, reasonPhrase, value) && call(arrIndexOf, seen, name) < 0) {
          seen[seen.length] = name;
          out += ";" + name + "=" + (value !== "" && call(reTest, token, value) ? value :
            '"' + call(strReplace, value, /["\\]/g, "\\$&") + '"');
        }
      }
      return out;
    };
    const reject = (e) => call(promiseReject, PromiseC, e);
    const resolve = (v) => call(promiseResolve, PromiseC, v);
    // Body is what Request and Response share: the bytes (null: no body)
    // and whether they were read.
    const bodies = new WeakMap();
    const bodyOf = (o) => (isObject(o) ? call(weakGet, bodies, o) : undefined);
    // consume reads a body once, as a promise of what convert makes of its
    // bytes.
    const consume = (o, convert) => {
      const b = bodyOf(o);
      if (b === undefined) return reject(illegal());
      if (b.used) return reject(new TypeErrorC("Body is unusable: Body has already been read"));
      if (b.bytes !== null) b.used = true;
      const bytes = b.bytes === null ? new Uint8ArrayC(0) : b.bytes;
      try {
        return resolve(convert(bytes, b));
      } catch (e) {
        return reject(e);
      }
    };
    const toLower = uncurry(strToLower);
    const bodyMethods = {
      text() { return consume(this, (b) => tdDecode(textDecoder, b)); },
      json() { return consume(this, (b) => call(jsonParse, JSONC, tdDecode(textDecoder, b))); },
      arrayBuffer() { return consume(this, (b) => call(taBuffer, call(u8Slice, b))); },
      bytes() { return consume(this, (b) => call(u8Slice, b)); },
      blob() { return consume(this, (b, body) => makeBlob(call(u8Slice, b), body.type())); },
      formData() {
        return bodyOf(this) === undefined ? reject(illegal()) : reject(new TypeErrorC("formData() is not supported in the sandbox"));
      },
    };
    const bodyUsed = {
      get bodyUsed() {
        const b = bodyOf(this);
        if (b === undefined) throw illegal();
        return b.used;
      },
    };
    const addBody = (C) => {
      for (const k of objectKeys(bodyMethods)) {
        defineProperty(C.prototype, k, { value: bodyMethods[k], writable: true, enumerable: true, configurable: true });
      }
      defineProperty(C.prototype, "bodyUsed", { get: getOwnPropertyDescriptor(bodyUsed, "bodyUsed").get, enumerable: true, configurable: true });
    };
    const setBody = (o, bytes, headers) => {
      call(weakSet, bodies, o, {
        bytes, used: false,
        // the Blob type of blob(): the Content-Type as it is then
        type: () => {
          const t = headersGet(headers, "content-type");
          return t === null ? "" : mimeSerialized(t);
        },
      });
    };
    const withBody = (o, body, headers) => {
      if (body === undefined || body === null) {
        setBody(o, null, headers);
        return;
      }
      const [bytes, type] = extract(body);
      if (type !== null && !headersHas(headers, "content-type")) headersSet(headers, "content-type", type);
      setBody(o, bytes, headers);
    };
    const nullBodyStatus = (s) => s === 101 || s === 103 || s === 204 || s === 205 || s === 304;
    const reasonPhrase = /^[\t\x20-\x7e\x80-\xff]*$/;
    const redirectStatus = (s) => s === 301 || s === 302 || s === 303 || s === 307 || s === 308;

    const responses = new WeakMap(); // Response → its state
    const stateOf = (o) => {
      const st = isObject(o) ? call(weakGet, responses, o) : undefined;
      if (st === undefined) throw illegal();
      return st;
    };
    // initResponse is Fetch's "initialize a response"; json is the text of
    // Response.json's data, a body of type application/json.
    const initResponse = (r, init, body, json) => {
      if (init !== undefined && init !== null && !isObject(init)) throw new TypeErrorC("Response: the init must be an object");
      const i = init == null ? {} : init;
      const status = i.status === undefined ? 200 : toIntegerOrInfinity(i.status) & 0xffff;
      if (status < 200 || status > 599) throw new RangeErrorC(`Response: the status ${status} is outside [200, 599]`);
      const statusText = i.statusText === undefined ? "" : toString(i.statusText);
      if (!call(reTest, reasonPhrase, statusText)) throw new TypeErrorC("Response: invalid statusText");
      const headers = i.headers === undefined ? new Headers() : new Headers(i.headers);
      if (body !== undefined && body !== null && nullBodyStatus(status)) {
        throw new TypeErrorC(`Response: a response with status ${status} cannot have a body`);
      }
      call(weakSet, responses, r, { type: "default", url: "", redirected: false, status, statusText, headers });
      if (json === undefined) withBody(r, body, headers);
      else {
        if (!headersHas(headers, "content-type")) headersSet(headers, "content-type", "application/json");
        setBody(r, utf8Bytes(json), headers);
      }
    };
    class Response {
      constructor(body = null, init = undefined) {
        initResponse(this, init, body);
      }
      static error() {
        const r = new Response();
        const st = stateOf(r);
        st.type = "error";
        st.status = 0;
        return r;
      }
      static redirect(url, status = 302) {
        const u = new URLC(url);
        const s = toIntegerOrInfinity(status) & 0xffff;
        if (!redirectStatus(s)) throw new RangeErrorC(`Response.redirect: invalid redirect status ${s}`);
        const r = new Response(null, { status: s });
        headersSet(stateOf(r).headers, "location", u.href);
        return r;
      }
      static json(data, init = undefined) {
        const text = call(jsonStringify, JSONC, data);
        if (text === undefined) throw new TypeErrorC("Response.json: the data cannot be serialized as JSON");
        const r = O.create(Response.prototype);
        initResponse(r, init, text, text);
        return r;
      }
      get type() { return stateOf(this).type; }
      get url() { return stateOf(this).url; }
      get redirected() { return stateOf(this).redirected; }
      get status() { return stateOf(this).status; }
      get ok() { const s = stateOf(this).status; return s >= 200 && s <= 299; }
      get statusText() { return stateOf(this).statusText; }
      get headers() { return stateOf(this).headers; }
      clone() {
        const st = stateOf(this);
        const b = bodyOf(this);
        if (b.used) throw new TypeErrorC("Response.clone: Body has already been read");
        const r = new Response();
        const copy = { __proto__: null };
        for (const k of objectKeys(st)) copy[k] = st[k];
        copy.headers = new Headers(st.headers);
        call(weakSet, responses, r, copy);
        setBody(r, b.bytes === null ? null : call(u8Slice, b.bytes), copy.headers);
        return r;
      }
    }
    addBody(Response);
    iface(Response, "Response");

    const methods = { __proto__: null, delete: "DELETE", get: "GET", head: "HEAD", options: "OPTIONS", post: "POST", put: "PUT", patch: "PATCH" };
    const requests = new WeakMap();
    const reqOf = (o) => {
      const st = isObject(o) ? call(weakGet, requests, o) : undefined;
      if (st === undefined) throw illegal();
      return st;
    };
    const enumIn = (what, v, allowed) => {
      const s = toString(v);
      if (call(arrIndexOf, allowed, s) < 0) throw new TypeErrorC(`Request: invalid ${what} "${s}"`);
      return s;
    };
    class Request {
      constructor(input, init = undefined) {
        if (arguments.length < 1) throw new TypeErrorC('Request: the "input" argument must be specified');
        if (init !== undefined && init !== null && !isObject(init)) throw new TypeErrorC("Request: the init must be an object");
        const i = init == null ? {} : init;
        let st, inherited = null;
        const from = isObject(input) ? call(weakGet, requests, input) : undefined;
        if (from === undefined) {
          let u;
          try {
            u = new URLC(input);
          } catch {
            throw new TypeErrorC(`Request: invalid URL "${toString(input)}" (the sandbox has no base URL)`);
          }
          if (u.username !== "" || u.password !== "") throw new TypeErrorC("Request: a URL with credentials is not allowed");
          st = { method: "GET", url: u.href, headers: new Headers(), mode: "cors", credentials: "same-origin", cache: "default",
            redirect: "follow", referrer: "about:client", referrerPolicy: "", integrity: "", keepalive: false,
            signal: new AbortController().signal };
        } else {
          st = { __proto__: null };
          for (const k of objectKeys(from)) st[k] = from[k];
          st.headers = new Headers(from.headers);
          inherited = bodyOf(input);
        }
        if (i.method !== undefined) {
          const m = toString(i.method);
          if (!call(reTest, token, m)) throw new TypeErrorC(`Request: invalid method "${m}"`);
          const lower = toLower(m);
          if (lower === "connect" || lower === "trace" || lower === "track") throw new TypeErrorC(`Request: the method ${m} is forbidden`);
          st.method = lower in methods && lower !== "patch" ? methods[lower] : m;
        }
        if (i.headers !== undefined) st.headers = new Headers(i.headers);
        if (i.mode !== undefined) st.mode = enumIn("mode", i.mode, ["cors", "no-cors", "same-origin", "navigate"]);
        if (st.mode === "navigate") throw new TypeErrorC('Request: the mode "navigate" is not allowed');
        if (i.credentials !== undefined) st.credentials = enumIn("credentials", i.credentials, ["omit", "same-origin", "include"]);
        if (i.cache !== undefined) st.cache = enumIn("cache", i.cache, ["default", "no-store", "reload", "no-cache", "force-cache", "only-if-cached"]);
        if (i.redirect !== undefined) st.redirect = enumIn("redirect", i.redirect, ["follow", "error", "manual"]);
        if (i.referrerPolicy !== undefined) {
          st.referrerPolicy = enumIn("referrerPolicy", i.referrerPolicy, ["", "no-referrer", "no-referrer-when-downgrade",
            "same-origin", "origin", "strict-origin", "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url"]);
        }
        if (i.integrity !== undefined) st.integrity = toString(i.integrity);
        if (i.keepalive !== undefined) st.keepalive = !!i.keepalive;
        if (i.signal !== undefined && i.signal !== null) {
          if (!isSignal(i.signal)) throw new TypeErrorC("Request: the signal must be an AbortSignal");
          st.signal = AbortSignal.any([i.signal]);
        }
        const hasBody = i.body !== undefined && i.body !== null;
        if ((hasBody || (inherited !== undefined && inherited !== null && inherited.bytes !== null && i.body === undefined)) &&
          (st.method === "GET" || st.method === "HEAD")) {
          throw new TypeErrorC("Request: a GET or HEAD request cannot have a body");
        }
        call(weakSet, requests, this, st);
        if (i.body !== undefined) withBody(this, i.body, st.headers);
        else if (inherited !== undefined && inherited !== null) {
          if (inherited.used) throw new TypeErrorC("Request: the input's body has already been read");
          setBody(this, inherited.bytes, st.headers);
          if (inherited.bytes !== null) inherited.used = true;
        } else setBody(this, null, st.headers);
      }
      get method() { return reqOf(this).method; }
      get url() { return reqOf(this).url; }
      get headers() { return reqOf(this).headers; }
      get destination() { reqOf(this); return ""; }
      get referrer() { return reqOf(this).referrer; }
      get referrerPolicy() { return reqOf(this).referrerPolicy; }
      get mode() { return reqOf(this).mode; }
      get credentials() { return reqOf(this).credentials; }
      get cache() { return reqOf(this).cache; }
      get redirect() { return reqOf(this).redirect; }
      get integrity() { return reqOf(this).integrity; }
      get keepalive() { return reqOf(this).keepalive; }
      get isReloadNavigation() { reqOf(this); return false; }
      get isHistoryNavigation() { reqOf(this); return false; }
      get signal() { return reqOf(this).signal; }
      get duplex() { reqOf(this); return "half"; }
      clone() {
        const st = reqOf(this);
        const b = bodyOf(this);
        if (b.used) throw new TypeErrorC("Request.clone: Body has already been read");
        return new Request(this, { headers: st.headers, body: b.bytes === null ? undefined : call(u8Slice, b.bytes) });
      }
    }
    addBody(Request);
    iface(Request, "Request");
  }
})
