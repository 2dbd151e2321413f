// peer.js runs the cases of the benchmark module's BenchmarkPeer in an SES
// compartment under Node: lockdown() once, then, for each round, a new
// Compartment with the host function as an endowment, evaluating the same
// loop as the Go side. It prints one JSON line:
//
//	{"case": "...", "calls": N, "rounds": R, "ns": [...], "cpu": [...]}
//
// ns holds each round's wall time per call, cpu its process CPU time (user
// and system, the collector's threads included) per call, in nanoseconds.
//
// Usage: node peer.js CASE ROUNDS (after `npm ci` in this directory).
// Cases: sync-int, sync-string, sync-id, sync-object, async, async-tick, cold.
import 'ses';

lockdown();

const [kind, roundsArg] = process.argv.slice(2);
const rounds = Math.max(1, Number(roundsArg) || 1);

// Each case: the endowed host function, the program, how many calls one
// evaluation makes, and the sum it must give.
const n = 100000;
const awaits = 10000;
const sum = (k) => (k * (k - 1)) / 2;
const cases = {
  'sync-int': {
    host: (x) => x,
    src: `(() => { let s = 0; for (let i = 0; i < ${n}; i++) s += host(i); return s; })()`,
    calls: n,
    want: sum(n),
  },
  'sync-string': {
    host: (s) => s,
    src: `(() => { let s = 0; for (let i = 0; i < ${n}; i++) s += host("hello").length; return s; })()`,
    calls: n,
    want: 5 * n,
  },
  'sync-id': {
    host: (id) => 'user-' + id,
    src: `(() => { let s = 0; for (let i = 0; i < ${n}; i++) s += host(i).length; return s; })()`,
    calls: n,
    want: Array.from({ length: n }, (_, i) => ('user-' + i).length).reduce((a, b) => a + b, 0),
  },
  'sync-object': {
    host: (o) => ({ n: o.n, tag: o.tag }),
    src: `(() => { let s = 0; for (let i = 0; i < ${n}; i++) s += host({ n: i, tag: 'x' }).n; return s; })()`,
    calls: n,
    want: sum(n),
  },
  async: {
    host: (x) => Promise.resolve(x),
    src: `(async () => { let s = 0; for (let i = 0; i < ${awaits}; i++) s += await host(i); return s; })()`,
    calls: awaits,
    want: sum(awaits),
  },
  // The same, the promise settled on the event loop's next turn, as a host
  // function doing I/O answers (the Go side's asynchronous call runs on a
  // goroutine of its own and settles through the run's event loop).
  'async-tick': {
    host: (x) => new Promise((resolve) => setImmediate(resolve, x)),
    src: `(async () => { let s = 0; for (let i = 0; i < ${awaits}; i++) s += await host(i); return s; })()`,
    calls: awaits,
    want: sum(awaits),
  },
  // A fresh compartment and a hello evaluated in it, as the Go side's
  // fresh sandbox runs a hello.
  cold: {
    host: (x) => x,
    src: `"hello, world"`,
    calls: 1,
    want: 'hello, world',
  },
};

const c = cases[kind];
if (!c) {
  console.error(`peer.js: unknown case ${JSON.stringify(kind)}; one of ${Object.keys(cases).join(', ')}`);
  process.exit(2);
}
const host = harden(c.host);

async function round() {
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const compartment = new Compartment({ globals: { host }, __options__: true });
  const got = await compartment.evaluate(c.src);
  const ns = Number(process.hrtime.bigint() - start);
  if (got !== c.want) {
    throw new Error(`${kind}: got ${got}, want ${c.want}`);
  }
  return [ns / c.calls, cpuNanos(cpu) / c.calls];
}

// cpuNanos is the process's CPU time since the reading since, in ns.
function cpuNanos(since) {
  const d = process.cpuUsage(since);
  return (d.user + d.system) * 1000;
}

// The cold start is timed over many compartments a round (one is below
// the clock's resolution); the others are one evaluation a round.
async function coldRound() {
  const m = 1000;
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < m; i++) {
    const got = new Compartment({ globals: { host }, __options__: true }).evaluate(c.src);
    if (got !== c.want) throw new Error(`cold: got ${got}`);
  }
  return [Number(process.hrtime.bigint() - start) / m, cpuNanos(cpu) / m];
}

const one = kind === 'cold' ? coldRound : round;
// Warm-up rounds, unreported: the JIT compiles the loop and the host
// function, as the Go side's first runs fill its caches.
for (let i = 0; i < 3; i++) await one();
const ns = [];
const cpu = [];
for (let i = 0; i < rounds; i++) {
  const [w, u] = await one();
  ns.push(w);
  cpu.push(u);
}
console.log(JSON.stringify({ case: kind, calls: c.calls, rounds, ns, cpu }));
