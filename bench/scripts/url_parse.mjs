// The URL parser's speed in the sandbox, in µs per URL (BENCHMARKS.md, "With
// URL, Request and Response"):
//
//	go run ./cmd/airlock run bench/scripts/url_parse.mjs
//
// Node runs the same file for the peer: node bench/scripts/url_parse.mjs
const T = (s, base, n = 2000) => {
  const t = Date.now();
  for (let i = 0; i < n; i++) new URL(s, base);
  return ((Date.now() - t) * 1000) / n;
};
const out = {
  opaque: T("a:b"),
  http: T("http://h"),
  host56: T("http://" + "h".repeat(56)),
  path52: T("http://h/" + "p".repeat(52)),
  query52: T("http://h/?" + "q".repeat(52)),
  ipv4: T("http://1.2.3.4"),
  relative: T("x", "http://h/"),
  api70: T("https://api.example.com/v1/users/1?fields=name,email&page=2#top"),
};
if (typeof process !== "undefined") console.log(out);
export default out;
