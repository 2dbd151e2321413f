/*
 * shim.c: the C side of Airlock's engine. QuickJS compiled to wasm32-wasi
 * (reactor) exports these functions to the Go host in internal/wasmvm; a
 * sandbox calls its functions through one of them, qjs_entry (below).
 * The shim is one file per concept, sharing shim.h:
 *
 *   memory.c    QuickJS's heap, limited and accounted; the stops
 *   realm.c     the realm and its hardening
 *   hostcall.c  calls of the host's functions
 *   module.c    the modules a program imports
 *   run.c       results, and the run of a job's entry module
 *   kernel.c    the kernel (the JavaScript that readies and reports a job)
 *               and the executor's session
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
 *   res_*     the result of the last qjs_eval/qjs_run_jobs.
 *
 * Host calls. qjs_def_host_func defines a global function; calling it
 * encodes the arguments as slots (struct slot) in a guest buffer and calls
 * the import env.host_call(fn, argv, argc). The host answers with a slot in
 * qjs_ctl.ret; the text of strings and JSON comes in a buffer the call
 * offered (answer_buf) when it fits, else it is fetched with
 * env.host_result(ptr) into a buffer the guest allocated. shim.h declares
 * the imports.
 */
#include <stdint.h>
#include "shim.h"

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
