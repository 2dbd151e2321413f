//go:build !linux

package worker

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
)

// Without shared memory (see shm_linux.go), every host call of a worker
// takes the pipe.

type hostShm struct{}

// served counts the calls answered through shared memory: none here.
var served atomic.Int64

func (ws *hostShm) release() {}

func newHostShm() (*hostShm, *os.File) { return nil, nil }

func (w *proc) poke() {}

type childShm struct{}

func openChildShm(*os.File) *childShm { return nil }

func (ws *childShm) deliver(msg) {}

var errNoSlot = errors.New("no free slot")

func (ws *childShm) call(context.Context, uint64, int, []byte, func()) ([]byte, error) {
	return nil, errNoSlot
}
