package wasmvm

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// cacheSnapshot makes an engine caching in dir and a snapshot with setup.
func cacheSnapshot(t *testing.T, dir, setup string) *Snapshot {
	t.Helper()
	ctx := context.Background()
	e, err := NewEngine(ctx, &EngineOptions{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	sn, err := e.NewSnapshot(ctx, &SnapshotOptions{Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sn.Close(); e.Close(ctx) })
	return sn
}

func probeMarker(t *testing.T, sn *Snapshot) string {
	t.Helper()
	s, err := sn.NewSandbox(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	return evalJSON(t, s, `[globalThis.marker, (() => { try { (0, eval)('1'); return 'eval ran' } catch (e) { return e.name } })(), typeof SharedArrayBuffer]`)
}

func snapFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "snapshots", "*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSnapshotCache: a snapshot is written to the cache, the next engine
// reads it instead of building it, and the sandboxes of the read one are
// those of the built one (the setup's state, the hardening).
func TestSnapshotCache(t *testing.T) {
	dir := t.TempDir()
	a := cacheSnapshot(t, dir, "globalThis.marker = 42")
	if a.cached {
		t.Fatal("the first snapshot came from an empty cache")
	}
	want := probeMarker(t, a)
	if want != `[42,"ReferenceError","undefined"]` {
		t.Fatalf("built snapshot: %s", want)
	}
	if n := len(snapFiles(t, dir)); n != 1 {
		t.Fatalf("%d cache files, want 1", n)
	}
	b := cacheSnapshot(t, dir, "globalThis.marker = 42")
	if !b.cached {
		t.Fatal("the second snapshot was built again, not read")
	}
	if got := probeMarker(t, b); got != want {
		t.Errorf("cached snapshot: %s, want %s", got, want)
	}
	if a.sp != b.sp || a.ctxPtr != b.ctxPtr || a.pages != b.pages || a.base != b.base || len(a.im.hot) != len(b.im.hot) {
		t.Errorf("cached snapshot's fields differ from the built one's")
	}
	// Another setup is another key.
	c := cacheSnapshot(t, dir, "globalThis.marker = 7")
	if c.cached {
		t.Error("a snapshot of another setup was read from the cache")
	}
	if got := probeMarker(t, c); got != `[7,"ReferenceError","undefined"]` {
		t.Errorf("other setup: %s", got)
	}
}

// TestSnapshotCacheCorrupt: a cache file that is corrupt (a byte flipped),
// truncated, foreign (random bytes), or self-consistent but with fields out
// of range (a valid checksum over a bad header) is never trusted: the
// snapshot is built again, works, and the file is replaced by a good one.
func TestSnapshotCacheCorrupt(t *testing.T) {
	dir := t.TempDir()
	cacheSnapshot(t, dir, "globalThis.marker = 42")
	files := snapFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("%d cache files, want 1", len(files))
	}
	path := files[0]
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	resum := func(b []byte) []byte {
		body := b[:len(b)-sha256.Size]
		s := sha256.Sum256(body)
		return append(append([]byte(nil), body...), s[:]...)
	}
	badHeader := append([]byte(nil), good...)
	badHeader[8+16+12] = 0xFF // pages: far beyond 4 GiB
	badHeader[8+16+13] = 0xFF
	badIndex := append([]byte(nil), good...)
	hdr := snapHeader
	nHot := int(good[8+16+16]) | int(good[8+16+17])<<8
	nWarm := int(good[8+16+20]) | int(good[8+16+21])<<8
	copy(badIndex[hdr+8*(nHot+nWarm):], []byte{0xFF, 0xFF, 0xFF, 0x7F}) // a page index past the image
	for name, b := range map[string][]byte{
		"flipped":      func() []byte { b := append([]byte(nil), good...); b[len(b)/2] ^= 1; return b }(),
		"truncated":    good[:len(good)/2],
		"empty":        nil,
		"foreign":      resum(append([]byte("not a snapshot at all........................................"), make([]byte, 64)...)),
		"bad-header":   resum(badHeader),
		"bad-index":    resum(badIndex),
		"other-format": resum(func() []byte { b := append([]byte(nil), good...); b[7]++; return b }()),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			sn := cacheSnapshot(t, dir, "globalThis.marker = 42")
			if sn.cached {
				t.Fatal("a bad cache file was trusted")
			}
			if got := probeMarker(t, sn); got != `[42,"ReferenceError","undefined"]` {
				t.Errorf("rebuilt snapshot: %s", got)
			}
			if again := cacheSnapshot(t, dir, "globalThis.marker = 42"); !again.cached {
				t.Error("the bad file was not replaced by a good one")
			}
		})
	}
}

// TestCachePruned: saving a new snapshot removes the cache's files that
// went unread and unwritten for cacheMaxAge (snapshots, leftover
// temporary files, wazero's compiled modules and their emptied version
// directories), and keeps those used since, read or written.
func TestCachePruned(t *testing.T) {
	dir := t.TempDir()
	cacheSnapshot(t, dir, "globalThis.marker = 1")
	saved := snapFiles(t, dir)
	old := time.Now().Add(-cacheMaxAge - 24*time.Hour)
	plant := func(rel string, atime, mtime time.Time) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, atime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := []string{
		plant("snapshots/0123.snap", old, old),
		plant("snapshots/.snap-123", old, old),
		plant("wazero-v0.0.1-amd64-linux/abcd", old, old),
	}
	// Its directory, untouched since its file was written.
	if err := os.Chtimes(filepath.Join(dir, "wazero-v0.0.1-amd64-linux"), old, old); err != nil {
		t.Fatal(err)
	}
	kept := []string{
		plant("snapshots/4567.snap", time.Now(), old), // read lately
		plant("snapshots/89ab.snap", old, time.Now()), // written lately
		plant("wazero-v0.0.2-amd64-linux/ef01", time.Now(), old),
		plant("other/file", old, old), // not the cache's
	}
	kept = append(kept, saved...)
	cacheSnapshot(t, dir, "globalThis.marker = 2") // a new snapshot is saved
	for _, p := range gone {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: not removed (%v)", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "wazero-v0.0.1-amd64-linux")); !os.IsNotExist(err) {
		t.Errorf("the emptied wazero directory stays (%v)", err)
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if n := len(snapFiles(t, dir)); n != 4 {
		t.Errorf("%d snapshot files, want 4 (two planted, two saved)", n)
	}
}

// A wazero version directory that another process has just made, and not
// yet written its compiled module into (wazero makes it when its cache is
// made, and writes the module into it, failing the compilation if it is
// gone, once it is compiled), is not removed for being empty.
func TestCachePruneKeepsNewDirectory(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "wazero-v9.9.9-amd64-linux")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	pruneCache(dir, time.Now())
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("a new, empty wazero directory was removed: %v", err)
	}
}
