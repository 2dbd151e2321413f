#!/bin/sh
# fetch.sh DIR: puts tc39's test262 at the commit that QuickJS pins (its
# Makefile's TEST262_COMMIT) in DIR (default: ./suite beside this script),
# and QuickJS's own list of the tests it fails (test262_errors.txt) and its
# configuration (test262.conf) at the QuickJS commit the engine is built
# from, in DIR/quickjs/. Nothing it brings is committed (.gitignore).
#
# Sources, first that is set:
#   TEST262_SRC  a local git directory of tc39/test262 that has the commit
#   otherwise    https://github.com/tc39/test262 (a shallow fetch of the commit)
#   QUICKJS_SRC  a local git directory of bellard/quickjs (as for build.sh)
#   otherwise    https://github.com/bellard/quickjs (a shallow fetch)
#
# Then: go test ./internal/test262 -test262 DIR (see CONFORMANCE.md).
set -eu
TEST262_COMMIT=5c8206929d81b2d3d727ca6aac56c18358c8d790
QUICKJS_COMMIT=d73189dd5a582c19c565774bd56fed4e72d33c99
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/suite}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gitdir URL COMMIT: prints a git directory holding COMMIT, from URL.
shallow() {
	git init -q --bare "$tmp/$2"
	git -C "$tmp/$2" fetch -q --depth 1 "$1" "$2"
	echo "$tmp/$2"
}

if [ -n "${TEST262_SRC:-}" ]; then t262=$TEST262_SRC; else t262=$(shallow https://github.com/tc39/test262.git $TEST262_COMMIT); fi
rm -rf "$dir/test" "$dir/harness"
git -C "$t262" archive "$TEST262_COMMIT" test harness | tar -x -C "$dir"
echo "$TEST262_COMMIT" >"$dir/COMMIT"

if [ -n "${QUICKJS_SRC:-}" ]; then qjs=$QUICKJS_SRC; else qjs=$(shallow https://github.com/bellard/quickjs.git $QUICKJS_COMMIT); fi
if [ -d "$qjs/.git" ]; then qjs=$qjs/.git; fi
mkdir -p "$dir/quickjs"
git -C "$qjs" show "$QUICKJS_COMMIT:test262_errors.txt" >"$dir/quickjs/test262_errors.txt"
git -C "$qjs" show "$QUICKJS_COMMIT:test262.conf" >"$dir/quickjs/test262.conf"
pinned=$(git -C "$qjs" show "$QUICKJS_COMMIT:Makefile" | sed -n 's/^TEST262_COMMIT?=//p')
if [ "$pinned" != "$TEST262_COMMIT" ]; then
	echo "fetch.sh: QuickJS $QUICKJS_COMMIT pins test262 at $pinned, not $TEST262_COMMIT" >&2
	exit 1
fi
echo "test262 $TEST262_COMMIT in $dir ($(find "$dir/test" -name '*.js' | wc -l) files)"
