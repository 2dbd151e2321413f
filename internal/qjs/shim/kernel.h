/*
 * kernel.h: the kernel's operations, what the sandbox asks of the host's
 * kernel function (KERNEL_FN): the first argument of such a host call, the
 * rest as each says. internal/engine answers them (ops.go mirrors these
 * numbers, and TestKernelOps reads this file to check that they agree).
 * The kernel's JavaScript names none of them: it calls the shim's hooks,
 * which add the operation.
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

/* The bounds of a failure's texts, in UTF-16 code units (engine.MaxErrorText,
   engine.MaxFrameText): each of an error's name, message, stack and file
   name, and a thrown value's text, at most MAX_ERROR_TEXT, a longer one
   cut around a marker that says how much was cut; each line of a stack at
   most MAX_FRAME_TEXT (failure.c). */
#define MAX_ERROR_TEXT 20000
#define MAX_FRAME_TEXT 1000
