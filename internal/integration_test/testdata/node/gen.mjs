// gen.mjs writes node.json: the default export of each program here (*.js),
// as Node 20 computes it, in UTC. TestNodeDifferential runs the same
// programs in Airlock and compares value for value. Regenerate with
//
//	cd testdata/node && TZ=UTC node gen.mjs > node.json
//
// (or `go generate` in the module's root).
import { readdirSync } from 'node:fs';

if (process.env.TZ !== 'UTC') throw new Error('run with TZ=UTC: the sandbox keeps its dates in UTC');
const out = { node: process.version, icu: process.versions.icu, programs: {} };
for (const f of readdirSync('.').filter((f) => f.endsWith('.js')).sort()) {
  const m = await import('./' + f);
  let v = m.default;
  if (typeof v === 'function') v = await v();
  out.programs[f.slice(0, -3)] = JSON.parse(JSON.stringify(v));
}
console.log(JSON.stringify(out, null, 1));
