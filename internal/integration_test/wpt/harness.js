// A stand-in for the web-platform-tests' testharness.js, written for
// TestWebPlatformTests_EncodingAndBase64 (wpt_test.go): the part of its API
// the encoding and base64 tests use, with the same outcomes (a subtest
// passes when its function returns without an assertion or another error
// thrown; promise tests run one after another; an async test ends at
// done()). The runner puts it in front of each test file, whose META
// scripts and own code are the module "./wpt-test.js", imported below; the
// entry's default export is the JSON of every subtest's name, status and
// message.
//
// What the sandbox does not have and the tests only use as a harness does
// stands in: self and location (a worker's globals, "?" without a variant:
// every subtest runs), fetch of the files the runner gives (wptResources:
// path from the fetched folder's root -> text), and MessageChannel, whose
// postMessage detaches the buffers it transfers by
// ArrayBuffer.prototype.transfer, as a real transfer does. The runner
// gives wptPath, the test file's path from that root.
const wpt = (() => {
  const results = [];
  const names = new Map();
  let harnessError = null;
  let promiseChain = Promise.resolve();
  const asyncTests = new Set();

  class AssertionError extends Error {
    constructor(message) {
      super(message);
      this.name = "AssertionError";
    }
  }
  // OptionalFeatureUnsupportedError is assert_implements_optional's
  // failure: testharness reports the subtest PRECONDITION_FAILED.
  class PreconditionFailed extends Error {
    constructor(message) {
      super(message);
      this.name = "PreconditionFailed";
    }
  }

  const replacements = {
    0: "0", 1: "x01", 2: "x02", 3: "x03", 4: "x04", 5: "x05", 6: "x06", 7: "x07", 8: "b", 9: "t", 10: "n", 11: "v",
    12: "f", 13: "r", 14: "x0e", 15: "x0f", 16: "x10", 17: "x11", 18: "x12", 19: "x13", 20: "x14", 21: "x15",
    22: "x16", 23: "x17", 24: "x18", 25: "x19", 26: "x1a", 27: "x1b", 28: "x1c", 29: "x1d", 30: "x1e", 31: "x1f",
    0xfffd: "ufffd", 0xfffe: "ufffe", 0xffff: "uffff",
  };
  // format_value is testharness.js's: strings quoted, with control
  // characters, the non-characters and lone surrogates escaped.
  function format_value(val, seen) {
    if (!seen) seen = [];
    if (typeof val === "object" && val !== null) {
      if (seen.indexOf(val) >= 0) return "[...]";
      seen.push(val);
    }
    if (Array.isArray(val)) return "[" + val.map((x) => format_value(x, seen)).join(", ") + "]";
    switch (typeof val) {
      case "string": {
        val = val.replace(/\\/g, "\\\\");
        for (const p in replacements) {
          val = val.replace(RegExp(String.fromCharCode(p), "g"), "\\" + replacements[p]);
        }
        val = val.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
          (c) => "\\u" + c.charCodeAt(0).toString(16));
        return '"' + val.replace(/"/g, '\\"') + '"';
      }
      case "boolean":
      case "undefined":
        return String(val);
      case "number":
        if (val === 0 && 1 / val === -Infinity) return "-0";
        return String(val);
      case "bigint":
        return String(val) + "n";
      case "symbol":
        return val.toString();
      case "object":
        if (val === null) return "null";
      // falls through
      default:
        try {
          return typeof val + ' "' + String(val) + '"';
        } catch (e) {
          return "[stringifying object threw " + String(e) + " with type " + typeof e + "]";
        }
    }
  }

  const thrown = (e) => {
    try {
      if (e && typeof e === "object" && "name" in e) return e.name + ": " + e.message;
      return format_value(e);
    } catch (_) {
      return "(an error that cannot be shown)";
    }
  };

  function assert(ok, fn, description, message) {
    if (ok) return;
    throw new AssertionError(fn + ": " + (description ? description + " " : "") + message);
  }

  function same_value(x, y) {
    if (y !== y) return x !== x;
    if (x === 0 && y === 0) return 1 / x === 1 / y;
    return x === y;
  }

  function assert_equals(actual, expected, description) {
    if (typeof actual !== typeof expected) {
      assert(false, "assert_equals", description,
        "expected (" + typeof expected + ") " + format_value(expected) + " but got (" + typeof actual + ") " + format_value(actual));
    }
    assert(same_value(actual, expected), "assert_equals", description,
      "expected " + format_value(expected) + " but got " + format_value(actual));
  }
  function assert_not_equals(actual, expected, description) {
    assert(!same_value(actual, expected), "assert_not_equals", description, "got disallowed value " + format_value(actual));
  }
  function assert_true(actual, description) {
    assert(actual === true, "assert_true", description, "expected true got " + format_value(actual));
  }
  function assert_false(actual, description) {
    assert(actual === false, "assert_false", description, "expected false got " + format_value(actual));
  }
  function assert_array_equals(actual, expected, description) {
    assert(typeof actual === "object" && actual !== null && "length" in actual, "assert_array_equals", description,
      "value is " + format_value(actual) + ", expected array");
    assert(actual.length === expected.length, "assert_array_equals", description,
      "lengths differ, expected array " + format_value(Array.from(expected)) + " length " + expected.length +
      ", got " + format_value(Array.from(actual)) + " length " + actual.length);
    for (let i = 0; i < actual.length; i++) {
      assert(actual.hasOwnProperty(i) === expected.hasOwnProperty(i), "assert_array_equals", description,
        "expected property " + i + " to be " + (expected.hasOwnProperty(i) ? "present" : "missing"));
      assert(same_value(expected[i], actual[i]), "assert_array_equals", description,
        "expected property " + i + " to be " + format_value(expected[i]) + " but got " + format_value(actual[i]) +
        " (expected array " + format_value(Array.from(expected)) + " got " + format_value(Array.from(actual)) + ")");
    }
  }
  function assert_object_equals(actual, expected, description) {
    assert(JSON.stringify(actual) === JSON.stringify(expected), "assert_object_equals", description,
      "expected " + JSON.stringify(expected) + " got " + JSON.stringify(actual));
  }
  function assert_in_array(actual, expected, description) {
    assert(expected.indexOf(actual) !== -1, "assert_in_array", description,
      "value " + format_value(actual) + " not in array " + format_value(expected));
  }
  function assert_greater_than(actual, expected, description) {
    assert(typeof actual === "number" && actual > expected, "assert_greater_than", description,
      "expected a number greater than " + expected + " but got " + format_value(actual));
  }
  function assert_greater_than_equal(actual, expected, description) {
    assert(typeof actual === "number" && actual >= expected, "assert_greater_than_equal", description,
      "expected a number greater than or equal to " + expected + " but got " + format_value(actual));
  }
  function assert_less_than(actual, expected, description) {
    assert(typeof actual === "number" && actual < expected, "assert_less_than", description,
      "expected a number less than " + expected + " but got " + format_value(actual));
  }
  function assert_less_than_equal(actual, expected, description) {
    assert(typeof actual === "number" && actual <= expected, "assert_less_than_equal", description,
      "expected a number less than or equal to " + expected + " but got " + format_value(actual));
  }
  function assert_regexp_match(actual, expected, description) {
    assert(expected.test(actual), "assert_regexp_match", description, "expected " + format_value(expected) + " but got " + format_value(actual));
  }
  function assert_own_property(object, property, description) {
    assert(Object.prototype.hasOwnProperty.call(object, property), "assert_own_property", description,
      "expected property " + format_value(property) + " missing");
  }
  function assert_class_string(object, class_string, description) {
    const actual = Object.prototype.toString.call(object);
    const expected = "[object " + class_string + "]";
    assert(same_value(actual, expected), "assert_class_string", description,
      "expected " + format_value(expected) + " but got " + format_value(actual));
  }
  function assert_unreached(description) {
    assert(false, "assert_unreached", description, "Reached unreachable code");
  }
  function assert_implements(condition, description) {
    assert(!!condition, "assert_implements", description, "");
  }
  function assert_implements_optional(condition, description) {
    if (!condition) throw new PreconditionFailed("assert_implements_optional: " + (description || ""));
  }

  // assert_throws_js: func throws an object whose constructor is the given
  // one and whose name is the constructor's.
  function assert_throws_js(constructor, func, description) {
    try {
      func.call(this);
    } catch (e) {
      if (e instanceof AssertionError) throw e;
      assert(typeof e === "object" || typeof e === "function", "assert_throws_js", description,
        func + " threw " + format_value(e) + " with type " + typeof e + ", not an object");
      assert(e !== null, "assert_throws_js", description, func + " threw null, not an object");
      assert(e.constructor === constructor && e.name === constructor.name, "assert_throws_js", description,
        "threw " + thrown(e) + " (" + e.name + "), expected instance of " + constructor.name);
      return;
    }
    assert(false, "assert_throws_js", description, "the function did not throw");
  }

  const codeNames = {
    INDEX_SIZE_ERR: "IndexSizeError", HIERARCHY_REQUEST_ERR: "HierarchyRequestError", WRONG_DOCUMENT_ERR: "WrongDocumentError",
    INVALID_CHARACTER_ERR: "InvalidCharacterError", NO_MODIFICATION_ALLOWED_ERR: "NoModificationAllowedError",
    NOT_FOUND_ERR: "NotFoundError", NOT_SUPPORTED_ERR: "NotSupportedError", INUSE_ATTRIBUTE_ERR: "InUseAttributeError",
    INVALID_STATE_ERR: "InvalidStateError", SYNTAX_ERR: "SyntaxError", INVALID_MODIFICATION_ERR: "InvalidModificationError",
    NAMESPACE_ERR: "NamespaceError", INVALID_ACCESS_ERR: "InvalidAccessError", TYPE_MISMATCH_ERR: "TypeMismatchError",
    SECURITY_ERR: "SecurityError", NETWORK_ERR: "NetworkError", ABORT_ERR: "AbortError", URL_MISMATCH_ERR: "URLMismatchError",
    QUOTA_EXCEEDED_ERR: "QuotaExceededError", TIMEOUT_ERR: "TimeoutError", INVALID_NODE_TYPE_ERR: "InvalidNodeTypeError",
    DATA_CLONE_ERR: "DataCloneError",
  };
  const nameCodes = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5, NoModificationAllowedError: 7,
    NotFoundError: 8, NotSupportedError: 9, InUseAttributeError: 10, InvalidStateError: 11, SyntaxError: 12,
    InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18,
    NetworkError: 19, AbortError: 20, URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24,
    DataCloneError: 25,
  };

  // checkDOM: e is a DOMException of the given name (or legacy code name),
  // with its code, made by constructor.
  function checkDOM(fn, type, e, constructor, description) {
    const name = codeNames[type] || type;
    assert(typeof e === "object" && e !== null, fn, description, "threw " + format_value(e) + ", not an object");
    assert(e.name === name, fn, description, "threw " + thrown(e) + ", expected a DOMException " + name);
    assert(e.code === (nameCodes[name] || 0), fn, description, "threw code " + format_value(e.code) + ", expected " + (nameCodes[name] || 0));
    assert(e.constructor === constructor, fn, description, "threw an exception from the wrong constructor");
  }
  function assert_throws_dom(type, funcOrConstructor, descriptionOrFunc, maybeDescription) {
    let constructor = DOMException, func = funcOrConstructor, description = descriptionOrFunc;
    if (typeof descriptionOrFunc === "function") {
      constructor = funcOrConstructor;
      func = descriptionOrFunc;
      description = maybeDescription;
    }
    try {
      func.call(this);
    } catch (e) {
      if (e instanceof AssertionError) throw e;
      checkDOM("assert_throws_dom", type, e, constructor, description);
      return;
    }
    assert(false, "assert_throws_dom", description, "the function did not throw");
  }
  function assert_throws_exactly(exception, func, description) {
    try {
      func.call(this);
    } catch (e) {
      if (e instanceof AssertionError) throw e;
      assert(same_value(e, exception), "assert_throws_exactly", description, "threw " + format_value(e) + " but we expected it to throw " + format_value(exception));
      return;
    }
    assert(false, "assert_throws_exactly", description, "the function did not throw");
  }
  // assert_throws is the old form (an object with the name to throw, or a
  // DOMException's name or legacy code name), which older copies of the
  // tests use.
  function assert_throws(code, func, description) {
    try {
      func.call(this);
    } catch (e) {
      if (e instanceof AssertionError) throw e;
      if (typeof code === "object" && code !== null) {
        assert(typeof e === "object" && e !== null && "name" in e && e.name === code.name, "assert_throws", description,
          "threw " + thrown(e) + ", expected " + code.name);
        return;
      }
      checkDOM("assert_throws", code, e, DOMException, description);
      return;
    }
    assert(false, "assert_throws", description, "the function did not throw");
  }

  function promise_rejects_js(t, constructor, promise, description) {
    return promise.then(() => assert_unreached("Should have rejected: " + (description || "")),
      (e) => assert_throws_js(constructor, () => { throw e; }, description));
  }
  function promise_rejects_dom(t, type, promiseOrConstructor, descriptionOrPromise, maybeDescription) {
    let constructor = DOMException, promise = promiseOrConstructor, description = descriptionOrPromise;
    if (typeof promiseOrConstructor === "function") {
      constructor = promiseOrConstructor;
      promise = descriptionOrPromise;
      description = maybeDescription;
    }
    return promise.then(() => assert_unreached("Should have rejected: " + (description || "")),
      (e) => checkDOM("promise_rejects_dom", type, e, constructor, description));
  }
  function promise_rejects_exactly(t, exception, promise, description) {
    return promise.then(() => assert_unreached("Should have rejected: " + (description || "")),
      (e) => assert_throws_exactly(exception, () => { throw e; }, description));
  }

  // A subtest: its name, status and message, and the Test object a test
  // function is given.
  class Test {
    constructor(name) {
      let n = String(name);
      if (names.has(n)) {
        const k = names.get(n) + 1;
        names.set(n, k);
        n = n + " [" + k + "]";
      } else {
        names.set(n, 1);
      }
      this.name = n;
      this.status = null;
      this.message = "";
      this.cleanups = [];
      this.phase = "started";
      results.push(this);
    }
    step(f, thisObj, ...args) {
      if (this.phase === "complete") return undefined;
      try {
        return f.apply(thisObj === undefined ? this : thisObj, args);
      } catch (e) {
        this.fail(e);
        return undefined;
      }
    }
    step_func(f, thisObj) {
      return (...args) => this.step(f, thisObj === undefined ? this : thisObj, ...args);
    }
    step_func_done(f, thisObj) {
      return (...args) => {
        if (f) this.step(f, thisObj === undefined ? this : thisObj, ...args);
        this.done();
      };
    }
    unreached_func(description) {
      return this.step_func(() => assert_unreached(description));
    }
    add_cleanup(f) {
      this.cleanups.push(f);
    }
    step_timeout() {
      throw new Error("step_timeout: the runner gives the sandbox no timers");
    }
    fail(e) {
      if (this.phase === "complete") return;
      if (e instanceof PreconditionFailed) this.status = "PRECONDITION_FAILED";
      else this.status = "FAIL";
      this.message = thrown(e);
      this.done();
    }
    done() {
      if (this.phase === "complete") return;
      if (this.status === null) this.status = "PASS";
      this.phase = "complete";
      asyncTests.delete(this);
      for (const c of this.cleanups) {
        try {
          c();
        } catch (e) {
          harnessError = harnessError || "a cleanup threw " + thrown(e);
        }
      }
    }
  }

  function test(func, name, properties) {
    const t = new Test(name);
    t.step(func, t, t);
    t.done();
    return t;
  }
  function async_test(func, name, properties) {
    if (typeof func !== "function") {
      name = func;
      func = null;
    }
    const t = new Test(name);
    asyncTests.add(t);
    if (func) t.step(func, t, t);
    return t;
  }
  function promise_test(func, name, properties) {
    const t = new Test(name);
    asyncTests.add(t);
    promiseChain = promiseChain.then(async () => {
      let p;
      try {
        p = func.call(t, t);
      } catch (e) {
        t.fail(e);
        return;
      }
      if (!p || typeof p.then !== "function") {
        t.fail(new AssertionError("promise_test: test body must return a 'thenable' object (received " + format_value(p) + ")"));
        return;
      }
      try {
        await p;
        t.done();
      } catch (e) {
        t.fail(e);
      }
    });
  }
  function setup(funcOrProperties, maybeProperties) {
    if (typeof funcOrProperties === "function") {
      try {
        funcOrProperties();
      } catch (e) {
        harnessError = harnessError || "setup threw " + thrown(e);
      }
    }
  }
  function promise_setup(func) {
    promiseChain = promiseChain.then(() => func()).catch((e) => {
      harnessError = harnessError || "promise_setup rejected " + thrown(e);
    });
  }
  function generate_tests(func, args, properties) {
    for (const a of args) {
      const [name, ...rest] = a;
      test(() => func(...rest), name, properties);
    }
  }
  const completionCallbacks = [];

  const g = globalThis;
  const put = (name, value) => Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
  Object.entries({
    test, async_test, promise_test, setup, promise_setup, generate_tests, format_value,
    done() {}, add_completion_callback(f) { completionCallbacks.push(f); }, add_result_callback() {},
    subsetTest(testFunc, ...args) { return testFunc(...args); }, shouldRunSubTest() { return true; },
    assert_equals, assert_not_equals, assert_true, assert_false, assert_array_equals, assert_object_equals, assert_in_array,
    assert_greater_than, assert_greater_than_equal, assert_less_than, assert_less_than_equal, assert_regexp_match,
    assert_own_property, assert_class_string, assert_unreached, assert_implements, assert_implements_optional,
    assert_throws_js, assert_throws_dom, assert_throws_exactly, assert_throws,
    promise_rejects_js, promise_rejects_dom, promise_rejects_exactly,
  }).forEach(([k, v]) => put(k, v));
  put("self", g);
  put("location", { href: "https://web-platform.test/" + wptPath, search: "", pathname: "/" + wptPath });
  put("GLOBAL", { isWindow: () => false, isWorker: () => false, isShadowRealm: () => false });

  // fetch of the files the runner gives, relative to the test file.
  if (typeof g.fetch !== "function") {
    put("fetch", (url) => {
      const parts = String(wptPath).split("/").slice(0, -1);
      for (const seg of String(url).split("/")) {
        if (seg === "..") parts.pop();
        else if (seg !== ".") parts.push(seg);
      }
      const path = String(url).startsWith("/") ? String(url).slice(1) : parts.join("/");
      if (!Object.prototype.hasOwnProperty.call(wptResources, path)) {
        return Promise.reject(new TypeError("fetch (the runner's stand-in): " + path + " was not given"));
      }
      return Promise.resolve(new Response(wptResources[path]));
    });
  }
  if (typeof g.MessageChannel !== "function") {
    const port = {
      postMessage(message, transfer) {
        for (const b of Array.isArray(transfer) ? transfer : (transfer && transfer.transfer) || []) {
          if (b instanceof ArrayBuffer) b.transfer();
        }
      },
      close() {},
      start() {},
    };
    put("MessageChannel", class MessageChannel {
      constructor() {
        this.port1 = port;
        this.port2 = port;
      }
    });
  }

  return {
    error(e) {
      harnessError = harnessError || thrown(e);
    },
    // finish runs the promise tests, waits for the async tests as long as
    // there is work in the microtask queue (the runner gives the sandbox no timers, so
    // no timeout can fire), and gives the results.
    async finish() {
      await promiseChain.catch(() => {});
      for (let i = 0; i < 10000 && asyncTests.size > 0; i++) await null;
      for (const t of asyncTests) {
        t.status = "TIMEOUT";
        t.message = "not done when the microtask queue ran dry (the runner gives the sandbox no timers)";
        t.phase = "complete";
      }
      for (const f of completionCallbacks) {
        try {
          f(results, {});
        } catch (_) {}
      }
      return JSON.stringify({
        tests: results.map((t) => ({ name: t.name, status: t.status || "NOTRUN", message: t.message })),
        harness: harnessError,
      });
    },
  };
})();

try {
  await import("./wpt-test.js");
} catch (e) {
  wpt.error(e);
}
export default await wpt.finish();
