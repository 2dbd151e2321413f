// Dates as a model prints them: toLocale* with and without options,
// Intl.DateTimeFormat across time zones, styles, parts, and errors.
const d = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678));
const summer = new Date(Date.UTC(2024, 6, 15, 12, 0, 0));
const out = {};
const t = (k, f) => { try { out[k] = f(); } catch (e) { out[k] = `${e.name}: ${e.message}`; } };
t('defaults', () => [d.toLocaleString(), d.toLocaleDateString(), d.toLocaleTimeString(), summer.toLocaleString('en-US'), new Date(NaN).toLocaleString()]);
const opts = [{}, { hour: 'numeric' }, { hour: 'numeric', hour12: false }, { hour: '2-digit', minute: '2-digit' },
  { hour: 'numeric', minute: '2-digit', hour12: false }, { hour: '2-digit', minute: '2-digit', hour12: false }, { minute: '2-digit' },
  { second: 'numeric' }, { minute: '2-digit', second: '2-digit' }, { hour: 'numeric', minute: 'numeric', second: 'numeric', fractionalSecondDigits: 3 },
  { year: '2-digit', month: '2-digit', day: '2-digit' }, { month: 'long' }, { month: 'narrow' }, { weekday: 'narrow' }, { day: 'numeric' },
  { month: 'short', day: 'numeric', year: 'numeric', hour: 'numeric', minute: '2-digit' }, { weekday: 'long', hour: 'numeric' },
  { timeZoneName: 'short' }, { dateStyle: 'full' }, { dateStyle: 'long' }, { dateStyle: 'medium' }, { dateStyle: 'short' },
  { timeStyle: 'full' }, { timeStyle: 'long' }, { timeStyle: 'medium' }, { timeStyle: 'short' },
  { dateStyle: 'full', timeStyle: 'short' }, { dateStyle: 'medium', timeStyle: 'medium' }, { dateStyle: 'short', timeStyle: 'short' },
  { era: 'short' }, { hourCycle: 'h23', hour: 'numeric' }, { hourCycle: 'h11', hour: 'numeric', minute: 'numeric' },
  { weekday: 'short', month: 'numeric', day: 'numeric' }, { weekday: 'long', year: 'numeric', month: 'numeric', day: 'numeric' },
  { month: '2-digit', day: '2-digit' }, { year: 'numeric', month: '2-digit' }, { month: 'long', year: 'numeric', day: '2-digit' },
  { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }, { year: 'numeric', month: 'short', day: 'numeric', weekday: 'short' },
  { month: 'long', day: 'numeric' }, { year: 'numeric', month: 'long' }, { month: 'short', year: 'numeric' }];
t('options', () => opts.map((o) => [JSON.stringify(o), new Intl.DateTimeFormat('en-US', o).format(d)]));
const zones = ['UTC', 'America/New_York', 'America/Los_Angeles', 'America/Chicago', 'America/Denver', 'America/Phoenix', 'America/Anchorage',
  'Pacific/Honolulu', 'Europe/London', 'Europe/Paris', 'Europe/Berlin', 'Asia/Tokyo', 'Asia/Shanghai', 'Asia/Kolkata', 'Australia/Sydney',
  'America/Sao_Paulo', 'Asia/Dubai', 'Africa/Cairo', 'America/Toronto', 'Asia/Singapore', 'Europe/Moscow', 'Pacific/Auckland', 'Etc/GMT+5', 'Asia/Kathmandu'];
t('zones', () => zones.map((tz) => [tz, ...[d, summer].map((x) => [
  x.toLocaleString('en-US', { timeZone: tz, timeZoneName: 'short' }),
  x.toLocaleString('en-US', { timeZone: tz, dateStyle: 'full', timeStyle: 'long' }),
  new Intl.DateTimeFormat('en-US', { timeZone: tz, hour: 'numeric', minute: '2-digit', timeZoneName: 'long' }).format(x),
  new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'shortOffset' }).format(x),
  new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' }).format(x),
])]));
t('dstEdges', () => [Date.UTC(2024, 2, 10, 6, 59), Date.UTC(2024, 2, 10, 7, 0), Date.UTC(2024, 10, 3, 5, 59), Date.UTC(2024, 10, 3, 6, 0)]
  .map((ms) => new Date(ms).toLocaleString('en-US', { timeZone: 'America/New_York', timeZoneName: 'short' })));
t('parts', () => new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'America/Los_Angeles' }).formatToParts(d));
t('partsCustom', () => new Intl.DateTimeFormat('en-US', { weekday: 'long', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: 'Asia/Tokyo' }).formatToParts(d));
t('resolved', () => [new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York' }).resolvedOptions(),
  new Intl.DateTimeFormat('en-US', { hour: 'numeric', timeZone: 'utc' }).resolvedOptions(),
  new Intl.DateTimeFormat('en-US', { hour12: false, hour: 'numeric' }).resolvedOptions(),
  new Intl.DateTimeFormat('en-US', { dateStyle: 'short' }).resolvedOptions(),
  new Intl.DateTimeFormat().resolvedOptions().timeZone]);
t('midnight', () => [new Date(Date.UTC(2024, 6, 1, 0, 30)).toLocaleTimeString('en-US'), new Date(Date.UTC(2024, 6, 1, 12, 30)).toLocaleTimeString('en-US', { hour12: false }),
  new Date(Date.UTC(2024, 6, 1, 0, 30)).toLocaleTimeString('en-US', { hour12: false }), new Date(Date.UTC(2024, 6, 1, 0, 5)).toLocaleTimeString('en-US', { hourCycle: 'h23' })]);
t('mixed', () => [d.toLocaleDateString('en-US', { month: 'long' }), d.toLocaleTimeString('en-US', { hour: '2-digit' }), d.toLocaleTimeString('en-US', { weekday: 'long' }),
  d.toLocaleDateString('en-US', { hour: 'numeric' }), d.toLocaleString('en-US', { timeZone: 'Europe/London', timeZoneName: 'short' })]);
t('errZone', () => new Intl.DateTimeFormat('en-US', { timeZone: 'Mars/Base' }));
t('errInvalid', () => new Intl.DateTimeFormat('en-US').format(new Date(NaN)));
t('errStyle', () => new Intl.DateTimeFormat('en-US', { dateStyle: 'long', year: 'numeric' }));
t('ms', () => new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Kolkata', dateStyle: 'medium', timeStyle: 'medium' }).format(1700000000000));
t('schedule', () => ['2024-03-01T09:00:00Z', '2024-03-15T17:30:00Z', '2024-12-31T23:59:59Z'].map((s) => {
  const x = new Date(s);
  return ['America/New_York', 'Europe/Berlin', 'Asia/Tokyo'].map((tz) => x.toLocaleString('en-US', { timeZone: tz, weekday: 'short', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' }));
}));
export default out;
