// Intl for the sandbox: ECMA-402's constructors and the toLocale* methods,
// formatting as Node 20 (ICU) does for English (en, en-US); every other
// locale falls back to en-US and says so in resolvedOptions().locale, as
// ICU does for a locale it has no data for. Collation and time zones are
// answered by the host (internal/intl/host.go): ICU's root collation and
// its tailorings from golang.org/x/text/collate, zone offsets from Go's
// zone data. The numbers, the dates, plurals, relative times, lists and
// segments are formatted here.
//
// The script is a function of the host function; it runs once, in the
// snapshot, before the kernel. It captures the intrinsics it uses.
(function (hostFn) {
  "use strict";
  const g = globalThis;
  const O = Object, defineProperty = O.defineProperty, freeze = O.freeze;
  const { apply } = Reflect;
  const TypeErrorC = TypeError, RangeErrorC = RangeError, StringC = String, NumberC = Number;
  const ArrayIsArray = Array.isArray, MathAbs = Math.abs, MathFloor = Math.floor, MathMax = Math.max, MathMin = Math.min;
  const NumberIsFinite = Number.isFinite;
  const DateC = Date, MapC = Map;
  const dateGetTime = Date.prototype.getTime;
  const toExponential = Number.prototype.toExponential;
  const strSlice = String.prototype.slice, strIndexOf = String.prototype.indexOf, strRepeat = String.prototype.repeat;
  const strToLower = String.prototype.toLowerCase, strToUpper = String.prototype.toUpperCase, strSplit = String.prototype.split;
  const strPadStart = String.prototype.padStart, strReplace = String.prototype.replace, strCodePointAt = String.prototype.codePointAt;
  const reExec = RegExp.prototype.exec;
  const arrJoin = Array.prototype.join, arrPush = Array.prototype.push, arrIncludes = Array.prototype.includes;
  const arrFilter = Array.prototype.filter, arrSort = Array.prototype.sort;
  // A program's changes to Array.prototype do not reach these.
  const includes = (a, v) => call(arrIncludes, a, v);
  // own(a) iterates the array a with an iterator of its own, so that a
  // program's Array.prototype[Symbol.iterator] does not reach the loops
  // over the script's own arrays.
  const own = (a) => ({
    [SymbolIterator]() {
      let i = 0;
      return { next: () => (i < a.length ? { value: a[i++], done: false } : { value: undefined, done: true }) };
    },
  });
  const call = (f, t, ...a) => apply(f, t, a);
  const slice = (s, a, b) => call(strSlice, s, a, b);
  const lower = (s) => call(strToLower, s), upper = (s) => call(strToUpper, s);
  // put defines o[k] as a data property, as the specification's
  // CreateDataProperty does: an assignment would call a setter a program
  // put on Object.prototype or Array.prototype (test262's taint tests).
  // Its descriptor is one object with no prototype, reused: a new one a
  // call cost more than the rest of a push, and one with Object.prototype
  // would read a "get" or "set" a program put there.
  const dataDesc = { __proto__: null, value: undefined, writable: true, enumerable: true, configurable: true };
  const put = (o, k, v) => {
    dataDesc.value = v;
    defineProperty(o, k, dataDesc);
    dataDesc.value = undefined;
  };
  const push = (a, v) => put(a, a.length, v);
  const join = (a, sep) => call(arrJoin, a, sep);
  const SymbolIterator = Symbol.iterator, SymbolToStringTag = Symbol.toStringTag;
  // No spread: a program's Array.prototype[Symbol.iterator] must not
  // choose the host function's arguments.
  const host = (op, a, b, c) => hostFn(op, a, b, c);

  // method defines obj[name] as the built-in method fn, of length len.
  // fn is written in method syntax ({ m() {} }.m), as the built-ins'
  // methods have no [[Construct]] (new throws) and no prototype property;
  // a function expression is refused when the snapshot is made.
  const method = (obj, name, fn, len) => {
    if ("prototype" in fn) throw new TypeErrorC(`intl.js: ${StringC(name)} is a constructor`);
    defineProperty(fn, "name", { value: name, configurable: true });
    if (len !== undefined) defineProperty(fn, "length", { value: len, configurable: true });
    defineProperty(obj, name, { value: fn, writable: true, configurable: true, enumerable: false });
  };
  // A method with no [[Construct]], as the built-ins' methods are.
  const fnOf = (name, f) => ({ [name](...a) { return apply(f, this, a); } })[name];

  // --- locales -----------------------------------------------------------

  const is = (re, x) => call(reExec, re, x) !== null;
  const langRE = /^(?:[a-z]{2,3}|[a-z]{5,8})$/, scriptRE = /^[a-z]{4}$/, regionRE = /^(?:[a-z]{2}|[0-9]{3})$/;
  const variantRE = /^(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3})$/, typeRE = /^[a-z0-9]{3,8}$/;
  // validTag reports whether p, a tag's subtags in lower case, is a
  // structurally valid Unicode locale identifier (UTS 35, which ECMA-402's
  // IsStructurallyValidLanguageTag follows): a language, then a script, a
  // region and variants (none twice), then extensions (none twice, none
  // empty; -u- keys a digit or letter and a letter, -t- keys a letter and a
  // digit, each with a value), then a private use.
  const validTag = (p) => {
    const n = p.length;
    let i = 0;
    const languageID = () => {
      if (i >= n || !is(langRE, p[i])) return false;
      i++;
      if (i < n && is(scriptRE, p[i])) i++;
      if (i < n && is(regionRE, p[i])) i++;
      const seen = [];
      for (; i < n && is(variantRE, p[i]); i++) {
        if (includes(seen, p[i])) return false;
        push(seen, p[i]);
      }
      return true;
    };
    if (!languageID()) return false;
    const singletons = [];
    while (i < n && p[i].length === 1 && p[i] !== "x") {
      const single = p[i++];
      if (!is(/^[a-z0-9]$/, single) || includes(singletons, single)) return false;
      push(singletons, single);
      let any = false;
      if (single === "u") {
        for (; i < n && is(typeRE, p[i]); i++) any = true; // attributes
        while (i < n && p[i].length === 2) {
          if (!is(/^[a-z0-9][a-z]$/, p[i++])) return false;
          for (; i < n && is(typeRE, p[i]); i++);
          any = true;
        }
      } else if (single === "t") {
        if (i < n && is(langRE, p[i])) {
          if (!languageID()) return false;
          any = true;
        }
        while (i < n && p[i].length === 2) {
          if (!is(/^[a-z][0-9]$/, p[i++])) return false;
          let values = 0;
          for (; i < n && is(typeRE, p[i]); i++) values++;
          if (!values) return false;
          any = true;
        }
      } else {
        for (; i < n && is(/^[a-z0-9]{2,8}$/, p[i]); i++) any = true;
      }
      if (!any) return false;
    }
    if (i < n && p[i] === "x") {
      i++;
      if (i >= n) return false;
      for (; i < n && is(/^[a-z0-9]{1,8}$/, p[i]); i++);
    }
    return i === n;
  };
  // cached(bound, make) is make(key) remembered for the last keys, at most
  // bound of them (past it the cache starts again), through the Map
  // methods captured here: a program's changes to Map.prototype do not
  // reach it.
  const mapGet = MapC.prototype.get, mapSet = MapC.prototype.set, mapClear = MapC.prototype.clear;
  const mapSize = O.getOwnPropertyDescriptor(MapC.prototype, "size").get;
  const cached = (bound, make) => {
    const m = new MapC();
    return (key) => {
      let v = call(mapGet, m, key);
      if (v === undefined) {
        v = make(key);
        if (call(mapSize, m) >= bound) call(mapClear, m);
        call(mapSet, m, key, v);
      }
      return v;
    };
  };
  // The last tags canonicalized, a few: a program formats with the same
  // one again and again.
  const canonOf = cached(32, (s) => canonTagOf(s));
  const canonTag = (tag) => {
    if (typeof tag !== "string" && (typeof tag !== "object" || tag === null)) {
      throw new TypeErrorC("Language ID should be string or object.");
    }
    return canonOf(StringC(tag));
  };
  const canonTagOf = (s) => {
    const parts = call(strSplit, s, "-");
    const low = [];
    for (let i = 0; i < parts.length; i++) push(low, lower(parts[i]));
    if (!validTag(low)) throw new RangeErrorC(`Incorrect locale information provided`);
    // Valid: each part is [a-z0-9]{1,8} in low.
    const out = [low[0]];
    let ext = false;
    for (let i = 1; i < low.length; i++) {
      const p = low[i];
      if (p.length === 1) ext = true;
      if (ext) push(out, p);
      else if (p.length === 2 && is(/^[a-z]+$/, p)) push(out, upper(p));
      else if (p.length === 4 && is(/^[a-z]+$/, p)) push(out, upper(p[0]) + slice(p, 1));
      else push(out, p);
    }
    return join(out, "-");
  };
  const canonicalList = (locales) => {
    if (locales === undefined) return [];
    const list = typeof locales === "string" || (locales instanceof Locale) ? [locales] : toObject(locales);
    const out = [];
    const n = toLength(list.length); // below: ToLength
    for (let i = 0; i < n; i++) {
      if (!(i in list)) continue;
      const t = canonTag(list[i]);
      let dup = false;
      for (let j = 0; j < out.length; j++) if (out[j] === t) dup = true;
      if (!dup) push(out, t);
    }
    return out;
  };
  // The locales formatted here: English. Any other falls back to en-US.
  const english = (t) => t === "en" || t === "en-US";
  const resolve = (locales) => {
    const list = canonicalList(locales);
    for (let i = 0; i < list.length; i++) {
      const t = stripExt(list[i]);
      if (english(t)) return t;
    }
    return "en-US";
  };
  const stripExt = (t) => {
    const i = call(strIndexOf, t, "-u-");
    return i < 0 ? t : slice(t, 0, i);
  };
  const supportedLocalesOf = (locales) => {
    const list = canonicalList(locales);
    const out = [];
    for (let i = 0; i < list.length; i++) if (english(stripExt(list[i]))) push(out, list[i]);
    return out;
  };

  // --- options -----------------------------------------------------------

  const toObject = (o) => {
    if (o === undefined) return O.create(null);
    if (o === null) throw new TypeErrorC("Cannot convert undefined or null to object");
    return O(o);
  };
  const getOpt = (o, name, values, fallback, ctor) => {
    let v = o[name];
    if (v === undefined) return fallback;
    if (values === "boolean") return !!v;
    v = `${v}`; // ToString: a Symbol is a TypeError
    if (values && !includes(values, v)) throw new RangeErrorC(`Value ${v} out of range for ${ctor} options property ${name}`);
    return v;
  };
  // getType reads an option whose value must be a Unicode locale type
  // (calendar, numberingSystem, collation): alphanumeric parts of 3 to 8
  // characters joined by "-", or a RangeError (ECMA-402). A well-formed
  // value the sandbox has no data for resolves to what it has.
  const getType = (o, name) => {
    let v = o[name];
    if (v === undefined) return undefined;
    v = `${v}`;
    if (!call(reExec, /^[0-9A-Za-z]{3,8}(?:-[0-9A-Za-z]{3,8})*$/, v)) throw new RangeErrorC(`Invalid ${name} : ${v}`);
    return v;
  };
  const getNum = (o, name, min, max, fallback) => numOf(o[name], name, min, max, fallback);
  // numOf is ECMA-402's DefaultNumberOption: v, read once already.
  const numOf = (v, name, min, max, fallback) => {
    if (v === undefined) return fallback;
    v = NumberC(v);
    if (v !== v || v < min || v > max) throw new RangeErrorC(`${name} value is out of range.`);
    return MathFloor(v);
  };

  // --- numbers -------------------------------------------------------------

  // A decimal: sign, digits without leading or trailing zeros, and the
  // power of ten of the place after the first digit (value = 0.DIGITS x 10^exp).
  const decimalOf = (x) => {
    if (typeof x === "bigint") {
      const neg = x < 0n;
      let s = StringC(neg ? -x : x);
      let e = s.length;
      s = call(strReplace, s, /0+$/, "");
      return { neg, digits: s, exp: s === "" ? 0 : e };
    }
    const neg = x < 0 || (x === 0 && 1 / x < 0);
    if (x === 0) return { neg, digits: "", exp: 0 };
    const t = call(toExponential, MathAbs(x)); // shortest round-trip digits
    const i = call(strIndexOf, t, "e");
    let digits = call(strReplace, slice(t, 0, i), ".", "");
    digits = call(strReplace, digits, /0+$/, "");
    return { neg, digits, exp: NumberC(slice(t, i + 1)) + 1 };
  };
  // roundAt keeps the digits before place k (counted from the first digit),
  // rounding half away from zero, as ICU's halfExpand does.
  const roundAt = (d, k) => {
    if (k >= d.digits.length) return d;
    if (k < 0) return { neg: d.neg, digits: "", exp: 0 };
    let digits = slice(d.digits, 0, k), exp = d.exp;
    if (d.digits[k] >= "5") {
      let i = digits.length - 1;
      while (i >= 0 && digits[i] === "9") i--;
      if (i < 0) { digits = "1"; exp++; }
      else digits = slice(digits, 0, i) + StringC.fromCharCode(digits.charCodeAt(i) + 1);
    } else {
      let i = digits.length;
      while (i > 0 && digits[i - 1] === "0") i--;
      digits = slice(digits, 0, i);
    }
    while (digits.length && digits[digits.length - 1] === "0") digits = slice(digits, 0, -1);
    if (digits === "") exp = 0;
    return { neg: d.neg, digits, exp };
  };
  const roundFrac = (d, maxFrac) => roundAt(d, d.exp + maxFrac);
  const roundSig = (d, maxSig) => roundAt(d, maxSig);
  const rep = (s, n) => n > 0 ? call(strRepeat, s, n) : "";
  // intFrac returns the integer and fraction digits of d.
  const intFrac = (d, minInt, minFrac) => {
    let int, frac;
    if (d.exp <= 0) { int = ""; frac = rep("0", -d.exp) + d.digits; }
    else if (d.exp >= d.digits.length) { int = d.digits + rep("0", d.exp - d.digits.length); frac = ""; }
    else { int = slice(d.digits, 0, d.exp); frac = slice(d.digits, d.exp); }
    if (int.length < minInt) int = rep("0", minInt - int.length) + int;
    if (frac.length < minFrac) frac += rep("0", minFrac - frac.length);
    return [int, frac];
  };
  const digitCount = (d) => d.digits.length;

  const currencyDigits = { JPY: 0, KRW: 0, VND: 0, CLP: 0, ISK: 0, UGX: 0, PYG: 0, XAF: 0, XOF: 0, XPF: 0, RWF: 0, KMF: 0, GNF: 0, DJF: 0, VUV: 0, BIF: 0, BHD: 3, KWD: 3, OMR: 3, JOD: 3, TND: 3, LYD: 3, IQD: 0 };
  const currencySymbols = { USD: "$", EUR: "€", GBP: "£", JPY: "¥", INR: "₹", CNY: "CN¥", CAD: "CA$", AUD: "A$", KRW: "₩", BRL: "R$", MXN: "MX$", HKD: "HK$", NZD: "NZ$", TWD: "NT$", ILS: "₪", VND: "₫", XAF: "FCFA", XOF: "F\u202fCFA", PHP: "₱", XCD: "EC$", XPF: "CFPF" };
  const currencyNames = {
    USD: ["US dollar", "US dollars"], EUR: ["euro", "euros"], GBP: ["British pound", "British pounds"],
    JPY: ["Japanese yen", "Japanese yen"], INR: ["Indian rupee", "Indian rupees"], CNY: ["Chinese yuan", "Chinese yuan"],
    CAD: ["Canadian dollar", "Canadian dollars"], AUD: ["Australian dollar", "Australian dollars"],
    CHF: ["Swiss franc", "Swiss francs"], KRW: ["South Korean won", "South Korean won"], BRL: ["Brazilian real", "Brazilian reals"],
    MXN: ["Mexican peso", "Mexican pesos"], SEK: ["Swedish krona", "Swedish kronor"], NOK: ["Norwegian krone", "Norwegian kroner"],
    DKK: ["Danish krone", "Danish kroner"], PLN: ["Polish zloty", "Polish zlotys"], RUB: ["Russian ruble", "Russian rubles"],
    HKD: ["Hong Kong dollar", "Hong Kong dollars"], SGD: ["Singapore dollar", "Singapore dollars"], NZD: ["New Zealand dollar", "New Zealand dollars"],
    ZAR: ["South African rand", "South African rand"], TRY: ["Turkish lira", "Turkish Lira"], BTC: ["BTC", "BTC"],
  };
  // Units: [short singular, short plural, narrow, long singular, long plural]; "{0}" is the number.
  const units = {
    acre: ["{0} ac", "{0} ac", "{0}ac", "{0} acre", "{0} acres"],
    bit: ["{0} bit", "{0} bit", "{0}bit", "{0} bit", "{0} bits"],
    byte: ["{0} byte", "{0} byte", "{0}B", "{0} byte", "{0} bytes"],
    celsius: ["{0}°C", "{0}°C", "{0}°C", "{0} degree Celsius", "{0} degrees Celsius"],
    centimeter: ["{0} cm", "{0} cm", "{0}cm", "{0} centimeter", "{0} centimeters"],
    day: ["{0} day", "{0} days", "{0}d", "{0} day", "{0} days"],
    degree: ["{0} deg", "{0} deg", "{0}°", "{0} degree", "{0} degrees"],
    fahrenheit: ["{0}°F", "{0}°F", "{0}°", "{0} degree Fahrenheit", "{0} degrees Fahrenheit"],
    foot: ["{0} ft", "{0} ft", "{0}′", "{0} foot", "{0} feet"],
    gigabit: ["{0} Gb", "{0} Gb", "{0}Gb", "{0} gigabit", "{0} gigabits"],
    gigabyte: ["{0} GB", "{0} GB", "{0}GB", "{0} gigabyte", "{0} gigabytes"],
    gram: ["{0} g", "{0} g", "{0}g", "{0} gram", "{0} grams"],
    hectare: ["{0} ha", "{0} ha", "{0}ha", "{0} hectare", "{0} hectares"],
    hour: ["{0} hr", "{0} hr", "{0}h", "{0} hour", "{0} hours"],
    inch: ["{0} in", "{0} in", "{0}″", "{0} inch", "{0} inches"],
    kilobit: ["{0} kb", "{0} kb", "{0}kb", "{0} kilobit", "{0} kilobits"],
    kilobyte: ["{0} kB", "{0} kB", "{0}kB", "{0} kilobyte", "{0} kilobytes"],
    kilogram: ["{0} kg", "{0} kg", "{0}kg", "{0} kilogram", "{0} kilograms"],
    kilometer: ["{0} km", "{0} km", "{0}km", "{0} kilometer", "{0} kilometers"],
    liter: ["{0} L", "{0} L", "{0}L", "{0} liter", "{0} liters"],
    megabit: ["{0} Mb", "{0} Mb", "{0}Mb", "{0} megabit", "{0} megabits"],
    megabyte: ["{0} MB", "{0} MB", "{0}MB", "{0} megabyte", "{0} megabytes"],
    meter: ["{0} m", "{0} m", "{0}m", "{0} meter", "{0} meters"],
    microsecond: ["{0} μs", "{0} μs", "{0}μs", "{0} microsecond", "{0} microseconds"],
    mile: ["{0} mi", "{0} mi", "{0}mi", "{0} mile", "{0} miles"],
    milliliter: ["{0} mL", "{0} mL", "{0}mL", "{0} milliliter", "{0} milliliters"],
    millimeter: ["{0} mm", "{0} mm", "{0}mm", "{0} millimeter", "{0} millimeters"],
    millisecond: ["{0} ms", "{0} ms", "{0}ms", "{0} millisecond", "{0} milliseconds"],
    minute: ["{0} min", "{0} min", "{0}m", "{0} minute", "{0} minutes"],
    month: ["{0} mth", "{0} mths", "{0}m", "{0} month", "{0} months"],
    nanosecond: ["{0} ns", "{0} ns", "{0}ns", "{0} nanosecond", "{0} nanoseconds"],
    ounce: ["{0} oz", "{0} oz", "{0}oz", "{0} ounce", "{0} ounces"],
    percent: ["{0}%", "{0}%", "{0}%", "{0} percent", "{0} percent"],
    petabyte: ["{0} PB", "{0} PB", "{0}PB", "{0} petabyte", "{0} petabytes"],
    pound: ["{0} lb", "{0} lb", "{0}#", "{0} pound", "{0} pounds"],
    second: ["{0} sec", "{0} sec", "{0}s", "{0} second", "{0} seconds"],
    terabit: ["{0} Tb", "{0} Tb", "{0}Tb", "{0} terabit", "{0} terabits"],
    terabyte: ["{0} TB", "{0} TB", "{0}TB", "{0} terabyte", "{0} terabytes"],
    week: ["{0} wk", "{0} wks", "{0}w", "{0} week", "{0} weeks"],
    yard: ["{0} yd", "{0} yd", "{0}yd", "{0} yard", "{0} yards"],
    year: ["{0} yr", "{0} yrs", "{0}y", "{0} year", "{0} years"],
    "fluid-ounce": ["{0} fl oz", "{0} fl oz", "{0}fl oz", "{0} fluid ounce", "{0} fluid ounces"],
    gallon: ["{0} gal", "{0} gal", "{0}gal", "{0} gallon", "{0} gallons"],
    stone: ["{0} st", "{0} st", "{0}st", "{0} stone", "{0} stones"],
  };
  const perUnit = { hour: ["/h", " per hour"], second: ["/s", " per second"], minute: ["/min", " per minute"], day: ["/d", " per day"],
    kilometer: ["/km", " per kilometer"], liter: ["/L", " per liter"], gallon: ["/gal", " per gallon"] };
  const perSpecial = { "kilometer-per-hour": ["{0} km/h", "{0}km/h", "{0} kilometer per hour", "{0} kilometers per hour"],
    "mile-per-hour": ["{0} mph", "{0}mph", "{0} mile per hour", "{0} miles per hour"],
    "meter-per-second": ["{0} m/s", "{0}m/s", "{0} meter per second", "{0} meters per second"],
    "liter-per-kilometer": ["{0} L/km", "{0}L/km", "{0} liter per kilometer", "{0} liters per kilometer"],
    "mile-per-gallon": ["{0} mpg", "{0}mpg", "{0} mile per gallon", "{0} miles per gallon"] };
  const unitPattern = (unit, display, one) => {
    const sp = perSpecial[unit];
    if (sp) return display === "long" ? sp[one ? 2 : 3] : display === "narrow" ? sp[1] : sp[0];
    const i = call(strIndexOf, unit, "-per-");
    if (i >= 0) {
      const a = units[slice(unit, 0, i)], b = perUnit[slice(unit, i + 5)];
      if (a && b) {
        if (display === "long") return a[one ? 3 : 4] + b[1];
        return (display === "narrow" ? a[2] : a[0]) + b[0];
      }
    }
    const u = units[unit];
    return display === "long" ? u[one ? 3 : 4] : display === "narrow" ? u[2] : u[one ? 0 : 1];
  };
  const validUnit = (u) => {
    if (units[u] || perSpecial[u]) return true;
    const i = call(strIndexOf, u, "-per-");
    return i >= 0 && !!units[slice(u, 0, i)] && !!(perUnit[slice(u, i + 5)] || units[slice(u, i + 5)]);
  };

  const compactShort = ["", "K", "K", "K", "M", "M", "M", "B", "B", "B", "T", "T", "T"];
  const compactLong = ["", " thousand", " thousand", " thousand", " million", " million", " million", " billion", " billion", " billion", " trillion", " trillion", " trillion"];

  const nfState = new WeakMap();
  const nfOf = (t, m) => {
    const s = typeof t === "object" && t !== null ? nfState.get(t) : undefined;
    if (!s) throw new TypeErrorC(`Method Intl.NumberFormat.prototype.${m} called on incompatible receiver ${typeof t === "object" ? "#<Object>" : StringC(t)}`);
    return s;
  };
  const NF = "Intl.NumberFormat";
  const makeNF = (locales, options) => {
    const locale = resolve(locales);
    const o = toObject(options);
    const r = { __proto__: null, locale, numberingSystem: "latn" };
    getOpt(o, "localeMatcher", ["lookup", "best fit"], "best fit", NF);
    getType(o, "numberingSystem");
    const style = getOpt(o, "style", ["decimal", "percent", "currency", "unit"], "decimal", NF);
    let currency = o.currency;
    if (currency !== undefined) {
      currency = StringC(currency);
      if (!call(reExec, /^[A-Za-z]{3}$/, currency)) throw new RangeErrorC(`Invalid currency code : ${currency}`);
      currency = upper(currency);
    }
    const currencyDisplay = getOpt(o, "currencyDisplay", ["code", "symbol", "narrowSymbol", "name"], "symbol", NF);
    const currencySign = getOpt(o, "currencySign", ["standard", "accounting"], "standard", NF);
    let unit = o.unit;
    if (unit !== undefined) {
      unit = StringC(unit);
      if (!validUnit(unit)) throw new RangeErrorC(`Invalid unit argument for Intl.NumberFormat() '${unit}'`);
    }
    const unitDisplay = getOpt(o, "unitDisplay", ["short", "narrow", "long"], "short", NF);
    if (style === "currency" && currency === undefined) throw new TypeErrorC("Currency code is required with currency style.");
    if (style === "unit" && unit === undefined) throw new TypeErrorC("Unit is required with unit style.");
    r.style = style;
    if (style === "currency") { r.currency = currency; r.currencyDisplay = currencyDisplay; r.currencySign = currencySign; }
    if (style === "unit") { r.unit = unit; r.unitDisplay = unitDisplay; }
    const notation = getOpt(o, "notation", ["standard", "scientific", "engineering", "compact"], "standard", NF);
    let cd = 0;
    if (style === "currency") { const c = currencyDigits[currency]; cd = c === undefined ? 2 : c; }
    // V8's defaults do not depend on the notation (ECMA-402's later text
    // makes them 0 and 3 for a compact currency); compact notation without
    // digit options rounds its own way (below)
    const mnfdDefault = style === "currency" ? cd : 0;
    const mxfdDefault = style === "currency" ? cd : style === "percent" ? 0 : 3;
    r.minimumIntegerDigits = getNum(o, "minimumIntegerDigits", 1, 21, 1);
    // Each read once, in the specification's order (SetNumberFormatDigitOptions).
    const mnfd = o.minimumFractionDigits, mxfd = o.maximumFractionDigits;
    const mnsd = o.minimumSignificantDigits, mxsd = o.maximumSignificantDigits;
    const roundingPriority = getOpt(o, "roundingPriority", ["auto", "morePrecision", "lessPrecision"], "auto", NF);
    const hasSd = mnsd !== undefined || mxsd !== undefined, hasFd = mnfd !== undefined || mxfd !== undefined;
    let needSd = true, needFd = true;
    if (roundingPriority === "auto") {
      needSd = hasSd;
      if (needSd || (!hasFd && notation === "compact")) needFd = false;
    }
    if (needSd) {
      if (hasSd) {
        r.minimumSignificantDigits = numOf(mnsd, "minimumSignificantDigits", 1, 21, 1);
        r.maximumSignificantDigits = numOf(mxsd, "maximumSignificantDigits", r.minimumSignificantDigits, 21, 21);
      } else { r.minimumSignificantDigits = 1; r.maximumSignificantDigits = 21; }
    }
    if (needFd) {
      if (hasFd) {
        let mn = numOf(mnfd, "minimumFractionDigits", 0, 100, undefined);
        let mx = numOf(mxfd, "maximumFractionDigits", 0, 100, undefined);
        if (mn === undefined) mn = MathMin(mnfdDefault, mx);
        else if (mx === undefined) mx = MathMax(mxfdDefault, mn);
        else if (mn > mx) throw new RangeErrorC("maximumFractionDigits value is out of range.");
        r.minimumFractionDigits = mn; r.maximumFractionDigits = mx;
      } else { r.minimumFractionDigits = mnfdDefault; r.maximumFractionDigits = mxfdDefault; }
    }
    if (!needSd && !needFd) {
      // compact notation's default: 2 significant digits or the integer,
      // whichever keeps more
      r.minimumSignificantDigits = 1; r.maximumSignificantDigits = 2;
      r.minimumFractionDigits = 0; r.maximumFractionDigits = 0;
      r.roundingType = "morePrecision";
    } else if (roundingPriority !== "auto") r.roundingType = roundingPriority;
    else r.roundingType = hasSd ? "significantDigits" : "fractionDigits";
    let grouping = o.useGrouping;
    if (grouping === undefined) grouping = notation === "compact" ? "min2" : "auto";
    else if (grouping === true || grouping === "true" || grouping === "false") grouping = "always";
    else if (grouping === false || grouping === null || grouping === "") grouping = false;
    else {
      grouping = StringC(grouping);
      if (grouping !== "min2" && grouping !== "auto" && grouping !== "always") throw new RangeErrorC(`Value ${grouping} out of range for ${NF} options property useGrouping`);
    }
    r.useGrouping = grouping;
    r.notation = notation;
    if (notation === "compact") r.compactDisplay = getOpt(o, "compactDisplay", ["short", "long"], "short", NF);
    r.signDisplay = getOpt(o, "signDisplay", ["auto", "never", "always", "exceptZero", "negative"], "auto", NF);
    r.roundingMode = getOpt(o, "roundingMode", ["ceil", "floor", "expand", "trunc", "halfCeil", "halfFloor", "halfExpand", "halfTrunc", "halfEven"], "halfExpand", NF);
    r.roundingIncrement = 1;
    r.trailingZeroDisplay = getOpt(o, "trailingZeroDisplay", ["auto", "stripIfInteger"], "auto", NF);
    r.roundingPriority = !needSd && !needFd ? "morePrecision" : roundingPriority;
    return r;
  };
  const roundBy = (r, d) => {
    const sig = () => {
      let x = roundSig(d, r.maximumSignificantDigits);
      const e = x.digits === "" ? 1 : x.exp; // zero has one integer digit
      return { d: x, minFrac: MathMax(0, r.minimumSignificantDigits - e), maxFrac: r.maximumSignificantDigits - e };
    };
    const frac = () => ({ d: roundFrac(d, r.maximumFractionDigits), minFrac: r.minimumFractionDigits, maxFrac: r.maximumFractionDigits });
    switch (r.roundingType) {
    case "significantDigits": return sig();
    case "fractionDigits": return frac();
    default: {
      const a = sig(), b = frac();
      const more = (a.maxFrac > b.maxFrac) === (r.roundingType === "morePrecision");
      return more ? a : b;
    }
    }
  };
  const groupInt = (int, grouping) => {
    if (grouping === false || int.length <= 3 || (grouping === "min2" && int.length < 5)) return [int];
    const out = [];
    let first = int.length % 3 || 3;
    push(out, slice(int, 0, first));
    for (let i = first; i < int.length; i += 3) push(out, slice(int, i, i + 3));
    return out;
  };
  // numberParts formats x (a Number or a BigInt) as parts.
  const numberParts = (r, x) => {
    const parts = [];
    const P = (type, value) => push(parts, { type, value });
    let neg, body = [];
    const B = (type, value) => push(body, { type, value });
    let unitSingular = false;
    let compactSuffix = "", exponent = null;
    if (typeof x === "number" && x !== x) {
      neg = false; B("nan", "NaN");
    } else if (typeof x === "number" && !NumberIsFinite(x)) {
      neg = x < 0; B("infinity", "∞");
    } else {
      let d = decimalOf(x);
      neg = d.neg;
      if (r.style === "percent") d = d.digits === "" ? d : { neg: d.neg, digits: d.digits, exp: d.exp + 2 };
      if (r.notation === "compact") {
        let mag = d.digits === "" ? 0 : d.exp - 1;
        let e = mag >= 3 ? MathMin(mag, 14) : 0;
        let k = e >= 15 ? 12 : e - e % 3;
        if (k > 12) k = 12;
        let rd = roundBy(r, { neg: d.neg, digits: d.digits, exp: d.exp - k });
        // rounding up may reach the next magnitude (999999 -> 1M)
        if (rd.d.digits !== "" && rd.d.exp - 1 + k >= k + 3 && k < 12) {
          k += 3;
          rd = roundBy(r, { neg: d.neg, digits: d.digits, exp: d.exp - k });
        }
        d = rd.d;
        // a currency is compacted in the short form only, as ICU does
        if (k > 0) compactSuffix = r.compactDisplay === "long" && r.style !== "currency" ? compactLong[k] : compactShort[k];
        const ifr = intFrac(d, r.minimumIntegerDigits, rd.minFrac), int = ifr[0], fr = ifr[1];
        emitNum(B, int || "0", fr, r.useGrouping);
      } else if (r.notation === "scientific" || r.notation === "engineering") {
        let e = d.digits === "" ? 0 : d.exp - 1;
        if (r.notation === "engineering") e = MathFloor(e / 3) * 3;
        let m = { neg: d.neg, digits: d.digits, exp: d.exp - e };
        const rr = r.roundingType === "fractionDigits" && r.maximumFractionDigits === 3 && !r.explicitFrac ? r : r;
        let rd = roundBy(rr, m);
        if (rd.d.digits !== "" && rd.d.exp > (r.notation === "engineering" ? 3 : 1)) {
          e += r.notation === "engineering" ? 3 : 1;
          rd = roundBy(rr, { neg: d.neg, digits: d.digits, exp: d.exp - e });
        }
        const ifr = intFrac(rd.d, r.minimumIntegerDigits, rd.minFrac), int = ifr[0], fr = ifr[1];
        emitNum(B, int || "0", fr, false);
        exponent = e;
      } else {
        const rd = roundBy(r, d);
        d = rd.d;
        const ifr = intFrac(d, r.minimumIntegerDigits, rd.minFrac), int = ifr[0];
        let fr = ifr[1];
        if (r.trailingZeroDisplay === "stripIfInteger" && call(reExec, /^0*$/, fr)) fr = "";
        emitNum(B, int || "0", fr, r.useGrouping);
        unitSingular = d.digits === "1" && d.exp === 1 && fr === "";
      }
      if (r.style === "unit" || (r.style === "currency" && r.currencyDisplay === "name")) {
        unitSingular = d.digits === "1" && d.exp === 1 && !call(reExec, /[1-9]/, body[body.length - 1].type === "fraction" ? body[body.length - 1].value : "") && body.length === 1;
      }
      if (d.digits === "" && !(typeof x === "bigint")) {
        // keeps the sign of a negative number rounded to zero, as ICU does
      }
      if (exponent !== null) {
        B("exponentSeparator", "E");
        if (exponent < 0) B("exponentMinusSign", "-");
        B("exponentInteger", StringC(MathAbs(exponent)));
      }
      if (compactSuffix) {
        if (compactSuffix[0] === " ") { B("literal", " "); B("compact", slice(compactSuffix, 1)); }
        else B("compact", compactSuffix);
      }
      body.isZero = d.digits === "";
    }
    // the sign
    let sign = "";
    const zero = !!body.isZero;
    switch (r.signDisplay) {
    case "auto": sign = neg ? "-" : ""; break;
    case "always": sign = neg ? "-" : "+"; break;
    case "exceptZero": sign = zero ? "" : neg ? "-" : "+"; break;
    case "negative": sign = neg && !zero ? "-" : ""; break;
    case "never": sign = ""; break;
    }
    const accounting = r.style === "currency" && r.currencySign === "accounting" && sign === "-";
    const signPart = () => { if (sign && !accounting) P(sign === "-" ? "minusSign" : "plusSign", sign); };
    const bodyParts = () => { for (let i = 0; i < body.length; i++) push(parts, body[i]); };
    if (accounting) P("literal", "(");
    switch (r.style) {
    case "currency": {
      const c = r.currency;
      if (r.currencyDisplay === "name") {
        signPart(); bodyParts(); P("literal", " ");
        const nm = currencyNames[c];
        P("currency", nm ? nm[unitSingular ? 0 : 1] : c);
      } else {
        let sym = c;
        if (r.currencyDisplay === "symbol") sym = currencySymbols[c] || c;
        else if (r.currencyDisplay === "narrowSymbol") sym = narrowSymbols[c] || currencySymbols[c] || c;
        signPart(); P("currency", sym);
        if (sym.length > 1 && call(reExec, /[A-Za-z]$/, sym)) P("literal", "\u00a0");
        bodyParts();
      }
      break;
    }
    case "percent":
      signPart(); bodyParts(); P("percentSign", "%"); break;
    case "unit": {
      const pat = unitPattern(r.unit, r.unitDisplay, unitSingular);
      const i = call(strIndexOf, pat, "{0}");
      const before = slice(pat, 0, i), after = slice(pat, i + 3);
      const lit = (s) => {
        const m = call(reExec, /^(\s*)(.*?)(\s*)$/, s);
        if (m[1]) P("literal", m[1]);
        if (m[2]) P(m[2] === "%" ? "percentSign" : "unit", m[2]);
        if (m[3]) P("literal", m[3]);
      };
      signPart();
      if (before) lit(before);
      bodyParts();
      if (after) lit(after);
      break;
    }
    default:
      signPart(); bodyParts();
    }
    if (accounting) P("literal", ")");
    return parts;
  };
  const narrowSymbols = { CAD: "$", AUD: "$", MXN: "$", HKD: "$", NZD: "$", TWD: "$", CNY: "¥", BRL: "R$", KRW: "₩", CHF: "CHF", SGD: "$", RUB: "₽", TRY: "₺", PLN: "zł", SEK: "kr", NOK: "kr", DKK: "kr", ZAR: "R" };
  function emitNum(B, int, frac, grouping) {
    const groups = groupInt(int, grouping);
    for (let i = 0; i < groups.length; i++) {
      if (i) B("group", ",");
      B("integer", groups[i]);
    }
    if (frac) { B("decimal", "."); B("fraction", frac); }
  }
  const toNumeric = (v) => {
    if (typeof v === "bigint") return v;
    if (typeof v === "string") {
      const t = call(strReplace, v, /^\s+|\s+$/g, "");
      if (call(reExec, /^-?\d+$/, t) && t.length > 15) return BigInt(t);
    }
    return NumberC(v);
  };
  const joinParts = (parts) => {
    let s = "";
    for (let i = 0; i < parts.length; i++) s += parts[i].value;
    return s;
  };

  function NumberFormat(locales, options) {
    const self = new.target ? this : O.create(NumberFormat.prototype);
    nfState.set(self, makeNF(locales, options));
    return self;
  }
  const nfProto = NumberFormat.prototype;
  defineProperty(nfProto, "format", {
    get: fnOf("get format", function () {
      const r = nfOf(this, "format");
      if (!r.bound) r.bound = (x) => joinParts(numberParts(r, toNumeric(x)));
      return r.bound;
    }), configurable: true,
  });
  method(nfProto, "formatToParts", { m(x) { return numberParts(nfOf(this, "formatToParts"), toNumeric(x)); } }.m, 1);
  method(nfProto, "formatRange", { m(a, b) {
    const r = nfOf(this, "formatRange");
    return joinParts(numberParts(r, toNumeric(a))) + "–" + joinParts(numberParts(r, toNumeric(b)));
  } }.m, 2);
  method(nfProto, "resolvedOptions", { m() {
    const r = nfOf(this, "resolvedOptions");
    const out = {};
    const order = ["locale", "numberingSystem", "style", "currency", "currencyDisplay", "currencySign", "unit", "unitDisplay",
      "minimumIntegerDigits", "minimumFractionDigits", "maximumFractionDigits", "minimumSignificantDigits", "maximumSignificantDigits",
      "useGrouping", "notation", "compactDisplay", "signDisplay", "roundingMode", "roundingIncrement", "trailingZeroDisplay", "roundingPriority"];
    const sdFirst = r.notation === "compact" || r.roundingType === "significantDigits";
    for (let i = 0; i < order.length; i++) {
      let k = order[i];
      if (sdFirst && k === "minimumFractionDigits") {
        for (const s of own(["minimumSignificantDigits", "maximumSignificantDigits"])) if (r[s] !== undefined) put(out, s, r[s]);
      }
      if (sdFirst && (k === "minimumSignificantDigits" || k === "maximumSignificantDigits")) continue;
      if (r[k] !== undefined) put(out, k, r[k]);
    }
    return out;
  } }.m, 0);

  // --- plural rules -----------------------------------------------------

  const prState = new WeakMap();
  const pluralOf = (type, int, frac) => {
    if (type === "ordinal") {
      if (frac !== "") return "other";
      const n10 = NumberC(slice(int, -1)), n100 = NumberC(slice(int, -2));
      if (n10 === 1 && n100 !== 11) return "one";
      if (n10 === 2 && n100 !== 12) return "two";
      if (n10 === 3 && n100 !== 13) return "few";
      return "other";
    }
    return int === "1" && frac === "" ? "one" : "other";
  };
  function PluralRules(locales, options) {
    if (!new.target) throw new TypeErrorC("Constructor Intl.PluralRules requires 'new'");
    const locale = resolve(locales);
    const o = toObject(options);
    getOpt(o, "localeMatcher", ["lookup", "best fit"], "best fit", "Intl.PluralRules");
    const type = getOpt(o, "type", ["cardinal", "ordinal"], "cardinal", "Intl.PluralRules");
    const notation = getOpt(o, "notation", ["standard", "scientific", "engineering", "compact"], "standard", "Intl.PluralRules");
    const nf = makeNF(locale, { minimumIntegerDigits: o.minimumIntegerDigits, minimumFractionDigits: o.minimumFractionDigits,
      maximumFractionDigits: o.maximumFractionDigits, minimumSignificantDigits: o.minimumSignificantDigits,
      maximumSignificantDigits: o.maximumSignificantDigits, roundingPriority: o.roundingPriority });
    // ICU's plural rules are by language: en-US resolves to "en"
    prState.set(this, { locale: "en", type, notation, nf });
    return this;
  }
  const prOf = (t) => {
    const s = typeof t === "object" && t !== null ? prState.get(t) : undefined;
    if (!s) throw new TypeErrorC("Method Intl.PluralRules.prototype.select called on incompatible receiver");
    return s;
  };
  const pluralSelect = (s, n) => {
    n = NumberC(n);
    if (!NumberIsFinite(n)) return "other";
    const r = roundBy(s.nf, decimalOf(MathAbs(n)));
    const ifr = intFrac(r.d, 1, r.minFrac), int = ifr[0], frac = ifr[1];
    return pluralOf(s.type, int || "0", frac);
  };
  method(PluralRules.prototype, "select", { m(n) { return pluralSelect(prOf(this), n); } }.m, 1);
  method(PluralRules.prototype, "selectRange", { m(a, b) { return pluralSelect(prOf(this), b); } }.m, 2);
  method(PluralRules.prototype, "resolvedOptions", { m() {
    const s = prOf(this), r = s.nf;
    const out = { locale: s.locale, type: s.type, notation: s.notation, minimumIntegerDigits: r.minimumIntegerDigits };
    if (r.roundingType === "significantDigits") { put(out, "minimumSignificantDigits", r.minimumSignificantDigits); put(out, "maximumSignificantDigits", r.maximumSignificantDigits); }
    else { put(out, "minimumFractionDigits", r.minimumFractionDigits); put(out, "maximumFractionDigits", r.maximumFractionDigits); }
    put(out, "pluralCategories", s.type === "ordinal" ? ["few", "one", "two", "other"] : ["one", "other"]);
    return out;
  } }.m, 0);

  // --- relative time ------------------------------------------------------

  const rtUnits = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"];
  const rtShort = { second: ["sec.", "sec."], minute: ["min.", "min."], hour: ["hr.", "hr."], day: ["day", "days"], week: ["wk.", "wk."],
    month: ["mo.", "mo."], quarter: ["qtr.", "qtrs."], year: ["yr.", "yr."] };
  const rtNarrow = { second: "s", minute: "m", hour: "h", day: "d", week: "w", month: "mo", quarter: "q", year: "y" };
  const rtAuto = {
    long: { second: ["now"], minute: ["this minute"], hour: ["this hour"], day: ["today", "yesterday", "tomorrow"],
      week: ["this week", "last week", "next week"], month: ["this month", "last month", "next month"],
      quarter: ["this quarter", "last quarter", "next quarter"], year: ["this year", "last year", "next year"] },
    short: { second: ["now"], minute: ["this minute"], hour: ["this hour"], day: ["today", "yesterday", "tomorrow"],
      week: ["this wk.", "last wk.", "next wk."], month: ["this mo.", "last mo.", "next mo."],
      quarter: ["this qtr.", "last qtr.", "next qtr."], year: ["this yr.", "last yr.", "next yr."] },
  };
  rtAuto.narrow = rtAuto.short;
  const rtState = new WeakMap();
  function RelativeTimeFormat(locales, options) {
    if (!new.target) throw new TypeErrorC("Constructor Intl.RelativeTimeFormat requires 'new'");
    const locale = resolve(locales);
    const o = toObject(options);
    const RT = "Intl.RelativeTimeFormat";
    getOpt(o, "localeMatcher", ["lookup", "best fit"], "best fit", RT);
    const style = getOpt(o, "style", ["long", "short", "narrow"], "long", RT);
    const numeric = getOpt(o, "numeric", ["always", "auto"], "always", RT);
    rtState.set(this, { locale, style, numeric, nf: makeNF(locale, {}) });
    return this;
  }
  const rtOf = (t, m) => {
    const s = typeof t === "object" && t !== null ? rtState.get(t) : undefined;
    if (!s) throw new TypeErrorC(`Method Intl.RelativeTimeFormat.prototype.${m} called on incompatible receiver`);
    return s;
  };
  const rtParts = (s, value, unit) => {
    value = NumberC(value);
    unit = StringC(unit);
    if (!NumberIsFinite(value)) throw new RangeErrorC("Invalid time value");
    let u = unit;
    if (u[u.length - 1] === "s" && includes(rtUnits, slice(u, 0, -1))) u = slice(u, 0, -1);
    if (!includes(rtUnits, u)) throw new RangeErrorC(`Invalid unit argument for Intl.RelativeTimeFormat.prototype.format() '${unit}'`);
    if (s.numeric === "auto") {
      const a = rtAuto[s.style][u];
      const idx = value === 0 && !(1 / value < 0 && false) ? 0 : value === -1 ? 1 : value === 1 ? 2 : -1;
      if (idx >= 0 && a[idx] !== undefined && !(idx === 0 && 1 / value < 0)) return [{ type: "literal", value: a[idx] }];
      if (value === 0 && a[0] !== undefined) return [{ type: "literal", value: a[0] }];
    }
    const past = value < 0 || (value === 0 && 1 / value < 0);
    const num = numberParts(s.nf, MathAbs(value));
    const one = joinParts(num) === "1";
    let word;
    if (s.style === "long") word = " " + u + (one ? "" : "s");
    else if (s.style === "short") word = " " + rtShort[u][one ? 0 : 1];
    else word = rtNarrow[u];
    const parts = [];
    if (!past) push(parts, { type: "literal", value: "in " });
    for (let i = 0; i < num.length; i++) push(parts, { type: num[i].type, value: num[i].value, unit: u });
    push(parts, { type: "literal", value: past ? word + " ago" : word });
    return parts;
  };
  method(RelativeTimeFormat.prototype, "format", { m(v, u) { return joinParts(rtParts(rtOf(this, "format"), v, u)); } }.m, 2);
  method(RelativeTimeFormat.prototype, "formatToParts", { m(v, u) { return rtParts(rtOf(this, "formatToParts"), v, u); } }.m, 2);
  method(RelativeTimeFormat.prototype, "resolvedOptions", { m() {
    const s = rtOf(this, "resolvedOptions");
    return { locale: s.locale, style: s.style, numeric: s.numeric, numberingSystem: "latn" };
  } }.m, 0);

  // --- lists ----------------------------------------------------------------

  const lfState = new WeakMap();
  function ListFormat(locales, options) {
    if (!new.target) throw new TypeErrorC("Constructor Intl.ListFormat requires 'new'");
    const locale = resolve(locales);
    const o = toObject(options);
    const LF = "Intl.ListFormat";
    getOpt(o, "localeMatcher", ["lookup", "best fit"], "best fit", LF);
    const type = getOpt(o, "type", ["conjunction", "disjunction", "unit"], "conjunction", LF);
    const style = getOpt(o, "style", ["long", "short", "narrow"], "long", LF);
    lfState.set(this, { locale, type, style });
    return this;
  }
  const lfOf = (t, m) => {
    const s = typeof t === "object" && t !== null ? lfState.get(t) : undefined;
    if (!s) throw new TypeErrorC(`Method Intl.ListFormat.prototype.${m} called on incompatible receiver`);
    return s;
  };
  const listParts = (s, list) => {
    const items = [];
    if (list !== undefined) {
      for (const x of list) {
        if (typeof x !== "string") throw new TypeErrorC(`Iterable yielded ${typeof x === "symbol" ? "Symbol()" : StringC(x)} which is not a string`);
        push(items, x);
      }
    }
    const n = items.length;
    let mid = ", ", two, last;
    if (s.type === "conjunction") {
      two = s.style === "long" ? " and " : s.style === "short" ? " & " : ", ";
      last = s.style === "long" ? ", and " : s.style === "short" ? ", & " : ", ";
    } else if (s.type === "disjunction") { two = " or "; last = ", or "; }
    else if (s.style === "narrow") { mid = two = last = " "; }
    else { two = last = ", "; }
    const parts = [];
    for (let i = 0; i < n; i++) {
      if (i > 0) push(parts, { type: "literal", value: n === 2 ? two : i === n - 1 ? last : mid });
      push(parts, { type: "element", value: items[i] });
    }
    return parts;
  };
  method(ListFormat.prototype, "format", { m(l) { return joinParts(listParts(lfOf(this, "format"), l)); } }.m, 1);
  method(ListFormat.prototype, "formatToParts", { m(l) { return listParts(lfOf(this, "formatToParts"), l); } }.m, 1);
  method(ListFormat.prototype, "resolvedOptions", { m() {
    const s = lfOf(this, "resolvedOptions");
    return { locale: s.locale, type: s.type, style: s.style };
  } }.m, 0);

  // --- segmentation --------------------------------------------------------

  // Extended grapheme clusters (UAX #29) in the common cases: CR LF,
  // regional-indicator pairs, emoji ZWJ sequences and modifiers, marks and
  // Indic virama conjuncts.
  const graphemeRe = /\r\n|\p{RI}\p{RI}|(?:\p{Extended_Pictographic}(?:[\u{1F3FB}-\u{1F3FF}\uFE0F\u20E3\p{M}])*(?:\u200D\p{Extended_Pictographic}(?:[\u{1F3FB}-\u{1F3FF}\uFE0F\p{M}])*)*)|(?:[\u1100-\u115F]+[\u1160-\u11A7]*[\u11A8-\u11FF]*)|(?:[^\p{M}\p{Cc}\u200D](?:\u094D[\u0915-\u0939]|[\p{M}\u200C\u200D])*)|[\s\S]/uy;
  // Words (UAX #29 in the common cases): letters, marks and digits with the
  // joiners inside a word (apostrophes, '.' between letters or digits, ','
  // between digits, '_'); runs of horizontal white space; one character
  // otherwise.
  const wordRe = /[\p{L}\p{M}\p{N}_\p{Pc}]+(?:(?:['’.:\u00B7][\p{L}\p{M}]+)|(?:[.,'’;][\p{N}]+)|[\p{L}\p{M}\p{N}_\p{Pc}]+)*|\r\n|[\p{Zs}\t]+|(?:\p{Extended_Pictographic}(?:[\u{1F3FB}-\u{1F3FF}\uFE0F\p{M}])*(?:\u200D\p{Extended_Pictographic}(?:[\u{1F3FB}-\u{1F3FF}\uFE0F\p{M}])*)*)|\p{RI}\p{RI}|[\s\S]/uy;
  const wordLike = /^[\p{L}\p{N}\p{M}_]/u;
  // Sentences: up to a terminator, the closing punctuation and the space
  // after it; a '.' followed by a lower-case letter or digit does not end one.
  const sentenceRe = /(?:[^.!?\u3002]|\.(?=[\p{Ll}\p{N}])|\.(?![\s\p{Lu}]|$))*(?:[.!?\u3002]+['"’”)\]]*[\p{Zs}\t]*(?:\r\n|[\n\r\u2028\u2029])?|$)/uy;
  const sgState = new WeakMap();
  function Segmenter(locales, options) {
    if (!new.target) throw new TypeErrorC("Constructor Intl.Segmenter requires 'new'");
    const locale = resolve(locales);
    const o = toObject(options);
    getOpt(o, "localeMatcher", ["lookup", "best fit"], "best fit", "Intl.Segmenter");
    const granularity = getOpt(o, "granularity", ["grapheme", "word", "sentence"], "grapheme", "Intl.Segmenter");
    sgState.set(this, { locale, granularity });
    return this;
  }
  const sgOf = (t, m) => {
    const s = typeof t === "object" && t !== null ? sgState.get(t) : undefined;
    if (!s) throw new TypeErrorC(`Method Intl.Segmenter.prototype.${m} called on incompatible receiver`);
    return s;
  };
  const segmentAt = (gran, input, i) => {
    const re = gran === "word" ? wordRe : gran === "sentence" ? sentenceRe : graphemeRe;
    re.lastIndex = i;
    const m = call(reExec, re, input);
    let seg = m ? m[0] : "";
    if (seg === "") seg = slice(input, i, i + 1);
    const r = { segment: seg, index: i, input };
    if (gran === "word") put(r, "isWordLike", !!call(reExec, wordLike, seg));
    return r;
  };
  const segmentsProto = {};
  const segState = new WeakMap();
  method(segmentsProto, "containing", { m(index) {
    const s = segState.get(this);
    if (!s) throw new TypeErrorC("Method %Segments.prototype%.containing called on incompatible receiver");
    let n = NumberC(index);
    n = n !== n ? 0 : n < 0 ? -1 : MathFloor(n);
    if (n < 0 || n >= s.input.length) return undefined;
    let i = 0;
    for (;;) {
      const r = segmentAt(s.gran, s.input, i);
      if (n < i + r.segment.length) return r;
      i += r.segment.length;
    }
  } }.m, 1);
  const segIterProto = {};
  method(segIterProto, "next", { m() {
    const s = segState.get(this);
    if (!s) throw new TypeErrorC("Method %SegmentIterator.prototype%.next called on incompatible receiver");
    if (s.pos >= s.input.length) return { value: undefined, done: true };
    const r = segmentAt(s.gran, s.input, s.pos);
    s.pos += r.segment.length;
    return { value: r, done: false };
  } }.m, 0);
  defineProperty(segIterProto, SymbolToStringTag, { value: "Segmenter String Iterator", configurable: true });
  method(segmentsProto, SymbolIterator, { m() {
    const s = segState.get(this);
    if (!s) throw new TypeErrorC("Method %Segments.prototype%[@@iterator] called on incompatible receiver");
    const it = O.create(segIterProto);
    segState.set(it, { gran: s.gran, input: s.input, pos: 0 });
    return it;
  } }.m, 0);
  defineProperty(segmentsProto[SymbolIterator], "name", { value: "[Symbol.iterator]" });
  method(Segmenter.prototype, "segment", { m(str) {
    const s = sgOf(this, "segment");
    const out = O.create(segmentsProto);
    segState.set(out, { gran: s.granularity, input: StringC(str) });
    return out;
  } }.m, 1);
  method(Segmenter.prototype, "resolvedOptions", { m() {
    const s = sgOf(this, "resolvedOptions");
    return { locale: s.locale, granularity: s.granularity };
  } }.m, 0);

  // --- collation (the host's) ---------------------------------------------

  const collLangs = ["af", "ar", "as", "az", "be", "bg", "bn", "bs", "ca", "cs", "cy", "da", "de", "dz", "ee", "el", "en", "eo", "es", "et", "fa", "fi", "fil", "fo", "fr", "gu", "ha", "haw", "he", "hi", "hr", "hu", "hy", "ig", "is", "ja", "kk", "kl", "km", "kn", "ko", "kok", "ln", "lt", "lv", "mk", "ml", "mr", "mt", "my", "nb", "nn", "nso", "om", "or", "pa", "pl", "ps", "ro", "ru", "se", "si", "sk", "sl", "sq", "sr", "ssy", "sv", "ta", "te", "th", "tn", "to", "tr", "uk", "ur", "vi", "wae", "yo", "zh"];
  const collResolve = (locales) => {
    const list = canonicalList(locales);
    for (let i = 0; i < list.length; i++) {
      const t = stripExt(list[i]);
      if (t === "en-US") return t;
      const lang = call(strSplit, t, "-")[0];
      if (includes(collLangs, lang)) return lang;
    }
    return "en-US";
  };
  const coState = new WeakMap();
  const makeCollator = (locales, options) => {
    const locale = collResolve(locales);
    const o = toObject(options);
    const C = "Intl.Collator";
    const usage = getOpt(o, "usage", ["sort", "search"], "sort", C);
    getOpt(o, "localeMatcher", ["lookup", "best fit"], "best fit", C);
    getType(o, "collation");
    const numeric = getOpt(o, "numeric", "boolean", false, C);
    const caseFirst = getOpt(o, "caseFirst", ["upper", "lower", "false"], "false", C);
    const sensitivity = getOpt(o, "sensitivity", ["base", "accent", "case", "variant"], "variant", C);
    const ignorePunctuation = getOpt(o, "ignorePunctuation", "boolean", false, C);
    const key = locale + "|" + sensitivity[0] + "|" + (numeric ? "n" : "-") + "|" +
      (caseFirst === "upper" ? "u" : caseFirst === "lower" ? "l" : "-") + "|" + (ignorePunctuation ? "p" : "-");
    return { __proto__: null, locale, usage, sensitivity, ignorePunctuation, collation: "default", numeric, caseFirst, key };
  };
  const compareWith = (s, a, b) => {
    a = StringC(a); b = StringC(b);
    if (a === b) return 0;
    return NumberC(host("cmp", s.key, a, b));
  };
  function Collator(locales, options) {
    const self = new.target ? this : O.create(Collator.prototype);
    coState.set(self, makeCollator(locales, options));
    return self;
  }
  const coOf = (t, m) => {
    const s = typeof t === "object" && t !== null ? coState.get(t) : undefined;
    if (!s) throw new TypeErrorC(`Method Intl.Collator.prototype.${m} called on incompatible receiver`);
    return s;
  };
  defineProperty(Collator.prototype, "compare", {
    get: fnOf("get compare", function () {
      const s = coOf(this, "compare");
      if (!s.bound) s.bound = (a, b) => compareWith(s, a, b);
      return s.bound;
    }), configurable: true,
  });
  method(Collator.prototype, "resolvedOptions", { m() {
    const s = coOf(this, "resolvedOptions");
    return { locale: s.locale, usage: s.usage, sensitivity: s.sensitivity, ignorePunctuation: s.ignorePunctuation,
      collation: s.collation, numeric: s.numeric, caseFirst: s.caseFirst };
  } }.m, 0);

  // --- dates ------------------------------------------------------------------

  const monthsLong = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
  const monthsShort = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const daysLong = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const daysShort = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  // Zone names as en-US shows them: [short standard, short daylight,
  // long standard, long daylight, short generic].
  const zoneNames = {};
  const zn = (names, list) => { for (const z of own(call(strSplit, list, " "))) zoneNames[z] = names; };
  zn(["EST", "EDT", "Eastern Standard Time", "Eastern Daylight Time", "ET"], "America/New_York America/Detroit America/Toronto America/Indiana/Indianapolis America/Kentucky/Louisville America/Nassau US/Eastern EST5EDT");
  zn(["CST", "CDT", "Central Standard Time", "Central Daylight Time", "CT"], "America/Chicago America/Winnipeg America/Indiana/Knox America/Menominee US/Central CST6CDT");
  zn(["MST", "MDT", "Mountain Standard Time", "Mountain Daylight Time", "MT"], "America/Denver America/Phoenix America/Boise America/Edmonton US/Mountain US/Arizona MST7MDT");
  zn(["PST", "PDT", "Pacific Standard Time", "Pacific Daylight Time", "PT"], "America/Los_Angeles America/Vancouver America/Tijuana US/Pacific PST8PDT");
  zn(["AKST", "AKDT", "Alaska Standard Time", "Alaska Daylight Time", "AKT"], "America/Anchorage America/Juneau America/Nome America/Sitka US/Alaska");
  zn(["HST", "HDT", "Hawaii-Aleutian Standard Time", "Hawaii-Aleutian Daylight Time", "HST"], "Pacific/Honolulu America/Adak US/Hawaii");
  zn([null, null, "Greenwich Mean Time", "British Summer Time"], "Europe/London");
  zn([null, null, "Greenwich Mean Time", "Irish Standard Time"], "Europe/Dublin");
  zn([null, null, "Central European Standard Time", "Central European Summer Time"], "Europe/Paris Europe/Berlin Europe/Madrid Europe/Rome Europe/Amsterdam Europe/Brussels Europe/Vienna Europe/Zurich Europe/Stockholm Europe/Oslo Europe/Copenhagen Europe/Warsaw Europe/Prague Europe/Budapest Europe/Belgrade Africa/Lagos");
  zn([null, null, "Eastern European Standard Time", "Eastern European Summer Time"], "Europe/Athens Europe/Helsinki Europe/Kiev Europe/Kyiv Europe/Bucharest Europe/Sofia Africa/Cairo Europe/Riga Europe/Vilnius Europe/Tallinn");
  zn([null, null, "Western European Standard Time", "Western European Summer Time"], "Europe/Lisbon Atlantic/Canary");
  zn([null, null, "Moscow Standard Time", "Moscow Summer Time"], "Europe/Moscow");
  zn([null, null, "Japan Standard Time", "Japan Daylight Time"], "Asia/Tokyo");
  zn([null, null, "China Standard Time", "China Daylight Time"], "Asia/Shanghai");
  zn([null, null, "India Standard Time"], "Asia/Kolkata Asia/Calcutta");
  zn([null, null, "Korean Standard Time", "Korean Daylight Time"], "Asia/Seoul");
  zn([null, null, "Singapore Standard Time"], "Asia/Singapore");
  zn([null, null, "Hong Kong Standard Time", "Hong Kong Summer Time"], "Asia/Hong_Kong");
  zn([null, null, "Gulf Standard Time"], "Asia/Dubai");
  zn([null, null, "Australian Eastern Standard Time", "Australian Eastern Daylight Time"], "Australia/Sydney Australia/Melbourne Australia/Brisbane Australia/Hobart");
  zn([null, null, "New Zealand Standard Time", "New Zealand Daylight Time"], "Pacific/Auckland");
  zn([null, null, "Brasilia Standard Time", "Brasilia Summer Time"], "America/Sao_Paulo");
  zn([null, null, "Argentina Standard Time", "Argentina Summer Time"], "America/Argentina/Buenos_Aires America/Buenos_Aires");
  zn([null, null, "Israel Standard Time", "Israel Daylight Time"], "Asia/Jerusalem");
  zn([null, null, "South Africa Standard Time"], "Africa/Johannesburg");
  zn([null, null, "Indochina Time"], "Asia/Bangkok Asia/Ho_Chi_Minh");
  zn([null, null, "Western Indonesia Time"], "Asia/Jakarta");
  zn([null, null, "Pakistan Standard Time", "Pakistan Summer Time"], "Asia/Karachi");
  zn([null, null, "East Africa Time"], "Africa/Nairobi");
  zn([null, null, "Nepal Time"], "Asia/Kathmandu Asia/Katmandu");
  zn([null, null, "Mexican Pacific Standard Time", "Mexican Pacific Daylight Time"], "America/Mazatlan");
  zn(["CST", "CDT", "Central Standard Time", "Central Daylight Time", "CT"], "America/Mexico_City");
  zn(["AST", "ADT", "Atlantic Standard Time", "Atlantic Daylight Time", "AT"], "America/Halifax America/Puerto_Rico");
  const utcNames = { UTC: 1, "Etc/UTC": 1, "Etc/GMT": 1, GMT: 1, "Etc/Universal": 1, "Etc/Zulu": 1, UCT: 1, "Etc/UCT": 1, Universal: 1, Zulu: 1, "Etc/GMT0": 1, "Etc/GMT+0": 1, "Etc/GMT-0": 1, GMT0: 1, "GMT+0": 1, "GMT-0": 1, Greenwich: 1, "Etc/Greenwich": 1 };
  const zoneCase = (z) => {
    for (const k of own(O.keys(utcNames))) if (lower(k) === lower(z)) return "UTC";
    return z;
  };
  // zoneInfo answers the offset (minutes) of zone at the instant t.
  const zoneInfo = (zone, t) => {
    if (zone === "UTC") return { off: 0, abbr: "UTC", dst: false };
    const a = call(strSplit, host("tz", zone, t), "|");
    const off = NumberC(a[0]) / 60;
    return { off, abbr: a[1], dst: isDST(zone, t, off) };
  };
  // isDST: the offset is daylight time if the zone's offsets on 1 January
  // and 1 July differ and this is the larger. The pair is kept per zone and
  // year (at most 256, then the cache starts again), so a report of many
  // dates asks the host once per date.
  const dstPairs = cached(256, (key) => {
    const i = call(strIndexOf, key, "|"), zone = slice(key, 0, i), y = NumberC(slice(key, i + 1));
    return [NumberC(call(strSplit, host("tz", zone, DateC.UTC(y, 0, 1)), "|")[0]) / 60,
      NumberC(call(strSplit, host("tz", zone, DateC.UTC(y, 6, 1)), "|")[0]) / 60];
  });
  const isDST = (zone, t, off) => {
    const p = dstPairs(zone + "|" + new DateC(t).getUTCFullYear());
    return p[0] !== p[1] && off === MathMax(p[0], p[1]);
  };
  const checkZone = (tz) => {
    if (tz === undefined) return "UTC";
    const z = zoneCase(StringC(tz));
    if (z === "UTC") return z;
    const r = host("tz", z, 0);
    if (!r) throw new RangeErrorC(`Invalid time zone specified: ${StringC(tz)}`);
    return call(strSplit, r, "|")[2];
  };

  const dtState = new WeakMap();
  const DTF = "Intl.DateTimeFormat";
  const dtFields = ["weekday", "era", "year", "month", "day", "dayPeriod", "hour", "minute", "second", "fractionalSecondDigits", "timeZoneName"];
  const makeDTF = (locales, options, required, defaults) => {
    const locale = resolve(locales);
    const o = options === undefined ? O.create(null) : toObject(options);
    getOpt(o, "localeMatcher", ["lookup", "best fit"], "best fit", DTF);
    getType(o, "calendar");
    getType(o, "numberingSystem");
    let hour12 = o.hour12;
    let hourCycle = getOpt(o, "hourCycle", ["h11", "h12", "h23", "h24"], undefined, DTF);
    if (hour12 !== undefined) { hour12 = !!hour12; hourCycle = undefined; }
    const timeZone = checkZone(o.timeZone);
    const r = { __proto__: null, locale, calendar: "gregory", numberingSystem: "latn", timeZone };
    const f = { __proto__: null };
    f.weekday = getOpt(o, "weekday", ["narrow", "short", "long"], undefined, DTF);
    f.era = getOpt(o, "era", ["narrow", "short", "long"], undefined, DTF);
    f.year = getOpt(o, "year", ["2-digit", "numeric"], undefined, DTF);
    f.month = getOpt(o, "month", ["2-digit", "numeric", "narrow", "short", "long"], undefined, DTF);
    f.day = getOpt(o, "day", ["2-digit", "numeric"], undefined, DTF);
    f.dayPeriod = getOpt(o, "dayPeriod", ["narrow", "short", "long"], undefined, DTF);
    f.hour = getOpt(o, "hour", ["2-digit", "numeric"], undefined, DTF);
    f.minute = getOpt(o, "minute", ["2-digit", "numeric"], undefined, DTF);
    f.second = getOpt(o, "second", ["2-digit", "numeric"], undefined, DTF);
    f.fractionalSecondDigits = getNum(o, "fractionalSecondDigits", 1, 3, undefined);
    f.timeZoneName = getOpt(o, "timeZoneName", ["short", "long", "shortOffset", "longOffset", "shortGeneric", "longGeneric"], undefined, DTF);
    getOpt(o, "formatMatcher", ["basic", "best fit"], "best fit", DTF);
    const dateStyle = getOpt(o, "dateStyle", ["full", "long", "medium", "short"], undefined, DTF);
    const timeStyle = getOpt(o, "timeStyle", ["full", "long", "medium", "short"], undefined, DTF);
    if (dateStyle || timeStyle) {
      for (const k of own(dtFields)) {
        if (f[k] !== undefined) throw new TypeErrorC(`Can't set option ${k} when ${dateStyle ? "dateStyle" : "timeStyle"} is used`);
      }
      r.dateStyle = dateStyle; r.timeStyle = timeStyle;
    } else {
      let need = true;
      const dateKeys = ["weekday", "year", "month", "day"], timeKeys = ["dayPeriod", "hour", "minute", "second", "fractionalSecondDigits"];
      if (required !== "time") for (const k of own(dateKeys)) if (f[k] !== undefined) need = false;
      if (required !== "date") for (const k of own(timeKeys)) if (f[k] !== undefined) need = false;
      if (need && (defaults === "date" || defaults === "all")) { f.year = f.month = f.day = "numeric"; }
      if (need && (defaults === "time" || defaults === "all")) { f.hour = f.minute = f.second = "numeric"; }
    }
    const usesHour = f.hour !== undefined || timeStyle !== undefined;
    if (usesHour) {
      let hc = hourCycle || "h12";
      if (hour12 === true) hc = "h12";
      else if (hour12 === false) hc = "h24";
      r.hourCycle = hc;
      r.hour12 = hc === "h11" || hc === "h12";
      if (f.hour !== undefined && !r.hour12) f.hour = "2-digit";
      else if (f.hour === "2-digit" && r.hour12) f.hour = "2-digit";
    }
    if (f.minute !== undefined && f.hour !== undefined) f.minute = "2-digit";
    if (f.second !== undefined && (f.minute !== undefined || f.hour !== undefined)) f.second = "2-digit";
    if (f.minute === "2-digit" && f.hour === undefined && f.second === undefined) f.minute = "numeric";
    if (f.second !== undefined && f.minute !== undefined && f.hour === undefined) { f.minute = "2-digit"; f.second = "2-digit"; }
    for (const k of own(dtFields)) if (f[k] !== undefined) r[k] = f[k];
    r.f = f;
    return r;
  };
  // The fields of instant t in zone (wall time).
  const fieldsAt = (r, t) => {
    const zi = zoneInfo(r.timeZone, t);
    const w = new DateC(t + zi.off * 60000);
    return { y: w.getUTCFullYear(), mo: w.getUTCMonth(), d: w.getUTCDate(), wd: w.getUTCDay(), h: w.getUTCHours(),
      mi: w.getUTCMinutes(), s: w.getUTCSeconds(), ms: w.getUTCMilliseconds(), zi };
  };
  const pad2 = (n) => call(strPadStart, StringC(n), 2, "0");
  const offsetName = (off, long) => {
    const sign = off < 0 ? "-" : "+", a = MathAbs(off), h = MathFloor(a / 60), m = a % 60;
    if (long) return "GMT" + sign + pad2(h) + ":" + pad2(m);
    return "GMT" + sign + h + (m ? ":" + pad2(m) : "");
  };
  const zoneName = (r, style, zi) => {
    if (r.timeZone === "UTC") return style === "long" || style === "longGeneric" ? "Coordinated Universal Time" : style === "longOffset" ? "GMT+00:00" : style === "shortOffset" ? "GMT+0" : "UTC";
    const names = zoneNames[r.timeZone];
    switch (style) {
    case "short": return names && names[zi.dst ? 1 : 0] || (zi.off === 0 ? "GMT" : offsetName(zi.off, false));
    case "long": return names && names[zi.dst ? 3 : 2] || offsetName(zi.off, true);
    case "shortOffset": return offsetName(zi.off, false);
    case "longOffset": return offsetName(zi.off, true);
    case "shortGeneric": return names && names[4] || offsetName(zi.off, false);
    case "longGeneric": return names && names[2] ? call(strReplace, names[2], " Standard", "") : offsetName(zi.off, true);
    }
  };
  const periodName = (h, style) => {
    if (style === undefined) return h < 12 ? "AM" : "PM";
    if (h >= 6 && h < 12) return "in the morning";
    if (h === 12) return "noon";
    if (h > 12 && h < 18) return "in the afternoon";
    if (h >= 18 && h < 21) return "in the evening";
    return "at night";
  };
  const dateParts = (r, t) => {
    const parts = [];
    const P = (type, value) => push(parts, { type, value });
    const x = fieldsAt(r, t);
    let f = r.f;
    let glue = ", ";
    if (r.dateStyle || r.timeStyle) {
      f = {};
      switch (r.dateStyle) {
      case "full": f.weekday = "long"; f.month = "long"; f.day = "numeric"; f.year = "numeric"; break;
      case "long": f.month = "long"; f.day = "numeric"; f.year = "numeric"; break;
      case "medium": f.month = "short"; f.day = "numeric"; f.year = "numeric"; break;
      case "short": f.month = "numeric"; f.day = "numeric"; f.year = "2-digit"; break;
      }
      if (r.timeStyle) {
        f.hour = "numeric"; f.minute = "2-digit";
        if (r.timeStyle !== "short") f.second = "2-digit";
        if (r.timeStyle === "full") f.timeZoneName = "long";
        if (r.timeStyle === "long") f.timeZoneName = "short";
      }
      if (r.dateStyle === "full" || r.dateStyle === "long") glue = " at ";
    } else if (f.month === "long" && (f.hour !== undefined || f.minute !== undefined || f.second !== undefined || f.timeZoneName !== undefined)) glue = " at ";
    const year = x.y <= 0 ? 1 - x.y : x.y;
    const yearText = f.year === "2-digit" ? pad2(year % 100) : StringC(year);
    // the date
    const hasDate = f.weekday || f.year || f.month || f.day || f.era;
    const textMonth = f.month === "long" || f.month === "short" || f.month === "narrow";
    const monthText = f.month === "long" ? monthsLong[x.mo] : f.month === "short" ? monthsShort[x.mo] : f.month === "narrow" ? monthsLong[x.mo][0] :
      f.month === "2-digit" ? pad2(x.mo + 1) : StringC(x.mo + 1);
    const dayText = f.day === "2-digit" ? pad2(x.d) : StringC(x.d);
    const wdText = f.weekday === "long" ? daysLong[x.wd] : f.weekday === "short" ? daysShort[x.wd] : f.weekday ? daysLong[x.wd][0] : "";
    const eraText = f.era === "long" ? (x.y <= 0 ? "Before Christ" : "Anno Domini") : f.era === "narrow" ? (x.y <= 0 ? "B" : "A") : (x.y <= 0 ? "BC" : "AD");
    const others = (f.year ? 1 : 0) + (f.month ? 1 : 0) + (f.day ? 1 : 0);
    if (hasDate) {
      if (f.weekday && !others) P("weekday", wdText);
      else if (f.weekday && !f.era && others === 1 && f.month !== "long") {
        // ICU's en patterns for a weekday and one other field put that
        // field first: "16 Thursday", "Nov Tue", "2005 Friday"
        if (f.year) P("year", yearText);
        else if (f.month) P("month", monthText);
        else P("day", dayText);
        P("literal", " "); P("weekday", wdText);
      } else if (f.weekday && !f.era && f.year && f.day && !f.month) {
        P("day", dayText); P("literal", " "); P("weekday", wdText); P("literal", " "); P("year", yearText);
      } else if (!f.weekday && !f.era && f.year === "2-digit" && f.day && !f.month) {
        P("day", dayText); P("literal", " "); P("year", yearText);
      } else if (textMonth) {
        if (f.weekday) { P("weekday", wdText); P("literal", f.month && !f.day ? " " : ", "); }
        if (f.weekday && !f.day && f.year) { parts.length = 0; P("month", monthText); P("literal", " "); P("year", yearText); P("literal", " "); P("weekday", wdText); }
        else {
          P("month", monthText);
          if (f.day) { P("literal", " "); P("day", dayText); }
          if (f.year) { P("literal", f.day ? ", " : " "); P("year", yearText); }
          if (f.era) { P("literal", " "); P("era", eraText); }
        }
      } else if (f.month || f.day || f.year) {
        if (f.weekday) { P("weekday", wdText); P("literal", ", "); }
        if (f.year && f.day && !f.month) { P("year", yearText); P("literal", " (day: "); P("day", dayText); P("literal", ")"); }
        else {
          let first = true;
          if (f.month) { P("month", monthText); first = false; }
          if (f.day) { if (!first) P("literal", "/"); P("day", dayText); first = false; }
          if (f.year) { if (!first) P("literal", "/"); P("year", yearText); }
        }
        if (f.era) { P("literal", " "); P("era", eraText); }
      } else if (f.era) {
        P("era", eraText);
      }
    }
    // the time
    const hasTime = f.hour !== undefined || f.minute !== undefined || f.second !== undefined || f.fractionalSecondDigits !== undefined;
    if (hasTime || f.timeZoneName || f.dayPeriod) {
      if (hasDate) P("literal", f.weekday && !others && !f.era && f.hour !== undefined ? " " : glue);
      const hc = r.hourCycle || "h12";
      let h = x.h;
      if (hc === "h12") h = h % 12 || 12;
      else if (hc === "h11") h = h % 12;
      else if (hc === "h24") h = h || 24;
      let first = true;
      if (f.hour !== undefined) { P("hour", f.hour === "2-digit" ? pad2(h) : StringC(h)); first = false; }
      if (f.minute !== undefined) { if (!first) P("literal", ":"); P("minute", f.minute === "2-digit" ? pad2(x.mi) : StringC(x.mi)); first = false; }
      // a second alone is not padded (ICU's "s")
      if (f.second !== undefined) { if (!first) P("literal", ":"); P("second", f.second === "2-digit" && !first ? pad2(x.s) : StringC(x.s)); first = false; }
      if (f.fractionalSecondDigits !== undefined) {
        if (!first) P("literal", ".");
        P("fractionalSecond", slice(call(strPadStart, StringC(x.ms), 3, "0"), 0, f.fractionalSecondDigits));
      }
      // ICU puts a narrow no-break space before AM/PM; Node's format()
      // (not formatToParts) turns it into a space.
      if (f.hour !== undefined && (hc === "h12" || hc === "h11")) { P("literal", "\u202f"); P("dayPeriod", periodName(x.h, f.dayPeriod)); }
      else if (f.dayPeriod !== undefined && f.hour === undefined) P("dayPeriod", periodName(x.h, f.dayPeriod));
      if (f.timeZoneName) {
        if (hasTime) P("literal", " ");
        P("timeZoneName", zoneName(r, f.timeZoneName, x.zi));
      }
    }
    return parts;
  };
  const dateText = (parts) => call(strReplace, joinParts(parts), /\u202f/g, " ");
  const timeOf = (d) => {
    const t = d === undefined ? DateC.now() : typeof d === "object" && d !== null && dateGetTimeSafe(d) !== undefined ? dateGetTimeSafe(d) : NumberC(d);
    if (!NumberIsFinite(t) || MathAbs(t) > 8.64e15) throw new RangeErrorC("Invalid time value");
    return t - (t % 1) ;
  };
  const dateGetTimeSafe = (d) => { try { return call(dateGetTime, d); } catch { return undefined; } };
  const dtOf = (t, m) => {
    const s = typeof t === "object" && t !== null ? dtState.get(t) : undefined;
    if (!s) throw new TypeErrorC(`Method Intl.DateTimeFormat.prototype.${m} called on incompatible receiver`);
    return s;
  };
  function DateTimeFormat(locales, options) {
    const self = new.target ? this : O.create(DateTimeFormat.prototype);
    dtState.set(self, makeDTF(locales, options, "any", "date"));
    return self;
  }
  defineProperty(DateTimeFormat.prototype, "format", {
    get: fnOf("get format", function () {
      const r = dtOf(this, "format");
      if (!r.bound) r.bound = (d) => dateText(dateParts(r, timeOf(d)));
      return r.bound;
    }), configurable: true,
  });
  method(DateTimeFormat.prototype, "formatToParts", { m(d) { return dateParts(dtOf(this, "formatToParts"), timeOf(d)); } }.m, 1);
  method(DateTimeFormat.prototype, "formatRange", { m(a, b) {
    const r = dtOf(this, "formatRange");
    return dateText(dateParts(r, timeOf(a))) + " – " + dateText(dateParts(r, timeOf(b)));
  } }.m, 2);
  method(DateTimeFormat.prototype, "resolvedOptions", { m() {
    const r = dtOf(this, "resolvedOptions");
    const out = { locale: r.locale, calendar: r.calendar, numberingSystem: r.numberingSystem, timeZone: r.timeZone };
    if (r.hourCycle !== undefined) { put(out, "hourCycle", r.hourCycle); put(out, "hour12", r.hour12); }
    for (const k of own(dtFields)) if (r[k] !== undefined) put(out, k, r[k]);
    if (r.dateStyle) put(out, "dateStyle", r.dateStyle);
    if (r.timeStyle) put(out, "timeStyle", r.timeStyle);
    return out;
  } }.m, 0);

  // --- Intl and the toLocale* methods ---------------------------------------

  function Locale(tag, options) {
    if (!new.target) throw new TypeErrorC("Constructor Intl.Locale requires 'new'");
    let t = canonTag(tag instanceof Locale ? tag.toString() : tag);
    const o = toObject(options);
    // The language, script and region options replace the tag's
    // (ApplyOptionsToTag), each a RangeError if it is not one.
    const subtag = (name, re) => {
      const v = o[name];
      if (v === undefined) return undefined;
      const sv = `${v}`;
      if (!is(re, lower(sv))) throw new RangeErrorC(`Incorrect locale information provided`);
      return sv;
    };
    const language = subtag("language", langRE), script = subtag("script", scriptRE), region = subtag("region", regionRE);
    if (language !== undefined || script !== undefined || region !== undefined) {
      const p = call(strSplit, t, "-");
      let i = 1, sc, rg;
      if (i < p.length && is(scriptRE, lower(p[i]))) sc = p[i++];
      if (i < p.length && is(regionRE, lower(p[i]))) rg = p[i++];
      const parts = [language !== undefined ? language : p[0]];
      if (script !== undefined || sc !== undefined) push(parts, script !== undefined ? script : sc);
      if (region !== undefined || rg !== undefined) push(parts, region !== undefined ? region : rg);
      for (; i < p.length; i++) push(parts, p[i]);
      t = canonTag(join(parts, "-"));
    }
    // The other options are checked as ECMA-402 reads them; the sandbox
    // has no data that they would change.
    getType(o, "calendar");
    getType(o, "collation");
    getOpt(o, "hourCycle", ["h11", "h12", "h23", "h24"], undefined, "Intl.Locale");
    getOpt(o, "caseFirst", ["upper", "lower", "false"], undefined, "Intl.Locale");
    getOpt(o, "numeric", "boolean", undefined, "Intl.Locale");
    getType(o, "numberingSystem");
    const p = call(strSplit, t, "-");
    defineProperty(this, "__tag", { value: t });
    this.language = p[0];
    for (let i = 1; i < p.length; i++) {
      if (p[i].length === 4) this.script = p[i];
      else if (p[i].length === 2 || p[i].length === 3 && call(reExec, /^\d+$/, p[i])) this.region = p[i];
      else break;
    }
    this.baseName = join(call(arrFilter, [this.language, this.script, this.region], (x) => x), "-");
    return this;
  }
  method(Locale.prototype, "toString", { m() { return this.__tag; } }.m, 0);
  method(Locale.prototype, "maximize", { m() { return this; } }.m, 0);
  method(Locale.prototype, "minimize", { m() { return this; } }.m, 0);

  const Intl = {};
  const ctor = (name, C, len) => {
    defineProperty(C, "name", { value: name });
    defineProperty(C, "length", { value: len });
    defineProperty(C.prototype, SymbolToStringTag, { value: "Intl." + name, configurable: true });
    defineProperty(C, "prototype", { writable: false, enumerable: false, configurable: false });
    method(C, "supportedLocalesOf", { m(l, o) {
      const list = supportedLocalesOf(l);
      getOpt(toObject(o), "localeMatcher", ["lookup", "best fit"], "best fit", "Intl." + name);
      return list;
    } }.m, 1);
    defineProperty(Intl, name, { value: C, writable: true, configurable: true });
  };
  ctor("NumberFormat", NumberFormat, 0);
  ctor("DateTimeFormat", DateTimeFormat, 0);
  ctor("Collator", Collator, 0);
  ctor("PluralRules", PluralRules, 0);
  ctor("RelativeTimeFormat", RelativeTimeFormat, 0);
  ctor("ListFormat", ListFormat, 0);
  ctor("Segmenter", Segmenter, 0);
  ctor("Locale", Locale, 1);
  delete Locale.supportedLocalesOf;
  method(Intl, "getCanonicalLocales", { m(l) { return canonicalList(l); } }.m, 1);
  method(Intl, "supportedValuesOf", { m(k) {
    switch (StringC(k)) {
    case "calendar": return ["gregory"];
    case "collation": return ["default"];
    case "currency": return call(arrSort, O.keys(currencyNames));
    case "numberingSystem": return ["latn"];
    case "unit": return call(arrSort, O.keys(units));
    case "timeZone": return ["UTC"];
    }
    throw new RangeErrorC(`Invalid key : ${StringC(k)}`);
  } }.m, 1);
  defineProperty(Intl, SymbolToStringTag, { value: "Intl", configurable: true });
  defineProperty(g, "Intl", { value: Intl, writable: true, configurable: true });

  // Each toLocale* method keeps one formatter for its default options.
  let defaultNF;
  const defaultDTF = O.create(null);
  const thisNumber = (v, name) => {
    if (typeof v === "number") return v;
    if (typeof v === "object" && v !== null) { try { return call(NumberC.prototype.valueOf, v); } catch {} }
    throw new TypeErrorC(`Number.prototype.${name} requires that 'this' be a Number`);
  };
  method(NumberC.prototype, "toLocaleString", { m(locales, options) {
    const n = thisNumber(this, "toLocaleString");
    if (locales === undefined && options === undefined) {
      defaultNF ||= makeNF(undefined, undefined);
      return joinParts(numberParts(defaultNF, n));
    }
    return joinParts(numberParts(makeNF(locales, options), n));
  } }.m, 0);
  const bigintValueOf = BigInt.prototype.valueOf;
  method(BigInt.prototype, "toLocaleString", { m(locales, options) {
    const n = call(bigintValueOf, this);
    return joinParts(numberParts(makeNF(locales, options), n));
  } }.m, 0);
  const dateMethod = (name, required, defaults) => {
    method(DateC.prototype, name, { m(locales, options) {
      const t = call(dateGetTime, this);
      if (t !== t) return "Invalid Date";
      let r;
      if (locales === undefined && options === undefined) {
        r = defaultDTF[name];
        if (r === undefined) r = defaultDTF[name] = makeDTF(undefined, undefined, required, defaults);
      } else r = makeDTF(locales, options, required, defaults);
      return dateText(dateParts(r, t));
    } }.m, 0);
  };
  dateMethod("toLocaleString", "any", "all");
  dateMethod("toLocaleDateString", "date", "date");
  dateMethod("toLocaleTimeString", "time", "time");
  const collatorDefault = makeCollator(undefined, undefined);
  method(StringC.prototype, "localeCompare", { m(that, locales, options) {
    if (this === undefined || this === null) throw new TypeErrorC("String.prototype.localeCompare called on null or undefined");
    const s = locales === undefined && options === undefined ? collatorDefault : makeCollator(locales, options);
    return compareWith(s, StringC(this), StringC(that));
  } }.m, 1);
  // toLocaleLowerCase and toLocaleUpperCase check their locales (a
  // RangeError for a tag that is not one, as Node's do) and case as the
  // engine's own methods do: English has no casing of its own.
  for (const [name, f] of own([["toLocaleLowerCase", StringC.prototype.toLocaleLowerCase], ["toLocaleUpperCase", StringC.prototype.toLocaleUpperCase]])) {
    method(StringC.prototype, name, { m(locales) {
      if (this === undefined || this === null) throw new TypeErrorC(`String.prototype.${name} called on null or undefined`);
      const str = StringC(this);
      canonicalList(locales);
      return call(f, str);
    } }.m, 0);
  }
  // ECMA-402's Array.prototype.toLocaleString: each element's
  // toLocaleString(locales, options), joined by ",". The typed arrays' is
  // the same over the array's own length, after ValidateTypedArray (at()
  // throws the engine's TypeError for anything but a typed array in
  // bounds of a buffer not detached).
  const localeJoin = (a, n, locales, options) => {
    let out = "";
    for (let i = 0; i < n; i++) {
      if (i > 0) out += ",";
      const e = a[i];
      if (e !== undefined && e !== null) out += `${e.toLocaleString(locales, options)}`;
    }
    return out;
  };
  const toLength = (v) => {
    v = NumberC(v);
    if (!(v > 0)) return 0;
    return v < 9007199254740991 ? MathFloor(v) : 9007199254740991;
  };
  method(Array.prototype, "toLocaleString", { m(locales, options) {
    if (this === undefined || this === null) throw new TypeErrorC("Array.prototype.toLocaleString called on null or undefined");
    const a = O(this);
    return localeJoin(a, toLength(a.length), locales, options);
  } }.m, 0);
  const typedArrayProto = O.getPrototypeOf(Int8Array.prototype);
  const typedArrayAt = typedArrayProto.at;
  const typedArrayLength = O.getOwnPropertyDescriptor(typedArrayProto, "length").get;
  method(typedArrayProto, "toLocaleString", { m(locales, options) {
    call(typedArrayAt, this, 0);
    return localeJoin(this, call(typedArrayLength, this), locales, options);
  } }.m, 0);
})
