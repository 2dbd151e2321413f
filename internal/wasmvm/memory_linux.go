//go:build !airlock_anonmem

package wasmvm

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux a snapshot's memory is a sealed memfd, and every sandbox maps it
// MAP_PRIVATE: pages are shared until a sandbox writes them. Linear memory
// is a reservation of the sandbox's limit (PROT_NONE, no swap reserved);
// growth maps fresh anonymous pages into it, so the buffer never moves and
// never exceeds the limit.

type image struct {
	fd   int
	size uintptr
	src  []byte // the memfd mapped read-only: where rewind copies pages from
	// hot and warm are the pages a first hello eval in a fresh copy writes
	// and only reads (learned once, see learnHot); a new sandbox's memory
	// has them populated in one madvise each, instead of a fault per page.
	hot, warm []span
	pages     []uint32 // the indexes of the pages written (the rest are zeros)
}

// prefault is what a new sandbox's memory has populated: 0 nothing (every
// page faults when first touched), 1 the hot pages, 2 the hot and the warm
// ones (the default). The benchmarks compare them.
var prefault = 2

// newImage writes the given pages (idx: their indexes, page(k): the
// bytes of the k-th) into a memfd of size bytes (the pages not given stay
// holes, which cost nothing and read as zeros) and seals it.
func newImage(size uintptr, idx []uint32, page func(k int) []byte) (*image, error) {
	fd, err := unix.MemfdCreate("airlock-snapshot", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("wasmvm: memfd: %w", err)
	}
	im := &image{fd: fd, size: size, pages: idx}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		im.close()
		return nil, err
	}
	for k, i := range idx {
		if _, err := unix.Pwrite(fd, page(k), int64(i)*pageSize); err != nil {
			im.close()
			return nil, err
		}
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS,
		unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		im.close()
		return nil, fmt.Errorf("wasmvm: seal: %w", err)
	}
	if im.src, err = unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED); err != nil {
		im.close()
		return nil, fmt.Errorf("wasmvm: map snapshot: %w", err)
	}
	return im, nil
}

// page is the i-th page of the image (only for i in im.pages: reading a
// hole through the mapping would allocate it).
func (im *image) page(i uint32) []byte { return im.src[int(i)*pageSize : int(i+1)*pageSize] }

func (im *image) close() {
	if im.src != nil {
		unix.Munmap(im.src)
		im.src = nil
	}
	unix.Close(im.fd)
}

type linearMemory struct {
	base      unsafe.Pointer
	reserved  uintptr
	limit     uintptr // at most reserved: the most the guest's memory may grow to (Sandbox.SetMemoryLimit)
	committed uintptr // the guest's memory: what Reallocate last returned
	mapped    uintptr // mapped read-write: committed, rounded up to hugeAlign by growth
	ctl       uint32  // the control block, for refuse
	im        *image
}

func (a *allocator) Allocate(maxBytes uint64) *linearMemory {
	reserve := a.reservation(maxBytes)
	p, err := unix.MmapPtr(-1, 0, nil, reserve, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		panic(fmt.Sprintf("wasmvm: reserve linear memory: %v", err)) // Snapshot.instantiate recovers it into an error
	}
	m := &linearMemory{base: p, reserved: reserve, limit: reserve, im: a.im}
	if a.im != nil {
		if _, err := unix.MmapPtr(a.im.fd, 0, p, a.im.size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
			unix.MunmapPtr(p, reserve)
			panic(fmt.Sprintf("wasmvm: map snapshot: %v", err))
		}
		m.committed = a.im.size
		m.mapped = a.im.size
		if prefault > 0 {
			for _, sp := range a.im.hot {
				unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, sp.off)), sp.len), unix.MADV_POPULATE_WRITE)
			}
		}
		if prefault > 1 {
			for _, sp := range a.im.warm {
				unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, sp.off)), sp.len), unix.MADV_POPULATE_READ)
			}
		}
	}
	a.mem = m
	return m
}

// growPopulate is how much of a growth of the memory is populated at once
// (MADV_POPULATE_WRITE) instead of faulting in page by page as the guest
// first writes it: a grown range is about to be used (the guest's
// allocator grows the memory when it needs it), and one call costs ~1 µs a
// page where a fault costs 15-40 µs on the VM measured (the 100k-object
// workload: ~0.95× the floor's time → ~0.91×, BENCHMARKS.md, "Populating
// grown memory"). Bounded, so that one large growth does not hold the host
// in a system call for long: a stop waits for it (4 MiB: ~1-4 ms).
const growPopulate = 4 << 20

