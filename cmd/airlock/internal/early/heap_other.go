//go:build !linux

package early

// populateHeap does nothing: populating a range of memory in one call is
// Linux's (MADV_POPULATE_WRITE).
func populateHeap() {}
