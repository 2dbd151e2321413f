/*
 * run.c: the outcome of what the host runs, stored in the control block
 * (qjs_eval, qjs_run_jobs, the entries), and the run of a job
 * (ENTRY_RUN): its arguments, globals and bridged modules decoded, the
 * globals handed to the program's globals module, its entry module
 * compiled, linked and evaluated, and its export selected, all in C: no
 * JavaScript but the program's runs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "kernel.h"

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

/* entry_outcome stores the outcome of an entry that returned r (consumed):
   its value, or the pending exception. */
int32_t entry_outcome(JSContext *ctx, JSValue r)
{
    if (JS_IsException(r))
        set_exception(ctx);
    else
        set_value(ctx, r);
    return qjs_ctl.res_status;
}

/* ---- the run's state ----
 *
 * What ENTRY_RUN decoded for the program, kept here until the program
 * takes it: the selected export's arguments, and the globals and bridged
 * modules its globals module hands over (hand_over), whose evaluation
 * starts the run. One run at a time: a VM runs one job.
 */
static struct {
    JSAtom fn;           /* the export to select */
    int optional;        /* a missing export gives undefined */
    JSValue *args;       /* its arguments */
    uint32_t argc;
    JSValue *globals;    /* the globals, for the globals module */
    uint32_t nglobals;
    JSValue imports;     /* the bridged modules, frozen */
    int payload;         /* globals and imports are there to take */
    int started;         /* the globals module took them */
} run;

/* Natives the run uses, captured with the kernel (run_init): a program
   that replaces them later cannot reach the run. */
static JSValue object_freeze = JS_UNDEFINED, object_is_frozen = JS_UNDEFINED, builtin_report = JS_UNDEFINED;
/* The reactions of the entry module's promise (run_entry), C functions
   with data, which QuickJS calls without a frame of their own. */
static JSValue select_fn = JS_UNDEFINED, load_failed_fn = JS_UNDEFINED;

static void free_list(JSContext *ctx, JSValue *list, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        JS_FreeValue(ctx, list[i]);
    js_free(ctx, list);
}

/* run_clear drops what a run kept. */
static void run_clear(JSContext *ctx)
{
    if (run.fn != JS_ATOM_NULL)
        JS_FreeAtom(ctx, run.fn);
    free_list(ctx, run.args, run.argc);
    free_list(ctx, run.globals, run.nglobals);
    JS_FreeValue(ctx, run.imports);
    memset(&run, 0, sizeof run);
    run.fn = JS_ATOM_NULL;
    run.imports = JS_UNDEFINED;
}

/* list_of takes the elements of the array list (consumed), which the host
   sent: a new C array of *n values. Read before any program runs, from
   the array's own elements. */
static JSValue *list_of(JSContext *ctx, JSValue list, uint32_t *n)
{
    JSValue *vals = NULL, len;
    uint32_t i, k = 0;
    *n = 0;
    if (!JS_IsArray(ctx, list)) {
        JS_FreeValue(ctx, list);
        JS_ThrowTypeError(ctx, "airlock: malformed value from the host");
        return NULL;
    }
    len = JS_GetPropertyStr(ctx, list, "length");
    if (JS_ToUint32(ctx, &k, len) < 0 || !(vals = js_mallocz(ctx, sizeof(JSValue) * (k ? k : 1)))) {
        JS_FreeValue(ctx, len);
        JS_FreeValue(ctx, list);
        return NULL;
    }
    JS_FreeValue(ctx, len);
    for (i = 0; i < k; i++) {
        vals[i] = JS_GetPropertyUint32(ctx, list, i);
        if (JS_IsException(vals[i])) {
            free_list(ctx, vals, i);
            JS_FreeValue(ctx, list);
            return NULL;
        }
    }
    JS_FreeValue(ctx, list);
    *n = k;
    return vals;
}

/* deep_freeze freezes v and every object in it, through their own
   enumerable properties (Object.keys): the bridged modules are frozen
   copies, shared by every module that imports them. -1 with an exception
   pending (Object.freeze refuses a typed array with elements). */
