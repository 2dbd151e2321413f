/*
 * shim.h: what the shim's files share: the control block, the value slots,
 * the host's imports, and the functions one file offers the others. The
 * interface itself (exports, imports, the control block) is described in
 * shim.c.
 */
#pragma once
#include <stdint.h>
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
    TAG_JSON = 6,   /* JSON text, ptr/len: host -> guest, a JSON host function's
                       answer (and plain data sent as JSON); guest -> host, a
                       JSON host function's arguments */
    TAG_ERROR = 7,  /* host -> guest only: throw Error(text), ptr/len */
    TAG_ASYNC = 8,  /* host -> guest only: the id of an asynchronous call, in
                       the number: the guest makes a promise, which an entry
                       settles later (kernel.h's ENTRY_SETTLE) */
    TAG_BYTES = 9,  /* a value in the codec's binary format (codec.c), ptr/len */
};

struct slot {
    int32_t tag;
    uint32_t len;
    union {
        double num;
        uint32_t ptr;
    } u;
};

/* Result status of qjs_eval / qjs_run_jobs and of an entry (entry_outcome). */
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
    volatile int32_t soft; /* offset 56: stop the bytecode only (wasmvm's Interrupt) */
    uint32_t heap_peak;    /* offset 60: the most heap_used since the host reset it */
    int64_t ops;           /* offset 64: what is left of a step's operation budget (ENTRY_STEP) */
};

extern struct ctl qjs_ctl;

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

/* The functions qjs_entry calls (shim.c), by number: internal/wasmvm's
   entry constants (entry.go; TestABI checks them, the tags and the control
   block's offsets against this file). Each takes the arguments qjs_entry
   passes it as they are, except the entries from ENTRY_SLOTS on, another
   layer's (the kernel's, kernel.h), which take (ctx, argv, argc): argc
   value slots at argv, their texts and bytes after them in the same guest
   buffer, each text followed by a NUL (wasmvm's Sandbox.Call). */
enum {
    ENTRY_EVAL = 0,
    ENTRY_RUN_JOBS = 1,
    ENTRY_MALLOC = 2,
    ENTRY_FREE = 3,
    ENTRY_DEF_HOST_FUNC = 4,
    ENTRY_DROP_JOBS = 5,
    ENTRY_INSPECT_STEP = 6,
    ENTRY_PREPARE_RUN = 7,
    ENTRY_SLOTS = 32,
};

/* The flags of a step of a session (kernel.h's ENTRY_STEP) and of its
   inspection (ENTRY_INSPECT_STEP): wasmvm's Step* constants. */
enum {
    STEP_BUDGET = 1, /* count loops and function entries against qjs_ctl.ops */
    STEP_SLOPPY = 2, /* sloppy global code, as Node's REPL runs it */
    STEP_KEPT = 4,   /* the inspection keeps the compiled step; the step runs the kept one */
};

/* ---- the host's imports ---- */

/* env.host_call(fn, argv, argc) -> status: calls the host's function fn
   with argc slots at argv; the answer comes in qjs_ctl.ret (hostcall.c).
   Status non-zero: the call failed, and the sandbox is spent. */
IMPORT("env", "host_call") extern int32_t host_call(int32_t fn, struct slot *argv, int32_t argc);
/* env.host_result(dst): copies the text of the last answer, of the length
   in qjs_ctl.ret.len, to dst. */
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

/* HOST_FN is the number of the host's function the shim calls on its own
   behalf (hostcall.c's shim_op): for the host functions of a run, its
   outcome, its console, Intl. Its first argument says what is asked
   (kernel.h's OP_*); wasmvm passes the call on unread. */
#define HOST_FN 0x7fffffff

/* MAX_SLOTS is the most arguments a host function takes; more is a
   RangeError (wasmvm.MaxHostArgs). */
#define MAX_SLOTS 16

/* ---- memory.c: the allocator and stops ---- */

extern const JSMallocFunctions heap_funcs;
int interrupt_handler(JSRuntime *rt, void *opaque);
void *qjs_malloc(uint32_t size);
void qjs_free(void *p);
void qjs_prepare_run(JSContext *ctx);

/* ---- realm.c: the realm and its hardening ---- */

int def_global(JSContext *ctx, JSValueConst global, const char *name, JSCFunction *fn, const char *fname, int len);
int delete_global(JSContext *ctx, JSValueConst global, const char *name);

/* ---- hostcall.c: host calls ---- */

/* slot_num makes s the number d. */
static inline void slot_num(struct slot *s, double d)
{
    s->tag = TAG_NUMBER;
    s->len = 0;
    s->u.num = d;
}

/* slot_ptr makes s the slot of tag (TAG_STRING, TAG_JSON, TAG_BYTES) whose
   text or bytes are len at p. */
static inline void slot_ptr(struct slot *s, int tag, const void *p, size_t len)
{
    s->tag = tag;
    s->len = (uint32_t)len;
    s->u.ptr = (uint32_t)(uintptr_t)p;
}