// Once the memory has grown hugeFrom bytes past the image, a growth maps
// the reservation read-write up to the next hugeAlign boundary of the
// address space and asks for transparent huge pages there (MADV_HUGEPAGE):
// a program that grows its memory this far is allocating in earnest, and
// its memory is then touched 2 MiB to a fault and a TLB entry instead
// of 4 KiB (the 100k-object workload: ~12% less CPU time, BENCHMARKS.md,
// "Compute speed: huge pages and fewer collections"). What is mapped past
// the guest's size is not the guest's: every access of the translated
// code is checked against the size. It costs at most hugeAlign of resident memory beyond the size,
// and nothing below hugeFrom, where most programs stay.
const (
	hugeFrom  = 4 << 20
	hugeAlign = 2 << 20
)

// Reallocate grows the usable memory to size bytes, or returns nil beyond
// the limit: memory.grow then fails inside the guest, and the program
// ends out of memory (refuse).
func (m *linearMemory) Reallocate(size uint64) []byte {
	sz := uintptr(size)
	if m.base == nil {
		return nil
	}
	if sz > m.limit || sz > m.reserved {
		m.refuse()
		return nil
	}
	if sz > m.committed {
		if sz > m.mapped {
			end := sz
			from := uintptr(hugeFrom)
			if m.im != nil {
				from += m.im.size
			}
			huge := sz >= from
			if huge {
				// the end rounded up to a boundary of the address space
				a := uintptr(m.base)
				end = min((a+sz+hugeAlign-1)&^(hugeAlign-1)-a, m.reserved)
			}
			grown := unsafe.Add(m.base, m.mapped)
			if _, err := unix.MmapPtr(-1, 0, grown, end-m.mapped,
				unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED|unix.MAP_NORESERVE); err != nil {
				return nil
			}
			if huge {
				unix.Madvise(unsafe.Slice((*byte)(grown), end-m.mapped), unix.MADV_HUGEPAGE)
			}
			m.mapped = end
		}
		unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(m.base, m.committed)), min(sz-m.committed, growPopulate)), unix.MADV_POPULATE_WRITE)
		m.committed = sz
	}
	return unsafe.Slice((*byte)(m.base), sz)
}

// rewind makes the memory the image again: it copies the image's bytes
// over the pages the sandbox wrote (copyDirty finds them with PAGEMAP_SCAN
// or /proc/self/pagemap: private, no longer the memfd's), keeping them
// mapped, since a copy-on-write fault costs more than the copy (15-70 µs
// each on the 2-core VM measured, see RATIONALE.md); without pagemap it
// maps the image again over the memory. The memory must not have grown
// beyond the image: the guest's allocator would then see more memory than
// the image knows of.
func (m *linearMemory) rewind(size uintptr) bool {
	if m.base == nil || m.im == nil || size != m.im.size {
		return false
	}
	if m.copyDirty() {
		return true
	}
	if _, err := unix.MmapPtr(m.im.fd, 0, m.base, m.im.size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
		return false
	}
	return true
}

var pagemap struct {
	once sync.Once
	fd   int
}

// copyDirty copies the image over every page of the memory that is no
// longer the memfd's own. It asks the kernel for those pages' ranges
// (scanWritten, Linux 6.7 and later) or else reads every page's entry of
// /proc/self/pagemap: bit 61 is set for a page of a file (the image,
// unwritten), bits 63 and 62 for a page present or swapped. A page neither
// present nor swapped was never touched.
func (m *linearMemory) copyDirty() bool {
	mem := unsafe.Slice((*byte)(m.base), m.im.size)
	if m.scanWritten(func(off, end uintptr) { copy(mem[off:end], m.im.src[off:end]) }) {
		return true
	}
	buf, ok := m.pagemap()
	if !ok {
		return false
	}
	defer pagemapBufs.Put(buf)
	entries := *buf
	for i := range uintptr(len(entries) / 8) {
		if private(entries[i*8:]) {
			copy(mem[i*pageSize:(i+1)*pageSize], m.im.src[i*pageSize:(i+1)*pageSize])
		}
	}
	return true
}

// PAGEMAP_SCAN (linux/fs.h, Linux 6.7): an ioctl of /proc/self/pagemap
// that returns the ranges of pages of the given categories. x/sys/unix
// does not define it.
const (
	pmScanIoctl   = 0xC0606610 // _IOWR('f', 16, struct pm_scan_arg)
	pageIsFile    = 1 << 2
	pageIsPresent = 1 << 3
	pageIsSwapped = 1 << 4
)

type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages       uint64
	categoryInverted, categoryMask, categoryAnyofMask, returnMask uint64
}

type pageRegion struct{ start, end, categories uint64 }

// scanOK is cleared once PAGEMAP_SCAN fails: the kernel lacks it.
var scanOK atomic.Bool

func init() { scanOK.Store(true) }