static int deep_freeze(JSContext *ctx, JSValueConst root)
{
    JSValue *st = NULL, f;
    uint32_t sp = 0, cap = 0, i, n;
    JSPropertyEnum *tab;
    int err = 0;
    if (!JS_IsObject(root))
        return 0;
    st = js_malloc(ctx, sizeof(JSValue) * (cap = 64));
    if (!st)
        return -1;
    st[sp++] = JS_DupValue(ctx, root);
    while (sp > 0) {
        JSValue v = st[--sp];
        if (err || !JS_IsObject(v)) {
            JS_FreeValue(ctx, v);
            continue;
        }
        f = JS_Call(ctx, object_is_frozen, JS_UNDEFINED, 1, (JSValueConst *)&v);
        if (JS_IsException(f) || JS_ToBool(ctx, f)) {
            err = JS_IsException(f);
            JS_FreeValue(ctx, v);
            continue;
        }
        f = JS_Call(ctx, object_freeze, JS_UNDEFINED, 1, (JSValueConst *)&v);
        if (JS_IsException(f) || JS_GetOwnPropertyNames(ctx, &tab, &n, v, JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY) < 0) {
            err = 1;
            JS_FreeValue(ctx, v);
            continue;
        }
        JS_FreeValue(ctx, f);
        for (i = 0; i < n && !err; i++) {
            JSValue x = JS_GetProperty(ctx, v, tab[i].atom);
            if (JS_IsException(x)) {
                err = 1;
                break;
            }
            if (sp == cap) {
                JSValue *t = js_realloc(ctx, st, sizeof(JSValue) * (cap *= 2));
                if (!t) {
                    JS_FreeValue(ctx, x);
                    err = 1;
                    break;
                }
                st = t;
            }
            st[sp++] = x;
        }
        JS_FreePropertyEnum(ctx, tab, n);
        JS_FreeValue(ctx, v);
    }
    js_free(ctx, st);
    return err ? -1 : 0;
}

/* run_input decodes the run's arguments, globals and bridged modules from
   the slots of ENTRY_RUN (kernel.h) into run. -1 with an exception
   pending. */
static int run_input(JSContext *ctx, struct slot *s, int argc, int globals)
{
    int32_t console = -1, report = -1;
    uint32_t i, n;
    JSValue v;
    if (s[RUN_ARGS].tag != TAG_UNDEFINED) {
        v = slot_value(ctx, &s[RUN_ARGS], -1, 0);
        if (JS_IsException(v) || !(run.args = list_of(ctx, v, &run.argc)))
            return -1;
    }
    if (!globals)
        return 0;
    if (s[RUN_CONSOLE].tag == TAG_NUMBER)
        console = (int32_t)s[RUN_CONSOLE].u.num;
    if (s[RUN_REPORT].tag == TAG_NUMBER)
        report = (int32_t)s[RUN_REPORT].u.num;
    n = (uint32_t)(argc - RUN_GLOBALS_FROM);
    if (!(run.globals = js_mallocz(ctx, sizeof(JSValue) * (n ? n : 1))))
        return -1;
    for (i = 0; i < n; i++) {
        if ((int32_t)i == console)
            v = JS_DupValue(ctx, console_value());
        else if ((int32_t)i == report)
            v = JS_DupValue(ctx, builtin_report);
        else
            v = slot_value(ctx, &s[RUN_GLOBALS_FROM + i], -1, 0);
        if (JS_IsException(v))
            return -1;
        run.globals[run.nglobals++] = v;
    }
    if (s[RUN_IMPORTS].tag != TAG_UNDEFINED) {
        run.imports = slot_value(ctx, &s[RUN_IMPORTS], -1, 0);
        if (JS_IsException(run.imports) || deep_freeze(ctx, run.imports) < 0)
            return -1;
    } else if (JS_IsException(run.imports = JS_NewArray(ctx)))
        return -1;
    run.payload = 1;
    return 0;
}

/* hand_over gives the globals module the run's globals (*globals, *n) and
   bridged modules (*imports), the caller's to free, and marks the run as
   started. -1 with an exception pending: they were taken already. */
int hand_over(JSContext *ctx, JSValue **globals, uint32_t *n, JSValue *imports)
{
    run.started = 1;
    if (!run.payload) {
        JS_ThrowTypeError(ctx, "airlock: the globals were already taken");
        return -1;
    }
    *globals = run.globals;
    *n = run.nglobals;
    *imports = run.imports;
    run.globals = NULL;
    run.nglobals = 0;
    run.imports = JS_UNDEFINED;
    run.payload = 0;
    return 0;
}

/* failed_now reports what loading, linking or evaluating threw: a link
   failure before the globals module took the globals, else the program's.
   A stop goes on. */
static JSValue failed_now(JSContext *ctx, JSValueConst e)
{
    return fail(ctx, run.started ? PHASE_RUN : PHASE_LINK, e);
}

static JSValue js_load_failed(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic,
                              JSValue *data)
{
    (void)this_val;
    (void)magic;
    (void)data;
    return failed_now(ctx, argc > 0 ? argv[0] : JS_UNDEFINED);
}

/* settle_with finishes the run with v once a promise resolved with v
   settles: done with its value, failed with its reason, as an async
   function's return is awaited. */
