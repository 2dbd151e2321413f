// A sales report as a model writes one: totals in currency, growth in
// percent, big numbers compact, units, and the parts of a formatted price.
const rows = [
  { region: 'North America', revenue: 1234567.891, prev: 1100000, units: 15234, currency: 'USD' },
  { region: 'Europe', revenue: 987654.3, prev: 1020000.5, units: 8765, currency: 'EUR' },
  { region: 'United Kingdom', revenue: 45678.9, prev: 40000, units: 1234, currency: 'GBP' },
  { region: 'Japan', revenue: 12345678, prev: 12000000, units: 99999, currency: 'JPY' },
  { region: 'Switzerland', revenue: 5000.5, prev: 5000.5, units: 12, currency: 'CHF' },
  { region: 'India', revenue: 2500000, prev: 2000000, units: 500000, currency: 'INR' },
  { region: 'Canada', revenue: -1500.25, prev: 100, units: 0, currency: 'CAD' },
];
const out = {};
const t = (k, f) => { try { out[k] = f(); } catch (e) { out[k] = `${e.name}: ${e.message}`; } };
for (const r of rows) {
  const cur = new Intl.NumberFormat('en-US', { style: 'currency', currency: r.currency });
  const growth = (r.revenue - r.prev) / r.prev;
  out[r.region] = [
    cur.format(r.revenue),
    new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1, signDisplay: 'exceptZero' }).format(growth),
    new Intl.NumberFormat('en-US', { notation: 'compact' }).format(r.revenue),
    new Intl.NumberFormat('en-US', { notation: 'compact', compactDisplay: 'long' }).format(r.units),
    r.units.toLocaleString(),
    r.revenue.toLocaleString('en-US', { maximumFractionDigits: 0 }),
    new Intl.NumberFormat('en-US', { style: 'currency', currency: r.currency, currencySign: 'accounting' }).format(r.revenue - r.prev),
    new Intl.NumberFormat('en-US', { style: 'currency', currency: r.currency, notation: 'compact' }).format(r.revenue),
  ];
}
const total = rows.reduce((s, r) => s + r.revenue, 0);
t('total', () => total.toLocaleString('en-US', { style: 'currency', currency: 'USD' }));
t('plain', () => [1234.5, 1234.5678, 0.1 + 0.2, 1e21, 1.5e-7, -0, NaN, Infinity, -Infinity, 123456789.123, 1e300 > 0 ? 1e9 : 0].map((n) => n.toLocaleString()));
t('rounding', () => [[1.005, 2], [2.5, 0], [-2.5, 0], [99.995, 2], [1.45, 1], [8.345, 2], [0.125, 2]].map(([n, d]) => n.toLocaleString('en-US', { maximumFractionDigits: d })));
t('digits', () => [
  (1234.5).toLocaleString('en-US', { minimumFractionDigits: 2 }),
  (5).toLocaleString('en-US', { minimumIntegerDigits: 3 }),
  (1234567.891).toLocaleString('en-US', { useGrouping: false }),
  (123456.789).toLocaleString('en-US', { maximumSignificantDigits: 3 }),
  (0.00123456).toLocaleString('en-US', { maximumSignificantDigits: 2 }),
  (42).toLocaleString('en-US', { minimumSignificantDigits: 4 }),
  (1234.5).toLocaleString(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: 0 }),
]);
t('percent', () => [0.256, 0.2567, -0.05, 1, 0.0001, 12.5].map((n) => new Intl.NumberFormat('en-US', { style: 'percent' }).format(n)));
t('compact', () => [0, 999, 1000, 1234, 12345, 123456, 999999, 1500000, 2.5e9, 1.234e12, 1e15, 1.234, 0.000123, -1234].map((n) => new Intl.NumberFormat('en-US', { notation: 'compact' }).format(n)));
t('compactDigits', () => [
  new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 }).format(1234567),
  new Intl.NumberFormat('en-US', { notation: 'compact', maximumSignificantDigits: 3 }).format(1234567),
  new Intl.NumberFormat('en-US', { notation: 'compact', compactDisplay: 'long' }).format(1500000),
]);
t('signs', () => [
  [0, 'exceptZero'], [5, 'exceptZero'], [-5, 'never'], [-0, 'negative'], [-1, 'negative'], [3, 'always'], [-0, 'auto'],
].map(([n, s]) => new Intl.NumberFormat('en-US', { signDisplay: s }).format(n)));
t('currencies', () => ['USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'INR', 'CNY', 'KRW', 'BRL', 'MXN', 'SEK'].map((c) => (1234.5).toLocaleString('en-US', { style: 'currency', currency: c })));
t('currencyDisplay', () => [
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', currencyDisplay: 'code' }).format(1234.5),
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', currencyDisplay: 'name' }).format(1234.5),
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', currencyDisplay: 'name' }).format(1),
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR', currencyDisplay: 'name' }).format(2),
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'CAD', currencyDisplay: 'narrowSymbol' }).format(2),
]);
t('scientific', () => [
  new Intl.NumberFormat('en-US', { notation: 'scientific' }).format(12345.678),
  new Intl.NumberFormat('en-US', { notation: 'engineering' }).format(12345.678),
  new Intl.NumberFormat('en-US', { notation: 'scientific' }).format(0.00012),
]);
t('units', () => [
  [50, 'kilometer-per-hour'], [1.5, 'gigabyte'], [20, 'celsius'], [3, 'liter'], [3, 'mile'], [3, 'hour'], [3, 'millisecond'], [3, 'kilogram'], [3, 'percent'], [1, 'day'],
].map(([n, u]) => [n.toLocaleString('en-US', { style: 'unit', unit: u }), n.toLocaleString('en-US', { style: 'unit', unit: u, unitDisplay: 'long' })]));
t('bigint', () => [new Intl.NumberFormat().format(12345678901234567890n), (1234n).toLocaleString(), new Intl.NumberFormat().format('1234.5')]);
t('parts', () => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).formatToParts(-1234.56));
t('partsCompact', () => new Intl.NumberFormat('en-US', { notation: 'compact' }).formatToParts(1234));
t('partsUnit', () => new Intl.NumberFormat('en-US', { style: 'unit', unit: 'kilometer-per-hour' }).formatToParts(5));
t('resolved', () => new Intl.NumberFormat('en-US').resolvedOptions());
t('resolvedCurrency', () => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' }).resolvedOptions());
t('resolvedCompact', () => new Intl.NumberFormat('en-US', { notation: 'compact' }).resolvedOptions());
t('arrayLocale', () => [[1234.5, 'x', null, undefined, 7].toLocaleString(), [1234.5, 2].toLocaleString('en-US', { style: 'currency', currency: 'USD' })]);
t('errNoCurrency', () => new Intl.NumberFormat('en-US', { style: 'currency' }));
t('errFraction', () => new Intl.NumberFormat('en-US', { maximumFractionDigits: 101 }));
t('errUnit', () => new Intl.NumberFormat('en-US', { style: 'unit', unit: 'foo' }));
t('lowerCurrency', () => (1).toLocaleString('en-US', { style: 'currency', currency: 'usd' }));
t('map', () => [1, 22, 333, 4444].map(new Intl.NumberFormat('en-US', { minimumFractionDigits: 1 }).format));
export default out;
