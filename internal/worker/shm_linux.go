//go:build linux

package worker

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/airlockrun/airlock/internal/hostcall"
	"golang.org/x/sys/unix"
)

// Synchronous host calls in worker-process mode travel through memory the
// host and the worker share, not through the pipes. A round trip through a
// pipe costs two wake-ups of a sleeping thread, ~20 µs here at the least
// and ~120 µs through Go's poller and a goroutine at each end; through
// shared memory, with both ends spinning for a moment, it costs a few
// microseconds. Spinning is bounded: the worker spins at most workerSpin
// for a reply and then sleeps until the host wakes it through the pipe;
// the host polls the slots only after a worker asked it to (a "poke" on
// the pipe) and only until hostSpinIdle passes without a call. Asynchronous
// calls, payloads over a slot's capacity and calls beyond the slots' number
// take the pipe.
//
// Layout: a page whose first word is the host's "polling" flag, then
// shmSlots slots of shmSlotSize bytes: state (uint32), then run (uint64,
// at 8), function (uint32, at 16), length (uint32, at 20), flags (uint32,
// at 24), and the payload from shmDataOff: a value's bytes in the codec's
// binary format, a JSON function's JSON text, or an error's message.
const (
	shmSlots    = 32
	shmSlotSize = 16 << 10
	shmHeader   = 4096
	shmDataOff  = 64
	shmDataCap  = shmSlotSize - shmDataOff
	shmSize     = shmHeader + shmSlots*shmSlotSize

	slotFree     = 0
	slotRequest  = 1
	slotTaken    = 2
	slotReply    = 3
	slotPhase    = 0xff
	slotSleeping = 1 << 8 // the worker sleeps: wake it through the pipe

	replyError   = 1 // flags: the payload is an error message
	replyViaPipe = 2 // flags: the reply, too long for the slot, came on the pipe

	workerSpin   = 100 * time.Microsecond
	hostSpinIdle = 200 * time.Microsecond
	pollHandoff  = time.Millisecond // a call longer than this gets a new poller
)

type shm struct{ mem []byte }

// newShm makes the shared memory, for the host, and the file the worker
// maps it from.
func newShm() (*shm, *os.File, error) {
	fd, err := unix.MemfdCreate("airlock-calls", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, err
	}
	f := os.NewFile(uintptr(fd), "airlock-calls")
	if err := f.Truncate(shmSize); err != nil {
		f.Close()
		return nil, nil, err
	}
	s, err := mapShm(fd)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return s, f, nil
}

