package airlock

import (
	"testing"

	"github.com/airlockrun/airlock/internal/session"
)

// The executor's session gives its errors' codes as plain strings, which
// the executor makes ErrorCodes: each must be one of the codes, with its
// severity and retryability.
func TestSessionCodes(t *testing.T) {
	for _, c := range []string{session.CodeValidationFailed, session.CodeMaxOpsExceeded, session.CodeExecTimeout,
		session.CodeRuntimeException, session.CodeToolProxyFail, session.CodeMemoryLimit, session.CodeInvalidArgument, session.CodeInterrupted} {
		if _, ok := errorClass[ErrorCode(c)]; !ok {
			t.Errorf("the session's code %q is not an executor's ErrorCode", c)
		}
	}
}
