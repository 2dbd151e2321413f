//go:build !linux || airlock_anonmem

package wasmvm

// Without memfd (every system but Linux, or Linux with the tag
// airlock_anonmem) the snapshot's image is a byte slice, copied into each
// sandbox's memory at its start and over it at each rewind.

type image struct {
	bytes     []byte
	size      uintptr
	hot, warm []span // unused here: kept for the snapshot cache's format
	pages     []uint32
}

func newImage(size uintptr, idx []uint32, page func(k int) []byte) (*image, error) {
	b := make([]byte, size)
	for k, i := range idx {
		copy(b[int(i)*pageSize:], page(k))
	}
	return &image{bytes: b, size: size, pages: idx}, nil
}

func (im *image) page(i uint32) []byte { return im.bytes[int(i)*pageSize : int(i+1)*pageSize] }

func (im *image) close() {}

// learnHot: without pagemap there is nothing to learn, nor to prefault.
func (m *linearMemory) learnHot() {}

func (m *linearMemory) writtenPages() (int, bool) { return 0, false }
