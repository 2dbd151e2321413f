//go:build !linux

package airlock

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
)

// Without shared memory (see worker_shm_linux.go), every host call of a
// worker takes the pipe.

type workerShm struct{ served atomic.Int64 }

func (ws *workerShm) release() {}

func newWorkerShm() (*workerShm, *os.File) { return nil, nil }

func (w *workerProc) poke() {}

type workerSlots struct{}

func openWorkerSlots(*os.File) *workerSlots { return nil }

func (ws *workerSlots) deliver(wmsg) {}

var errNoSlot = errors.New("no free slot")

func (ws *workerSlots) call(context.Context, uint64, int, []byte, func()) ([]byte, error) {
	return nil, errNoSlot
}
