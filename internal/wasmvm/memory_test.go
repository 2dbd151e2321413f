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

// fragment is a program that fragments the C allocator: it frees blocks
// no later request fits in, kept apart by live blocks of 16 bytes (a
// buffer allocated larger than any free block, so at the allocator's top,
// then shrunk in place). What is live stays small; the holes add up to
// rounds × ~1.5 MiB of linear memory.
func fragment(rounds int) string {
	return fmt.Sprintf(`(() => { const pins = [];
		for (let k = 0; k < %d; k++) {
			let b = new ArrayBuffer((1 << 20) + k * 4096);
			const p = new ArrayBuffer(b.byteLength + 4096, {maxByteLength: 64 << 20}); p.resize(16); pins.push(p);
			b = null;
		}
		return pins.length })()`, rounds)
}

// TestSetMemoryLimit: a sandbox made with a large limit (its memory
// reserved for it, as the engine's sandboxes made ahead of their program
// are) and then given a smaller one keeps its linear memory within the
// smaller one: the heap limit alone did not, and a program that
// fragments the allocator grew the memory to the reservation with little
// of it live. The growth refused at the limit is an out-of-memory,
// caught or not. A limit beyond the reservation is refused; Reset and the
// pool give the sandbox its own limit back.
func TestSetMemoryLimit(t *testing.T) {
	ctx := context.Background()
	sn := poolSnapshot(t, nil)
	const made, limit = 256 << 20, 32 << 20
	s, err := sn.NewSandbox(ctx, &SandboxOptions{MemoryLimit: made})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if s.SetMemoryLimit(made + 1<<20) {
		t.Errorf("a limit beyond the one the sandbox was made with was taken")
	}
	if !s.SetMemoryLimit(limit) {
		t.Fatal("SetMemoryLimit refused a smaller limit")
	}
	if got := evalJSON(t, s, fragment(8)); got != "8" {
		t.Fatalf("a program within the limit: %s", got)
	}
	_, err = s.Eval(ctx, "try { "+fragment(200)+" } catch { 'caught' }", "frag.js", Script)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Errorf("fragmenting past the limit: %v, want ErrMemoryLimit", err)
	}
	if size := s.mod.Memory().Size(); size > limit {
		t.Errorf("linear memory %d MiB, over the %d MiB limit", size>>20, limit>>20)
	}

	// A sandbox whose limit was lowered, closed unspent, is pooled with
	// the limit it was made with.
	a, err := sn.NewSandbox(ctx, &SandboxOptions{MemoryLimit: made})
	if err != nil {
		t.Fatal(err)
	}
	a.SetMemoryLimit(limit)
	evalJSON(t, a, "1")
	a.Close(ctx)
	n := sn.Instances()
	b, err := sn.NewSandbox(ctx, &SandboxOptions{MemoryLimit: made})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Close(ctx) }()
	if sn.Instances() != n {
		t.Fatal("the sandbox was not pooled")
	}
	if got := evalJSON(t, b, "new ArrayBuffer(64 << 20).byteLength"); got != "67108864" {
		t.Errorf("64 MiB in a sandbox of the pool: %s", got)
	}
	b.Close(ctx)
	if b, err = sn.NewSandbox(ctx, &SandboxOptions{MemoryLimit: made}); err != nil {
		t.Fatal(err)
	}
	b.SetMemoryLimit(limit)
	evalJSON(t, b, "1")
	if !b.Reset() {
		t.Fatal("Reset failed")
	}
	if got := evalJSON(t, b, "new ArrayBuffer(64 << 20).byteLength"); got != "67108864" {
		t.Errorf("64 MiB after Reset: %s", got)
	}
}

// TestRefusedGrowthIsOutOfMemory: a growth of linear memory refused at
// the limit ends the program with ErrMemoryLimit wherever the allocation
// came from, as a refusal at the heap limit does. Here it is the shim's
// copies of a thrown error's text, made with the C allocator outside
// QuickJS's heap and its accounting: the heap holds the 6 MiB message
// and its UTF-8 form, the memory cannot also hold the copies. Before,
// the failed copy left the text empty and the program's error was
// "<exception>", not an out-of-memory.
func TestRefusedGrowthIsOutOfMemory(t *testing.T) {
	sn := testSnapshot(t)
	s := newSandbox(t, &SandboxOptions{MemoryLimit: sn.ImageSize() + heapSlack + 14<<20})
	_, err := s.Eval(context.Background(), "throw new Error('x'.repeat(6 << 20))", "big.js", Script)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Errorf("err = %v, want ErrMemoryLimit", err)
	}
}
