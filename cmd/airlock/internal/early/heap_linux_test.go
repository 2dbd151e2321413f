package early

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ownMemory reads this process's resident memory ("rss") or its anonymous
// memory in transparent huge pages ("huge"), in KiB.
func ownMemory(what string) string {
	file, field := "/proc/self/status", "VmRSS:"
	if what == "huge" {
		file, field = "/proc/self/smaps_rollup", "AnonHugePages:"
	}
	b, _ := os.ReadFile(file)
	_, v, _ := strings.Cut(string(b), field)
	v, _, _ = strings.Cut(v, "kB")
	return strings.TrimSpace(v)
}

// childKiB runs the test binary as the command arg and returns what
// ownMemory reads in it.
func childKiB(t *testing.T, arg, what string) uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], arg)
	cmd.Env = append(os.Environ(), childEnv+"=1", childHeapEnv+"="+what)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	kib, err := strconv.ParseUint(string(out), 10, 64)
	if err != nil {
		t.Fatalf("%s: %q", arg, out)
	}
	return kib
}

// `airlock run` starts with heapPrefault bytes more memory resident than
// other commands: the populated heap, where the allocations of its start
// land (on a kernel with MADV_POPULATE_WRITE).
func TestHeapPopulated(t *testing.T) {
	if syscall.Madvise(make([]byte, 1<<20), madvPopulateWrite) != nil {
		t.Skip("the kernel has no MADV_POPULATE_WRITE")
	}
	run, version := childKiB(t, "run", "rss")<<10, childKiB(t, "version", "rss")<<10
	if run < version+heapPrefault*9/10 {
		t.Errorf("resident: run %d bytes, version %d; want run to hold %d more", run, version, heapPrefault)
	}
}

// Where the kernel gives transparent huge pages to a range that asks for
// them, the populated heap is made of them: at least heapPrefault less
// one huge page at each end.
func TestHeapHugePages(t *testing.T) {
	if !kernelGivesHugePages(t) {
		t.Skip("the kernel gives no transparent huge pages to a range that asks for them")
	}
	run, version := childKiB(t, "run", "huge")<<10, childKiB(t, "version", "huge")<<10
	if run < version+heapPrefault-2*hugePage {
		t.Errorf("anonymous huge pages: run %d bytes, version %d; want at least %d more", run, version, heapPrefault-2*hugePage)
	}
}

// kernelGivesHugePages reports whether a populated range that asks for
// huge pages gets one now (they may be disabled, or memory too fragmented).
func kernelGivesHugePages(t *testing.T) bool {
	m, err := syscall.Mmap(-1, 0, 2*hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	before := ownMemory("huge")
	hugePages(m)
	if syscall.Madvise(m, madvPopulateWrite) != nil {
		return false
	}
	return ownMemory("huge") != before
}

// BenchmarkFirstTouch populates heapPrefault bytes of fresh memory in small
// or huge pages, then writes a byte of each 4 KiB page: the populate and
// the first touches are reported apart. On the VMs measured the first
// touches of populated small pages cost ~10 µs each, of huge pages next to
// nothing (RATIONALE.md, "The first touch of a page").
func BenchmarkFirstTouch(b *testing.B) {
	for _, huge := range []bool{false, true} {
		name := "small"
		if huge {
			name = "huge"
		}
		b.Run(name, func(b *testing.B) {
			var populate, touch time.Duration
			for range b.N {
				m, err := syscall.Mmap(-1, 0, heapPrefault+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if huge {
					hugePages(m)
				}
				if err := syscall.Madvise(m, madvPopulateWrite); err != nil {
					b.Skip("no MADV_POPULATE_WRITE")
				}
				t1 := time.Now()
				for i := 0; i < len(m); i += 4096 {
					m[i] = 1
				}
				populate += t1.Sub(t0)
				touch += time.Since(t1)
				syscall.Munmap(m)
			}
			b.ReportMetric(float64(populate.Microseconds())/float64(b.N), "populate-µs")
			b.ReportMetric(float64(touch.Microseconds())/float64(b.N), "touch-µs")
		})
	}
}
