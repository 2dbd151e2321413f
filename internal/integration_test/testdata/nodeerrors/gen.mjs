// gen.mjs writes node.json: each case of cases.js with what it throws in
// Node (the error's name and message). TestNodeErrorMessages compares
// Airlock's to it. Run it with Node 20 from this directory:
//
//	node gen.mjs > node.json
import cases from './cases.js';

const out = { node: process.version, cases: [] };
const seen = new Set();
for (const [name, src, lang = 'ts'] of cases) {
  if (seen.has(name)) throw new Error(`duplicate case ${name}`);
  seen.add(name);
  // A data: URL is an ES module, as Airlock runs every source; the comment
  // keeps two cases with the same text from sharing a cached module.
  const url = 'data:text/javascript,' + encodeURIComponent(`${src}\n// ${name}`);
  try {
    await import(url);
  } catch (e) {
    out.cases.push({ name, lang, src, want: { name: e.name, message: e.message } });
    continue;
  }
  throw new Error(`case ${name} does not throw`);
}
console.log(JSON.stringify(out, null, 1));
