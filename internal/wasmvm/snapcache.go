package wasmvm

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"
)

// The snapshot cache: a snapshot's image, kept on disk, so that a
// process's first snapshot is read (a few ms) instead of built (hardening
// and setup run as JavaScript: ~50 ms).
//
// The file's name is a key over everything the image depends on: the
// module's identity and data (QuickJS, the shim, the stop checks: the
// SHA-256 of the module build.sh translated, qjsgo.Sum), the
// hardening and setup scripts, the headroom, snapPrepare, and snapFormat,
// the version of what the Go side captures. Its content ends with the
// SHA-256 of what precedes it, and every field is checked against the
// image's size on loading; a file that fails any check (corrupt,
// truncated, of another format) is ignored and replaced by a fresh build.
// See RATIONALE.md, "The snapshot image cached on disk".

// span is a run of pages of an image, in bytes.
type span struct{ off, len uintptr }

// snapFormat is the version of the cached image's layout and of what
// buildSnapshot captures: raise it when either changes.
const snapFormat = 2

var snapMagic = [8]byte{'A', 'I', 'R', 'L', 'S', 'N', 'P', snapFormat}

// snapshotPath is the cache file of a snapshot with these options, or ""
// if the engine has no cache.
func (e *Engine) snapshotPath(o *SnapshotOptions) string {
	if e.snapDir == "" {
		return ""
	}
	h := sha256.New()
	var n [8]byte
	h.Write(snapMagic[:])
	h.Write(e.sum[:])
	for _, s := range []string{o.Setup, o.Hidden} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	binary.LittleEndian.PutUint64(n[:], uint64(len(o.Init)))
	h.Write(n[:])
	for _, e := range o.Init {
		binary.LittleEndian.PutUint64(n[:], uint64(e))
		h.Write(n[:])
	}
	binary.LittleEndian.PutUint64(n[:], uint64(o.Headroom))
	h.Write(n[:])
	binary.LittleEndian.PutUint64(n[:], uint64(snapPrepare))
	h.Write(n[:])
	return filepath.Join(e.snapDir, hex.EncodeToString(h.Sum(nil)[:16])+".snap")
}

// The file: magic, then little-endian u64s sp, base and u32s ctxPtr, ctl,
// randAddr, pages, the numbers of hot and warm spans and of stored pages,
// heapFrom; the spans (offset, length: u32 each); the stored pages'
// indexes (u32); the stored pages (the image's non-zero pages, 4 KiB
// each); the SHA-256 of all that.
const snapHeader = 8 + 2*8 + 8*4

// snapMaxImage bounds a cached image's size: buildSnapshot's own memory
// limit, so no valid file is larger.
const snapMaxImage = 1 << 30

func saveSnapshot(path string, sn *Snapshot) {
	idx := sn.im.pages
	hot, warm := sn.im.hot, sn.im.warm
	var buf bytes.Buffer
	buf.Grow(snapHeader + 8*(len(hot)+len(warm)) + len(idx)*(4+pageSize) + sha256.Size)
	le := binary.LittleEndian
	buf.Write(snapMagic[:])
	buf.Write(le.AppendUint64(nil, sn.sp))
	buf.Write(le.AppendUint64(nil, sn.base))
	for _, v := range []uint32{sn.ctxPtr, sn.ctl, sn.randAddr, sn.pages, uint32(len(hot)), uint32(len(warm)), uint32(len(idx)), sn.heapFrom} {
		buf.Write(le.AppendUint32(nil, v))
	}
	for _, l := range [][]span{hot, warm} {
		for _, s := range l {
			buf.Write(le.AppendUint32(nil, uint32(s.off)))
			buf.Write(le.AppendUint32(nil, uint32(s.len)))
		}
	}
	for _, i := range idx {
		buf.Write(le.AppendUint32(nil, i))
	}
	for _, i := range idx {
		buf.Write(sn.im.page(i))
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	// Written whole under another name, then renamed: a reader sees the old
	// file, the new one, or none, never a partial one.
	f, err := os.CreateTemp(filepath.Dir(path), ".snap-*")
	if err != nil {
		return
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return
	}
	pruneCache(filepath.Dir(filepath.Dir(path)), time.Now())
}

// loadSnapshot reads a cached snapshot, or returns nil if the file is
// missing or fails a check. The returned snapshot has no engine and pool
// size yet.
func loadSnapshot(path string) *Snapshot {
	b, done, err := readFile(path)
	if err != nil {
		return nil
	}
	defer done() // newImage copies the pages into the image
	if len(b) < snapHeader+sha256.Size {
		return nil
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) || !bytes.Equal(body[:8], snapMagic[:]) {
		return nil
	}
	le := binary.LittleEndian
	p := body[8:]
	u64 := func() uint64 { v := le.Uint64(p); p = p[8:]; return v }
	u32 := func() uint32 { v := le.Uint32(p); p = p[4:]; return v }
	sn := &Snapshot{sp: u64(), base: u64()}
	sn.ctxPtr, sn.ctl, sn.randAddr, sn.pages = u32(), u32(), u32(), u32()
	nHot, nWarm, nIdx := uint64(u32()), uint64(u32()), uint64(u32())
	sn.heapFrom = u32()
	size := uint64(sn.pages) * 65536
	if sn.pages == 0 || size > snapMaxImage || sn.base > size || sn.sp > size ||
		uint64(sn.ctxPtr) >= size || uint64(sn.ctl)+ctlRet+slotSize > size || uint64(sn.randAddr)+8 > size ||
		uint64(sn.heapFrom)+8 > size ||
		uint64(len(p)) != 8*(nHot+nWarm)+nIdx*(4+pageSize) {
		return nil
	}
	readSpans := func(n uint64) ([]span, bool) {
		var l []span
		for range n {
			off, ln := uint64(u32()), uint64(u32())
			if off%pageSize != 0 || ln%pageSize != 0 || off+ln > size {
				return nil, false
			}
			l = append(l, span{uintptr(off), uintptr(ln)})
		}
		return l, true
	}
	hot, ok1 := readSpans(nHot)
	warm, ok2 := readSpans(nWarm)
	if !ok1 || !ok2 {
		return nil
	}
	idx := make([]uint32, nIdx)
	for k := range idx {
		idx[k] = u32()
		if (uint64(idx[k])+1)*pageSize > size || k > 0 && idx[k] <= idx[k-1] {
			return nil
		}
	}
	if sn.im, err = newImage(uintptr(size), idx, func(k int) []byte {
		return p[k*pageSize : (k+1)*pageSize]
	}); err != nil {
		return nil
	}
	sn.im.hot, sn.im.warm = hot, warm
	return sn
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
