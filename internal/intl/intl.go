// Package intl is the sandbox's Intl: ECMA-402's constructors and the
// toLocale* methods, in JavaScript (intl.js, evaluated once into the
// engine's snapshot, so that no sandbox pays for it at start), over two
// host operations answered in Go (Call): collation, as
// golang.org/x/text/collate orders strings (ICU's root collation and its
// tailorings; at most 64 KiB of each, a long collation abandoned at the
// run's stop), and time zone offsets, from Go's zone data (the host's, or
// the copy time/tzdata embeds), for the zone names of the IANA database Go
// ships only (zones.go): no name of the host's configuration.
//
// Formatting follows Node 20 (ICU) for English; other locales fall back
// to en-US, and resolvedOptions().locale says so. Collation honours the
// tailorings of every language x/text/collate has tables for.
package intl

import _ "embed"

// Source is the Intl script: a function expression to be called with
// Intl's host function, which it calls as host(op, args...) for Call (the
// engine's kernel operation OP_INTL, internal/qjs/shim/kernel.h).
//
//go:embed intl.js
var Source string
