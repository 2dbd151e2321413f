package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// A quota bounds a session's workspace: the bytes of its files (their
// apparent size, so a sparse file counts in full) and the number of its
// entries (files, directories, links). Writes from javascript are checked
// before they happen. Python and Node write the disk directly, so their
// workspace is measured while they run, every quotaPoll or four times as
// long as a measure takes, and the process group is killed when it is over;
// RLIMIT_FSIZE keeps any one file under what was left of the byte quota at
// the start. The quota can be overshot by what the code writes between two
// measures (tens of megabytes at page-cache speed), never by more; a
// bubblewrap tmpfs with --size would bound it exactly but does not persist
// between the runs of a session.
type quota struct {
	bytes   int64
	entries int
}

// quotaPoll is how often a running subprocess's workspace is measured.
const quotaPoll = 20 * time.Millisecond

var errOverQuota = errors.New("workspace quota exceeded")

// usage measures a workspace, stopping as soon as it is over the quota:
// an over-full workspace costs no more to measure than a full one.
func (q quota) usage(dir string) (bytes int64, entries int, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone or unreadable meanwhile: not counted
		}
		if path == dir {
			return nil
		}
		entries++
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				bytes += info.Size()
			}
		}
		if bytes > q.bytes || entries > q.entries {
			return errOverQuota
		}
		return nil
	})
	if err == errOverQuota {
		return bytes, entries, q.exceeded(bytes, entries)
	}
	return bytes, entries, err
}

// room checks a workspace against the quota as it will be after a change
// that adds addBytes and addEntries to what it holds, and gives the bytes
// left then.
func (q quota) room(dir string, addBytes int64, addEntries int) (left int64, err error) {
	bytes, entries, err := q.usage(dir)
	if err != nil {
		return 0, err
	}
	bytes, entries = bytes+addBytes, entries+addEntries
	if bytes > q.bytes || entries > q.entries {
		return 0, q.exceeded(bytes, entries)
	}
	return q.bytes - bytes, nil
}

// exceeded is the error for a workspace found over the quota.
func (q quota) exceeded(bytes int64, entries int) error {
	if entries > q.entries {
		return fmt.Errorf("%w: more than %d files and directories; delete some, or the workspace (DELETE /workspace/{session_id})", errOverQuota, q.entries)
	}
	return fmt.Errorf("%w: more than %d bytes; delete files, or the workspace (DELETE /workspace/{session_id})", errOverQuota, q.bytes)
}

// watch measures dir every quotaPoll until ctx ends, and calls over, once,
// when the workspace is over the quota.
func (q quota) watch(ctx context.Context, dir string, over func(error)) {
	wait := quotaPoll
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		if _, _, err := q.usage(dir); errors.Is(err, errOverQuota) {
			over(err)
			return
		}
		wait = max(quotaPoll, 4*time.Since(start))
	}
}