/* A host function's mode: how its arguments cross. */
enum {
    FN_PLAIN = 0, /* primitives as slots, other values encoded */
    FN_JSON = 1,  /* the JSON text of the list; the answer is JSON text */
    FN_SHOWN = 2, /* report, final_answer: encoded as FN_PLAIN's; the host keeps the value as decoded */
};

char *host_text(JSContext *ctx, uint32_t *plen);
int is_primitive(JSValueConst v);
int32_t qjs_def_host_func(JSContext *ctx, const char *name, int32_t fn);
int hostcall_init(JSContext *ctx, JSValueConst global);
int kernel_op(JSContext *ctx, struct slot *slots, int n);
JSValue kernel_op_function(JSContext *ctx, int op, const char *name);
JSValue host_fn_new(JSContext *ctx, uint32_t id, JSValue name, int mode);
JSValue host_fn_call(JSContext *ctx, int id, int mode, int argc, JSValueConst *argv);
JSValue host_value(JSContext *ctx, int tag, const char *p, uint32_t len, double num, int fn, int json);
JSValue slot_value(JSContext *ctx, const struct slot *s, int fn, int json);
int host_error_of(JSContext *ctx, JSValueConst e);
JSValue settle_call(JSContext *ctx, struct slot *slots, int argc);
void reset_calls(JSContext *ctx);

/* ---- module.c: modules ---- */

JSModuleDef *module_loader(JSContext *ctx, const char *name, void *opaque, JSValueConst attributes);
int module_check_attributes(JSContext *ctx, void *opaque, JSValueConst attributes);
JSModuleDef *module_program(JSContext *ctx, const char *name);
char *module_normalize(JSContext *ctx, const char *base, const char *name, void *opaque);

/* ---- run.c: results and the run of a job ---- */

void set_exception(JSContext *ctx);
void set_value(JSContext *ctx, JSValue v);
int32_t entry_outcome(JSContext *ctx, JSValue r);
int32_t qjs_eval(JSContext *ctx, const char *src, uint32_t len, const char *filename, int32_t module);
int32_t qjs_run_jobs(JSContext *ctx);
int run_init(JSContext *ctx, JSValueConst global);
JSValue run_job(JSContext *ctx, struct slot *s, int argc);
int hand_over(JSContext *ctx, JSValue **globals, uint32_t *n, JSValue *imports);
JSValue settle_with(JSContext *ctx, JSValueConst v);

/* ---- failure.c, console.c: the outcome, the console ---- */

/* The outcome's functions (outcome_fn), for the reactions of promises. */
enum { OUTCOME_DONE, OUTCOME_LINK_FAILED, OUTCOME_FAILED, N_OUTCOME_FNS };

int failure_init(JSContext *ctx);
JSValueConst outcome_fn(int which);
JSValue fail(JSContext *ctx, int phase, JSValueConst e);
JSValue done(JSContext *ctx, JSValueConst v);
void done_for_steps(int steps);
JSValue fail_pending(JSContext *ctx);
JSValue fail_caught(JSContext *ctx, int phase);
int console_init(JSContext *ctx);
JSValueConst console_value(void);

/* ---- session.c: the kernel readied, the executor's session ---- */

JSValue kernel_init(JSContext *ctx);
JSValue session_step(JSContext *ctx, struct slot *slots, int argc);
JSValue define_tool(JSContext *ctx, struct slot *slots, int argc);
JSValue define_value(JSContext *ctx, struct slot *slots, int argc);
JSValue install_console(JSContext *ctx);
void qjs_drop_jobs(JSContext *ctx);

/* ---- codec.c, inspect.c ---- */

int codec_init(JSContext *ctx, JSValueConst global);
/* What a value is encoded for (codec_encode's mode). A value that cannot
   cross fails the encode with a DataCloneError; but for ENC_CLONE, its
   message names the kind of value and where it was (codec.c). */
enum {
    ENC_CLONE = 0,  /* structuredClone: the platform's texts */
    ENC_SHOWN = 1,  /* to show (console, a step's value): functions and symbols dropped */
    ENC_RESULT = 2, /* a run's result: the path from "result" */
    ENC_ARGS = 3,   /* a host function's argument list: the path from "argument N" */
    ENC_STEP = 4,   /* a step's value, shown: what cannot cross (a function, a symbol,
                       a Proxy, a Promise, a WeakMap …) is left out */
};
int codec_encode(JSContext *ctx, JSValueConst v, int mode, uint8_t **p, size_t *len);
typedef JSValue codec_make_fn(JSContext *ctx, uint32_t id, JSValue name, int mode);
JSValue codec_decode(JSContext *ctx, const uint8_t *p, size_t len, codec_make_fn *make_fn);
const char *codec_kind(JSContext *ctx, JSValueConst v);
int codec_is_bytes(JSContext *ctx, JSValueConst v, const uint8_t **p, size_t *len);
JSValue inspect_take_step(void);
uint8_t *qjs_inspect_step(JSContext *ctx, const char *src, uint32_t len, const char *filename, int32_t flags);
