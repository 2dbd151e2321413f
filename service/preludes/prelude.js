// Airlock's Node.js prelude: the functions the code calls. console output
// goes to the logs; results travel on their own pipe (fd 3), so nothing the
// code or its children print can corrupt them.
"use strict";
const __airlock = (() => {
  const net = require("net");
  const fs = require("fs");
  const socketPath = process.env.AIRLOCK_SOCKET || "";
  const install = process.env.AIRLOCK_ALLOW_INSTALL === "1";
  const maxCalls = Math.max(1, Number(process.env.AIRLOCK_MAX_CALLS) || 8);
  delete process.env.AIRLOCK_MAX_CALLS;
  const maxOutput = Number(process.env.AIRLOCK_MAX_OUTPUT) || 0;
  delete process.env.AIRLOCK_MAX_OUTPUT;
  delete process.env.AIRLOCK_SOCKET;
  delete process.env.AIRLOCK_ALLOW_INSTALL;
  // The jail's proxy port: each connection goes on to the server's proxy
  // on its socket (the jail has no other way out). Neither the server nor
  // its connections keep the process alive: the code's own do.
  const proxySocket = process.env.AIRLOCK_PROXY_SOCKET || "";
  const proxyAddr = process.env.AIRLOCK_PROXY_ADDR || "";
  delete process.env.AIRLOCK_PROXY_SOCKET;
  delete process.env.AIRLOCK_PROXY_ADDR;
  if (proxySocket && proxyAddr) {
    const i = proxyAddr.lastIndexOf(":");
    const server = net.createServer((client) => {
      const up = net.createConnection(proxySocket);
      client.unref();
      up.unref();
      client.pipe(up);
      up.pipe(client);
      client.on("error", () => up.destroy());
      up.on("error", () => client.destroy());
    });
    server.on("error", () => {}); // the port taken: the code has no way out, and is told by its client
    server.listen(Number(proxyAddr.slice(i + 1)), proxyAddr.slice(0, i)).unref();
    // Node's own fetch through the proxy where Node does not read the
    // proxy variables itself (before 24 and 22.21: the server then runs
    // node with --expose-internals, for undici's EnvHttpProxyAgent).
    const emitWarning = process.emitWarning;
    try {
      const undici = require("internal/deps/undici/undici");
      process.emitWarning = () => {}; // (its "experimental" warning is not the code's)
      if (typeof undici.EnvHttpProxyAgent === "function") undici.setGlobalDispatcher(new undici.EnvHttpProxyAgent());
    } catch {
    } finally {
      process.emitWarning = emitWarning;
    }
  }
  const util = require("util");
  const toLogs = (...args) => { process.stderr.write(util.format(...args) + "\n"); };
  for (const k of ["log", "info", "warn", "error", "debug"]) console[k] = toLogs;
  // The jail has no /proc unless the operator mounts one (JailProc), and
  // process.memoryUsage() would throw reading the resident size there: it
  // then reports the peak resident size (getrusage) as rss, and arrayBuffers
  // as 0, which V8 does not report apart.
  if (!fs.existsSync("/proc/self/stat")) {
    const v8 = require("v8");
    const rss = () => process.resourceUsage().maxRSS * 1024;
    process.memoryUsage = Object.assign(() => {
      const h = v8.getHeapStatistics();
      return { rss: rss(), heapTotal: h.total_heap_size, heapUsed: h.used_heap_size, external: h.external_memory, arrayBuffers: 0 };
    }, { rss });
  }
  // ask sends one request to the server on the socket and gives its answer.
  const ask = (request) => new Promise((resolve, reject) => {
    const s = net.createConnection(socketPath);
    let buf = "";
    s.setEncoding("utf8");
    s.on("connect", () => s.write(JSON.stringify(request) + "\n"));
    s.on("data", (d) => { buf += d; });
    s.on("error", reject);
    s.on("end", () => {
      try { resolve(JSON.parse(buf || "{}")); } catch (e) { reject(e); }
    });
  });
  const call = async (name, args) => {
    if (typeof name !== "string" || name === "") throw new TypeError("callTool: the tool name must be a non-empty string");
    const resp = await ask({ name, args: args === undefined || args === null ? {} : args });
    if (resp.error) throw new Error(`Tool '${name}' failed: ${resp.error}`);
    let data = resp.data;
    if (typeof data === "string") { try { data = JSON.parse(data); } catch { /* a plain string */ } }
    return data;
  };
  return {
    callTool: (name, args) => call(name, args),
    // At most maxCalls at once (the server answers no more); results keep
    // the order of the calls, and the first failure rejects.
    callToolsParallel: async (calls) => {
      const list = Array.from(calls);
      const out = new Array(list.length);
      let next = 0;
      const worker = async () => { while (next < list.length) { const i = next++; out[i] = await call(list[i][0], list[i][1]); } };
      await Promise.all(Array.from({ length: Math.min(maxCalls, list.length) }, worker));
      return out;
    },
    setResult: (data, files) => {
      if (typeof files === "string") files = [files];
      const line = JSON.stringify({ data: data === undefined ? null : data, files: Array.from(files || []) });
      if (maxOutput && line.length > maxOutput) {
        throw new RangeError(`the result is ${line.length} bytes of JSON, over the output cap of ${maxOutput} bytes: return less, or write it to a file and declare the file`);
      }
      fs.writeSync(3, line + "\n");
    },
    // A stack without the lines of the prelude's wrapper and Node's own.
    stack: (e) => String(e && e.stack || e).split("\n").filter((l) => !/\((node:internal|\/run\/airlock\/prelude\.js)|at node:internal|^\s+at (Module\.|Object\.<anonymous> \(node:)/.test(l)).join("\n"),
    // The server installs it outside the jail, into the workspace's
    // node_modules, where require finds it.
    installPackage: async (name) => {
      if (!install) throw new Error("installPackage is disabled on this server (the operator enables it with --allow-install)");
      const resp = await ask({ install: String(name), manager: "npm" });
      if (resp.error) throw new Error(resp.error);
    },
  };
})();
module.exports = __airlock;
