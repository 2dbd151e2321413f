package airlock

import "fmt"

// ErrorCode is the stable code of an [ExecutorError].
type ErrorCode string

// The executor's error codes. ErrInitFailed keeps the contract's name,
// ERR_SES_INIT_FAILED, for a sandbox that could not be created and hardened.
// ErrMemoryLimit, ErrInvalidArgument and ErrInterrupted extend the contract.
const (
	CodeInvalidState     ErrorCode = "ERR_INVALID_STATE"
	CodeInitFailed       ErrorCode = "ERR_SES_INIT_FAILED"
	CodeValidationFailed ErrorCode = "ERR_VALIDATION_FAILED"
	CodeImportNotAllowed ErrorCode = "ERR_IMPORT_NOT_ALLOWED"
	CodeMaxOpsExceeded   ErrorCode = "ERR_MAX_OPS_EXCEEDED"
	CodeExecTimeout      ErrorCode = "ERR_EXEC_TIMEOUT"
	CodeRuntimeException ErrorCode = "ERR_RUNTIME_EXCEPTION"
	CodeToolProxyFail    ErrorCode = "ERR_TOOL_PROXY_FAIL"
	CodeCleanupFailed    ErrorCode = "ERR_CLEANUP_FAILED"
	CodeMemoryLimit      ErrorCode = "ERR_MEMORY_LIMIT_EXCEEDED"
	CodeInvalidArgument  ErrorCode = "ERR_INVALID_ARGUMENT"
	CodeInterrupted      ErrorCode = "ERR_INTERRUPTED"
)

// ErrorSeverity is how grave an [ExecutorError] is.
type ErrorSeverity string

const (
	SeverityFatal ErrorSeverity = "FATAL"
	SeverityError ErrorSeverity = "ERROR"
	SeverityWarn  ErrorSeverity = "WARN"
)

// ExecutorError is every error an [Executor] returns. Compare it with the
// sentinels (errors.Is(err, airlock.ErrMaxOpsExceeded)), which match by
// Code; errors.As gives the details.
type ExecutorError struct {
	Code      ErrorCode
	Severity  ErrorSeverity
	Retryable bool
	// Message follows the code's template, such as "Max operations
	// exceeded (1000)".
	Message string
	// Details hold what the code has to say: "diagnostics" ([]Diagnostic)
	// for validation, "module" for imports, "tool" and "cause" for tools,
	// "name", "message", "stack", "line", "column" for exceptions, "state"
	// for an invalid state. An exception's name and message are at most
	// MaxErrorText characters each, cut in the sandbox as a ScriptError's
	// are, and are the text of Message, held once.
	Details map[string]any
	// Logs are the step's console output up to the error.
	Logs string
	// LogEntries are the console calls Logs holds, with their levels.
	LogEntries []LogEntry
	// Err is the underlying Go error, if any (a context's error, a
	// creation failure).
	Err error
}

func (e *ExecutorError) Error() string {
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the underlying Go error.
func (e *ExecutorError) Unwrap() error { return e.Err }

// Is reports whether target is an *ExecutorError with the same code.
func (e *ExecutorError) Is(target error) bool {
	t, ok := target.(*ExecutorError)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is, one per code.
var (
	ErrInvalidState     = &ExecutorError{Code: CodeInvalidState}
	ErrInitFailed       = &ExecutorError{Code: CodeInitFailed}
	ErrValidationFailed = &ExecutorError{Code: CodeValidationFailed}
	ErrImportNotAllowed = &ExecutorError{Code: CodeImportNotAllowed}
	ErrMaxOpsExceeded   = &ExecutorError{Code: CodeMaxOpsExceeded}
	ErrExecTimeout      = &ExecutorError{Code: CodeExecTimeout}
	ErrRuntimeException = &ExecutorError{Code: CodeRuntimeException}
	ErrToolProxyFail    = &ExecutorError{Code: CodeToolProxyFail}
	ErrCleanupFailed    = &ExecutorError{Code: CodeCleanupFailed}
	ErrMemoryLimit      = &ExecutorError{Code: CodeMemoryLimit}
	ErrInvalidArgument  = &ExecutorError{Code: CodeInvalidArgument}
	ErrInterrupted      = &ExecutorError{Code: CodeInterrupted}
)

// The contract's table: severity and whether retrying (after the recovery
// the code calls for) can succeed. Tool and runtime failures "depend"; they
// are marked retryable, as the model can rewrite the code or the tool may
// recover.
var errorClass = map[ErrorCode]struct {
	sev   ErrorSeverity
	retry bool
}{
	CodeInitFailed:       {SeverityFatal, false},
	CodeInvalidState:     {SeverityError, false},
	CodeValidationFailed: {SeverityError, true},
	CodeImportNotAllowed: {SeverityError, true},
	CodeMaxOpsExceeded:   {SeverityError, true},
	CodeExecTimeout:      {SeverityError, true},
	CodeToolProxyFail:    {SeverityError, true},
	CodeRuntimeException: {SeverityError, true},
	CodeCleanupFailed:    {SeverityWarn, false},
	CodeMemoryLimit:      {SeverityError, true},
	CodeInvalidArgument:  {SeverityError, false},
	CodeInterrupted:      {SeverityError, true},
}

// newExecError makes an error of a code, with its severity and retryability.
func newExecError(code ErrorCode, details map[string]any, format string, args ...any) *ExecutorError {
	c := errorClass[code]
	return &ExecutorError{Code: code, Severity: c.sev, Retryable: c.retry, Message: fmt.Sprintf(format, args...), Details: details}
}
