package wasmvm

import (
	"os"
	"path/filepath"
	"time"
)

// cacheMaxAge is how long a file of the cache directory may go unread and
// unwritten before pruneCache removes it.
const cacheMaxAge = 30 * 24 * time.Hour

// pruneCache removes the files of the cache directory root that no process
// has read or written for cacheMaxAge: snapshot images (root/snapshots,
// with the temporary files of an interrupted save) and the compiled
// modules that versions which ran on wazero left there
// (root/wazero-<version>-<platform>, one directory per wazero version),
// and then those directories once empty and unchanged for cacheMaxAge.
// Every engine or configuration change leaves an image behind, a few MB,
// that nothing would ever remove. It runs when a snapshot is saved,
// the rare moment when an older one may have been left behind, and is best
// effort: a file it cannot judge or remove stays. A file still in use but
// on a file system that never updates access times costs its next user a
// rebuild after cacheMaxAge. RATIONALE.md, "The cache directory is pruned".
func pruneCache(root string, now time.Time) {
	prune := func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if last, ok := lastUse(p); ok && now.Sub(last) > cacheMaxAge {
				os.Remove(p)
			}
		}
	}
	prune(filepath.Join(root, "snapshots"))
	dirs, _ := filepath.Glob(filepath.Join(root, "wazero-*"))
	for _, d := range dirs {
		// A directory goes only if no file was added to or removed from it
		// for cacheMaxAge (its modification time; its access time is the
		// prunes' own reading): a process of an older version, still on
		// wazero, makes its version's directory when its cache is made and
		// writes the compiled module into it after the compilation, which
		// fails if the directory is gone by then.
		fi, err := os.Stat(d)
		prune(d)
		if err == nil && now.Sub(fi.ModTime()) > cacheMaxAge {
			os.Remove(d) // only an empty directory goes
		}
	}
}