JSValue settle_with(JSContext *ctx, JSValueConst v)
{
    JSValue funcs[2], p = JS_NewPromiseCapability(ctx, funcs), r;
    if (JS_IsException(p))
        return p;
    r = JS_Call(ctx, funcs[0], JS_UNDEFINED, 1, &v);
    JS_FreeValue(ctx, funcs[0]);
    JS_FreeValue(ctx, funcs[1]);
    if (!JS_IsException(r)) {
        JS_FreeValue(ctx, r);
        r = JS_PromiseThen(ctx, p, outcome_fn(OUTCOME_DONE), outcome_fn(OUTCOME_FAILED), NULL) < 0 ? JS_EXCEPTION
                                                                                               : JS_UNDEFINED;
    }
    JS_FreeValue(ctx, p);
    return r;
}

/* select calls or reads the selected export of the entry module's
   namespace ns and finishes the run with its value once that settles (a
   missing export: undefined if optional, else ExportMissing). quiet: no
   job is queued, so that a primitive value, which settles a promise with
   no code of the program's, finishes the run at once if the export's call
   queued no job either: no job of the program's could have run before the
   promise's. */
static JSValue select_export(JSContext *ctx, JSValueConst ns, int quiet)
{
    JSValue v, r;
    /* ns is not the namespace if the module's own then gave another value */
    int has = JS_IsObject(ns) ? JS_HasProperty(ctx, ns, run.fn) : 0;
    if (has < 0)
        goto failed;
    if (!has) {
        const char *fn;
        if (run.optional)
            return done(ctx, JS_UNDEFINED);
        fn = JS_AtomToCString(ctx, run.fn);
        if (!fn)
            return JS_EXCEPTION;
        JS_ThrowReferenceError(ctx, "export '%s' not found", fn);
        JS_FreeCString(ctx, fn);
        return fail_caught(ctx, PHASE_EXPORT);
    }
    v = JS_GetProperty(ctx, ns, run.fn);
    if (!JS_IsException(v)) {
        if (JS_IsFunction(ctx, v)) {
            r = JS_Call(ctx, v, JS_UNDEFINED, (int)run.argc, (JSValueConst *)run.args);
            JS_FreeValue(ctx, v);
            v = r;
        } else if (run.argc > 0) {
            const char *fn = JS_AtomToCString(ctx, run.fn);
            JS_FreeValue(ctx, v);
            if (fn)
                JS_ThrowTypeError(ctx, "export '%s' is not a function, so it takes no arguments", fn);
            JS_FreeCString(ctx, fn);
            v = JS_EXCEPTION;
        }
    }
    if (JS_IsException(v)) {
    failed:
        return fail_caught(ctx, PHASE_RUN);
    }
    if (quiet && is_primitive(v) && !JS_IsJobPending(JS_GetRuntime(ctx)))
        r = done(ctx, v);
    else
        r = settle_with(ctx, v);
    JS_FreeValue(ctx, v);
    return r;
}

/* js_select is select_export as the reaction to the namespace's promise. */
static JSValue js_select(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic,
                         JSValue *data)
{
    (void)this_val;
    (void)magic;
    (void)data;
    return select_export(ctx, argc > 0 ? argv[0] : JS_UNDEFINED, 0);
}

/* js_namespace returns its data, the namespace. */
static JSValue js_namespace(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic,
                            JSValue *data)
{
    (void)this_val;
    (void)argc;
    (void)argv;
    (void)magic;
    return JS_DupValue(ctx, data[0]);
}

/* select_at_once reads the selected export of the entry module m, for a
   quiet run with no arguments, when select_export would finish the run
   with it at once: m exports it and it is a primitive (a function would be
   called; a primitive settles a promise with no code of the program's).
   Returns 1 with the value in *v, else 0 (select_export selects: a read
   that throws, a binding not yet initialized, throws there again). A
   binding of m's own is read without m's namespace (JS_GetModuleExport,
   patch 0012); any other name, from the namespace, which runs no code of
   the program's when it is read. */
