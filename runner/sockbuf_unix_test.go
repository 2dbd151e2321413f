//go:build unix

package runner_test

import "syscall"

// smallReceiveBuffer sets a socket's receive buffer to 8 KiB before it
// connects (the window scale is agreed on then), so that a client that
// reads nothing holds little of a response in its kernel.
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) })
}
