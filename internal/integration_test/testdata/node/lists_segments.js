// Lists and segmentation: joining names, counting words and characters.
const out = {};
const t = (k, f) => { try { out[k] = f(); } catch (e) { out[k] = `${e.name}: ${e.message}`; } };
for (const type of ['conjunction', 'disjunction', 'unit']) {
  for (const style of ['long', 'short', 'narrow']) {
    const lf = new Intl.ListFormat('en', { type, style });
    t(`${type}-${style}`, () => [[], ['a'], ['a', 'b'], ['a', 'b', 'c'], ['Alice', 'Bob', 'Carol', 'Dave']].map((x) => lf.format(x)));
  }
}
t('listParts', () => new Intl.ListFormat().formatToParts(['x', 'y', 'z']));
t('listResolved', () => new Intl.ListFormat().resolvedOptions());
t('listErr', () => new Intl.ListFormat().format(['a', 1]));
t('listSet', () => new Intl.ListFormat('en-US').format(new Set(['red', 'green', 'blue'])));
const g = new Intl.Segmenter('en', { granularity: 'grapheme' });
t('graphemes', () => [...g.segment('e\u0301👍🏽🇫🇷👨‍👩‍👧ab\r\nक्षि')].map((s) => [s.segment, s.index]));
t('graphemeCount', () => ['héllo', 'ñ', '👨‍👩‍👧‍👦', '🇯🇵🇺🇸', 'Ελληνικά', 'Привет'].map((s) => [s.length, [...g.segment(s)].length]));
const w = new Intl.Segmenter('en', { granularity: 'word' });
t('words', () => [...w.segment('Hello, world!  It’s 3.14 o\'clock e-mail foo_bar U.S.A. x2 #tag 😀.')].map((s) => [s.segment, s.index, s.isWordLike]));
t('wordsOther', () => [...w.segment('Привет мир. Γειά σου, κόσμε! naïve café 1,000,000 items')].map((s) => [s.segment, s.isWordLike]));
t('wordCount', () => ['The quick brown fox jumps over the lazy dog.', '  spaced   out  ', "don't stop-believing"].map((s) => [...w.segment(s)].filter((x) => x.isWordLike).length));
t('sentences', () => [...new Intl.Segmenter('en', { granularity: 'sentence' }).segment('Hi there. How are you? Fine!  The end')].map((s) => s.segment));
t('containing', () => { const s = w.segment('ab cd'); return [s.containing(3), s.containing(0), s.containing(2), s.containing(9)]; });
t('segResolved', () => [g.resolvedOptions(), w.resolvedOptions()]);
t('segKeys', () => Object.keys([...w.segment('ab')][0]));
t('misc', () => [Intl.getCanonicalLocales(['EN-us', 'en']), Intl.NumberFormat.supportedLocalesOf(['en-US', 'en']), Object.prototype.toString.call(Intl),
  Object.prototype.toString.call(new Intl.NumberFormat()), typeof Intl.DateTimeFormat.prototype.formatToParts]);
export default out;
