package wasmvm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/airlockrun/airlock/internal/qjs"
	"github.com/airlockrun/airlock/internal/qjs/qjsgo"
)

// EngineOptions configures NewEngine. The zero value (or nil) is the
// default.
type EngineOptions struct {
	// CacheDir is where snapshot images are kept between processes (in
	// its snapshots/ directory). Empty means
	// os.UserCacheDir()/airlock/wazero (the name the directory had when
	// it also held a compiled module, kept so that an upgrade prunes what
	// it left there); if that is not available, nothing is kept.
	CacheDir string
	// NoCache keeps nothing between processes, ignoring CacheDir.
	NoCache bool
}

// Engine is the module (translated to Go: internal/qjs/qjsgo) with its
// data, and where snapshot images are cached. Snapshots and sandboxes are
// made from it. An Engine is safe for concurrent use; Close it after every
// snapshot made from it is closed.
type Engine struct {
	data []dataSegment // the module's data, written by the first instance only
	// snapDir is where snapshot images are cached ("": not cached), and
	// sum the module's identity, part of their key.
	snapDir string
	sum     [32]byte
}

type dataSegment struct {
	offset uint32
	bytes  []byte
}

// sandboxKey finds the sandbox of a host call in its context.
type sandboxKey struct{}

// NewEngine makes the engine: it reads the module's data and finds where
// snapshot images are cached. Nothing is compiled at run time.
func NewEngine(ctx context.Context, opts *EngineOptions) (*Engine, error) {
	var o EngineOptions
	if opts != nil {
		o = *opts
	}
	e := &Engine{}
	if !o.NoCache {
		dir := o.CacheDir
		if dir == "" {
			if d, err := os.UserCacheDir(); err == nil {
				dir = filepath.Join(d, "airlock", "wazero")
			}
		}
		if dir != "" {
			e.snapDir = filepath.Join(dir, "snapshots")
		}
	}
	h := sha256.New()
	h.Write([]byte(qjsgo.Sum))
	h.Write(qjs.DATA)
	h.Sum(e.sum[:0])
	segs, err := parseData(qjs.DATA)
	if err != nil {
		return nil, err
	}
	e.data = segs
	return e, nil
}

// Close releases the engine. Idempotent; the engine holds nothing that
// needs releasing today.
func (e *Engine) Close(ctx context.Context) error { return nil }

var monoStart = time.Now()

// clockTimeGet is WASI's clock_time_get(id, precision, out) -> errno: the
// wall clock (0) and the monotonic clock (1).
func clockTimeGet(mem memory, id, out uint32) uint32 {
	const errnoSuccess, errnoInval = 0, 28
	var ns uint64
	switch id {
	case 0: // realtime
		ns = uint64(time.Now().UnixNano())
	case 1: // monotonic
		ns = uint64(time.Since(monoStart).Nanoseconds())
	default:
		return errnoInval
	}
	if !mem.WriteUint64Le(out, ns) {
		return errnoInval
	}
	return errnoSuccess
}

// parseData reads the active data segments of a data section's contents.
// The module comes without them (see qjs.DATA): a copy of a snapshot must
// not have the data written again over the image (it would both undo the
// image and dirty its copy-on-write pages), so only the instance that
// makes a snapshot writes them.
func parseData(p []byte) ([]dataSegment, error) {
	bad := errors.New("wasmvm: unsupported data section")
	n, l := binary.Uvarint(p)
	if l <= 0 {
		return nil, bad
	}
	i := l
	var segs []dataSegment
	for k := uint64(0); k < n; k++ {
		if i+2 > len(p) || p[i] != 0 || p[i+1] != 0x41 { // active, memory 0, i32.const
			return nil, bad
		}
		i += 2
		off, l := sleb(p[i:])
		if l <= 0 {
			return nil, bad
		}
		i += l
		if i >= len(p) || p[i] != 0x0B {
			return nil, bad
		}
		i++
		size, l := binary.Uvarint(p[i:])
		if l <= 0 || i+l+int(size) > len(p) {
			return nil, bad
		}
		i += l
		segs = append(segs, dataSegment{offset: uint32(off), bytes: p[i : i+int(size)]})
		i += int(size)
	}
	return segs, nil
}

// sleb decodes a signed LEB128 number; n <= 0 if it is malformed.
func sleb(b []byte) (v int64, n int) {
	var shift uint
	for n < len(b) && shift < 64 {
		c := b[n]
		n++
		v |= int64(c&0x7F) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, n
		}
	}
	return 0, 0
}
