package wasmvm

import (
	"encoding/binary"
	"os"
)

// residentFrom is how many bytes of the sandbox's memory from offset
// from are its own and resident: present and not the image's file page
// (/proc/self/pagemap); false if that cannot be read.
func residentFrom(s *Sandbox, from uint32) (uint64, bool) {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	lo := uintptr(from) / pageSize
	hi := (uintptr(s.mod.Memory().Size()) + pageSize - 1) / pageSize
	buf := make([]byte, (hi-lo)*8)
	if _, err := f.ReadAt(buf, int64(uintptr(s.mem.base)/pageSize+lo)*8); err != nil {
		return 0, false
	}
	n := uint64(0)
	for e := buf; len(e) >= 8; e = e[8:] {
		if v := binary.LittleEndian.Uint64(e); v&(1<<63) != 0 && v&(1<<61) == 0 { // present, not a file page
			n += pageSize
		}
	}
	return n, true
}
