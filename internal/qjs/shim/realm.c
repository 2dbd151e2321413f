/*
 * realm.c: the realm a sandbox runs in: a runtime and a context with the
 * ECMAScript intrinsics only, hardened before any script runs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"

int delete_global(JSContext *ctx, JSValueConst global, const char *name)
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

/* ---- intrinsics ---- */

/* js_microtask_job runs a queueMicrotask callback. What it throws fails
   the run, as an uncaught exception does in Node (failure.c). */
static JSValue js_microtask_job(JSContext *ctx, int argc, JSValueConst *argv)
{
    JSValue r = JS_Call(ctx, argv[0], JS_UNDEFINED, 0, NULL);
    (void)argc;
    return JS_IsException(r) ? fail_pending(ctx) : r;
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

/* qjs_vm_new makes a runtime and a context with the ECMAScript intrinsics
   only, hardened: string code generation disabled for good (eval, and the
   Function constructors, which refuse, patch 0002), no eval,
   SharedArrayBuffer or Atomics global, and queueMicrotask and
   structuredClone (codec.c) added. No JavaScript takes part in the
   hardening. The Function constructors keep the specification's shape,
   their prototypes' constructor property included (writable or not, but
   configurable, as the specification has each): what a program puts there
   is its own, and the constructor it named still refuses. Returns the
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
    JS_SetModuleLoaderFunc2(rt, module_normalize, module_loader, module_check_attributes, NULL);
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
    err |= codec_init(ctx, global);
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
