// The glue of fetch: called with the host function (an async host call
// that takes the request's parts and answers with the response's), it
// gives { fetch }, fetch(input, init) being: the sandbox's Request checks the arguments
// (URL, method, headers, body) as Fetch says, and the answer becomes a
// Response. An error of the host is a TypeError, as Node's "fetch failed",
// with the host's reason as its message; an aborted signal rejects with
// its reason (the host's request is left to end on its own).
(raw) => {
  const RequestC = Request, ResponseC = Response, TypeErrorC = TypeError, Uint8ArrayC = Uint8Array;
  const defineProperties = Object.defineProperties, PromiseC = Promise;
  const arrayBuffer = Request.prototype.arrayBuffer;
  const entries = Headers.prototype.entries;
  const apply = Reflect.apply;
  const nullBody = (s) => s === 101 || s === 103 || s === 204 || s === 205 || s === 304;
  const fetch = async function fetch(input, init = undefined) {
    const req = new RequestC(input, init);
    const signal = req.signal;
    if (signal.aborted) throw signal.reason;
    const headers = [];
    for (const kv of apply(entries, req.headers, [])) headers[headers.length] = [kv[0], kv[1]];
    const body = req.method === "GET" || req.method === "HEAD" ? null : new Uint8ArrayC(await apply(arrayBuffer, req, []));
    let answer;
    try {
      const call = raw({ method: req.method, url: req.url, headers, body, redirect: req.redirect });
      answer = await new PromiseC((resolve, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        call.then(resolve, reject);
      });
    } catch (e) {
      if (signal.aborted && e === signal.reason) throw e;
      throw new TypeErrorC("fetch failed: " + (e && e.message !== undefined ? e.message : String(e)));
    }
    const empty = nullBody(answer.status) || req.method === "HEAD";
    const res = new ResponseC(empty ? null : answer.body, {
      status: answer.status, statusText: answer.statusText, headers: answer.headers,
    });
    return defineProperties(res, {
      url: { value: answer.url, enumerable: false },
      redirected: { value: answer.redirected, enumerable: false },
    });
  };
  return { fetch };
}
