// Plurals and relative times, as a model words a status line.
const out = {};
const t = (k, f) => { try { out[k] = f(); } catch (e) { out[k] = `${e.name}: ${e.message}`; } };
const pr = new Intl.PluralRules('en-US'), ord = new Intl.PluralRules('en-US', { type: 'ordinal' });
t('cardinal', () => [0, 1, 2, 3, 1.5, '1', -1, 11, 21, 101].map((n) => pr.select(n)));
t('ordinal', () => [0, 1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112, 113].map((n) => ord.select(n)));
const suffix = { one: 'st', two: 'nd', few: 'rd', other: 'th' };
t('ranks', () => [1, 2, 3, 4, 11, 12, 13, 21, 22, 102].map((n) => n + suffix[ord.select(n)]));
t('items', () => [0, 1, 2].map((n) => `${n} ${pr.select(n) === 'one' ? 'item' : 'items'}`));
t('fraction', () => new Intl.PluralRules('en', { minimumFractionDigits: 1 }).select(1));
t('resolved', () => [pr.resolvedOptions(), ord.resolvedOptions()]);
const units = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];
for (const style of ['long', 'short', 'narrow']) {
  const rtf = new Intl.RelativeTimeFormat('en-US', { style });
  t('rt-' + style, () => units.map((u) => [rtf.format(-3, u), rtf.format(1, u), rtf.format(-1, u)]));
}
const auto = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
t('auto', () => units.map((u) => [-2, -1, 0, 1, 2].map((n) => auto.format(n, u))));
t('autoShort', () => units.map((u) => [-1, 0, 1].map((n) => new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' }).format(n, u))));
t('misc', () => [new Intl.RelativeTimeFormat().format(-0, 'days'), new Intl.RelativeTimeFormat().format(1234.5, 'days'), new Intl.RelativeTimeFormat().format(-1.5, 'hours')]);
t('parts', () => [new Intl.RelativeTimeFormat().formatToParts(-1234, 'day'), auto.formatToParts(-1, 'day')]);
t('rtResolved', () => new Intl.RelativeTimeFormat().resolvedOptions());
t('errUnit', () => new Intl.RelativeTimeFormat().format(1, 'fortnight'));
// "3 hours ago" from two instants, as a model computes it
const now = Date.UTC(2024, 5, 1, 12);
const ago = (ms) => {
  const s = Math.round((ms - now) / 1000);
  for (const [u, n] of [['year', 31536000], ['month', 2592000], ['day', 86400], ['hour', 3600], ['minute', 60]]) {
    if (Math.abs(s) >= n) return auto.format(Math.round(s / n), u);
  }
  return auto.format(s, 'second');
};
t('ago', () => [now - 5000, now - 3 * 3600e3, now - 86400e3, now + 2 * 86400e3, now - 40 * 86400e3, now - 400 * 86400e3].map(ago));
export default out;
