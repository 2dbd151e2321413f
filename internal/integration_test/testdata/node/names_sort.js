// Sorting names as a model does: localeCompare and Intl.Collator over
// capitals, accents, Greek and Cyrillic, numbers in names.
const names = ['émile', 'Zoë', 'adam', 'Émile', 'zebra', 'Adam', 'Ærø', 'Ångström', 'Ölaf', 'olaf', 'Øre', 'œuvre', 'ß', 'ss',
  'Ñandú', 'nandu', 'Çelik', 'celik', 'Łukasz', 'lukasz', 'Ωmega', 'αλφα', 'Άλφα', 'βήτα', 'Γάμμα', 'Яков', 'Борис', 'борис',
  'ёлка', 'Елена', 'Ђорђе', 'item10', 'item9', 'Item2', '_x', 'a-b', 'ab', 'a b', '10', '9', '', 'éclair', 'eclair', 'Eclair'];
const out = {};
const t = (k, f) => { try { out[k] = f(); } catch (e) { out[k] = `${e.name}: ${e.message}`; } };
t('localeCompare', () => [...names].sort((a, b) => a.localeCompare(b)));
t('collator', () => [...names].sort(new Intl.Collator().compare));
t('numeric', () => [...names].sort(new Intl.Collator('en', { numeric: true }).compare));
t('base', () => [...names].sort(new Intl.Collator('en', { sensitivity: 'base' }).compare));
t('upperFirst', () => [...names].sort(new Intl.Collator('en', { caseFirst: 'upper' }).compare));
t('pairs', () => [['a', 'B'], ['a', 'A'], ['a', 'á'], ['résumé', 'resume'], ['Ω', 'ω'], ['ж', 'Ж'], ['z', 'é'], ['a', 'a']].map(([a, b]) => [
  a.localeCompare(b), a.localeCompare(b, undefined, { sensitivity: 'base' }), a.localeCompare(b, 'en', { sensitivity: 'accent' }),
  a.localeCompare(b, 'en', { sensitivity: 'case' })]));
t('byField', () => [{ n: 'Émilie', a: 30 }, { n: 'anna', a: 25 }, { n: 'Zoe', a: 40 }, { n: 'Anna', a: 20 }]
  .sort((x, y) => x.n.localeCompare(y.n) || x.a - y.a).map((p) => p.n + ':' + p.a));
t('swedish', () => ['z', 'ä', 'a', 'ö', 'å'].sort(new Intl.Collator('sv').compare));
t('german', () => ['z', 'ä', 'a', 'ö', 'å'].sort(new Intl.Collator('de').compare));
t('resolved', () => new Intl.Collator().resolvedOptions());
t('resolvedSv', () => new Intl.Collator('sv-SE', { numeric: true }).resolvedOptions());
t('resolvedUnknown', () => new Intl.Collator('xx-YY').resolvedOptions().locale);
t('punct', () => ['a-c', 'ab', 'a c', 'a.b'].sort(new Intl.Collator('en', { ignorePunctuation: true }).compare));
export default out;
