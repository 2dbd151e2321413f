/*
 * shim.c: the C side of Airlock's engine. QuickJS compiled to wasm32-wasi
 * (reactor) exports these functions to the Go host in internal/wasmvm; a
 * sandbox calls its functions through one of them, qjs_entry (at the end).
 *
 * Control block. One static struct, qjs_ctl, at an address exported as the
 * global "qjs_ctl". The host reads and writes it directly:
 *   stop      the host stores non-zero to stop the guest. Checked by
 *             QuickJS's interrupt handler (bytecode) and by the host's
 *             env.tick, which the build's instrumentation step (stopcheck)
 *             calls from every loop header of the module (but the
 *             interpreter's, which polls the interrupt handler) once every
 *             10,000 iterations: the guest traps with "unreachable" soon
 *             after, inside QuickJS's native loops too.
 *   oom       sticky: set when an allocation was refused (the heap limit or
 *             memory.grow). The shim also sets stop, so the program cannot
 *             go on after catching the RangeError/InternalError.
 *   heap_limit, heap_used   bytes of QuickJS's heap (0 limit = none).
 *   res_*     the result of the last qjs_eval/qjs_run_jobs.
 *
 * Host calls. qjs_def_host_func defines a global function; calling it
 * encodes the arguments as slots (struct slot) in a guest buffer and calls
 * the import env.host_call(fn, argv, argc). The host answers with a slot in
 * qjs_ctl.ret; the text of strings and JSON comes in a buffer the call
 * offered (answer_buf) when it fits, else it is fetched with
 * env.host_result(ptr) into a buffer the guest allocated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include "quickjs.h"

#define EXPORT(name) __attribute__((export_name(#name), visibility("default")))
#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))

/* Slot tags: the value kinds that cross in both directions. */
enum {
    TAG_UNDEFINED = 0,
    TAG_NULL = 1,
    TAG_FALSE = 2,
    TAG_TRUE = 3,
    TAG_NUMBER = 4,
    TAG_STRING = 5, /* UTF-8 text, ptr/len */
    TAG_JSON = 6,   /* JSON text, ptr/len */
    TAG_ERROR = 7,  /* host -> guest only: throw Error(text) */
    /* host -> kernel only: the kernel's replies [0, wire], [1, message],
       [2, id] (see js_kernel_host) */
    TAG_REPLY_WIRE = 8,
    TAG_REPLY_ERROR = 9,
    TAG_REPLY_ASYNC = 10,
    TAG_BYTES = 11, /* guest -> host only: an ArrayBuffer's bytes, ptr/len (the
                       kernel's encoded values, codec.c) */
};

struct slot {
    int32_t tag;
    uint32_t len;
    union {
        double num;
        uint32_t ptr;
    } u;
};

/* Result status of qjs_eval / qjs_run_jobs. */
enum {
    RES_OK = 0,        /* res is the value, JSON (or TAG_UNDEFINED) */
    RES_EXCEPTION = 1, /* res is the thrown value's "stack" text */
    RES_PENDING = 2,   /* module/promise not settled after the jobs ran */
};

struct ctl {
    volatile int32_t stop; /* offset 0: must stay first (stopcheck reads it) */
    volatile int32_t oom;
    uint32_t heap_limit;
    uint32_t heap_used;
    int32_t res_status;
    struct slot res;
    struct slot ret; /* host call answer, written by the host */
    volatile int32_t soft; /* offset 56: stop the bytecode only (see kernel) */
    uint32_t heap_peak;    /* offset 60: the most heap_used since the host reset it */
    int64_t ops;           /* offset 64: what is left of a step's operation budget (see qjs_kernel_step) */
};

struct ctl qjs_ctl;

/* the Go side (internal/wasmvm/abi.go) reads these offsets */
_Static_assert(sizeof(struct slot) == 16, "slot");
_Static_assert(__builtin_offsetof(struct ctl, oom) == 4, "ctl.oom");
_Static_assert(__builtin_offsetof(struct ctl, heap_limit) == 8, "ctl.heap_limit");
_Static_assert(__builtin_offsetof(struct ctl, heap_used) == 12, "ctl.heap_used");
_Static_assert(__builtin_offsetof(struct ctl, res_status) == 16, "ctl.res_status");
_Static_assert(__builtin_offsetof(struct ctl, res) == 24, "ctl.res");
_Static_assert(__builtin_offsetof(struct ctl, ret) == 40, "ctl.ret");
_Static_assert(__builtin_offsetof(struct ctl, soft) == 56, "ctl.soft");
_Static_assert(__builtin_offsetof(struct ctl, heap_peak) == 60, "ctl.heap_peak");
_Static_assert(__builtin_offsetof(struct ctl, ops) == 64, "ctl.ops");

IMPORT("env", "host_call") extern int32_t host_call(int32_t fn, struct slot *argv, int32_t argc);
IMPORT("env", "host_result") extern void host_result(char *dst);
/* env.tick: called by the stop checks stopcheck puts at every loop header
   (each time a counter runs out) and by QuickJS's interrupt handler.
   Non-zero means stop. Besides deciding the stop, it brings the goroutine
   running the guest back into Go code regularly, where the Go runtime can
   preempt it (a garbage collection waits for that). */
IMPORT("env", "tick") extern int32_t host_tick(void);
/* env.load_module(name, len, what) -> status: what the host knows of the
   module name (normalized by env.normalize_module), fetched like a host
   call's text answer, its length in qjs_ctl.ret.len. what: 0 its source,
   1 the source to compile instead when the first does not compile, 2 its
   import.meta.url. Status: 0 the text, 1 an error message, 2 the native
   globals module of the kernel (the text: its export names, each ended by
   NUL), 3 none. */
IMPORT("env", "load_module") extern int32_t host_load_module(const char *name, uint32_t len, int32_t what);
/* env.normalize_module(base, blen, name, nlen) -> status: the name of the
   module that name, imported by module base, refers to; fetched as above.
   Status non-zero means the text is an error message. */
IMPORT("env", "normalize_module") extern int32_t host_normalize_module(const char *base, uint32_t blen,
                                                                        const char *name, uint32_t nlen);

EXPORT(qjs_malloc) void *qjs_malloc(uint32_t size) { return malloc(size); }
EXPORT(qjs_free) void qjs_free(void *p) { free(p); }
EXPORT(qjs_ctl_addr) struct ctl *qjs_ctl_addr(void) { return &qjs_ctl; }

/* ---- memory: QuickJS's heap, limited and accounted here ---- */

#define MALLOC_OVERHEAD 8

static void refuse(void)
{
    qjs_ctl.oom = 1;
    qjs_ctl.stop = 1;
}

static void *heap_malloc(JSMallocState *s, size_t size)
{
    void *p;
    if (qjs_ctl.heap_limit && s->malloc_size + size > qjs_ctl.heap_limit) {
        refuse();
        return NULL;
    }
    p = malloc(size);
    if (!p) {
        refuse();
        return NULL;
    }
    s->malloc_count++;
    s->malloc_size += malloc_usable_size(p) + MALLOC_OVERHEAD;
    qjs_ctl.heap_used = (uint32_t)s->malloc_size;
    if (qjs_ctl.heap_used > qjs_ctl.heap_peak)
        qjs_ctl.heap_peak = qjs_ctl.heap_used;
    return p;
}

static void heap_free(JSMallocState *s, void *p)
{
    if (!p)
        return;
    s->malloc_count--;
    s->malloc_size -= malloc_usable_size(p) + MALLOC_OVERHEAD;
    qjs_ctl.heap_used = (uint32_t)s->malloc_size;
    free(p);
}

static void *heap_realloc(JSMallocState *s, void *p, size_t size)
{
    size_t old;
    if (!p)
        return size ? heap_malloc(s, size) : NULL;
    old = malloc_usable_size(p);
    if (size == 0) {
        heap_free(s, p);
        return NULL;
    }
    if (qjs_ctl.heap_limit && s->malloc_size + size > qjs_ctl.heap_limit + old) {
        refuse();
        return NULL;
    }
    p = realloc(p, size);
    if (!p) {
        refuse();
        return NULL;
    }
    s->malloc_size += malloc_usable_size(p) - old;
    qjs_ctl.heap_used = (uint32_t)s->malloc_size;
    if (qjs_ctl.heap_used > qjs_ctl.heap_peak)
        qjs_ctl.heap_peak = qjs_ctl.heap_used;
    return p;
}

