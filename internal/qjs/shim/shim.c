/*
 * shim.c: the C side of Airlock's engine. QuickJS compiled to wasm32-wasi
 * (reactor) exports these functions to the Go host in internal/wasmvm; a
 * sandbox calls its functions through one of them, qjs_entry (below).
 * The shim is one file per concept, sharing shim.h:
 *
 *   memory.c    QuickJS's heap, limited and accounted; the stops
 *   realm.c     the realm and its hardening
 *   hostcall.c  calls of the host's functions, their answers, the pending
 *               asynchronous calls
 *   module.c    the modules a program imports
 *   run.c       results, and the run of a job: its input, its entry module,
 *               the export it selects
 *   session.c   the kernel readied, and the executor's session
 *   failure.c   the outcome told to the host, its texts cut
 *   console.c   the capturing console
 *   codec.c     the value codec's sandbox side, both ways
 *   inspect.c   an executor step's validation
 *   bulk.c      memcpy, memmove and memset, with stops
 *
 * Control block. One static struct, qjs_ctl (shim.h), at an address
 * exported as the global "qjs_ctl". The host reads and writes it directly:
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
 *   res_*     the outcome of the last qjs_eval/qjs_run_jobs or entry (entry_outcome).
 *
 * Host calls. A host function encodes its arguments as slots (struct slot)
 * in a guest buffer and calls the import env.host_call(fn, argv, argc):
 * those of a run call HOST_FN with the kernel's operation first (kernel.h),
 * those qjs_def_host_func defines call their own number. The host answers
 * with a slot in qjs_ctl.ret; the text or bytes of strings, JSON and
 * encoded values come in a buffer the call offered (answer_buf) when they
 * fit, else they are fetched with env.host_result(ptr) into a buffer the
 * guest allocated. shim.h declares the imports.
 *
 * Entries. The host calls the shim's functions through qjs_entry, by
 * number (shim.h's ENTRY_*, and the kernel's, kernel.h, whose arguments
 * are value slots in a guest buffer the host wrote).
 */
#include <stdint.h>
#include "shim.h"
#include "kernel.h"

EXPORT(qjs_ctl_addr) struct ctl *qjs_ctl_addr(void) { return &qjs_ctl; }

/* qjs_entry calls the function op names with the arguments before it: the
   one function the host calls a sandbox's functions through (wasmvm's
   entry.go). The engine gives every exported function the host calls a
   native stack of its own, which grows to the deepest call it ran and
   never shrinks: ten exports, three of them deep, cost an idle sandbox
   ~250 KiB of host memory, one entry ~60 KiB (RATIONALE.md, "Idle executor
   memory"). The numbers (ENTRY_*, shim.h) are wasmvm's entry constants. */

#define P(x) ((void *)(uintptr_t)(x))

EXPORT(qjs_entry) uint32_t qjs_entry(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e, int32_t op)
{
    JSContext *ctx = P(a);
    struct slot *slots = P(b);
    int argc = (int)c;
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
    case ENTRY_DROP_JOBS:
        qjs_drop_jobs(P(a));
        return 0;
    case ENTRY_PREPARE_RUN:
        qjs_prepare_run(P(a));
        return 0;
    case ENTRY_INSPECT_STEP:
        return (uint32_t)(uintptr_t)qjs_inspect_step(P(a), P(b), c, P(d), (int32_t)e);
    /* the kernel's (kernel.h): (ctx, slots, argc) */
    case ENTRY_INIT:
        return (uint32_t)entry_outcome(ctx, kernel_init(ctx));
    case ENTRY_RUN:
        return (uint32_t)entry_outcome(ctx, run_job(ctx, slots, argc));
    case ENTRY_SETTLE:
        return (uint32_t)entry_outcome(ctx, settle_call(ctx, slots, argc));
    case ENTRY_RESET:
        reset_calls(ctx);
        return (uint32_t)entry_outcome(ctx, JS_UNDEFINED);
    case ENTRY_STEP:
        return (uint32_t)entry_outcome(ctx, session_step(ctx, slots, argc));
    case ENTRY_DEFINE_TOOL:
        return (uint32_t)entry_outcome(ctx, define_tool(ctx, slots, argc));
    case ENTRY_DEFINE_VALUE:
        return (uint32_t)entry_outcome(ctx, define_value(ctx, slots, argc));
    case ENTRY_INSTALL_CONSOLE:
        return (uint32_t)entry_outcome(ctx, install_console(ctx));
    }
    __builtin_trap();
}

#undef P
