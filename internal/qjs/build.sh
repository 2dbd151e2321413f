#!/bin/sh
# build.sh builds the engine: QuickJS (pinned below) with our patches and
# shim, compiled to wasm32-wasi (reactor), instrumented with stop checks
# and depth checks, and translated to Go (qjsgo/qjs.go, with its identity in
# qjsgo/qjs_sum.go, and its data section in qjs.data).
#
# Toolchain (Debian 12):
#   apt-get update && apt-get install -y clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32
# and Go (for the stopcheck step).
#
# The QuickJS source, in this order:
#   QUICKJS_SRC=/path/to/bare/or/work/git/dir   git archive of the pinned commit
#   QUICKJS_SRC=/path/to/source/directory       a checkout or unpacked tarball
#   (unset)                                     the pinned tarball from GitHub (curl)
# Every file used is checked against quickjs.sha256 before anything is built.
#
# GOOUT (default ./qjsgo/qjs.go) names the Go output (its identity goes
# beside it, in *_sum.go), DATA (default ./qjs.data) the data.
# STOPCHECK_FLAGS=-nochecks builds the module without loop checks, and
# QJS_OPT (default -O2) replaces the optimisation level of QuickJS's and
# the shim's files, only to measure another level (BENCHMARKS.md). The same
# inputs give byte-identical outputs (build_test.go checks them against the
# committed ones).
set -eu

QUICKJS_REPO=bellard/quickjs
QUICKJS_COMMIT=d73189dd5a582c19c565774bd56fed4e72d33c99
CC=${CC:-clang-19}
OPT=${QJS_OPT:--O2}
STACK=1048576 # the wasm shadow stack, bytes; wasmvm's MaxStack leaves room under it

HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:-$HERE/qjs.data}
GOOUT=${GOOUT:-$HERE/qjsgo/qjs.go}
DEPTH=100000 # the bound of every cycle of the call graph in the Go build (stopcheck -depth)
FILES=$(awk '{print $2}' "$HERE/quickjs.sha256")

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/quickjs
mkdir -p "$SRC"

if [ -n "${QUICKJS_SRC:-}" ] && git --git-dir="$QUICKJS_SRC" rev-parse --git-dir >/dev/null 2>&1 &&
	git --git-dir="$QUICKJS_SRC" cat-file -e "$QUICKJS_COMMIT^{commit}" 2>/dev/null; then
	git --git-dir="$QUICKJS_SRC" archive "$QUICKJS_COMMIT" $FILES | tar -x -C "$SRC"
elif [ -n "${QUICKJS_SRC:-}" ] && [ -d "$QUICKJS_SRC/.git" ]; then
	git --git-dir="$QUICKJS_SRC/.git" archive "$QUICKJS_COMMIT" $FILES | tar -x -C "$SRC"
elif [ -n "${QUICKJS_SRC:-}" ] && [ -f "$QUICKJS_SRC/quickjs.c" ]; then
	for f in $FILES; do cp "$QUICKJS_SRC/$f" "$SRC/$f"; done
elif [ -z "${QUICKJS_SRC:-}" ]; then
	curl -fsSL "https://github.com/$QUICKJS_REPO/archive/$QUICKJS_COMMIT.tar.gz" |
		tar -xz -C "$SRC" --strip-components=1
else
	echo "build.sh: QUICKJS_SRC=$QUICKJS_SRC has neither commit $QUICKJS_COMMIT nor quickjs.c" >&2
	exit 1