static size_t heap_usable_size(const void *p) { return malloc_usable_size((void *)p); }

static const JSMallocFunctions heap_funcs = {
    heap_malloc, heap_free, heap_realloc, heap_usable_size,
};

/* GC_GROWTH: how much the heap may grow, as a multiple of what a
   collection left, before the next one (QuickJS's own rule is 1.5). */
#define GC_GROWTH 3

/* js_gc_next_threshold (patch 0013) sets the next collection at GC_GROWTH
   times the heap a collection left, but never more than halfway from there
   to the heap limit, and never less than QuickJS's 1.5 times. A collection
   only frees cycles (reference counts free the rest) and scans the whole
   heap: a program that allocates much paid ~3 scans of its final heap at
   1.5x and pays ~1.5 at 3x (RATIONALE.md, "Fewer collections while the
   heap grows"). Halfway to the limit keeps a collection ahead of it. */
size_t js_gc_next_threshold(size_t heap)
{
    uint64_t h = heap, next = h * GC_GROWTH, lim = qjs_ctl.heap_limit;
    uint64_t halfway = h + (lim > h ? (lim - h) / 2 : 0);
    if (lim && next > halfway)
        next = halfway;
    if (next < h + h / 2)
        next = h + h / 2;
    return next > SIZE_MAX ? SIZE_MAX : (size_t)next;
}

/* ---- stops ---- */

static int interrupt_handler(JSRuntime *rt, void *opaque)
{
    (void)rt;
    (void)opaque;
    return qjs_ctl.stop != 0 || qjs_ctl.soft != 0 || host_tick() != 0;
}

/* ---- intrinsics ---- */

static JSValue js_microtask_job(JSContext *ctx, int argc, JSValueConst *argv)
{
    (void)argc;
    return JS_Call(ctx, argv[0], JS_UNDEFINED, 0, NULL);
}

static JSValue js_queue_microtask(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    (void)this_val;
    if (argc < 1 || !JS_IsFunction(ctx, argv[0]))
        return JS_ThrowTypeError(ctx, "queueMicrotask: callback is not a function");
    if (JS_EnqueueJob(ctx, js_microtask_job, 1, argv))
        return JS_EXCEPTION;
    return JS_UNDEFINED;
}

/* host_text fetches the text the host left for host_result, its length in
   qjs_ctl.ret.len, NUL-terminated, in QuickJS's heap; NULL (an exception
   pending) when out of memory. */
static char *host_text(JSContext *ctx, uint32_t *plen)
{
    uint32_t len = qjs_ctl.ret.len;
    char *buf = js_malloc(ctx, (size_t)len + 1);
    if (!buf)
        return NULL;
    host_result(buf);
    buf[len] = 0;
    if (plen)
        *plen = len;
    return buf;
}

static char *module_normalize(JSContext *ctx, const char *base, const char *name, void *opaque)
{
    int32_t r = host_normalize_module(base, (uint32_t)strlen(base), name, (uint32_t)strlen(name));
    char *buf = host_text(ctx, NULL);
    (void)opaque;
    if (!buf)
        return NULL;
    if (r != 0) {
        JS_ThrowTypeError(ctx, "module normalization failed: %s", buf);
        js_free(ctx, buf);
        return NULL;
    }
    return buf; /* QuickJS frees it */
}

static JSModuleDef *globals_module(JSContext *ctx, const char *name, char *names, uint32_t len);

/* compile_module compiles src as module name; NULL with an exception
   pending if it does not compile. */
