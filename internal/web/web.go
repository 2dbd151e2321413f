// Package web is the sandbox's part of the web platform that computes and
// reaches nothing of the host: TextEncoder, TextDecoder (UTF-8 and
// UTF-16LE, with fatal, ignoreBOM and streaming), atob, btoa, DOMException,
// Event, EventTarget, AbortController, AbortSignal, Headers, Blob,
// URLSearchParams, URL, Request and Response (bodies in memory), and
// performance (now and timeOrigin), after the WHATWG Encoding, HTML, DOM,
// Fetch and URL specifications, the File API, High Resolution Time and
// WebIDL. It is JavaScript (web.js), evaluated once into the engine's
// snapshot, so that no sandbox pays for it at start.
package web

import _ "embed"

// Source is the script: a function expression to be called with no
// arguments, which defines the globals.
//
//go:embed web.js
var Source string
