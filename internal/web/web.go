// Package web is the sandbox's part of the web platform: TextEncoder,
// TextDecoder (UTF-8 and UTF-16LE, with fatal, ignoreBOM and streaming),
// atob, btoa, DOMException, Event, EventTarget, AbortController,
// AbortSignal, Headers, Blob, URLSearchParams, URL, Request and Response
// (bodies in memory), performance (now and timeOrigin) and crypto (random
// values and digests), after the WHATWG Encoding, HTML, DOM, Fetch and URL
// specifications, the File API, High Resolution Time, Web Cryptography and
// WebIDL. They compute and reach nothing of the host but its entropy and
// its digests (Call). It is JavaScript (web.js), evaluated once into the
// engine's snapshot, so that no sandbox pays for it at start.
package web

import _ "embed"

// Source is the script: a function expression to be called with the
// engine's host function for Intl and the web (its operations "web." and
// a name are Call's), which defines the globals.
//
//go:embed web.js
var Source string
