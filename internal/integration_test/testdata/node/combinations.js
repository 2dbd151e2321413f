// Option combinations a model might pass, drawn by a fixed pseudo-random
// sequence: 400 NumberFormat and 300 DateTimeFormat cases, each a result.
let seed = 42; const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = (a) => a[Math.floor(rnd() * a.length)];
const nums = [0, -0, 1, -1, 0.5, 1.005, 12.345, 999.995, 1234.5678, -98765.4321, 1e6, 1.5e9, 123456789, 0.000123, 1e-7, 42, 7.0, 100, 2.5, -2.5, 0.125, 99999];
const out = {};
for (let i = 0; i < 400; i++) {
  const o = {};
  if (rnd() < 0.4) o.style = pick(['decimal', 'percent', 'currency', 'unit']);
  if (o.style === 'currency') { o.currency = pick(['USD', 'EUR', 'JPY', 'GBP', 'CHF']); if (rnd() < 0.3) o.currencyDisplay = pick(['code', 'name', 'symbol']); if (rnd() < 0.3) o.currencySign = 'accounting'; }
  if (o.style === 'unit') { o.unit = pick(['kilometer', 'second', 'megabyte', 'percent', 'kilometer-per-hour', 'liter']); if (rnd() < 0.5) o.unitDisplay = pick(['short', 'long', 'narrow']); }
  if (rnd() < 0.3) o.notation = pick(['compact', 'scientific', 'engineering', 'standard']);
  if (o.notation === 'compact' && rnd() < 0.5) o.compactDisplay = pick(['short', 'long']);
  if (rnd() < 0.3) o.maximumFractionDigits = Math.floor(rnd() * 5);
  if (rnd() < 0.2) o.minimumFractionDigits = Math.floor(rnd() * 3);
  if (rnd() < 0.15) o.maximumSignificantDigits = 1 + Math.floor(rnd() * 5);
  if (rnd() < 0.15) o.signDisplay = pick(['always', 'exceptZero', 'never', 'negative']);
  if (rnd() < 0.1) o.useGrouping = false;
  if (rnd() < 0.1) o.minimumIntegerDigits = 1 + Math.floor(rnd() * 3);
  const n = pick(nums);
  let r;
  try { r = new Intl.NumberFormat('en-US', o).format(n); } catch (e) { r = e.name; }
  out['nf-' + String(i).padStart(3, '0')] = [JSON.stringify(o), n, r];
}
for (let i = 0; i < 300; i++) {
  const o = {};
  for (const [k, vals] of [['weekday', ['long', 'short', 'narrow']], ['year', ['numeric', '2-digit']], ['month', ['numeric', '2-digit', 'long', 'short', 'narrow']], ['day', ['numeric', '2-digit']], ['hour', ['numeric', '2-digit']], ['minute', ['numeric', '2-digit']], ['second', ['numeric', '2-digit']], ['timeZoneName', ['short', 'long', 'shortOffset']]]) {
    if (rnd() < 0.3) o[k] = pick(vals);
  }
  if (rnd() < 0.2) o.hour12 = rnd() < 0.5;
  if (rnd() < 0.5) o.timeZone = pick(['UTC', 'America/New_York', 'Europe/Paris', 'Asia/Tokyo', 'Asia/Kolkata']);
  const t = Math.floor(rnd() * 2e12);
  let r;
  try { r = new Intl.DateTimeFormat('en-US', o).format(t); } catch (e) { r = e.name; }
  out['dtf-' + String(i).padStart(3, '0')] = [JSON.stringify(o), t, r];
}
export default out;
