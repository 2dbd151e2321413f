package nesting

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/nesting/nestingtest"
)

// tokens are what the random programs below are made of: every token the
// scan counts or resets on, and none that forks a reading.
var tokens = []string{
	"(", ")", "[", "]", "{", "}", "`", "${", "a", "1", "'s'", "!", "+", "-", "++", "=", "?", ":", ",", ";", ".",
	"=>", "<", ">", "**", "|", "if", "else", "for", "typeof", "new", "yield", "await", "as", "of", "in",
	"case", "do", "while", "extends", "\n", " ",
}

func randomProgram(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(tokens[r.IntN(len(tokens))])
		b.WriteByte(' ')
	}
	return b.String()
}

// stack is a copy of the open levels, the program's first.
func (b *branch) stack() []level {
	var s []level
	for f := b.below; f != nil; f = f.up {
		s = append(s, f.level)
	}
	slices.Reverse(s)
	return append(s, b.own...)
}

// Every step of the scan is monotone in the counters: two readings of the
// same shape at the same offset, the counters of one at least the other's,
// take the same steps through the same text, and after each one the first
// still counts at least as much, level by level. This is what makes a
// merged reading (absorb) bound both of those it replaces.
func TestMergeMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		prefix, rest := randomProgram(r, r.IntN(40)), randomProgram(r, 1+r.IntN(60))
		src := prefix + rest
		lo := &scanner{src: src, max: 1 << 30, over: -1, failFrom: -1, failEnd: -1}
		bl := &branch{sc: lo, own: make([]level, 1, 64), nl: true}
		lo.live = []*branch{bl}
		for bl.i < len(prefix) && !bl.dead {
			bl.step()
		}
		if len(lo.live) != 1 || bl.i != len(prefix) {
			continue // the prefix ended inside a token or a template
		}
		hi := &scanner{src: src, max: 1 << 30, over: -1, failFrom: -1, failEnd: -1}
		bh := *bl
		bh.sc, bh.below, bh.own = hi, nil, bl.stack()
		for k := range bh.own {
			bh.own[k].base += r.IntN(3)
			bh.own[k].low += r.IntN(3)
			bh.own[k].high += r.IntN(3)
		}
		hi.live = []*branch{&bh}
		for bl.i < len(src) {
			bl.step()
			bh.step()
			if bh.i != bl.i || !bh.sameShape(bl) {
				t.Fatalf("%q: the readings parted at %d/%d", src, bl.i, bh.i)
			}
			hs, ls := bh.stack(), bl.stack()
			for k := range ls {
				x, y := hs[k], ls[k]
				if x.base < y.base || x.low < y.low || x.high < y.high {
					t.Fatalf("%q at %d: level %d counts %+v, below %+v", src, bl.i, k, x, y)
				}
			}
			if bh.depth() < bl.depth() {
				t.Fatalf("%q at %d: depth %d below %d", src, bl.i, bh.depth(), bl.depth())
			}
		}
	}
}

// Merging readings bounds them: on programs that fork (the hidden nests,
// and random programs full of ambiguous slashes), the deepest count with
// merging is at least that of every reading followed apart, and a bound is
// passed no later. (A reading that closes a bracket it did not open is
// kept here: which of several such readings is dropped depends on which
// are left, and all of them are syntax errors, where esbuild stops.)
func TestMergeBounds(t *testing.T) {
	var progs []string
	for _, c := range nestingtest.Hidden(300) {
		progs = append(progs, c.Module)
	}
	r := rand.New(rand.NewPCG(3, 4))
	forks := []string{"} / ", "a\n/ ", "of / ", "> / ", "yield / ", "/ x / ", "'/' ", "/*/ */ ", "} / ( / ", "a\n/ [ / 1 ", "} / 1 / "}
	for range 3000 {
		var b strings.Builder
		for range 4 + r.IntN(10) {
			b.WriteString(randomProgram(r, r.IntN(12)))
			b.WriteString(forks[r.IntN(len(forks))])
		}
		progs = append(progs, b.String())
	}
	merged, deeper := 0, 0
	for _, src := range progs {
		with := &scanner{src: src, max: 1 << 30, noDrop: true}
		with.run()
		apart := &scanner{src: src, max: 1 << 30, noMerge: true, noDrop: true}
		apart.run()
		if apart.ambiguous {
			continue
		}
		if with.deepest < apart.deepest {
			t.Errorf("%q: %d merged, %d apart", src, with.deepest, apart.deepest)
		}
		if with.deepest > apart.deepest {
			deeper++
		}
		if apart.readings > with.readings {
			merged++
		}
		for _, m := range []int{3, 5, 8} {
			w := &scanner{src: src, max: m, noDrop: true}
			w.run()
			a := &scanner{src: src, max: m, noMerge: true, noDrop: true}
			a.run()
			if a.over >= 0 && (w.over < 0 || w.over > a.over) {
				t.Errorf("%q, bound %d: refused at %d merged, %d apart", src, m, w.over, a.over)
			}
		}
	}
	if merged < len(progs)/4 {
		t.Errorf("readings merged in %d programs of %d", merged, len(progs))
	}
	t.Logf("%d programs, readings merged in %d; the merged count deeper than any reading in %d", len(progs), merged, deeper)
}
