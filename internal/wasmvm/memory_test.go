package wasmvm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var bombs = []struct{ name, src string }{
	{"array push", "const a = []; for (;;) a.push({x: a.length})"},
	{"flat strings", "const keep = []; for (let i = 0;; i++) keep.push('x'.repeat(1 << 16) + i)"},
	{"typed arrays", "const keep = []; for (;;) keep.push(new Float64Array(1 << 16))"},
	{"big string", "'a'.repeat(2 ** 29)"},
	{"caught and retried", "const keep = []; for (;;) { try { for (;;) keep.push(new Array(1000).fill(1)) } catch (e) { keep.length = 0 } }"},
	{"caught then looped", "try { const a = []; for (;;) a.push([1, 2, 3]) } catch (e) { for (;;) {} }"},
	{"caught then returned", "try { const a = []; for (;;) a.push([1, 2, 3]) } catch (e) { 'swallowed' }"},
}

// TestMemoryLimit: exceeding the limit ends the run with ErrMemoryLimit
// whatever the program does after (catch it, retry, loop, return a value):
// the mark is set by the engine's allocator and read by the host.
func TestMemoryLimit(t *testing.T) {
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			s := newSandbox(t, &SandboxOptions{MemoryLimit: 16 << 20})
			_, err := s.Eval(context.Background(), b.src, "bomb.js", Script)
			if !errors.Is(err, ErrMemoryLimit) {
				t.Fatalf("err = %v, want ErrMemoryLimit", err)
			}
			if size := uint64(s.mod.Memory().Size()); size > 16<<20 {
				t.Errorf("linear memory %d bytes, over the 16 MiB limit", size)
			}
		})
	}
}

// TestMemoryLimitAllowsWork: an honest program that needs memory within
// the limit runs, with sizes the old engine's kernel refused.
func TestMemoryLimitAllowsWork(t *testing.T) {
	s := newSandbox(t, &SandboxOptions{MemoryLimit: 256 << 20})
	for _, c := range []struct{ src, want string }{
		{"Array.from({length: 5e6}, (_, i) => i).length", "5000000"},
		{"(2n ** 200000n).toString(16).length", "50001"},
	} {
		if got := evalJSON(t, s, c.src); got != c.want {
			t.Errorf("%s = %s, want %s", c.src, got, c.want)
		}
	}
}

const bombEnv = "WASMVM_TEST_BOMB"

// TestMemoryBombRSS runs memory bombs in a child process and asserts that
// its resident memory grows by no more than the sandboxes' limits plus a
// constant: the limit holds in linear memory, not in the host's heap.
func TestMemoryBombRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	if os.Getenv(bombEnv) != "" {
		return // the child's own copy of this test
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryBombChild$", "-test.v")
	cmd.Env = append(os.Environ(), bombEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestMemoryBombChild") {
		t.Fatalf("child did not pass:\n%s", out)
	}
	t.Logf("%s", out)
}

// bombSlack is the documented constant above the sum of the limits: the
// Go heap of the test and wazero's per-instance structures.
const bombSlack = 64 << 20

func TestMemoryBombChild(t *testing.T) {
	if os.Getenv(bombEnv) == "" {
		t.Skip("run by TestMemoryBombRSS in a child process")
	}
	testSnapshot(t)
	runtime.GC()
	before := rss(t)
	const limit, n = 32 << 20, 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := testSnapshot(t).NewSandbox(context.Background(), &SandboxOptions{MemoryLimit: limit})
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close(context.Background())
			_, errs[i] = s.Eval(context.Background(), bombs[i%len(bombs)].src, "bomb.js", Script)
		}()
	}
	// The peak, read while the sandboxes are alive, is what matters: read
	// it after they end from VmHWM.
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrMemoryLimit) {
			t.Errorf("bomb %d: %v, want ErrMemoryLimit", i, err)
		}
	}
	peak := hwm(t)
	grown := int64(peak) - int64(before)
	t.Logf("RSS before %d MiB, peak %d MiB, growth %d MiB (limit %d x %d MiB + %d MiB)",
		before>>20, peak>>20, grown>>20, n, limit>>20, bombSlack>>20)
	if grown > n*limit+bombSlack {
		t.Errorf("RSS grew %d MiB, over %d x %d MiB + %d MiB", grown>>20, n, limit>>20, bombSlack>>20)
	}
}

func procStatus(t *testing.T, key string) uint64 { return procKB(t, "/proc/self/status", key) }

// procKB reads the "key: N kB" line of a /proc file, in bytes.
func procKB(t testing.TB, file, key string) uint64 {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal(fmt.Sprintf("no %s in %s", key, file))
	return 0
}

func rss(t *testing.T) uint64 { return procStatus(t, "VmRSS") }
func hwm(t *testing.T) uint64 { return procStatus(t, "VmHWM") }