fi
(cd "$SRC" && sha256sum -c --quiet "$HERE/quickjs.sha256") || {
	echo "build.sh: the QuickJS source does not match quickjs.sha256 (commit $QUICKJS_COMMIT)" >&2
	exit 1
}
for p in "$HERE"/patches/*.patch; do
	patch -s -p1 -d "$SRC" <"$p"
done

# A private sysroot: Debian's wasi-libc lives in /usr/{include,lib}/wasm32-wasi;
# a sysroot of /usr would let clang fall back to the host's glibc headers.
mkdir -p "$WORK/sysroot/include" "$WORK/sysroot/lib"
ln -s /usr/include/wasm32-wasi "$WORK/sysroot/include/wasm32-wasi"
ln -s /usr/lib/wasm32-wasi "$WORK/sysroot/lib/wasm32-wasi"

CFLAGS="--target=wasm32-wasi --sysroot=$WORK/sysroot -mnontrapping-fptoint -msign-ext
	-D_GNU_SOURCE -DCONFIG_VERSION=\"$(cat "$SRC/VERSION")\" -D_WASI_EMULATED_SIGNAL -DNDEBUG
	-ffile-prefix-map=$WORK=. -fno-ident -Wno-everything -I$SRC -I$HERE/shim/compat"
# Everything but bulk.c without bulk memory: a variable-size memcpy, memmove or
# memset then calls bulk.c's, which copies and fills in chunks with a stop
# check between them (one memory.copy/memory.fill does not stop; RATIONALE.md,
# "Stops during large copies and fills"). bulk.c itself uses the instructions.
NOBULK=-mno-bulk-memory
mkdir -p "$WORK/obj"
# Optimised for speed (-O2): the Go translation runs the 100k-object workload
# ~20% faster than at -Os, which wazero's load time had chosen when it was
# the default (RATIONALE.md, "Optimised for speed again").
for f in quickjs libregexp libunicode cutils dtoa; do
	$CC $CFLAGS $NOBULK $OPT -c "$SRC/$f.c" -o "$WORK/obj/$f.o"
done
# The shim, one file per concept (shim/shim.c lists them).
SHIM="shim memory realm hostcall module run session failure console inspect"
for f in $SHIM codec; do
	$CC $CFLAGS $NOBULK $OPT -c "$HERE/shim/$f.c" -o "$WORK/obj/$f.o"
done
$CC $CFLAGS -mbulk-memory -fno-builtin -O2 -c "$HERE/shim/bulk.c" -o "$WORK/obj/bulk.o"
# The objects linked with the memory imported (env.memory: the host gives
# it, backed by its own allocator), instrumented with the stop checks and
# a depth check on every cycle of the call graph, the data section taken
# out (to DATA), then translated to Go by wasm2go (pinned by the tool line
# in go.mod): the package internal/wasmvm runs (RATIONALE.md, "The engine
# as Go code").
$CC --target=wasm32-wasi --sysroot="$WORK/sysroot" $OPT -mexec-model=reactor \
	-Wl,--strip-debug -Wl,-z,stack-size=$STACK -Wl,--stack-first -Wl,--import-memory \
	-Wl,--export=qjs_ctl -Wl,--export=__stack_pointer -Wl,--export=__heap_base -Wl,--export=__data_end \
	"$WORK/obj/quickjs.o" "$WORK/obj/libregexp.o" "$WORK/obj/libunicode.o" \
	"$WORK/obj/cutils.o" "$WORK/obj/dtoa.o" $(for f in $SHIM; do printf '%s ' "$WORK/obj/$f.o"; done) \
	"$WORK/obj/codec.o" "$WORK/obj/bulk.o" \
	-o "$WORK/raw.wasm"
(cd "$HERE/../.." && go run ./internal/qjs/stopcheck ${STOPCHECK_FLAGS:-} -nostart -depth $DEPTH -data "$DATA" "$WORK/raw.wasm" "$WORK/qjs.wasm")
ls -l "$DATA"
mkdir -p "$(dirname "$GOOUT")"
(cd "$HERE/../.." && go tool wasm2go -unsafe -pkg qjsgo -o "$WORK/qjs.go" "$WORK/qjs.wasm")
# Every function of the module (its methods) is marked //go:norace and
# //go:nocheckptr (-race turns checkptr on): the guest is one goroutine's
# at a time, and the race detector's instrumentation made its code ~20
# times slower. The small helpers (loads, stores, shifts) lose their
# //go:nosplit, which under checkptr keeps a function from being inlined:
# inlined, they are part of the marked methods (RATIONALE.md, "The engine
# as Go code: the default"). gofmt puts back the blank lines between
# functions that the marks need.
sed -e 's|^func (m \*Module) |//go:norace\n//go:nocheckptr\nfunc (m *Module) |' -e '/^\/\/go:nosplit$/d' "$WORK/qjs.go" >"$WORK/qjs-marked.go"
gofmt "$WORK/qjs-marked.go" >"$GOOUT"
# The module's identity, which keys the snapshot images cached on disk.
SUM=$(sha256sum "$WORK/qjs.wasm" | cut -d' ' -f1)
printf '// Code generated by internal/qjs/build.sh. DO NOT EDIT.\n\npackage qjsgo\n\n// Sum is the SHA-256 of the module translated into this package.\nconst Sum = "%s"\n' "$SUM" >"${GOOUT%.go}_sum.go"
ls -l "$GOOUT" "${GOOUT%.go}_sum.go"