static JSModuleDef *compile_module(JSContext *ctx, const char *name, const char *src, uint32_t len)
{
    JSValue func = JS_Eval(ctx, src, len, name, JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    JSModuleDef *m;
    if (JS_IsException(func))
        return NULL;
    m = JS_VALUE_GET_PTR(func);
    JS_FreeValue(ctx, func); /* QuickJS keeps the module in its list */
    return m;
}

static JSModuleDef *module_loader(JSContext *ctx, const char *name, void *opaque)
{
    uint32_t nlen = (uint32_t)strlen(name), len;
    int32_t r = host_load_module(name, nlen, 0);
    char *buf = host_text(ctx, &len);
    JSModuleDef *m;
    (void)opaque;
    if (!buf)
        return NULL;
    if (r == 2)
        return globals_module(ctx, name, buf, len); /* takes buf */
    if (r != 0) {
        JS_ThrowTypeError(ctx, "module load failed: %s", buf);
        js_free(ctx, buf);
        return NULL;
    }
    m = compile_module(ctx, name, buf, len);
    js_free(ctx, buf);
    if (!m) {
        /* the host may have another source to try (TypeScript compiled as
           JavaScript first) */
        r = host_load_module(name, nlen, 1);
        if (!(buf = host_text(ctx, &len)))
            return NULL;
        if (r == 0 || r == 1)
            JS_FreeValue(ctx, JS_GetException(ctx));
        if (r == 1)
            JS_ThrowTypeError(ctx, "module load failed: %s", buf);
        else if (r == 0)
            m = compile_module(ctx, name, buf, len);
        js_free(ctx, buf);
        if (!m)
            return NULL;
    }
    r = host_load_module(name, nlen, 2);
    if (!(buf = host_text(ctx, &len)))
        return NULL;
    if (r == 0 && len > 0) {
        JSValue meta = JS_GetImportMeta(ctx, m);
        if (JS_IsException(meta) ||
            JS_DefinePropertyValueStr(ctx, meta, "url", JS_NewStringLen(ctx, buf, len), JS_PROP_C_W_E) < 0)
            m = NULL;
        JS_FreeValue(ctx, meta);
    }
    js_free(ctx, buf);
    return m;
}

static int delete_global(JSContext *ctx, JSValueConst global, const char *name)
{
    JSAtom a = JS_NewAtom(ctx, name);
    int r = JS_DeleteProperty(ctx, global, a, 0);
    JS_FreeAtom(ctx, a);
    return r < 0 ? -1 : 0;
}

/* def_global defines globalThis[name] as the C function fn, named fname
   (what a stack trace shows), of length len, writable and configurable.
   Returns 0, or -1. codec.c's hooks use it too. */
int def_global(JSContext *ctx, JSValueConst global, const char *name, JSCFunction *fn, const char *fname, int len)
{
    return JS_DefinePropertyValueStr(ctx, global, name, JS_NewCFunction(ctx, fn, fname, len),
                                     JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0 ? -1 : 0;
}

/* qjs_vm_new makes a runtime and a context with the ECMAScript intrinsics
   only, string code generation disabled for good, and queueMicrotask. The
   JavaScript part of the hardening runs after it, from the host. Returns the
   context, or 0. */
EXPORT(qjs_vm_new) JSContext *qjs_vm_new(uint32_t max_stack)
{
    JSRuntime *rt = JS_NewRuntime2(&heap_funcs, NULL);
    JSContext *ctx;
    JSValue global;
    int err = 0;

    if (!rt)
        return NULL;
    JS_SetMaxStackSize(rt, max_stack);
    JS_SetInterruptHandler(rt, interrupt_handler, NULL);
    JS_SetOpCounter(rt, &qjs_ctl.ops);
    JS_SetModuleLoaderFunc(rt, module_normalize, module_loader, NULL);
    ctx = JS_NewContextRaw(rt);
    if (!ctx) {
        JS_FreeRuntime(rt);
        return NULL;
    }
    err |= JS_AddIntrinsicBaseObjects(ctx);
    err |= JS_AddIntrinsicDate(ctx);
    err |= JS_AddIntrinsicEval(ctx); /* the host's own JS_Eval needs it */
    err |= JS_AddIntrinsicStringNormalize(ctx);
    JS_AddIntrinsicRegExpCompiler(ctx);
    err |= JS_AddIntrinsicRegExp(ctx);
    err |= JS_AddIntrinsicJSON(ctx);
    err |= JS_AddIntrinsicProxy(ctx);
    err |= JS_AddIntrinsicMapSet(ctx);
    err |= JS_AddIntrinsicTypedArrays(ctx);
    err |= JS_AddIntrinsicPromise(ctx);
    err |= JS_AddIntrinsicWeakRef(ctx);
    JS_DisableStringCodeGen(ctx);
    global = JS_GetGlobalObject(ctx);
    err |= delete_global(ctx, global, "eval");
    err |= delete_global(ctx, global, "SharedArrayBuffer");
    err |= delete_global(ctx, global, "Atomics");
    err |= def_global(ctx, global, "queueMicrotask", js_queue_microtask, "queueMicrotask", 1);
    JS_FreeValue(ctx, global);
    if (err) {
        JS_FreeContext(ctx);
        JS_FreeRuntime(rt);
        return NULL;
    }
    return ctx;
}

EXPORT(qjs_vm_free) void qjs_vm_free(JSContext *ctx)
{
    JSRuntime *rt = JS_GetRuntime(ctx);
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
}

/* qjs_random_state is the address of Math.random's state (8 bytes, never
   zero): the host writes fresh random bytes there in every copy of an image,
   so that no two sandboxes share a sequence. */
EXPORT(qjs_random_state) uint64_t *qjs_random_state(JSContext *ctx) { return JS_GetRandomState(ctx); }

EXPORT(qjs_set_heap_limit) void qjs_set_heap_limit(uint32_t limit) { qjs_ctl.heap_limit = limit; }

/* ---- results ---- */

static void clear_res(void)
{
    if (qjs_ctl.res.tag == TAG_STRING || qjs_ctl.res.tag == TAG_JSON)
        free((void *)(uintptr_t)qjs_ctl.res.u.ptr);
    memset(&qjs_ctl.res, 0, sizeof(qjs_ctl.res));
}

static int set_res_text(int tag, const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (!p)
        return -1;
    memcpy(p, s, len);
    p[len] = 0;
    qjs_ctl.res.tag = tag;
    qjs_ctl.res.len = (uint32_t)len;
    qjs_ctl.res.u.ptr = (uint32_t)(uintptr_t)p;
    return 0;
}

static int set_res_string(JSContext *ctx, int tag, JSValueConst str)
{
    size_t len;
    const char *s = JS_ToCStringLen(ctx, &len, str);
    int r;
    if (!s)
        return -1;
    r = set_res_text(tag, s, len);
    JS_FreeCString(ctx, s);
    return r;
}

/* set_exception stores the pending exception's text: the "stack" of an
   Error ("Name: message\n    at ..."), or String(value). */
static void set_exception(JSContext *ctx)
{
    JSValue e = JS_GetException(ctx);
    JSValue s = JS_UNDEFINED;

    clear_res();
    qjs_ctl.res_status = RES_EXCEPTION;
    if (JS_IsError(ctx, e)) {
        JSValue msg = JS_ToString(ctx, e);
        JSValue stack = JS_GetPropertyStr(ctx, e, "stack");
        if (!JS_IsException(msg) && JS_IsString(stack)) {
            const char *m = JS_ToCString(ctx, msg);
            const char *st = JS_ToCString(ctx, stack);
            if (m && st) {
                size_t ml = strlen(m), sl = strlen(st);
                char *buf = malloc(ml + 1 + sl + 1);
                if (buf) {
                    memcpy(buf, m, ml);
                    buf[ml] = '\n';
                    memcpy(buf + ml + 1, st, sl + 1);
                    set_res_text(TAG_STRING, buf, ml + 1 + sl);
                    free(buf);
                }
            }
            JS_FreeCString(ctx, m);
            JS_FreeCString(ctx, st);
        } else if (!JS_IsException(msg)) {
            set_res_string(ctx, TAG_STRING, msg);
        }
        JS_FreeValue(ctx, msg);
        JS_FreeValue(ctx, stack);
    } else {
        s = JS_ToString(ctx, e);
        if (!JS_IsException(s))
            set_res_string(ctx, TAG_STRING, s);
        JS_FreeValue(ctx, s);
    }
    JS_FreeValue(ctx, e);
    if (qjs_ctl.res.tag == TAG_UNDEFINED) {
        /* converting the exception threw too (out of memory, a throwing
           toString): drop that one */
        JS_FreeValue(ctx, JS_GetException(ctx));
        set_res_text(TAG_STRING, "<exception>", 11);
    }
}

/* set_value stores v (consumed) as JSON, or TAG_UNDEFINED if it has none. */
static void set_value(JSContext *ctx, JSValue v)
{
    JSValue str;
    clear_res();
    qjs_ctl.res_status = RES_OK;
    if (JS_IsUndefined(v)) {
        JS_FreeValue(ctx, v);
        return;
    }
    str = JS_JSONStringify(ctx, v, JS_UNDEFINED, JS_UNDEFINED);
    JS_FreeValue(ctx, v);
    if (JS_IsException(str)) {
        set_exception(ctx);
        return;
    }
    if (JS_IsString(str) && set_res_string(ctx, TAG_JSON, str) < 0) {
        JS_FreeValue(ctx, str);
        set_exception(ctx);
        return;
    }
    JS_FreeValue(ctx, str);
}

/* run_jobs runs pending jobs until none is left; returns -1 after an
   exception (left pending in ctx). */
static int run_jobs(JSContext *ctx)
{
    JSContext *c1;
    for (;;) {
        int r = JS_ExecutePendingJob(JS_GetRuntime(ctx), &c1);
        if (r == 0)
            return 0;
        if (r < 0)
            return -1;
    }
}

/* settle stores the outcome of v (consumed): a settled promise gives its
   value or reason, a pending one RES_PENDING. */
static void settle(JSContext *ctx, JSValue v)
{
    if (JS_IsObject(v)) {
        JSPromiseStateEnum st = JS_PromiseState(ctx, v);
        if (st == JS_PROMISE_FULFILLED || st == JS_PROMISE_REJECTED) {
            JSValue r = JS_PromiseResult(ctx, v);
            JS_FreeValue(ctx, v);
            if (st == JS_PROMISE_REJECTED) {
                JS_Throw(ctx, r);
                set_exception(ctx);
                return;
            }
            set_value(ctx, r);
            return;
        }
        if (st == JS_PROMISE_PENDING) {
            JS_FreeValue(ctx, v);
            clear_res();
            qjs_ctl.res_status = RES_PENDING;
            return;
        }
    }
    set_value(ctx, v);
}

/* qjs_eval evaluates src[0:len] (NUL at src[len]) named filename as a
   script (module = 0) or an ES module (module = 1), runs the pending jobs,
   and stores the outcome in qjs_ctl.res_status/res. A script's value is its
   completion value; a module's is undefined (its evaluation promise). */
EXPORT(qjs_eval) int32_t qjs_eval(JSContext *ctx, const char *src, uint32_t len, const char *filename, int32_t module)
{
    int flags = module ? JS_EVAL_TYPE_MODULE : JS_EVAL_TYPE_GLOBAL;
    JSValue v = JS_Eval(ctx, src, len, filename, flags);
    if (JS_IsException(v)) {
        set_exception(ctx);
        return qjs_ctl.res_status;
    }
    if (run_jobs(ctx) < 0) {
        JS_FreeValue(ctx, v);
        set_exception(ctx);
        return qjs_ctl.res_status;
    }
    if (module) {
        /* the module's evaluation promise: its value is undefined */
        if (JS_IsObject(v) && JS_PromiseState(ctx, v) == JS_PROMISE_FULFILLED) {
            JS_FreeValue(ctx, v);
            v = JS_UNDEFINED;
        }
    }
    settle(ctx, v);
    return qjs_ctl.res_status;
}

/* qjs_run_jobs runs the pending jobs; RES_OK or RES_EXCEPTION. */
EXPORT(qjs_run_jobs) int32_t qjs_run_jobs(JSContext *ctx)
{
    clear_res();
    qjs_ctl.res_status = RES_OK;
    if (run_jobs(ctx) < 0)
        set_exception(ctx);
    return qjs_ctl.res_status;
}

/* qjs_gc runs the cycle collector and sets the next collection at 1.5x the
   heap left, as QuickJS does after a collection it triggers itself. A
   snapshot taken after it starts every copy with that threshold: taken
   before, each copy's first allocation ran a full collection (~1 ms). */
EXPORT(qjs_gc) void qjs_gc(JSContext *ctx)
{
    JSRuntime *rt = JS_GetRuntime(ctx);
    JS_RunGC(rt);
    JS_SetGCThreshold(rt, (size_t)qjs_ctl.heap_used + qjs_ctl.heap_used / 2);
}

/* qjs_prepare_snapshot readies the heap to be captured, so that what a
   copy allocates lands together in the headroom instead of on the
   image's scattered holes, a written page each (RATIONALE.md, "What a
   run writes of the image"). Flag 1: the image's small-block arenas are
   taken off QuickJS's lists (JS_PrepareSnapshot, patch 0009). Flag 2:
   every free chunk of malloc's below top (the headroom, just freed: the
   top chunk) is taken for good, so that a copy's new arenas and large
   blocks come from the top, one after another, and carving them touches
   no free chunk of the image. It returns the bytes so taken. */
EXPORT(qjs_prepare_snapshot) uint32_t qjs_prepare_snapshot(JSContext *ctx, int32_t flags, uintptr_t top)
{
    uint32_t taken = 0, size;
    if (flags & 1)
        JS_PrepareSnapshot(JS_GetRuntime(ctx));
    if (!(flags & 2))
        return 0;
    for (size = 1u << 20; size >= 8; size /= 2) {
        for (;;) {
            void *p = malloc(size);
            if (!p)
                break;
            if ((uintptr_t)p >= top) {
                free(p);
                break;
            }
            taken += size;
        }
    }
    return taken;
}

/* ---- host calls ---- */

/* MAX_SLOTS is the most arguments a host function takes; more is a
   RangeError (wasmvm.MaxHostArgs). */
#define MAX_SLOTS 16

int codec_is_bytes(JSContext *ctx, JSValueConst v, const uint8_t **p, size_t *len); /* codec.c */

/* put_plain writes a into s if it is undefined, null, a boolean or a
   number, and returns 1; 0 for any other value. */
static inline __attribute__((always_inline)) int put_plain(struct slot *s, JSValueConst a)
{
    s->len = 0;
    s->u.ptr = 0;
    switch (JS_VALUE_GET_NORM_TAG(a)) {
    case JS_TAG_UNDEFINED:
        s->tag = TAG_UNDEFINED;
        return 1;
    case JS_TAG_NULL:
        s->tag = TAG_NULL;
        return 1;
    case JS_TAG_BOOL:
        s->tag = JS_VALUE_GET_BOOL(a) ? TAG_TRUE : TAG_FALSE;
        return 1;
    case JS_TAG_INT:
        s->tag = TAG_NUMBER;
        s->u.num = JS_VALUE_GET_INT(a);
        return 1;
    case JS_TAG_FLOAT64:
        s->tag = TAG_NUMBER;
        s->u.num = JS_VALUE_GET_FLOAT64(a);
        return 1;
    }
    return 0;
}

/* encode_args writes argv[0:n] as slots; strs[i] keeps the text of slot i
   until free_args. -1 with an exception pending. */
static int encode_args(JSContext *ctx, int n, JSValueConst *argv, struct slot *slots, const char **strs)
{
    int i;
    memset(strs, 0, sizeof(*strs) * (size_t)n);
    for (i = 0; i < n; i++) {
        JSValueConst a = argv[i];
        struct slot *s = &slots[i];
        size_t len;
        JSValue str;
        const uint8_t *bytes;
        if (put_plain(s, a))
            continue;
        if (codec_is_bytes(ctx, a, &bytes, &len)) {
            s->tag = TAG_BYTES;
            s->len = (uint32_t)len;
            s->u.ptr = (uint32_t)(uintptr_t)bytes;
            continue;
        }
        if (JS_IsString(a)) {
            s->tag = TAG_STRING;
            str = JS_DupValue(ctx, a);
        } else {
            s->tag = TAG_JSON;
            str = JS_JSONStringify(ctx, a, JS_UNDEFINED, JS_UNDEFINED);
            if (JS_IsException(str))
                return -1;
            if (JS_IsUndefined(str)) { /* a function, a symbol */
                s->tag = TAG_UNDEFINED;
                continue;
            }
        }
        strs[i] = JS_ToCStringLen(ctx, &len, str);
        JS_FreeValue(ctx, str);
        if (!strs[i])
            return -1;
        s->len = (uint32_t)len;
        s->u.ptr = (uint32_t)(uintptr_t)strs[i];
    }
    return 0;
}

static void free_args(JSContext *ctx, int n, const char **strs)
{
    int i;
    for (i = 0; i < n; i++)
        JS_FreeCString(ctx, strs[i]);
}

/* take_answer turns the host's answer in qjs_ctl.ret into a value. A reply
   for the kernel (TAG_REPLY_*) becomes the list [kind, value] and *reply is
   set. */
/* ANSWER_SIZE is the buffer a host call offers the host for its answer's
   text: text shorter than it comes with the answer, in one crossing,
   longer text is fetched with host_result. */
#define ANSWER_SIZE 512
static char answer_buf[ANSWER_SIZE];

/* offer_answer offers answer_buf for the text of the next host call's
   answer: its address in qjs_ctl.ret.u.ptr, its size in qjs_ctl.ret.len.
   The host puts text that fits there, NUL-terminated, and answers with
   u.ptr still set; otherwise u.ptr is 0 (see take_answer). */
static void offer_answer(void)
{
    qjs_ctl.ret.u.ptr = (uint32_t)(uintptr_t)answer_buf;
    qjs_ctl.ret.len = ANSWER_SIZE;
}

static JSValue take_answer(JSContext *ctx, int json, int *reply)
{
    int tag = qjs_ctl.ret.tag;
    JSValue ret, v;
    uint32_t len;
    char *buf;
    int inline_text = 0;

    *reply = 0;
    switch (tag) {
    case TAG_UNDEFINED:
        return JS_UNDEFINED;
    case TAG_NULL:
        return JS_NULL;
    case TAG_FALSE:
        return JS_FALSE;
    case TAG_TRUE:
        return JS_TRUE;
    case TAG_NUMBER:
        return JS_NewFloat64(ctx, qjs_ctl.ret.u.num);
    case TAG_REPLY_ASYNC:
        v = JS_NewFloat64(ctx, qjs_ctl.ret.u.num);
        goto list;
    case TAG_STRING:
    case TAG_JSON:
    case TAG_ERROR:
    case TAG_REPLY_WIRE:
    case TAG_REPLY_ERROR:
        break;
    default:
        return JS_ThrowInternalError(ctx, "host call: bad answer");
    }
    /* Text in answer_buf is made into a value before any JavaScript can
       run, which could make another host call and overwrite it. */
    if (qjs_ctl.ret.u.ptr == (uint32_t)(uintptr_t)answer_buf && qjs_ctl.ret.len < ANSWER_SIZE) {
        buf = answer_buf;
        len = qjs_ctl.ret.len;
        inline_text = 1;
    } else if (!(buf = host_text(ctx, &len)))
        return JS_EXCEPTION;
    if (tag == TAG_STRING && json) {
        ret = JS_ParseJSON(ctx, buf, len, "<host reply>");
        if (JS_IsException(ret)) {
            JSValue e = JS_GetException(ctx), name = JS_UNDEFINED;
            const char *s = NULL;
            int syntax;
            if (JS_IsError(ctx, e))
                name = JS_GetPropertyStr(ctx, e, "name");
            s = JS_IsString(name) ? JS_ToCString(ctx, name) : NULL;
            syntax = s && strcmp(s, "SyntaxError") == 0;
            JS_FreeCString(ctx, s);
            JS_FreeValue(ctx, name);
            if (syntax) { /* the parser reports its stack's end as a SyntaxError */
                JSValue m = JS_GetPropertyStr(ctx, e, "message");
                s = JS_IsString(m) ? JS_ToCString(ctx, m) : NULL;
                syntax = !s || strcmp(s, "stack overflow") != 0;
                JS_FreeCString(ctx, s);
                JS_FreeValue(ctx, m);
            }
            JS_FreeValue(ctx, e);
            ret = JS_ThrowTypeError(ctx, syntax ? "airlock: the host function returned text that is not JSON" :
                "airlock: the sandbox could not hold the answer of the host function (out of memory, or nested too deep)");
        }
    } else if (tag == TAG_STRING || tag == TAG_REPLY_WIRE || tag == TAG_REPLY_ERROR)
        ret = JS_NewStringLen(ctx, buf, len);
    else if (tag == TAG_JSON)
        ret = JS_ParseJSON(ctx, buf, len, "<host>");
    else {
        JSValue msg = JS_NewStringLen(ctx, buf, len), err;
        if (JS_IsException(msg))
            ret = msg;
        else {
            err = JS_NewError(ctx);
            if (!JS_IsException(err))
                JS_DefinePropertyValueStr(ctx, err, "message", msg, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
            else
                JS_FreeValue(ctx, msg);
            ret = JS_Throw(ctx, err);
        }
    }
    if (!inline_text)
        js_free(ctx, buf);
    if (tag != TAG_REPLY_WIRE && tag != TAG_REPLY_ERROR)
        return ret;
    v = ret;
list:
    if (JS_IsException(v))
        return v;
    ret = JS_NewArray(ctx);
    if (JS_IsException(ret)) {
        JS_FreeValue(ctx, v);
        return ret;
    }
    if (JS_DefinePropertyValueUint32(ctx, ret, 0, JS_NewInt32(ctx, tag - TAG_REPLY_WIRE), JS_PROP_C_W_E) < 0 ||
        JS_DefinePropertyValueUint32(ctx, ret, 1, v, JS_PROP_C_W_E) < 0) {
        JS_FreeValue(ctx, ret);
        return JS_EXCEPTION;
    }
    *reply = 1;
    return ret;
}

static JSValue js_host_func(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    int r, reply;
    JSValue ret;
    (void)this_val;
    (void)data;

    if (argc > MAX_SLOTS)
        return JS_ThrowRangeError(ctx, "a host function takes at most %d arguments", MAX_SLOTS);
    if (encode_args(ctx, argc, argv, slots, strs) < 0) {
        free_args(ctx, argc, strs);
        return JS_EXCEPTION;
    }
    offer_answer();
    r = host_call(magic, slots, argc);
    free_args(ctx, argc, strs);
    if (r != 0)
        return JS_ThrowInternalError(ctx, "host call failed");
    ret = take_answer(ctx, 0, &reply);
    if (reply) {
        JS_FreeValue(ctx, ret);
        return JS_ThrowInternalError(ctx, "host call: bad answer");
    }
    return ret;
}

/* qjs_def_host_func defines globalThis[name] as a function that calls the
   host's function number fn. Returns 0, or -1. */
EXPORT(qjs_def_host_func) int32_t qjs_def_host_func(JSContext *ctx, const char *name, int32_t fn)
{
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue f = JS_NewCFunctionData(ctx, js_host_func, 0, fn, 0, NULL);
    int r;
    if (JS_IsException(f)) {
        JS_FreeValue(ctx, global);
        return -1;
    }
    r = JS_DefinePropertyValueStr(ctx, global, name, f, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_FreeValue(ctx, global);
    return r < 0 ? -1 : 0;
}

/* ---- the kernel ----
 *
 * The kernel is Airlock's JavaScript that runs each job: its codec,
 * console, module wiring and reporting (internal/engine/bootstrap.js). It
 * is evaluated once, in the VM a snapshot captures, and hands itself to
 * __airlock_kernel, which keeps it here, out of the sandbox's reach: the
 * host calls its methods with qjs_kernel_call. The kernel calls the host
 * through __airlock_host, host function KERNEL_FN. Both globals are removed
 * before any user code runs (the kernel removes __airlock_host itself).
 */

#define KERNEL_FN 0x7fffffff

static JSValue kernel = JS_UNDEFINED;

/* The kernel's methods the host calls on every run, their atoms made with
   the kernel (js_take_kernel), so in the image: an atom made by a run is
   looked up in the atom table again by the next, a rewound copy. */
static const char *const kernel_methods[] = {"start", "run", "loadFailed", "settle"};
static JSAtom kernel_atoms[sizeof(kernel_methods) / sizeof(kernel_methods[0])];

static JSValue call_kernel(JSContext *ctx, const char *method, int argc, JSValueConst *argv)
{
    JSValue f, r;
    size_t i;
    if (!JS_IsObject(kernel))
        return JS_ThrowInternalError(ctx, "airlock: no kernel");
    /* an atom of the kernel's is used as it is: the atom's count, in a
       page of the image, is not written */
    for (i = 0; i < sizeof(kernel_methods) / sizeof(kernel_methods[0]); i++) {
        if (kernel_atoms[i] != JS_ATOM_NULL && strcmp(method, kernel_methods[i]) == 0)
            break;
    }
    if (i < sizeof(kernel_methods) / sizeof(kernel_methods[0]))
        f = JS_GetProperty(ctx, kernel, kernel_atoms[i]);
    else
        f = JS_GetPropertyStr(ctx, kernel, method);
    if (JS_IsException(f))
        return f;
    r = JS_Call(ctx, f, JS_UNDEFINED, argc, argv);
    JS_FreeValue(ctx, f);
    return r;
}

/* new_list makes an array of vals, defined as own elements: assigning them
   would run a setter a program put on Array.prototype. */
static JSValue new_list(JSContext *ctx, int n, JSValueConst *vals)
{
    JSValue list = JS_NewArray(ctx);
    int i;
    if (JS_IsException(list))
        return list;
    for (i = 0; i < n; i++) {
        if (JS_DefinePropertyValueUint32(ctx, list, (uint32_t)i, JS_DupValue(ctx, vals[i]), JS_PROP_C_W_E) < 0) {
            JS_FreeValue(ctx, list);
            return JS_EXCEPTION;
        }
    }
    return list;
}

static int is_primitive(JSValueConst v)
{
    switch (JS_VALUE_GET_NORM_TAG(v)) {
    case JS_TAG_INT:
    case JS_TAG_FLOAT64:
    case JS_TAG_BOOL:
    case JS_TAG_NULL:
    case JS_TAG_UNDEFINED:
    case JS_TAG_STRING:
    case JS_TAG_STRING_ROPE: /* a concatenation, a string all the same */
        return 1;
    }
    return 0;
}

/* kernel_reply hands a reply list to the kernel's reply(list, id), which
   decodes an answer, throws an error or makes a promise. */
static JSValue kernel_reply(JSContext *ctx, JSValue list, JSValueConst id)
{
    JSValueConst a[2];
    JSValue r;
    a[0] = list;
    a[1] = id;
    r = call_kernel(ctx, "reply", 2, a);
    JS_FreeValue(ctx, list);
    return r;
}

/* throw_stop throws the uncatchable error that ends a program the host
   stopped during a host call: its text, not an Error, so that no stack
   trace is built for it (the host reads only the outcome it already has,
   or the stop). */
static JSValue throw_stop(JSContext *ctx)
{
    JSValue e = JS_NewString(ctx, "InternalError: interrupted");
    if (JS_IsException(e))
        return e;
    JS_Throw(ctx, e);
    JS_SetUncatchableException(ctx, 1);
    return JS_EXCEPTION;
}

/* js_kernel_host is __airlock_host(op, ...). The kernel calls it with its
   own operations (op 0-8: see internal/engine), and a host function
   (js_host_fn) with (9, id, ...args): the engine passes the arguments as they are. Arguments
   that are not primitives go back to the kernel's callHost(id, list),
   which encodes them. A JSON host function calls it with (10, id): its
   arguments cross as the JSON text of their list, and a synchronous
   answer, JSON text, is parsed here. */
static JSValue js_kernel_host(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    JSValue ret, text = JS_UNDEFINED;
    JSValueConst three[3];
    int op = -1, i, r, reply, n = argc, json = 0;
    (void)this_val;

    if (argc > 0 && JS_VALUE_GET_TAG(argv[0]) == JS_TAG_INT)
        op = JS_VALUE_GET_INT(argv[0]);
    if ((op == 9 || op == 10) && argc < 2)
        return JS_ThrowTypeError(ctx, "airlock: malformed host call");
    if (op == 10) {
        JSValue list = new_list(ctx, argc - 2, argv + 2);
        if (JS_IsException(list))
            return list;
        text = JS_JSONStringify(ctx, list, JS_UNDEFINED, JS_UNDEFINED);
        JS_FreeValue(ctx, list);
        if (JS_IsException(text))
            return text;
        three[0] = JS_NewInt32(ctx, 0);
        three[1] = argv[1];
        three[2] = text;
        argv = three;
        n = 3;
        json = 1;
    } else if (op == 9) {
        int plain = argc <= MAX_SLOTS;
        for (i = 2; plain && i < argc; i++)
            plain = is_primitive(argv[i]);
        if (!plain) {
            JSValueConst a[2];
            JSValue list = new_list(ctx, argc - 2, argv + 2);
            if (JS_IsException(list))
                return list;
            a[0] = argv[1];
            a[1] = list;
            ret = call_kernel(ctx, "callHost", 2, a);
            JS_FreeValue(ctx, list);
            return ret;
        }
    }
    if (n > MAX_SLOTS) {
        JS_FreeValue(ctx, text);
        return JS_ThrowRangeError(ctx, "a host function takes at most %d arguments", MAX_SLOTS);
    }
    r = encode_args(ctx, n, argv, slots, strs);
    if (r == 0) {
        if (op == 9)
            slots[0].u.num = 0; /* a call of host function argv[1] */
        offer_answer();
        r = host_call(KERNEL_FN, slots, n);
        if (r != 0) {
            free_args(ctx, n, strs);
            JS_FreeValue(ctx, text);
            return JS_ThrowInternalError(ctx, "host call failed");
        }
    }
    free_args(ctx, n, strs);
    JS_FreeValue(ctx, text);
    if (r < 0)
        return JS_EXCEPTION;
    if (qjs_ctl.soft || qjs_ctl.stop) {
        /* the host stopped the program during the call (a step's budget
           spent, a final answer given): it ends here, not at the next
           interrupt check, thousands of operations later */
        return throw_stop(ctx);
    }
    ret = take_answer(ctx, json, &reply);
    if (reply && (op == 9 || op == 10))
        return kernel_reply(ctx, ret, argv[1]);
    return ret;
}

/* host_fn_primitives is js_kernel_host's (9, id, ...args) for arguments
   that are all primitives, written out for the call a program makes most:
   the slots are filled here, the text of string arguments is the only
   thing freed after the call, and a number answer, or a string answer in
   answer_buf, is made here. It returns 1 with the call's value in *res,
   or 0 when an argument is not a primitive: the kernel encodes those
   (js_kernel_host). */
static int host_fn_primitives(JSContext *ctx, JSValueConst id, int argc, JSValueConst *argv, JSValue *res)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    int i, r, reply, nstr = 0;
    JSValue ret;

    slots[0].tag = TAG_NUMBER;
    slots[0].len = 0;
    slots[0].u.num = 0; /* a call of host function id */
    slots[1].tag = TAG_NUMBER;
    slots[1].len = 0;
    slots[1].u.num = JS_VALUE_GET_INT(id);
    for (i = 0; i < argc; i++) {
        JSValueConst a = argv[i];
        struct slot *s = &slots[i + 2];
        if (put_plain(s, a))
            continue;
        switch (JS_VALUE_GET_NORM_TAG(a)) {
        case JS_TAG_STRING:
        case JS_TAG_STRING_ROPE: {
            size_t len;
            const char *str = JS_ToCStringLen(ctx, &len, a);
            if (!str) {
                ret = JS_EXCEPTION;
                goto done;
            }
            strs[nstr++] = str;
            s->tag = TAG_STRING;
            s->len = (uint32_t)len;
            s->u.ptr = (uint32_t)(uintptr_t)str;
            break;
        }
        default:
            for (i = 0; i < nstr; i++)
                JS_FreeCString(ctx, strs[i]);
            return 0;
        }
    }
    offer_answer();
    r = host_call(KERNEL_FN, slots, argc + 2);
    if (r != 0) {
        ret = JS_ThrowInternalError(ctx, "host call failed");
        goto done;
    }
    if (qjs_ctl.soft || qjs_ctl.stop) { /* as in js_kernel_host */
        ret = throw_stop(ctx);
        goto done;
    }
    /* the answers of take_answer's that need no list, made here */
    if (qjs_ctl.ret.tag == TAG_NUMBER)
        ret = JS_NewFloat64(ctx, qjs_ctl.ret.u.num);
    else if (qjs_ctl.ret.tag == TAG_STRING && qjs_ctl.ret.u.ptr == (uint32_t)(uintptr_t)answer_buf &&
             qjs_ctl.ret.len < ANSWER_SIZE)
        ret = JS_NewStringLen(ctx, answer_buf, qjs_ctl.ret.len);
    else {
        ret = take_answer(ctx, 0, &reply);
        if (reply)
            ret = kernel_reply(ctx, ret, id);
    }
done:
    for (i = 0; i < nstr; i++)
        JS_FreeCString(ctx, strs[i]);
    *res = ret;
    return 1;
}

/* js_host_fn is a host function the kernel made (hostFunction in
   bootstrap.js, with __airlock_hostfn): a C function whose data are its
   kind (9, or 10 for a JSON host function) and its id. A call is
   js_kernel_host's with (kind, id, ...args), with no bound function and no
   JavaScript in between; a call of kind 9 whose arguments are primitives
   is host_fn_primitives'. */
static JSValue js_host_fn(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    JSValueConst few[MAX_SLOTS], *args = few;
    JSValue r;
    int i;
    (void)magic;
    if (JS_VALUE_GET_INT(data[0]) == 9 && argc <= MAX_SLOTS - 2 &&
        host_fn_primitives(ctx, data[1], argc, argv, &r))
        return r;
    if (argc > MAX_SLOTS - 2) {
        args = js_malloc(ctx, sizeof(*args) * ((size_t)argc + 2));
        if (!args)
            return JS_EXCEPTION;
    }
    args[0] = data[0];
    args[1] = data[1];
    for (i = 0; i < argc; i++)
        args[i + 2] = argv[i];
    r = js_kernel_host(ctx, this_val, argc + 2, args);
    if (args != few)
        js_free(ctx, args);
    return r;
}

/* js_make_host_fn is __airlock_hostfn(kind, id): host function id of kind
   9 or 10 (see js_host_fn), named "" and of length 0. */
static JSValue js_make_host_fn(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    (void)this_val;
    if (argc < 2 || JS_VALUE_GET_TAG(argv[0]) != JS_TAG_INT ||
        (JS_VALUE_GET_INT(argv[0]) != 9 && JS_VALUE_GET_INT(argv[0]) != 10) ||
        JS_VALUE_GET_TAG(argv[1]) != JS_TAG_INT)
        return JS_ThrowTypeError(ctx, "airlock: bad host function");
    return JS_NewCFunctionData(ctx, js_host_fn, 0, 0, 2, argv);
}

/* js_take_kernel is __airlock_kernel(k): it keeps the kernel and removes
   itself. */
static JSValue js_take_kernel(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue global;
    size_t i;
    (void)this_val;
    if (argc < 1 || !JS_IsObject(argv[0]) || JS_IsObject(kernel))
        return JS_ThrowTypeError(ctx, "airlock: bad kernel");
    kernel = JS_DupValue(ctx, argv[0]);
    for (i = 0; i < sizeof(kernel_methods) / sizeof(kernel_methods[0]); i++)
        kernel_atoms[i] = JS_NewAtom(ctx, kernel_methods[i]);
    global = JS_GetGlobalObject(ctx);
    delete_global(ctx, global, "__airlock_kernel");
    JS_FreeValue(ctx, global);
    return JS_UNDEFINED;
}

/* js_jobs_pending is __airlock_pending(): whether a job is pending. */
static JSValue js_jobs_pending(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    (void)this_val;
    (void)argc;
    (void)argv;
    return JS_NewBool(ctx, JS_IsJobPending(JS_GetRuntime(ctx)));
}

/* qjs_kernel_hooks defines __airlock_host, __airlock_kernel and
   __airlock_pending for the kernel's script, which the host runs next (see qjs_set_strip). Returns 0,
   or -1. */
int codec_hooks(JSContext *ctx, JSValueConst global); /* codec.c */

EXPORT(qjs_kernel_hooks) int32_t qjs_kernel_hooks(JSContext *ctx)
{
    JSValue global = JS_GetGlobalObject(ctx);
    int err = 0;
    err |= codec_hooks(ctx, global);
    err |= def_global(ctx, global, "__airlock_host", js_kernel_host, "host", 0);
    err |= def_global(ctx, global, "__airlock_hostfn", js_make_host_fn, "hostfn", 2);
    err |= def_global(ctx, global, "__airlock_kernel", js_take_kernel, "kernel", 1);
    err |= def_global(ctx, global, "__airlock_pending", js_jobs_pending, "pending", 0);
    JS_FreeValue(ctx, global);
    return err ? -1 : 0;
}

/* qjs_set_strip sets what QuickJS keeps of the functions it compiles from
   now on: flags 3 neither their source nor their debug information (the
   kernel: no program can read its text through Function.prototype.toString,
   and its frames show no position), 0 both (the default). */
EXPORT(qjs_set_strip) void qjs_set_strip(JSContext *ctx, int32_t flags)
{
    JS_SetStripInfo(JS_GetRuntime(ctx), flags);
}

/* qjs_kernel_ready reports 0 if the kernel handed itself over, else -1. */
EXPORT(qjs_kernel_ready) int32_t qjs_kernel_ready(JSContext *ctx)
{
    (void)ctx;
    return JS_IsObject(kernel) ? 0 : -1;
}

/* decode_slots makes values of slots (host -> guest, as host calls answer). */
static int decode_slots(JSContext *ctx, int n, struct slot *slots, JSValue *vals)
{
    int i;
    for (i = 0; i < n; i++) {
        struct slot *s = &slots[i];
        const char *p = (const char *)(uintptr_t)s->u.ptr;
        switch (s->tag) {
        case TAG_NULL: vals[i] = JS_NULL; break;
        case TAG_FALSE: vals[i] = JS_FALSE; break;
        case TAG_TRUE: vals[i] = JS_TRUE; break;
        case TAG_NUMBER: vals[i] = JS_NewFloat64(ctx, s->u.num); break;
        case TAG_STRING: vals[i] = JS_NewStringLen(ctx, p, s->len); break;
        case TAG_JSON: vals[i] = JS_ParseJSON(ctx, p, s->len, "<host>"); break;
        default: vals[i] = JS_UNDEFINED;
        }
        if (JS_IsException(vals[i])) {
            while (i-- > 0)
                JS_FreeValue(ctx, vals[i]);
            return -1;
        }
    }
    return 0;
}

/* select_at_once reads export fn of the entry module m, for a run with no
   arguments and no job queued, when the kernel's select would finish the
   run with it at once: m exports it and it is a primitive (a function
   would be called; a primitive settles a promise with no code of the
   program's). Returns 1 with the value in *v, else 0 (the kernel selects:
   a read that throws, a binding not yet initialized, throws there again).
   A binding of m's own is read without m's namespace (JS_GetModuleExport,
   patch 0012); any other name, from the namespace, which runs no code of
   the program's when it is read. */
static int select_at_once(JSContext *ctx, JSModuleDef *m, JSValueConst fn, JSValue *v)
{
    JSAtom a;
    JSValue ns, x = JS_UNDEFINED;
    int has;
    if (qjs_ctl.stop || qjs_ctl.soft || !JS_IsString(fn))
        return 0;
    a = JS_ValueToAtom(ctx, fn);
    if (a == JS_ATOM_NULL) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return 0;
    }
    has = JS_GetModuleExport(ctx, m, a, &x);
    if (!has) {
        ns = JS_GetModuleNamespace(ctx, m);
        has = JS_IsException(ns) ? -1 : JS_HasProperty(ctx, ns, a);
        if (has > 0)
            x = JS_GetProperty(ctx, ns, a);
        JS_FreeValue(ctx, ns);
    }
    JS_FreeAtom(ctx, a);
    if (has < 0 || JS_IsException(x)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return 0;
    }
    if (has == 0 || !is_primitive(x)) {
        JS_FreeValue(ctx, x);
        return 0;
    }
    *v = x;
    return 1;
}

/* run_entry compiles, links and evaluates the entry module name, as
   import() would but with no promise job around each step, and hands the
   kernel's run(promise, namespace, quiet) the module's evaluation promise
   and namespace, quiet set if the promise is fulfilled and no job is
   pending (the kernel may then go on at once: no job of the program's
   could run before it), or the kernel's loadFailed(e) what loading or
   linking threw. The extra values (at most two: the selected export and
   its being optional, for a run the kernel did not ready) follow the
   three arguments of run; with them, a quiet run whose export is a
   primitive is finished here (select_at_once), as the kernel would, and
   the namespace is not made if that export is a binding of the entry's.
   The module is loaded by module_loader, as import() would load it: the
   host resolves the entry's name to itself, so no normalization is asked
   for. A stop is returned as the exception it is. */
static JSValue run_entry(JSContext *ctx, JSValueConst name, int extra, JSValueConst *extras)
{
    JSValue mv, p, ns, e, r, v;
    JSValueConst a[3 + 2];
    JSModuleDef *m;
    int i, quiet;
    const char *cname = JS_ToCString(ctx, name);
    if (!cname)
        return JS_EXCEPTION;
    m = module_loader(ctx, cname, NULL);
    JS_FreeCString(ctx, cname);
    if (!m || JS_ResolveModule(ctx, JS_MKPTR(JS_TAG_MODULE, m)) < 0)
        goto fail;
    mv = JS_DupValue(ctx, JS_MKPTR(JS_TAG_MODULE, m));
    p = JS_EvalFunction(ctx, mv); /* takes mv */
    if (JS_IsException(p))
        goto fail;
    quiet = JS_PromiseState(ctx, p) == JS_PROMISE_FULFILLED && !JS_IsJobPending(JS_GetRuntime(ctx));
    if (quiet && extra == 2 && select_at_once(ctx, m, extras[0], &v)) {
        /* the kernel's finish of a primitive: host(2, 0, value) */
        a[0] = JS_NewInt32(ctx, 2);
        a[1] = JS_NewInt32(ctx, 0);
        a[2] = v;
        r = js_kernel_host(ctx, JS_UNDEFINED, 3, a);
        JS_FreeValue(ctx, v);
        JS_FreeValue(ctx, p);
        return r;
    }
    ns = JS_GetModuleNamespace(ctx, m);
    if (JS_IsException(ns)) {
        JS_FreeValue(ctx, p);
        goto fail;
    }
    a[0] = p;
    a[1] = ns;
    a[2] = JS_NewBool(ctx, quiet);
    for (i = 0; i < extra && i < 2; i++)
        a[3 + i] = extras[i];
    r = call_kernel(ctx, "run", 3 + i, a);
    JS_FreeValue(ctx, p);
    JS_FreeValue(ctx, ns);
    return r;
fail:
    if (qjs_ctl.stop || qjs_ctl.soft) /* stopped: no JavaScript runs */
        return JS_EXCEPTION;
    e = JS_GetException(ctx);
    r = call_kernel(ctx, "loadFailed", 1, (JSValueConst *)&e);
    JS_FreeValue(ctx, e);
    return r;
}

/* kernel_call calls the kernel's method name with argc arguments in slots
   (strings and JSON in guest buffers the host allocated), and stores the
   outcome as qjs_eval does. No job runs. With run set, a string the
   method returns is the name of the entry module to run (run_entry). */
static int32_t kernel_call(JSContext *ctx, const char *method, struct slot *slots, int32_t argc, int run)
{
    JSValue vals[MAX_SLOTS], r;
    int i;
    if (argc > MAX_SLOTS || decode_slots(ctx, argc, slots, vals) < 0) {
        if (argc > MAX_SLOTS)
            JS_ThrowRangeError(ctx, "too many arguments");
        set_exception(ctx);
        return qjs_ctl.res_status;
    }
    if (run && method[0] == 0) {
        /* nothing to ready: the entry (vals[0]) runs at once, with the
           selected export and its being optional */
        r = argc == 3 ? run_entry(ctx, vals[0], 2, vals + 1) : JS_ThrowTypeError(ctx, "airlock: bad run");
    } else {
        r = call_kernel(ctx, method, argc, vals);
        if (run && JS_IsString(r)) {
            JSValue t = run_entry(ctx, r, 0, NULL);
            JS_FreeValue(ctx, r);
            r = t;
        }
    }
    for (i = 0; i < argc; i++)
        JS_FreeValue(ctx, vals[i]);
    if (JS_IsException(r)) {
        set_exception(ctx);
        return qjs_ctl.res_status;
    }
    set_value(ctx, r);
    return qjs_ctl.res_status;
}

/* qjs_kernel_call calls the kernel's method (kernel_call). */
EXPORT(qjs_kernel_call) int32_t qjs_kernel_call(JSContext *ctx, const char *method, struct slot *slots, int32_t argc)
{
    return kernel_call(ctx, method, slots, argc, 0);
}

/* qjs_kernel_run calls the kernel's method, its start, which readies a
   run and returns the entry module's name (or reports a failure and
   returns undefined), and then runs the entry module (run_entry). With
   method "", a run with nothing to ready (no arguments, no globals), the
   arguments are the entry's name, the selected export and its being
   optional, and the entry runs at once. No job runs. */
EXPORT(qjs_kernel_run) int32_t qjs_kernel_run(JSContext *ctx, const char *method, struct slot *slots, int32_t argc)
{
    return kernel_call(ctx, method, slots, argc, 1);
}

/* The flags of qjs_kernel_step. */
#define QJS_STEP_BUDGET 1 /* count loops and function entries against qjs_ctl.ops */
#define QJS_STEP_SLOPPY 2 /* sloppy global code, as Node's REPL runs it */
#define QJS_STEP_KEPT 4   /* the step qjs_inspect_step kept (inspect.c) */

/* qjs_kernel_step evaluates a step of a session, src[0:len] (NUL after
   it), as global code of the realm named filename, strict unless flags
   has QJS_STEP_SLOPPY: top-level await and return allowed; with
   QJS_STEP_BUDGET, its loops and function entries counted against qjs_ctl.ops
   (patch 0006); with QJS_STEP_KEPT, it runs instead the step
   qjs_inspect_step compiled and kept (inspect.c). It hands the script's promise (of { value }) to the
   kernel's exec, or what its compilation threw to the kernel's
   compileFailed. Outcome as for qjs_kernel_call. */
JSValue inspect_take_step(void); /* inspect.c */

EXPORT(qjs_kernel_step) int32_t qjs_kernel_step(JSContext *ctx, const char *src, uint32_t len, const char *filename,
                                                int32_t flags)
{
    JSValue fn = (flags & QJS_STEP_KEPT)
                     ? JS_EvalFunction(ctx, inspect_take_step())
                     : JS_Eval(ctx, src, len, filename,
                               JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_ASYNC | JS_EVAL_FLAG_STEP |
                                   ((flags & QJS_STEP_SLOPPY) ? 0 : JS_EVAL_FLAG_STRICT) |
                                   ((flags & QJS_STEP_BUDGET) ? JS_EVAL_FLAG_BUDGET : 0)),
            r;
    if (JS_IsException(fn)) {
        JSValue e = JS_GetException(ctx);
        if (qjs_ctl.stop || qjs_ctl.soft) { /* interrupted, or out of memory */
            JS_Throw(ctx, e);
            set_exception(ctx);
            return qjs_ctl.res_status;
        }
        r = call_kernel(ctx, "compileFailed", 1, (JSValueConst *)&e);
        JS_FreeValue(ctx, e);
    } else {
        r = call_kernel(ctx, "exec", 1, (JSValueConst *)&fn);
        JS_FreeValue(ctx, fn);
    }
    if (JS_IsException(r)) {
        set_exception(ctx);
        return qjs_ctl.res_status;
    }
    set_value(ctx, r);
    return qjs_ctl.res_status;
}

/* qjs_prepare_run readies a sandbox for a run before the run arrives:
   it takes a block of each small size and keeps it until the sandbox is
   rewound, so that the allocator's arenas the run allocates from exist
   already (a run otherwise makes a dozen, its first allocation of each
   size). */
static void *prepared_blocks[64];

EXPORT(qjs_prepare_run) void qjs_prepare_run(JSContext *ctx)
{
    size_t i;
    for (i = 1; i < sizeof(prepared_blocks) / sizeof(prepared_blocks[0]); i++) {
        if (prepared_blocks[i])
            continue;
        if (!(prepared_blocks[i] = js_malloc(ctx, 8 * i))) {
            JS_FreeValue(ctx, JS_GetException(ctx)); /* out of memory: the run will say */
            return;
        }
    }
}

/* qjs_drop_jobs drops every pending job: what a step of a session left
   queued never runs, and its promises stay pending. */
EXPORT(qjs_drop_jobs) void qjs_drop_jobs(JSContext *ctx) { JS_DropPendingJobs(JS_GetRuntime(ctx)); }

/* The native globals module of a run: one export for each of the run's
   globals, and last the bridged modules; evaluating it takes them from the
   kernel's handOver() (which marks the run as started). The names are
   those the host gave for the module loaded last, each ended by NUL. */
static char *globals_names;
static uint32_t globals_len;

static int globals_init(JSContext *ctx, JSModuleDef *m)
{
    JSValue payload = call_kernel(ctx, "handOver", 0, NULL), globals;
    uint32_t i = 0, off = 0, n = 0;
    int r = 0;
    if (JS_IsException(payload))
        return -1;
    globals = JS_GetPropertyUint32(ctx, payload, 0);
    if (JS_IsException(globals)) {
        JS_FreeValue(ctx, payload);
        return -1;
    }
    for (off = 0; off < globals_len; off += (uint32_t)strlen(globals_names + off) + 1)
        n++;
    for (off = 0, i = 0; r == 0 && off < globals_len; off += (uint32_t)strlen(globals_names + off) + 1, i++) {
        JSValue v = i + 1 < n ? JS_GetPropertyUint32(ctx, globals, i) : JS_GetPropertyUint32(ctx, payload, 1);
        if (JS_IsException(v) || JS_SetModuleExport(ctx, m, globals_names + off, v) < 0)
            r = -1;
    }
    JS_FreeValue(ctx, globals);
    JS_FreeValue(ctx, payload);
    return r;
}

static JSModuleDef *globals_module(JSContext *ctx, const char *name, char *names, uint32_t len)
{
    JSModuleDef *m = JS_NewCModule(ctx, name, globals_init);
    uint32_t off;
    if (globals_names)
        js_free(ctx, globals_names);
    globals_names = names;
    globals_len = len;
    if (!m)
        return NULL;
    for (off = 0; off < len; off += (uint32_t)strlen(names + off) + 1) {
        if (JS_AddModuleExport(ctx, m, names + off) < 0)
            return NULL;
    }
    return m;
}

/* qjs_entry calls the function op names with the arguments before it: the
   one function the host calls a sandbox's functions through (wasmvm's
   entry.go). The engine gives every exported function the host calls a
   native stack of its own, which grows to the deepest call it ran and
   never shrinks: ten exports, three of them deep, cost an idle sandbox
   ~250 KiB of host memory, one entry ~60 KiB (RATIONALE.md, "Idle executor
   memory"). The numbers are wasmvm's entry constants. */
uint8_t *qjs_inspect_step(JSContext *ctx, const char *src, uint32_t len, const char *filename, int32_t flags);

enum {
    ENTRY_EVAL = 0,
    ENTRY_RUN_JOBS = 1,
    ENTRY_MALLOC = 2,
    ENTRY_FREE = 3,
    ENTRY_DEF_HOST_FUNC = 4,
    ENTRY_KERNEL_CALL = 6,
    ENTRY_KERNEL_STEP = 7,
    ENTRY_DROP_JOBS = 8,
    ENTRY_INSPECT_STEP = 9,
    ENTRY_KERNEL_RUN = 10,
    ENTRY_PREPARE_RUN = 11,
};

#define P(x) ((void *)(uintptr_t)(x))

EXPORT(qjs_entry) uint32_t qjs_entry(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e, int32_t op)
{
    switch (op) {
    case ENTRY_EVAL:
        return (uint32_t)qjs_eval(P(a), P(b), c, P(d), (int32_t)e);
    case ENTRY_RUN_JOBS:
        return (uint32_t)qjs_run_jobs(P(a));
    case ENTRY_MALLOC:
        return (uint32_t)(uintptr_t)qjs_malloc(a);
    case ENTRY_FREE:
        qjs_free(P(a));
        return 0;
    case ENTRY_DEF_HOST_FUNC:
        return (uint32_t)qjs_def_host_func(P(a), P(b), (int32_t)c);
    case ENTRY_KERNEL_CALL:
        return (uint32_t)qjs_kernel_call(P(a), P(b), P(c), (int32_t)d);
    case ENTRY_KERNEL_STEP:
        return (uint32_t)qjs_kernel_step(P(a), P(b), c, P(d), (int32_t)e);
    case ENTRY_DROP_JOBS:
        qjs_drop_jobs(P(a));
        return 0;
    case ENTRY_KERNEL_RUN:
        return (uint32_t)qjs_kernel_run(P(a), P(b), P(c), (int32_t)d);
    case ENTRY_PREPARE_RUN:
        qjs_prepare_run(P(a));
        return 0;
    case ENTRY_INSPECT_STEP:
        return (uint32_t)(uintptr_t)qjs_inspect_step(P(a), P(b), c, P(d), (int32_t)e);
    }
    __builtin_trap();
}

#undef P
