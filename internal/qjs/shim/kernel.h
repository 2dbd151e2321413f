/*
 * kernel.h: the kernel, the protocol of a job between the shim and
 * internal/engine, declared once here and mirrored in engine/ops.go
 * (TestKernelOps reads this file and checks that they agree):
 *
 *   - the operations (OP_*): what the sandbox asks of the host, the first
 *     argument of a call of the host's function HOST_FN (shim.h), the rest
 *     as each says;
 *   - the entries (ENTRY_*, from shim.h's ENTRY_SLOTS on): what the host
 *     asks of the sandbox, through qjs_entry, their arguments as slots
 *     (wasmvm's Sandbox.Call).
 *
 * A value the host sends (an answer, an entry's argument) is a slot: a
 * primitive, text, JSON text or bytes of the codec's format (codec.c), as
 * hostcall.c's host_value makes it. No JavaScript of the kernel's runs:
 * the work is the shim's C (shim.c lists its files).
 */
#pragma once

enum {
    OP_CALL = 0,          /* call host function id: id, then its arguments, primitives */
    OP_CALL_ENCODED = 1,  /* call host function id: id, then its argument list, encoded (codec.c) */
    OP_DONE = 2,          /* the run's value: 0 and a primitive, or 1 and the value encoded */
    OP_FAILED = 3,        /* the run failed: phase (below), name, message, stack, fileName, line,
                             column, and the id of the host function that threw, or -1 */
    OP_OUT_OF_MEMORY = 5, /* reporting a failure failed: the heap is exhausted */
    OP_LOG = 6,           /* a console call: level (log, info, warn, error, debug), the
                             arguments encoded */
    OP_INTL = 20,         /* Intl's host operations (internal/intl): the operation's name, its
                             texts, a number */
};

/* The phase of OP_FAILED. */
enum {
    PHASE_LINK = 0,   /* before any module body ran: loading or linking failed */
    PHASE_RUN = 1,    /* while running */
    PHASE_EXPORT = 2, /* the selected export does not exist */
};

/* The entries. Each stores its outcome as qjs_eval does (res_status, res):
   what it threw, a stop included, or its value (undefined). No job runs. */
enum {
    ENTRY_INIT = 32,            /* no arguments: readies the kernel in the realm, once, before
                                   the capture of the image (session.c) */
    ENTRY_RUN = 33,             /* a run of a job (run.c): the RUN_* slots below */
    ENTRY_SETTLE = 34,          /* settles asynchronous call id: id (a number), the value, or
                                   TAG_ERROR and the message of the Error it is rejected with */
    ENTRY_RESET = 35,           /* no arguments: forgets every pending asynchronous call */
    ENTRY_STEP = 36,            /* a step of a session: source, file name, flags (STEP_*, shim.h) */
    ENTRY_DEFINE_TOOL = 37,     /* name, host function id, mode (FN_*, shim.h)[, glue]: the tool global name */
    ENTRY_DEFINE_VALUE = 38,    /* name, value: the global name */
    ENTRY_INSTALL_CONSOLE = 39, /* no arguments: the capturing console becomes the global console */
};

/* The slots of ENTRY_RUN, in order; the globals follow, one slot each, in
   the order of the globals module's exports (RUN_GLOBALS_FROM on). */
enum {
    RUN_ENTRY = 0,   /* the entry module's name, as the module hooks know it */
    RUN_FN = 1,      /* the export to select */
    RUN_FLAGS = 2,   /* RUN_OPTIONAL, RUN_WITH_GLOBALS */
    RUN_ARGS = 3,    /* the list of the export's arguments, or undefined for none */
    RUN_IMPORTS = 4, /* the list of the bridged modules' objects, or undefined for none */
    RUN_CONSOLE = 5, /* the index among the globals of the capturing console, or -1 */
    RUN_REPORT = 6,  /* the index among the globals of the built-in report (host
                        function 0, FN_SHOWN), or -1 */
    RUN_GLOBALS_FROM = 7,
};

/* RUN_FLAGS */
enum {
    RUN_OPTIONAL = 1,     /* a missing export gives undefined instead of ExportMissing */
    RUN_WITH_GLOBALS = 2, /* the program imports the globals module: the globals and the
                             imports are decoded for it */
};

/* The bounds of a failure's texts, in UTF-16 code units (engine.MaxErrorText,
   engine.MaxFrameText): each of an error's name, message, stack and file
   name, and a thrown value's text, at most MAX_ERROR_TEXT, a longer one
   cut around a marker that says how much was cut; each line of a stack at
   most MAX_FRAME_TEXT (failure.c). */
#define MAX_ERROR_TEXT 20000
#define MAX_FRAME_TEXT 1000
