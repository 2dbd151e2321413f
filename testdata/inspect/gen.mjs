// gen.mjs writes golden.json: for each case of cases.json, the text Node's
// util.inspect gives for its value on one line (compact, no line width), as
// console.log gives it: a string at the top is printed as it is. Inspect's
// defaults are passed as options, so that Node and Airlock bound alike.
//
// Run it from this directory with Node 20 or later:  node gen.mjs
import { readFileSync, writeFileSync } from "node:fs";
import { inspect } from "node:util";

const defaults = { depth: 8, maxArrayLength: 100, maxStringLength: 10000 };
const cases = JSON.parse(readFileSync("cases.json", "utf8"));
const out = cases.map((c) => {
  const value = (0, eval)(`(${c.js})`);
  const opts = { ...defaults, ...(c.options ?? {}), compact: true, breakLength: Infinity };
  const want = typeof value === "string" ? value : inspect(value, opts);
  return { ...c, want };
});
writeFileSync("golden.json", JSON.stringify(out, null, 2) + "\n");
