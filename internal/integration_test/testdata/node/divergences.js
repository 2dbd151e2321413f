// Where QuickJS and Node answered differently (RATIONALE.md, "Node's answers
// where QuickJS had its own"), and the neighbouring cases that already
// agreed: dates as text and parsed, number formatting, sorting, JSON,
// regular expressions' source, functions as text.
const out = {};
const t = (k, f) => { try { out[k] = f(); } catch (e) { out[k] = `${e.name}: ${e.message}`; } };
const d = new Date(Date.UTC(2024, 0, 2, 15, 4, 5, 6));
t('dateString', () => [String(d), d.toString(), d.toDateString(), d.toTimeString(), d.toUTCString(), d.toISOString(), d.toJSON(), `${d}`, d + 1]);
t('dateParse', () => ['2024-01-02', '2024-01-02T10:00', '2024-01-02T10:00:00Z', '2024-01-02 10:00', '2024-01-02 10:00:00', 'Jan 2, 2024', 'January 2, 2024 10:00 AM',
  '2024/01/02', '01/02/2024', '1/2/2024', 'Tue Jan 02 2024 15:04:05 GMT+0000 (Coordinated Universal Time)', 'Tue, 02 Jan 2024 15:04:05 GMT', '2024-1-2',
  '2024-01-02T10:00:00.123456Z', '2024-01-02T10:00:00+05:30', '20240102', 'not a date', '2024-13-45', '2024', '2024-06', 'June 2024', '2 Jan 2024', '2024-01-02T25:00',
  'Jan 2 2024 10:00 PM EST', '12/31/2024 23:59:59', '2024-01-02T10:00:00.000+0000', 'Thu, 01 Jan 1970 00:00:00 GMT+0100', '  2024-01-02  ', '2024-01-02Z']
  .map((s) => { const x = new Date(s); return [s, isNaN(x) ? 'Invalid Date' : x.toISOString()]; }));
t('dateMisc', () => [String(new Date(8.64e15)), String(new Date(-8.64e15)), new Date(-8.64e15).toString().length, Date.UTC(2024), new Date(2024, 0).toISOString(), new Date(0, 0).getFullYear(), new Date(8.64e15 + 1).getTime(), String(new Date(-1e14)), new Date(Date.UTC(-1, 0)).toISOString(), new Date(Date.UTC(10000, 0)).toISOString(), new Date(2024, 0, 31).getTimezoneOffset()]);
t('toFixed', () => [(1.005).toFixed(2), (1.45).toFixed(1), (0.5).toFixed(0), (1.5).toFixed(0), (2.5).toFixed(0), (-1.5).toFixed(0), (1e21).toFixed(2), (123.456).toFixed(10), (0.000001).toFixed(7), (-0).toFixed(2), (1234.5678).toFixed(), (8.345).toFixed(2), (10.235).toFixed(2)]);
t('toPrecision', () => [(123.456).toPrecision(4), (0.00001234).toPrecision(2), (1e21).toPrecision(3), (123456).toPrecision(2), (1.25).toPrecision(2), (1.35).toPrecision(2)]);
t('toExponential', () => [(123456).toExponential(2), (0).toExponential(), (1.5e-10).toExponential(3), (-1.25).toExponential(1)]);
t('numToString', () => [String(1e21), String(1e-7), String(123e-20), String(-0), (255).toString(16), (0.5).toString(2), (-255).toString(36), String(2 ** 53 + 2), String(0.1 + 0.2), String(5e-324), String(1.7976931348623157e308), (1e21).toString(16), (0.1).toString(3)]);
t('parse', () => [parseFloat('1e3x'), parseInt('0x1f'), parseInt('08'), Number(''), Number(' 12 '), Number('1_000'), Number('0b101'), Number('0o17'), parseFloat('.5e-2'), Number('Infinity'), parseInt('123abc', 36)]);
t('sortStable', () => { const a = []; for (let i = 0; i < 30; i++) a.push({ k: i % 3, i }); return a.sort((x, y) => x.k - y.k).map((x) => x.i).join(','); });
t('sortDefault', () => [[10, 9, 1, 100, undefined, null, 'b', 'a'].sort(), [3, 1, 2].sort(() => 0), ['é', 'e', 'z', 'E'].sort(), [, 1, , 0].sort()]);
t('json', () => [JSON.stringify({ a: undefined, b: NaN, c: -0, d: Infinity, e: () => 1, f: Symbol('x'), g: new Date(0), h: [undefined, NaN, () => 1] }),
  JSON.stringify('\u2028\u2029\ud800'), JSON.stringify({ a: [1, { b: 2 }] }, null, 2), JSON.stringify([1, 2], null, '--'), JSON.stringify(1n === 1n), JSON.stringify({ toJSON() { return 5; } }),
  JSON.stringify(new Map([[1, 2]])), JSON.stringify(Object.create(null)), JSON.stringify('\x7f\x00\x1f'), JSON.stringify({ [Symbol('s')]: 1, k: 2 }), JSON.stringify(new Number(3)), JSON.stringify(-1e-7), JSON.stringify(1e21)]);
