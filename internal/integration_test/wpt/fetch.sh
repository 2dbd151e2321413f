#!/bin/sh
# fetch.sh DIR: puts the web-platform-tests' encoding and base64 (atob,
# btoa) testharness tests that TestWebPlatformTests_EncodingAndBase64 runs
# in DIR (default: ./suite beside this script), in the suite's own layout
# (DIR/encoding/..., DIR/html/webappapis/atob/..., DIR/common/...), with
# every file their "// META: script=" lines name and the data base64.any.js
# fetches. The commits are those nodejs/node vendors
# (test/fixtures/wpt/versions.json): encoding at ENCODING_COMMIT,
# html/webappapis/atob at ATOB_COMMIT, fetch/data-urls/resources at
# DATA_URLS_COMMIT; a META script comes from its test's commit. DIR/COMMITS
# lists what came from where. Nothing it brings is committed (.gitignore).
# WPT_RAW_BASE replaces the base URL (a mirror laid out as
# BASE/COMMIT/PATH; file:// URLs work).
#
# Then: go test ./internal/integration_test -run TestWebPlatformTests_EncodingAndBase64 -wpt DIR
# (see CONFORMANCE.md, "The web-platform-tests: encoding and base64").
set -eu
ENCODING_COMMIT=1ac8deee082ecfb5d3b6f9c56cf9d1688a2fc218
ATOB_COMMIT=f267e1dca6f57a9f4d69f32a6920adfdb3268656
DATA_URLS_COMMIT=7c79d998ff42e52de90290cb847d1b515b3b58f7
BASE=${WPT_RAW_BASE:-https://raw.githubusercontent.com/web-platform-tests/wpt}

# the test files (wpt_test.go's wptFiles)
ENCODING_TESTS="api-basics api-invalid-label api-replacement-encodings api-surrogates-utf8 encodeInto
textdecoder-arguments textdecoder-byte-order-marks textdecoder-copy textdecoder-eof textdecoder-fatal
textdecoder-fatal-streaming textdecoder-fatal-single-byte textdecoder-ignorebom textdecoder-labels
textdecoder-streaming textdecoder-utf16-surrogates textencoder-constructor-non-utf
textencoder-utf16-surrogates unsupported-encodings replacement-encodings"

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/suite}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
: >"$dir/COMMITS"

# get COMMIT PATH: fetches PATH (from the suite's root) at COMMIT, once.
get() {
	if grep -q " $2\$" "$dir/COMMITS"; then return 0; fi
	mkdir -p "$dir/$(dirname "$2")"
	curl -fsSL --retry 3 -o "$dir/$2" "$BASE/$1/$2"
	echo "$1 $2" >>"$dir/COMMITS"
}

# normalize PATH: PATH with its "." and ".." segments resolved.
normalize() {
	echo "$1" | awk -F/ '{
		n = 0
		for (i = 1; i <= NF; i++) {
			if ($i == "" || $i == ".") continue
			if ($i == "..") { if (n > 0) n--; continue }
			seg[++n] = $i
		}
		out = seg[1]
		for (i = 2; i <= n; i++) out = out "/" seg[i]
		print out
	}'
}

# test COMMIT PATH: fetches a test file and the META scripts it names.
test_file() {
	get "$1" "$2"
	for s in $(sed -n 's|^//[[:space:]]*META:[[:space:]]*script=\([^[:space:]]*\).*$|\1|p' "$dir/$2"); do
		case "$s" in
		/*) p=${s#/} ;;
		*) p=$(dirname "$2")/$s ;;
		esac
		get "$1" "$(normalize "$p")"
	done
}

for t in $ENCODING_TESTS; do
	test_file "$ENCODING_COMMIT" "encoding/$t.any.js"
done
# the table of encodings and labels, which the runner reads too (which
# labels are of encodings the sandbox does not have)
get "$ENCODING_COMMIT" encoding/resources/encodings.js
test_file "$ATOB_COMMIT" html/webappapis/atob/base64.any.js
# base64.any.js fetches ../../../fetch/data-urls/resources/base64.json
get "$DATA_URLS_COMMIT" fetch/data-urls/resources/base64.json

echo "web-platform-tests: $(wc -l <"$dir/COMMITS") files in $dir"
