// The glue of the timers: called with sleep (an async host function
// that resolves after so many milliseconds, and never once the run has
// ended), it gives setTimeout, setInterval, clearTimeout and
// clearInterval. The timers live here, in a map by id; the host is asked
// to wake the sandbox for the earliest of them only (a new earlier timer
// asks again), so that a thousand timers are a few host calls. Timers are
// fired in the order of their time, then of their creation. A callback's
// error is thrown again in a microtask, as an uncaught error is in Node.
// A timer still pending when the run ends never fires.
(raw) => {
  const sleep = raw;
  const now = Date.now, MapC = Map, TypeErrorC = TypeError, apply = Reflect.apply;
  const mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapDelete = Map.prototype.delete;
  const mapValues = Map.prototype.values, sort = Array.prototype.sort;
  const queue = queueMicrotask;
  const timers = new MapC();
  let nextId = 1;
  const asleep = []; // the times of the waits in flight
  const delayOf = (ms) => {
    const d = +ms;
    return d >= 0 && d <= 2147483647 ? Math.trunc(d) : 0;
  };
  const arm = () => {
    let earliest = Infinity;
    for (const t of apply(mapValues, timers, [])) if (t.due < earliest) earliest = t.due;
    if (earliest === Infinity) return;
    for (let i = 0; i < asleep.length; i++) if (asleep[i] <= earliest) return; // a wait ends in time
    asleep[asleep.length] = earliest;
    sleep(Math.max(0, earliest - apply(now, undefined, []))).then((woke) => {
      asleep.splice(asleep.indexOf(earliest), 1);
      if (woke) fire();
    });
  };
  const fire = () => {
    const at = apply(now, undefined, []);
    const due = [];
    for (const t of apply(mapValues, timers, [])) if (t.due <= at) due[due.length] = t;
    apply(sort, due, [(a, b) => a.due - b.due || a.id - b.id]);
    for (const t of due) {
      if (apply(mapGet, timers, [t.id]) !== t) continue; // cleared by an earlier callback
      if (t.every === null) apply(mapDelete, timers, [t.id]);
      else t.due = at + t.every;
      try {
        apply(t.callback, undefined, t.args);
      } catch (e) {
        queue(() => {
          throw e;
        });
      }
    }
    arm();
  };
  const add = (callback, ms, args, repeat) => {
    if (typeof callback !== "function") {
      throw new TypeErrorC('The "callback" argument must be of type function (the sandbox runs no code from strings)');
    }
    const d = delayOf(ms);
    const id = nextId++;
    apply(mapSet, timers, [id, { id, callback, args, due: apply(now, undefined, []) + d, every: repeat ? Math.max(d, 1) : null }]);
    arm();
    return id;
  };
  const clear = (id) => {
    apply(mapDelete, timers, [+id]);
  };
  return {
    setTimeout: function setTimeout(callback, ms = 0, ...args) { return add(callback, ms, args, false); },
    setInterval: function setInterval(callback, ms = 0, ...args) { return add(callback, ms, args, true); },
    clearTimeout: function clearTimeout(id = undefined) { clear(id); },
    clearInterval: function clearInterval(id = undefined) { clear(id); },
  };
}
