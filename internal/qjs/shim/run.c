/*
 * run.c: the outcome of what the host runs, stored in the control block
 * (qjs_eval, qjs_run_jobs), and the run of a job's entry module.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"

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
void set_exception(JSContext *ctx)
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
void set_value(JSContext *ctx, JSValue v)
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

/* ---- the entry module ---- */

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
JSValue run_entry(JSContext *ctx, JSValueConst name, int extra, JSValueConst *extras)
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
        /* the kernel's finish of a primitive */
        r = done(ctx, v);
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