func mapShm(fd int) (*shm, error) {
	mem, err := unix.Mmap(fd, 0, shmSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &shm{mem: mem}, nil
}

func (s *shm) close() { unix.Munmap(s.mem) }

func (s *shm) word(off int) *uint32 { return (*uint32)(unsafe.Pointer(&s.mem[off])) }

func (s *shm) polling() *uint32        { return s.word(0) }
func (s *shm) state(i int) *uint32     { return s.word(shmHeader + i*shmSlotSize) }
func (s *shm) field(i, at int) *uint32 { return s.word(shmHeader + i*shmSlotSize + at) }

func (s *shm) run(i int) *uint64 {
	return (*uint64)(unsafe.Pointer(&s.mem[shmHeader+i*shmSlotSize+8]))
}

func (s *shm) data(i int) []byte {
	off := shmHeader + i*shmSlotSize + shmDataOff
	return s.mem[off : off+shmDataCap : off+shmDataCap]
}

// payload is a copy of a slot's payload, checked against its capacity:
// the other side's numbers are never trusted.
func (s *shm) payload(i int) ([]byte, bool) {
	n := atomic.LoadUint32(s.field(i, 20))
	if n > shmDataCap {
		return nil, false
	}
	return append([]byte{}, s.data(i)[:n]...), true
}

func (s *shm) setPayload(i int, b []byte) {
	copy(s.data(i), b)
	atomic.StoreUint32(s.field(i, 20), uint32(len(b)))
}

// --- the host side ---

// newHostShm makes a worker's slots, and the file to hand the worker; nil
// when the system has no shared memory to give, and calls take the pipe.
func newHostShm() (*hostShm, *os.File) {
	s, f, err := newShm()
	if err != nil {
		return nil, nil
	}
	return &hostShm{shm: s}, f
}

// hostShm is the host's end of a worker's slots.
type hostShm struct {
	shm    *shm
	active atomic.Bool   // a poller runs
	gen    atomic.Uint64 // the poller's generation, for hand-offs
	users  sync.WaitGroup
}

// served counts the calls answered through shared memory, for the tests.
var served atomic.Int64

// release unmaps the slots once no poller can touch them: after the worker
// died, when the last poller has seen it.
func (ws *hostShm) release() {
	go func() {
		ws.users.Wait()
		ws.shm.close()
	}()
}

// poke starts polling the slots, unless a poller runs already.
func (w *proc) poke() {
	if ws := w.calls; ws != nil && ws.active.CompareAndSwap(false, true) {
		ws.users.Add(1)
		go w.poll(ws.gen.Load())
	}
}

// poll serves the slots' requests until none has come for hostSpinIdle.
// A call that runs longer than pollHandoff hands polling on to a new
// goroutine, so that one slow host function does not hold up the others.
func (w *proc) poll(gen uint64) {
	ws := w.calls
	defer ws.users.Done()
	s := ws.shm
	atomic.StoreUint32(s.polling(), 1)
	idle := time.Now()
	for spins := 1; ; spins++ {
		served := false
		for i := 0; i < shmSlots; i++ {
			st := atomic.LoadUint32(s.state(i))
			if st&slotPhase != slotRequest {
				continue
			}
			if !atomic.CompareAndSwapUint32(s.state(i), st, st&^slotPhase|slotTaken) {
				i-- // the worker went to sleep meanwhile: look again
				continue
			}
			served = true
			if !w.serve(i, gen) {
				return // handed off
			}
		}
		if served {
			idle = time.Now()
			continue
		}
		if spins%64 != 0 {
			continue
		}
		if w.isDead() {
			atomic.StoreUint32(s.polling(), 0)
			ws.active.Store(false)
			return
		}
		if time.Since(idle) > hostSpinIdle {
			// A worker that posts a request after it read polling == 0
			// pokes; one that read 1 is found by the scans below.
			atomic.StoreUint32(s.polling(), 0)
			if !w.pending() {
				ws.active.Store(false)
				if !w.pending() || !ws.active.CompareAndSwap(false, true) {
					return
				}
			}
			atomic.StoreUint32(s.polling(), 1)
			idle = time.Now()
			continue
		}
		runtime.Gosched()
	}
}

func (w *proc) pending() bool {
	s := w.calls.shm
	for i := 0; i < shmSlots; i++ {
		if atomic.LoadUint32(s.state(i))&slotPhase == slotRequest {
			return true
		}
	}
	return false
}

// serve answers the request in slot i. It reports whether this goroutine
// is still the poller.
func (w *proc) serve(i int, gen uint64) (poller bool) {
	ws := w.calls
	handoff := time.AfterFunc(pollHandoff, func() { w.handOff(gen) })
	var out []byte
	errText := hostcall.ErrGoexit
	returned := false
	defer func() {
		// Also when the host function called runtime.Goexit, which ends
		// this goroutine after the answer: polling goes on in another.
		poller = handoff.Stop()
		w.answerSlot(i, out, errText)
		if !returned && poller {
			w.handOff(gen)
		}
	}()
	s := ws.shm
	list, ok := s.payload(i)
	w.mu.Lock()
	h := w.runs[*s.run(i)]
	w.mu.Unlock()
	switch {
	case !ok:
		errText = "airlock: malformed host call"
	case h == nil:
		errText = "airlock: the run has ended"
	default:
		out, errText = answer(h, int(int32(atomic.LoadUint32(s.field(i, 16)))), list)
	}
	returned = true
	return poller
}

// handOff starts a new poller in place of the one of generation gen, once.
func (w *proc) handOff(gen uint64) {
	ws := w.calls
	if ws.gen.CompareAndSwap(gen, gen+1) {
		ws.users.Add(1)
		go w.poll(gen + 1)
	}
}

// answerSlot writes the answer to slot i, and wakes the worker if it
// sleeps.
func (w *proc) answerSlot(i int, out []byte, errText string) {
	ws := w.calls
	s := ws.shm
	served.Add(1)
	flags := uint32(0)
	if errText != "" {
		flags, out = replyError, []byte(errText)
	}
	if len(out) > shmDataCap {
		// The reply goes on the pipe, ahead of the state that announces it.
		m := &msg{Kind: "slot", Call: uint64(i)}
		if flags == replyError {
			m.Err = errText
		} else {
			m.Data = out
		}
		w.send(m)
		flags |= replyViaPipe
	} else {
		s.setPayload(i, out)
	}
	atomic.StoreUint32(s.field(i, 24), flags)
	for {
		st := atomic.LoadUint32(s.state(i))
		if atomic.CompareAndSwapUint32(s.state(i), st, st&^slotPhase|slotReply) {
			if st&slotSleeping != 0 && flags&replyViaPipe == 0 {
				w.send(&msg{Kind: "slot", Call: uint64(i)})
			}
			return
		}
	}
}

// --- the worker side ---

// childShm is the worker's end: the slots it may use, and a channel
// per slot for what comes on the pipe about it.
type childShm struct {
	shm  *shm
	free chan int
	wake [shmSlots]chan msg
}

func openChildShm(f *os.File) *childShm {
	if f == nil {
		return nil
	}
	s, err := mapShm(int(f.Fd()))
	if err != nil {
		return nil
	}
	ws := &childShm{shm: s, free: make(chan int, shmSlots)}
	for i := range shmSlots {
		ws.free <- i
		ws.wake[i] = make(chan msg, 1)
	}
	return ws
}

// deliver hands a message about slot i to its caller.
func (ws *childShm) deliver(m msg) {
	if ws != nil && m.Call < shmSlots {
		select {
		case ws.wake[m.Call] <- m:
		default:
		}
	}
}

var errNoSlot = errors.New("no free slot")

// call makes a synchronous host call through a slot; errNoSlot means it
// must take the pipe.
func (ws *childShm) call(ctx context.Context, run uint64, fn int, list []byte, poke func()) ([]byte, error) {
	if ws == nil || len(list) > shmDataCap {
		return nil, errNoSlot
	}
	var i int
	select {
	case i = <-ws.free:
	default:
		return nil, errNoSlot
	}
	s := ws.shm
	*s.run(i) = run
	atomic.StoreUint32(s.field(i, 16), uint32(int32(fn)))
	s.setPayload(i, list)
	atomic.StoreUint32(s.state(i), slotRequest)
	if atomic.LoadUint32(s.polling()) == 0 {
		poke()
	}
	start := time.Now()
	for spins := 1; ; spins++ {
		if st := atomic.LoadUint32(s.state(i)); st&slotPhase == slotReply {
			return ws.finish(i, nil)
		}
		if spins%64 == 0 {
			if time.Since(start) > workerSpin || ctx.Err() != nil {
				break
			}
			runtime.Gosched()
		}
	}
	// Sleep until the host wakes the slot.
	for {
		st := atomic.LoadUint32(s.state(i))
		if st&slotPhase == slotReply {
			return ws.finish(i, nil)
		}
		if atomic.CompareAndSwapUint32(s.state(i), st, st|slotSleeping) {
			break
		}
	}
	select {
	case m := <-ws.wake[i]:
		return ws.finish(i, &m)
	case <-ctx.Done():
		go func() { // the slot is the host's until it answers
			m := <-ws.wake[i]
			ws.finish(i, &m)
		}()
		return nil, ctx.Err()
	}
}

// finish reads the reply in slot i and frees it. m is the message that
// woke the caller, if one did.
func (ws *childShm) finish(i int, m *msg) ([]byte, error) {
	s := ws.shm
	flags := atomic.LoadUint32(s.field(i, 24))
	var out []byte
	var errText string
	if flags&replyViaPipe != 0 {
		if m == nil {
			mm := <-ws.wake[i]
			m = &mm
		}
		out, errText = m.Data, m.Err
	} else {
		b, ok := s.payload(i)
		switch {
		case !ok:
			errText = "airlock: malformed host reply"
		case flags&replyError != 0:
			errText = string(b)
			if errText == "" {
				errText = "error"
			}
		default:
			out = b
		}
	}
	atomic.StoreUint32(s.state(i), slotFree)
	ws.free <- i
	if errText != "" {
		return nil, errors.New(errText)
	}
	return out, nil
}