t('jsonBigint', () => JSON.stringify({ a: 1n }));
t('regexSource', () => [new RegExp('\n').source, new RegExp('\u2028').source, new RegExp('/').source, new RegExp('').source, String(new RegExp('a/b', 'g')), /[/]/.source, new RegExp('\r').source, RegExp('\\/').source, String(RegExp('\n', 'm'))]);
t('regexMisc', () => ['aBc'.replace(/b/i, '$&$&'), 'x'.match(/(?<n>x)/).groups.n, [...'a1b2'.matchAll(/\d/g)].map((m) => m.index), /\p{L}+/u.exec('héllo wörld')[0], 'a.b.c'.split('.', 2), 'abc'.replace(/(?:)/g, '-'), /(a)|(b)/.exec('b'), 'AbC'.search(/c/i), RegExp.prototype.flags === undefined, /x/dgimsuy.flags]);
t('stringMisc', () => ['İ'.toLowerCase(), 'ß'.toUpperCase(), 'ﬀ'.toUpperCase(), 'abc'.at(-1), 'a-b-c'.replaceAll('-', '+'), ' x '.trim(), 'abc'.padStart(6, '12'), 'x'.repeat(3), 'Ǆ'.toLowerCase(), 'ΑΣ'.toLowerCase(), String.raw`a\nb`, 'a\u0301'.normalize('NFC').length, 'é'.normalize('NFD').length]);
t('arrayMisc', () => [[1, [2, [3, [4]]]].flat(Infinity), Array.from({ length: 3 }, (_, i) => i * 2), [1, 2, 3].findLast((x) => x < 3), [3, 1, 2].toSorted(), [1, 2, 3].with(1, 9), [1, 2, 3].includes(NaN), [NaN].includes(NaN), [NaN].indexOf(NaN), Array.prototype.concat.call(1, 2).length]);
t('objectMisc', () => [Object.entries({ b: 1, a: 2, 1: 3, 0: 4 }), Object.keys('ab'), Object.fromEntries([['a', 1]]), String(Object.create(null) instanceof Object), JSON.stringify(Object.getOwnPropertyNames(function f(a, b) {}).sort())]);
t('errorMisc', () => [String(new Error('x')), String(new TypeError()), new Error('x', { cause: 'y' }).cause, Object.prototype.toString.call(new Error()), new AggregateError([1], 'm').errors.length, String(new RangeError('r'))]);
t('mathMisc', () => [Math.round(-0.5), Math.round(2.5), Math.max(), Math.min(), Math.hypot(3, 4), Math.sign(-0), Math.cbrt(27), Math.fround(5.5), Math.clz32(1), Math.atan2(0, -0), 0.1 * 3, 2 ** -1074, Math.pow(NaN, 0)]);
t('numberFormat', () => [1e21 + '', (1234.5).toString(), Number.MAX_SAFE_INTEGER + 2 + '', (0.000001).toString(), (1e-7).toString(), 100..toString(), (-1e-7).toString()]);
t('typeofMisc', () => [typeof null, typeof (() => {}), typeof Symbol(), typeof 1n, typeof undefined, typeof class {}, typeof new Date(), typeof /x/]);
t('functionToString', () => [String(function f(a) { return a; }), String((a) => a), String(class A {}), String(Math.max), String(function () {}.bind(null))]);
t('labels', () => [Object.prototype.toString.call(null), Object.prototype.toString.call([]), Object.prototype.toString.call(new Map()), Object.prototype.toString.call(function* () {}()), Object.prototype.toString.call(Promise.resolve()), String(Symbol('x')), Symbol('d').description]);
export default out;
