/*
 * kernel.c: the kernel and the executor's session.
 *
 * The kernel is Airlock's JavaScript that readies each job and reports how
 * it ends: the run's globals and bridged modules, the selection of the
 * entry module's export, a session's tools and values
 * (kernel.js). It is evaluated once, in the VM a
 * snapshot captures, and hands itself to __airlock_kernel, which keeps it
 * here, out of the sandbox's reach: the host calls its methods with
 * qjs_kernel_call (two of them, settle and reset, are the shim's own:
 * hostcall.c). The kernel does its work through the shim's hooks, globals
 * it takes and removes before any program runs: the value's wire text
 * decoded, host functions made, the outcome told to the host (failure.c),
 * the console (console.c); none of them runs JavaScript.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "kernel.h"

static JSValue kernel = JS_UNDEFINED;

/* The kernel's methods the host calls on every run, their atoms made with
   the kernel (js_take_kernel), so in the image: an atom made by a run is
   looked up in the atom table again by the next, a rewound copy. */
static const char *const kernel_methods[] = {"start", "run", "loadFailed"};
static JSAtom kernel_atoms[sizeof(kernel_methods) / sizeof(kernel_methods[0])];

JSValue call_kernel(JSContext *ctx, const char *method, int argc, JSValueConst *argv)
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

/* js_decode is __airlock_decode(text): the value of wire text. */
static JSValue js_decode(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    (void)this_val;
    if (argc < 1 || !JS_IsString(argv[0]))
        return JS_ThrowTypeError(ctx, "airlock: bad wire text");
    return wire_decode_value(ctx, argv[0]);
}

/* js_host_function is __airlock_hostfn(id, name, json, shown): host
   function id (hostcall.c); json: its arguments cross as JSON text;
   shown: they are values to show or store. */
static JSValue js_host_function(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int32_t id;
    (void)this_val;
    if (argc < 4 || JS_ToInt32(ctx, &id, argv[0]) < 0 || id < 0 || !JS_IsString(argv[1]))
        return JS_ThrowTypeError(ctx, "airlock: bad host function");
    return host_fn_new(ctx, (uint32_t)id, JS_DupValue(ctx, argv[1]),
                       JS_ToBool(ctx, argv[3]) ? FN_SHOWN : JS_ToBool(ctx, argv[2]) ? FN_JSON : FN_PLAIN);
}

/* qjs_kernel_hooks defines the hooks the kernel's script takes (see
   above), which the host runs next (see qjs_set_strip), and
   __airlock_intl, Intl's host function, which Intl's script takes (OP_INTL,
   internal/intl). Returns 0, or -1. */
EXPORT(qjs_kernel_hooks) int32_t qjs_kernel_hooks(JSContext *ctx)
{
    JSValue global = JS_GetGlobalObject(ctx);
    int err = 0;
    err |= hostcall_init(ctx, global);
    err |= failure_hooks(ctx, global);
    err |= console_hooks(ctx, global);
    err |= def_global(ctx, global, "__airlock_decode", js_decode, "decode", 1);
    err |= def_global(ctx, global, "__airlock_hostfn", js_host_function, "hostfn", 4);
    err |= def_global(ctx, global, "__airlock_kernel", js_take_kernel, "kernel", 1);
    err |= def_global(ctx, global, "__airlock_pending", js_jobs_pending, "pending", 0);
    err |= JS_DefinePropertyValueStr(ctx, global, "__airlock_intl", kernel_op_function(ctx, OP_INTL, "intl"),
                                     JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0;
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
    } else if (strcmp(method, "settle") == 0) {
        r = settle_call(ctx, argc, vals);
    } else if (strcmp(method, "reset") == 0) {
        reset_calls(ctx);
        r = JS_UNDEFINED;
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

/* qjs_drop_jobs drops every pending job: what a step of a session left
   queued never runs, and its promises stay pending. */
EXPORT(qjs_drop_jobs) void qjs_drop_jobs(JSContext *ctx) { JS_DropPendingJobs(JS_GetRuntime(ctx)); }
