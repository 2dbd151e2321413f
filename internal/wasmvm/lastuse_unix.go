//go:build unix

package wasmvm

import (
	"time"

	"golang.org/x/sys/unix"
)

// lastUse is when the file at p was last read or written, whichever is
// later (the access time is as the file system keeps it: Linux's default,
// relatime, updates it at least daily).
func lastUse(p string) (time.Time, bool) {
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil {
		return time.Time{}, false
	}
	a, m := time.Unix(st.Atim.Unix()), time.Unix(st.Mtim.Unix())
	if a.After(m) {
		return a, true
	}
	return m, true
}
