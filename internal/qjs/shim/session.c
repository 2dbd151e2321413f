/*
 * session.c: the kernel readied (ENTRY_INIT), and the executor's session:
 * one VM, many steps, each a script whose promise the session awaits
 * (ENTRY_STEP), with the session's tools (ENTRY_DEFINE_TOOL), values
 * (ENTRY_DEFINE_VALUE) and console (ENTRY_INSTALL_CONSOLE) on the global
 * object. Everything here is C: no JavaScript of the kernel's runs, and no
 * program can reach what it uses (captured before any program runs).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "kernel.h"

/* ---- the kernel ---- */

static int session_init(JSContext *ctx, JSValueConst global);

/* kernel_init is ENTRY_INIT: it readies the kernel's work in the realm,
   once, in the image every sandbox of a run starts from: the host
   functions' errors (hostcall.c), the outcome (failure.c), the console
   (console.c), the run (run.c) and the session (below); and it defines
   __airlock_intl, Intl's host function (OP_INTL, internal/intl), which
   Intl's script takes from the global object. */
JSValue kernel_init(JSContext *ctx)
{
    JSValue global = JS_GetGlobalObject(ctx);
    int err = 0;
    err |= hostcall_init(ctx, global);
    err |= failure_init(ctx);
    err |= console_init(ctx);
    err |= run_init(ctx, global);
    err |= session_init(ctx, global);
    err |= JS_DefinePropertyValueStr(ctx, global, "__airlock_intl", kernel_op_function(ctx, OP_INTL, "intl"),
                                     JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0;
    JS_FreeValue(ctx, global);
    if (err && !JS_HasException(ctx))
        JS_ThrowInternalError(ctx, "airlock: the kernel could not be readied");
    return err ? JS_EXCEPTION : JS_UNDEFINED;
}

/* qjs_set_strip sets what QuickJS keeps of the functions it compiles from
   now on: flags 3 neither their source nor their debug information (the
   engine's own scripts, Intl: no program can read their text through
   Function.prototype.toString, and their frames are left out of a
   backtrace, patch 0014), 0 both (the default). */
EXPORT(qjs_set_strip) void qjs_set_strip(JSContext *ctx, int32_t flags)
{
    JS_SetStripInfo(JS_GetRuntime(ctx), flags);
}

/* ---- steps ---- */

static JSValue syntax_error_proto = JS_UNDEFINED, exec_fn = JS_UNDEFINED;

/* js_exec is the reaction to a step's promise, fulfilled with { value }
   (patch 0006): the step finishes with the value once it settles. A
   native promise (a subclass's too) is awaited without reading anything of
   it (its then, its constructor): a script's completion value is not
   awaited at all, so no getter or subclass of the program's may see the
   step wait for it (test262: a finally's count of promises, a for await's
   lookups of constructor, were one off when a step ended with the
   promise). Any other value is settled as an async function's return is
   (settle_with): a thenable's then is called. */
static JSValue js_exec(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    JSValue v, r;
    (void)this_val;
    (void)magic;
    (void)data;
    v = argc > 0 && JS_IsObject(argv[0]) ? JS_GetPropertyStr(ctx, argv[0], "value") : JS_UNDEFINED;
    if (JS_IsException(v))
        return fail_caught(ctx, PHASE_RUN);
    if ((int)JS_PromiseState(ctx, v) >= 0) /* -1: not a promise (the enum is unsigned) */
        r = JS_PromiseThen(ctx, v, outcome_fn(OUTCOME_DONE), outcome_fn(OUTCOME_FAILED), NULL) < 0 ? JS_EXCEPTION
                                                                                               : JS_UNDEFINED;
    else
        r = settle_with(ctx, v);
    JS_FreeValue(ctx, v);
    return r;
}

/* compile_failed reports what compiling a step threw: a SyntaxError (told
   by its prototype: no getter runs) is a link error. */
static JSValue compile_failed(JSContext *ctx, JSValueConst e)
{
    JSValue proto = JS_IsObject(e) ? JS_GetPrototype(ctx, e) : JS_UNDEFINED;
    int syntax = JS_IsObject(proto) && JS_VALUE_GET_PTR(proto) == JS_VALUE_GET_PTR(syntax_error_proto);
    JS_FreeValue(ctx, proto);
    return fail(ctx, syntax ? PHASE_LINK : PHASE_RUN, e);
}

/* session_step is ENTRY_STEP (kernel.h): it evaluates a step of the session, the
   source in slots[0] (NUL after it), as global code of the realm named as
   slots[1] says, strict unless the flags in slots[2] have STEP_SLOPPY:
   top-level await and return allowed; with STEP_BUDGET, its loops and
   function entries counted against qjs_ctl.ops (patch 0006); with
   STEP_KEPT, it runs instead the step qjs_inspect_step compiled and kept
   (inspect.c), and slots[0] and slots[1] are not read. The step's promise
   (of { value }) finishes it (js_exec), or what its compilation threw
   fails it (compile_failed). No job runs. */
JSValue session_step(JSContext *ctx, struct slot *slots, int argc)
{
    JSValue fn, e, r;
    int flags;
    if (argc != 3 || slots[2].tag != TAG_NUMBER)
        return JS_ThrowTypeError(ctx, "airlock: bad step");
    flags = (int)slots[2].u.num;
    done_for_steps(1);
    if (flags & STEP_KEPT)
        fn = JS_EvalFunction(ctx, inspect_take_step());
    else if (slots[0].tag != TAG_STRING || slots[1].tag != TAG_STRING)
        return JS_ThrowTypeError(ctx, "airlock: bad step");
    else
        fn = JS_Eval(ctx, (const char *)(uintptr_t)slots[0].u.ptr, slots[0].len,
                     (const char *)(uintptr_t)slots[1].u.ptr,
                     JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_ASYNC | JS_EVAL_FLAG_STEP |
                         ((flags & STEP_SLOPPY) ? 0 : JS_EVAL_FLAG_STRICT) |
                         ((flags & STEP_BUDGET) ? JS_EVAL_FLAG_BUDGET : 0));
    if (JS_IsException(fn)) {
        if (qjs_ctl.stop || qjs_ctl.soft || JS_IsUncatchableException(ctx)) /* interrupted, or out of memory */
            return JS_EXCEPTION;
        e = JS_GetException(ctx);
        r = compile_failed(ctx, e);
        JS_FreeValue(ctx, e);
        return r;
    }
    r = JS_PromiseThen(ctx, fn, exec_fn, outcome_fn(OUTCOME_FAILED), NULL) < 0 ? JS_EXCEPTION : JS_UNDEFINED;
    JS_FreeValue(ctx, fn);
    return r;
}

/* qjs_drop_jobs drops every pending job: what a step of a session left
   queued never runs, and its promises stay pending. */
EXPORT(qjs_drop_jobs) void qjs_drop_jobs(JSContext *ctx) { JS_DropPendingJobs(JS_GetRuntime(ctx)); }

/* ---- tools ----
 *
 * A tool is a global of the session, read-only and not configurable, so
 * that no step's let, const or class can shadow it: a C function with
 * data (no frame of its own) whose data is its index in the table below,
 * which says which host function it calls. A name defined again keeps its
 * function and calls the new host function (a glued tool keeps what its
 * glue made, which calls the new host function).
 */

struct tool {
    JSAtom name;
    int32_t id, mode;
};

static struct tool *tools;
static uint32_t ntools, tools_cap;

static JSValue js_tool(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    struct tool *t = &tools[JS_VALUE_GET_INT(data[0])];
    (void)this_val;
    (void)magic;
    return host_fn_call(ctx, t->id, t->mode, argc, argv);
}

/* glued is what the glue (a function expression, source of len bytes,
   NUL after them as after every string slot) makes of the tool function
   f: its property name, or an exception. The glue runs as the realm's
   code, under the caller's stop. */
static JSValue glued(JSContext *ctx, const char *glue, size_t len, JSAtom name, JSValue f)
{
    JSValue make, made, v;
    make = JS_Eval(ctx, glue, len, "<glue>", JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_STRICT);
    if (JS_IsException(make))
        return make;
    made = JS_Call(ctx, make, JS_UNDEFINED, 1, (JSValueConst *)&f);
    JS_FreeValue(ctx, make);
    if (JS_IsException(made))
        return made;
    v = JS_IsObject(made) ? JS_GetProperty(ctx, made, name) : JS_UNDEFINED;
    JS_FreeValue(ctx, made);
    if (JS_IsUndefined(v))
        return JS_ThrowTypeError(ctx, "airlock: the glue makes no such global");
    return v;
}

/* define_tool is ENTRY_DEFINE_TOOL: the global named slots[0] calls host
   function slots[1] of mode slots[2] (FN_*). With a fourth slot, the glue
   (JavaScript: a function expression) is called with that function, and
   the global is the property of the same name of what it returns (fetch,
   made by JavaScript from the host function that does the requests); the
   host function itself is then no global, and no program can reach it. */
JSValue define_tool(JSContext *ctx, struct slot *slots, int argc)
{
    JSValue global, f, idx;
    JSAtom name;
    uint32_t i;
    int32_t id, mode;
    int r;
    if ((argc != 3 && argc != 4) || slots[0].tag != TAG_STRING || slots[1].tag != TAG_NUMBER ||
        slots[2].tag != TAG_NUMBER || (argc == 4 && slots[3].tag != TAG_STRING))
        return JS_ThrowTypeError(ctx, "airlock: bad tool");
    id = (int32_t)slots[1].u.num;
    mode = (int32_t)slots[2].u.num;
    if (id < 0 || mode < FN_PLAIN || mode > FN_SHOWN)
        return JS_ThrowTypeError(ctx, "airlock: bad tool");
    name = JS_NewAtomLen(ctx, (const char *)(uintptr_t)slots[0].u.ptr, slots[0].len);
    if (name == JS_ATOM_NULL)
        return JS_EXCEPTION;
    for (i = 0; i < ntools; i++) {
        if (tools[i].name == name) {
            JS_FreeAtom(ctx, name);
            tools[i].id = id;
            tools[i].mode = mode;
            return JS_UNDEFINED;
        }
    }
    if (ntools == tools_cap) {
        uint32_t cap = tools_cap ? tools_cap * 2 : 8;
        struct tool *t = js_realloc(ctx, tools, sizeof(*t) * cap);
        if (!t) {
            JS_FreeAtom(ctx, name);
            return JS_EXCEPTION;
        }
        tools = t;
        tools_cap = cap;
    }
    /* frozen, as Object.freeze leaves it: its name and length read-only
       and not configurable, and no property can be added */
    idx = JS_NewInt32(ctx, (int32_t)ntools);
    f = JS_NewCFunctionData(ctx, js_tool, 0, 0, 1, (JSValueConst *)&idx);
    if (JS_IsException(f) || JS_DefinePropertyValueStr(ctx, f, "name", JS_AtomToString(ctx, name), 0) < 0 ||
        JS_DefinePropertyValueStr(ctx, f, "length", JS_NewInt32(ctx, 0), 0) < 0 || JS_PreventExtensions(ctx, f) < 0) {
        JS_FreeValue(ctx, f);
        JS_FreeAtom(ctx, name);
        return JS_EXCEPTION;
    }
    /* the entry is filled before the glue runs (f reads it if called), and
       counted once the global is defined */
    tools[ntools].name = name;
    tools[ntools].id = id;
    tools[ntools].mode = mode;
    if (argc == 4) {
        JSValue v = glued(ctx, (const char *)(uintptr_t)slots[3].u.ptr, slots[3].len, name, f);
        JS_FreeValue(ctx, f);
        if (JS_IsException(v)) {
            JS_FreeAtom(ctx, name);
            return JS_EXCEPTION;
        }
        f = v;
    }
    global = JS_GetGlobalObject(ctx);
    r = JS_DefineProperty(ctx, global, name, f, JS_UNDEFINED, JS_UNDEFINED,
                          JS_PROP_HAS_VALUE | JS_PROP_HAS_WRITABLE | JS_PROP_HAS_ENUMERABLE |
                              JS_PROP_HAS_CONFIGURABLE | JS_PROP_THROW);
    JS_FreeValue(ctx, global);
    JS_FreeValue(ctx, f);
    if (r < 0) {
        JS_FreeAtom(ctx, name);
        return JS_EXCEPTION;
    }
    ntools++; /* the name kept for the life of the VM */
    return JS_UNDEFINED;
}

/* ---- values and the console ---- */

/* define_value is ENTRY_DEFINE_VALUE: the global named slots[0] is the
   value of slots[1] (an entry's value, host_value). A name a step
   declared (a var: not configurable) takes the new value. */
JSValue define_value(JSContext *ctx, struct slot *slots, int argc)
{
    JSValue global, v;
    JSPropertyDescriptor d;
    JSAtom name;
    int has, r;
    if (argc != 2 || slots[0].tag != TAG_STRING)
        return JS_ThrowTypeError(ctx, "airlock: bad value");
    v = slot_value(ctx, &slots[1], -1, 0);
    if (JS_IsException(v))
        return v;
    name = JS_NewAtomLen(ctx, (const char *)(uintptr_t)slots[0].u.ptr, slots[0].len);
    if (name == JS_ATOM_NULL) {
        JS_FreeValue(ctx, v);
        return JS_EXCEPTION;
    }
    global = JS_GetGlobalObject(ctx);
    has = JS_GetOwnProperty(ctx, &d, global, name);
    if (has > 0) {
        JS_FreeValue(ctx, d.value);
        JS_FreeValue(ctx, d.getter);
        JS_FreeValue(ctx, d.setter);
    }
    if (has < 0) {
        JS_FreeValue(ctx, v);
        r = -1;
    } else if (has > 0 && !(d.flags & JS_PROP_CONFIGURABLE) && (d.flags & JS_PROP_WRITABLE))
        r = JS_SetProperty(ctx, global, name, v);
    else
        r = JS_DefinePropertyValue(ctx, global, name, v, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE | JS_PROP_THROW);
    JS_FreeValue(ctx, global);
    JS_FreeAtom(ctx, name);
    return r < 0 ? JS_EXCEPTION : JS_UNDEFINED;
}

/* install_console is ENTRY_INSTALL_CONSOLE: the capturing console becomes
   the global console. */
JSValue install_console(JSContext *ctx)
{
    JSValue global = JS_GetGlobalObject(ctx);
    int r = JS_DefinePropertyValueStr(ctx, global, "console", JS_DupValue(ctx, console_value()),
                                      JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE | JS_PROP_THROW);
    JS_FreeValue(ctx, global);
    return r < 0 ? JS_EXCEPTION : JS_UNDEFINED;
}

static int session_init(JSContext *ctx, JSValueConst global)
{
    JSValue se = JS_GetPropertyStr(ctx, global, "SyntaxError");
    syntax_error_proto = JS_GetPropertyStr(ctx, se, "prototype");
    JS_FreeValue(ctx, se);
    exec_fn = JS_NewCFunctionData(ctx, js_exec, 1, 0, 0, NULL);
    return JS_IsObject(syntax_error_proto) && !JS_IsException(exec_fn) ? 0 : -1;
}
