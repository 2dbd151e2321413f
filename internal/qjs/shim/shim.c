/*
 * shim.c: the C side of Airlock's engine. QuickJS compiled to wasm32-wasi
 * (reactor) exports these functions to the Go host in internal/wasmvm; each
 * is named for what the Go side calls.
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
 * qjs_ctl.ret; strings and JSON of any length are fetched with
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

IMPORT("env", "host_call") extern int32_t host_call(int32_t fn, struct slot *argv, int32_t argc);
IMPORT("env", "host_result") extern void host_result(char *dst);
/* env.tick: called by the stop checks stopcheck puts at every loop header
   (each time a counter runs out) and by QuickJS's interrupt handler.
   Non-zero means stop. Besides deciding the stop, it brings the goroutine
   running the guest back into Go code regularly, where the Go runtime can
   preempt it (a garbage collection waits for that). */
IMPORT("env", "tick") extern int32_t host_tick(void);
/* env.load_module(name, len) -> status: the source of the module name
   (already normalized by QuickJS against the importing module's name) is
   fetched like a host call's text answer, its length in qjs_ctl.ret.len;
   status non-zero means the text is an error message. */
IMPORT("env", "load_module") extern int32_t host_load_module(const char *name, uint32_t len);

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
    return p;
}

static size_t heap_usable_size(const void *p) { return malloc_usable_size((void *)p); }

static const JSMallocFunctions heap_funcs = {
    heap_malloc, heap_free, heap_realloc, heap_usable_size,
};

/* ---- stops ---- */

static int interrupt_handler(JSRuntime *rt, void *opaque)
{
    (void)rt;
    (void)opaque;
    return qjs_ctl.stop != 0 || host_tick() != 0;
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

static JSModuleDef *module_loader(JSContext *ctx, const char *name, void *opaque)
{
    int32_t r = host_load_module(name, (uint32_t)strlen(name));
    uint32_t len = qjs_ctl.ret.len;
    char *buf = js_malloc(ctx, (size_t)len + 1);
    JSValue func;
    JSModuleDef *m;
    (void)opaque;
    if (!buf)
        return NULL;
    host_result(buf);
    buf[len] = 0;
    if (r != 0) {
        JS_ThrowReferenceError(ctx, "could not load module '%s': %s", name, buf);
        js_free(ctx, buf);
        return NULL;
    }
    func = JS_Eval(ctx, buf, len, name, JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    js_free(ctx, buf);
    if (JS_IsException(func))
        return NULL;
    m = JS_VALUE_GET_PTR(func);
    JS_FreeValue(ctx, func);
    return m;
}

static int delete_global(JSContext *ctx, JSValueConst global, const char *name)
{
    JSAtom a = JS_NewAtom(ctx, name);
    int r = JS_DeleteProperty(ctx, global, a, 0);
    JS_FreeAtom(ctx, a);
    return r < 0 ? -1 : 0;
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
    JS_SetModuleLoaderFunc(rt, NULL, module_loader, NULL);
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
    err |= JS_DefinePropertyValueStr(ctx, global, "queueMicrotask",
                                     JS_NewCFunction(ctx, js_queue_microtask, "queueMicrotask", 1),
                                     JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0;
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

/* qjs_has_jobs reports whether a job is pending. */
EXPORT(qjs_has_jobs) int32_t qjs_has_jobs(JSContext *ctx) { return JS_IsJobPending(JS_GetRuntime(ctx)); }

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

/* ---- host calls ---- */

/* MAX_SLOTS is the most arguments a host function takes; more is a
   RangeError (wasmvm.MaxHostArgs). */
#define MAX_SLOTS 16

static JSValue js_host_func(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    int n = argc < MAX_SLOTS ? argc : MAX_SLOTS, i, r;
    JSValue ret = JS_UNDEFINED;
    (void)this_val;
    (void)data;

    if (argc > MAX_SLOTS)
        return JS_ThrowRangeError(ctx, "a host function takes at most %d arguments", MAX_SLOTS);
    memset(strs, 0, sizeof(strs));
    for (i = 0; i < n; i++) {
        JSValueConst a = argv[i];
        struct slot *s = &slots[i];
        s->len = 0;
        s->u.ptr = 0;
        switch (JS_VALUE_GET_NORM_TAG(a)) {
        case JS_TAG_UNDEFINED:
            s->tag = TAG_UNDEFINED;
            break;
        case JS_TAG_NULL:
            s->tag = TAG_NULL;
            break;
        case JS_TAG_BOOL:
            s->tag = JS_VALUE_GET_BOOL(a) ? TAG_TRUE : TAG_FALSE;
            break;
        case JS_TAG_INT:
            s->tag = TAG_NUMBER;
            s->u.num = JS_VALUE_GET_INT(a);
            break;
        case JS_TAG_FLOAT64:
            s->tag = TAG_NUMBER;
            s->u.num = JS_VALUE_GET_FLOAT64(a);
            break;
        default: {
            size_t len;
            JSValue str;
            if (JS_IsString(a)) {
                s->tag = TAG_STRING;
                str = JS_DupValue(ctx, a);
            } else {
                s->tag = TAG_JSON;
                str = JS_JSONStringify(ctx, a, JS_UNDEFINED, JS_UNDEFINED);
                if (JS_IsException(str))
                    goto fail;
                if (JS_IsUndefined(str)) { /* a function, a symbol */
                    s->tag = TAG_UNDEFINED;
                    break;
                }
            }
            strs[i] = JS_ToCStringLen(ctx, &len, str);
            JS_FreeValue(ctx, str);
            if (!strs[i])
                goto fail;
            s->len = (uint32_t)len;
            s->u.ptr = (uint32_t)(uintptr_t)strs[i];
        }
        }
    }
    r = host_call(magic, slots, n);
    for (i = 0; i < n; i++)
        JS_FreeCString(ctx, strs[i]);
    if (r != 0)
        return JS_ThrowInternalError(ctx, "host call failed");
    switch (qjs_ctl.ret.tag) {
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
    case TAG_STRING:
    case TAG_JSON:
    case TAG_ERROR: {
        int tag = qjs_ctl.ret.tag;
        uint32_t len = qjs_ctl.ret.len;
        char *buf = js_malloc(ctx, (size_t)len + 1);
        if (!buf)
            return JS_EXCEPTION;
        host_result(buf);
        buf[len] = 0;
        if (tag == TAG_STRING)
            ret = JS_NewStringLen(ctx, buf, len);
        else if (tag == TAG_JSON)
            ret = JS_ParseJSON(ctx, buf, len, "<host>");
        else {
            JSValue err = JS_NewError(ctx);
            if (!JS_IsException(err))
                JS_DefinePropertyValueStr(ctx, err, "message", JS_NewStringLen(ctx, buf, len),
                                          JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
            ret = JS_Throw(ctx, err);
        }
        js_free(ctx, buf);
        return ret;
    }
    default:
        return JS_ThrowInternalError(ctx, "host call: bad answer");
    }
fail:
    for (i = 0; i < n; i++)
        JS_FreeCString(ctx, strs[i]);
    return JS_EXCEPTION;
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
