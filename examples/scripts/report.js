// Scans the `input` global and reports each flagged row; run with
//   airlock run --input '[{"id":1,"flagged":true},{"id":2}]' examples/scripts/report.js
for (const row of input) {
  if (row.flagged) report(row.id);
}
export default { scanned: input.length };
