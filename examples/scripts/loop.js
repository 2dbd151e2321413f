// Never ends: the run is terminated by its timeout, as any run can be.
//   airlock run --timeout 200ms examples/scripts/loop.js
for (;;) {}