// scanWritten calls f with the offsets of each range of the image's pages
// the sandbox wrote (present or swapped, and not the file's), found with
// PAGEMAP_SCAN: the kernel walks the page tables and returns the ranges,
// instead of an entry per page for the host to read. It reports false
// where the ioctl is missing, having called f for nothing.
func (m *linearMemory) scanWritten(f func(off, end uintptr)) bool {
	if !scanOK.Load() || !pagemapOpen() {
		return false
	}
	var vec [32]pageRegion
	base := uint64(uintptr(m.base))
	arg := pmScanArg{
		size:  uint64(unsafe.Sizeof(pmScanArg{})),
		start: base, end: base + uint64(m.im.size),
		vecLen:           uint64(len(vec)),
		categoryInverted: pageIsFile, categoryMask: pageIsFile,
		categoryAnyofMask: pageIsPresent | pageIsSwapped,
		returnMask:        pageIsFile | pageIsPresent | pageIsSwapped,
	}
	for arg.start < arg.end {
		// vec's address is taken anew for every call: vec is on the
		// stack, which moves when it grows (in f), and the kernel would
		// write the next batch where vec was. Nothing between this and the
		// system call can move it.
		arg.vec = uint64(uintptr(unsafe.Pointer(&vec[0])))
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(pagemap.fd), pmScanIoctl, uintptr(unsafe.Pointer(&arg)))
		if errno != 0 {
			if arg.start == base {
				scanOK.Store(false)
				return false
			}
			// Failed midway (an ENOMEM, say): the pages already copied
			// are the image again, and the full read finds the rest.
			return false
		}
		if n > uintptr(len(vec)) || arg.walkEnd <= arg.start || arg.walkEnd > arg.end {
			return false // not what the interface promises: the full read decides
		}
		for _, r := range vec[:n] {
			if r.start < base || r.end > base+uint64(m.im.size) || r.start >= r.end {
				return false
			}
			f(uintptr(r.start-base), uintptr(r.end-base))
		}
		arg.start = arg.walkEnd
	}
	return true
}

// pagemapOpen opens /proc/self/pagemap once; it reports whether it is open.
func pagemapOpen() bool {
	pagemap.once.Do(func() {
		fd, err := unix.Open("/proc/self/pagemap", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			fd = -1
		}
		pagemap.fd = fd
	})
	return pagemap.fd >= 0
}

// pagemapBufs keeps the buffers copyDirty read the entries into: a close
// of a pooled sandbox reads them every time.
var pagemapBufs sync.Pool

// pagemap reads the /proc/self/pagemap entries of the image's pages into a
// buffer from pagemapBufs.
func (m *linearMemory) pagemap() (*[]byte, bool) {
	if !pagemapOpen() || m.im.src == nil {
		return nil, false
	}
	n := int(m.im.size / pageSize * 8)
	p, _ := pagemapBufs.Get().(*[]byte)
	if p == nil || cap(*p) < n {
		b := make([]byte, n)
		p = &b
	}
	*p = (*p)[:n]
	off := int64(uintptr(m.base)/pageSize) * 8
	if k, err := unix.Pread(pagemap.fd, *p, off); err != nil || k != n {
		return nil, false
	}
	return p, true
}

const pmPresent, pmSwapped, pmFile = 1 << 63, 1 << 62, 1 << 61

// private reports whether a pagemap entry is a page the sandbox wrote.
func private(e []byte) bool {
	v := binary.LittleEndian.Uint64(e)
	return v&(pmPresent|pmSwapped) != 0 && v&pmFile == 0
}

// learnHot records, from the memory of a fresh copy that ran a first eval,
// which pages it wrote (hot) and which it only read (warm). Without
// pagemap it records nothing.
func (m *linearMemory) learnHot() {
	buf, ok := m.pagemap()
	if !ok {
		return
	}
	defer pagemapBufs.Put(buf)
	entries := *buf
	var hot, warm []span
	add := func(l []span, i uintptr) []span {
		if n := len(l); n > 0 && l[n-1].off+l[n-1].len == i*pageSize {
			l[n-1].len += pageSize
			return l
		}
		return append(l, span{i * pageSize, pageSize})
	}
	for i := range uintptr(len(entries) / 8) {
		e := entries[i*8:]
		switch {
		case private(e):
			hot = add(hot, i)
		case binary.LittleEndian.Uint64(e)&pmPresent != 0:
			warm = add(warm, i)
		}
	}
	m.im.hot, m.im.warm = hot, warm
}

// writtenPages is the number of the image's pages the sandbox has written
// (its own copies), or false without pagemap.
func (m *linearMemory) writtenPages() (int, bool) {
	buf, ok := m.pagemap()
	if !ok {
		return 0, false
	}
	defer pagemapBufs.Put(buf)
	n := 0
	for e := *buf; len(e) >= 8; e = e[8:] {
		if private(e) {
			n++
		}
	}
	return n, true
}