static int select_at_once(JSContext *ctx, JSModuleDef *m, JSValue *v)
{
    JSValue ns, x = JS_UNDEFINED;
    int has;
    if (qjs_ctl.stop || qjs_ctl.soft || run.argc > 0)
        return 0;
    has = JS_GetModuleExport(ctx, m, run.fn, &x);
    if (!has) {
        ns = JS_GetModuleNamespace(ctx, m);
        has = JS_IsException(ns) ? -1 : JS_HasProperty(ctx, ns, run.fn);
        if (has > 0)
            x = JS_GetProperty(ctx, ns, run.fn);
        JS_FreeValue(ctx, ns);
    }
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
   import() would but with no promise job around each step, and selects
   its export: at once if the module's evaluation promise is fulfilled and
   no job is pending (no job of the program's could run before), else two
   jobs after the module evaluated, as the promise of import() would give
   the namespace, so that a program's own microtasks run in the same order
   as they would after an import(). What loading or linking threw fails the
   run (failed_now). The module is loaded by module_program, as import()
   would load a JavaScript module: the host resolves the entry's name to itself, so no
   normalization is asked for. A stop is returned as the exception it
   is. */
static JSValue run_entry(JSContext *ctx, const char *name)
{
    JSValue mv, p, ns, e, r, v, funcs[2], p2, thunk;
    JSModuleDef *m;
    int quiet;
    m = module_program(ctx, name);
    if (!m || JS_ResolveModule(ctx, JS_MKPTR(JS_TAG_MODULE, m)) < 0)
        goto fail;
    mv = JS_DupValue(ctx, JS_MKPTR(JS_TAG_MODULE, m));
    p = JS_EvalFunction(ctx, mv); /* takes mv */
    if (JS_IsException(p))
        goto fail;
    quiet = JS_PromiseState(ctx, p) == JS_PROMISE_FULFILLED && !JS_IsJobPending(JS_GetRuntime(ctx));
    if (quiet && select_at_once(ctx, m, &v)) {
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
    if (quiet) {
        JS_FreeValue(ctx, p);
        r = select_export(ctx, ns, 1);
        JS_FreeValue(ctx, ns);
        return r;
    }
    /* p, then the namespace, then the selection */
    thunk = JS_NewCFunctionData(ctx, js_namespace, 0, 0, 1, (JSValueConst *)&ns);
    JS_FreeValue(ctx, ns);
    p2 = JS_IsException(thunk) ? JS_EXCEPTION : JS_NewPromiseCapability(ctx, funcs);
    r = JS_UNDEFINED;
    if (JS_IsException(p2) || JS_PromiseThen(ctx, p, thunk, JS_UNDEFINED, (JSValueConst *)funcs) < 0 ||
        JS_PromiseThen(ctx, p2, select_fn, load_failed_fn, NULL) < 0)
        r = JS_EXCEPTION;
    if (!JS_IsException(p2)) {
        JS_FreeValue(ctx, funcs[0]);
        JS_FreeValue(ctx, funcs[1]);
    }
    JS_FreeValue(ctx, p2);
    JS_FreeValue(ctx, thunk);
    JS_FreeValue(ctx, p);
    return r;
fail:
    if (qjs_ctl.stop || qjs_ctl.soft || JS_IsUncatchableException(ctx)) /* stopped: no more runs */
        return JS_EXCEPTION;
    e = JS_GetException(ctx);
    r = failed_now(ctx, e);
    JS_FreeValue(ctx, e);
    return r;
}

/* run_job is ENTRY_RUN (kernel.h): it decodes the run's input (run_input),
   then runs its entry module (run_entry); what decoding threw is a link
   failure. No job runs. */
JSValue run_job(JSContext *ctx, struct slot *s, int argc)
{
    const char *fn;
    int flags;
    if (argc < RUN_GLOBALS_FROM || s[RUN_ENTRY].tag != TAG_STRING || s[RUN_FN].tag != TAG_STRING ||
        s[RUN_FLAGS].tag != TAG_NUMBER)
        return JS_ThrowTypeError(ctx, "airlock: bad run");
    run_clear(ctx);
    done_for_steps(0);
    flags = (int)s[RUN_FLAGS].u.num;
    fn = (const char *)(uintptr_t)s[RUN_FN].u.ptr;
    run.fn = JS_NewAtomLen(ctx, fn, s[RUN_FN].len);
    run.optional = (flags & RUN_OPTIONAL) != 0;
    if (run.fn == JS_ATOM_NULL || run_input(ctx, s, argc, (flags & RUN_WITH_GLOBALS) != 0) < 0)
        return fail_caught(ctx, PHASE_LINK);
    return run_entry(ctx, (const char *)(uintptr_t)s[RUN_ENTRY].u.ptr);
}

/* run_init captures what runs use and makes the built-in report (host
   function 0, FN_SHOWN), which a run's globals name by its index: a run pays
   nothing to make it (ENTRY_INIT). */
int run_init(JSContext *ctx, JSValueConst global)
{
    JSValue object = JS_GetPropertyStr(ctx, global, "Object");
    object_freeze = JS_GetPropertyStr(ctx, object, "freeze");
    object_is_frozen = JS_GetPropertyStr(ctx, object, "isFrozen");
    JS_FreeValue(ctx, object);
    run.fn = JS_ATOM_NULL;
    run.imports = JS_UNDEFINED;
    builtin_report = host_fn_new(ctx, 0, JS_NewString(ctx, ""), FN_SHOWN);
    select_fn = JS_NewCFunctionData(ctx, js_select, 1, 0, 0, NULL);
    load_failed_fn = JS_NewCFunctionData(ctx, js_load_failed, 1, 0, 0, NULL);
    return JS_IsFunction(ctx, object_freeze) && JS_IsFunction(ctx, object_is_frozen) &&
                   !JS_IsException(builtin_report) && !JS_IsException(select_fn) && !JS_IsException(load_failed_fn)
               ? 0
               : -1;
}
