//go:build !unix

package wasmvm

import (
	"os"
	"time"
)

// lastUse is when the file at p was last written: no access time here.
func lastUse(p string) (time.Time, bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}
