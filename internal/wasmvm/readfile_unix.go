//go:build unix

package wasmvm

import (
	"os"

	"golang.org/x/sys/unix"
)

// readFile maps a file read-only, for reading once: its pages come from
// the page cache as it is read, where reading it into a fresh buffer would
// fault in as many pages of the heap (a page fault is the largest cost of
// a process's start on some virtual machines: BENCHMARKS.md, "The command's
// start"). done unmaps it; nothing read through it may be used after.
func readFile(path string) (b []byte, done func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() == 0 || st.Size() != int64(int(st.Size())) {
		return nil, func() {}, nil
	}
	b, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { unix.Munmap(b) }, nil
}
