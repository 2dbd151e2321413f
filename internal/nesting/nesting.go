// Package nesting bounds how deeply a program (or a tool's schema) nests
// before a recursive parser in the host reads it.
//
// The TypeScript transform (esbuild) and the parser of the agent's
// instrumentation (sobek) are recursive descent parsers on the Go stack,
// and so are the passes over the trees they build: a program a few hundred
// KB long that nests a few hundred thousand levels deep takes the host down
// with Go's "fatal error: stack overflow", which no recover catches, and at
// a hundred thousand levels it costs the host most of a GB. [Check] reads
// the text in one pass, in time linear in its length (times the readings it
// follows at once, below) and constant memory per level, and finds where it
// nests deeper than [Max]: only then does a parser see it.
//
// Depth is counted as the parsers recurse, not only in brackets:
//
//   - each open bracket, brace, parenthesis and template substitution ${,
//     and each TypeScript angle bracket, as a level;
//   - within a level, each operator that makes the parser recurse without a
//     bracket: prefix operators (! ~ unary + - ++ -- ... typeof void delete
//     await new, TypeScript's type assertions and type operators), postfix
//     chains (a.b, a?.b, calls a(), indexing a[0], tagged templates, a!,
//     as and satisfies), and the right-nesting ones (assignments, ? and :,
//     =>, **, yield, extends, labels, and the statements if, for, while,
//     with and do, whose bodies nest without braces, as else-if chains do).
//
// A level starts over after a comma, after a semicolon (unless else follows),
// and where a new statement starts after the end of an operand, as
// automatic semicolon insertion would have it; a prefix or postfix chain
// also starts over at a binary operator.
//
// Strings, template literals, comments (legacy HTML comments too, as
// esbuild reads them) and regular expression literals are skipped as a
// JavaScript scanner skips them, and no guess decides what is one: where
// the token before a slash cannot tell whether it divides or starts a
// regular expression, both readings are followed. That is after a closing
// brace (a block, or an object literal or a function or class expression),
// after a word that may be a keyword or an identifier (of, yield, await),
// after a comparison's > (TypeScript's type arguments), and after the end
// of an operand on an earlier line (a statement may have ended there: a
// declaration, a type annotation, break label). After a word that takes an
// operand only as a keyword that no slash may follow (as, satisfies, is,
// keyof, readonly, infer, unique, asserts, async, let, from, implements), a
// slash divides; after break, continue and debugger, it starts a regular
// expression. Each reading is counted alone; two that reach the same offset
// with the same open levels and state are merged, each counter the greater
// of the two, which bounds both from there on (absorb says why). A reading
// that reaches a syntax error at which esbuild stops (a closer that does
// not match, a string or a regular expression that its line does not end)
// is dropped while another remains. Real code needs one reading at a time;
// code that needs more than [MaxReadings] at once is refused.
//
// The count is an upper bound of the parsers' recursion for the shapes that
// nest, in every reading a parser that stops at its first syntax error can
// take: esbuild's. sobek goes on after an error, into readings no scan of
// the grammar follows, so the agent's instrumentation gives it the text with
// its literals blanked ([BlankLiterals]), at most [MaxRecovering] bytes of
// it, and past 4 KiB only what esbuild reads as JavaScript. The count is close
// to the brackets' depth for ordinary code: real programs stay far below
// [Max] (model-written code rarely passes 20).
//
// A tool's JSON Schema is bounded the same way, by [CheckSchema], before a
// schema decoder or compiler reads it: their time grows with a power of
// the depth, and the JSON decoders' own limit (10,000 levels) is far too
// deep for them.
package nesting

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Max is the deepest nesting Check allows: 1000 levels, counted as the
// package doc describes. Real programs stay below 100 even with long method
// chains; at 1000 esbuild and sobek need a few MB of stack and tens of ms at
// most (RATIONALE.md, "Why programs may nest 1000 levels deep").
const Max = 1000

// MaxReadings is how many readings of a program Check follows at once:
// where a slash may start a regular expression or divide, both readings
// are followed until they meet again, or one is a syntax error. Real
// programs need one at a time (none of 11,900 files of npm packages needed
// two); code that keeps more than MaxReadings apart at once is refused, and
// the scan of code that keeps MaxReadings costs at most that many scans.
const MaxReadings = 16

// MaxRecovering is the longest source, in bytes, given to a parser that
// goes on after a syntax error: sobek, which the agent's instrumentation
// reads code with (internal/instrument). After an error sobek reads on from
// wherever its recovery leaves it: a template's text after a skipped
// backtick, a regular expression's body, a closer inside what it then
// takes for a regular expression. No scan of the grammar bounds that, so
// the instrumentation gives it the code with its literals blanked
// (BlankLiterals), past 4 KiB only JavaScript that esbuild reads without an
// error, and at most this much of it: sobek needs at most about 2.4 KB of Go stack per byte whatever it
// reads (a parenthesis costs it the most), 150 MB at 64 KiB, against Go's
// 1 GB.
const MaxRecovering = 64 << 10

// Error reports where a program nests too deeply: the byte offset of the
// token that went past the bound, and its 1-based line and column (the
// column counts characters). Ambiguous reports a program refused at the
// slash where it would have needed more than MaxReadings readings at once.
type Error struct {
	Offset       int
	Line, Column int
	Max          int
	Ambiguous    bool
}

// Error is the message, without the position.
func (e *Error) Error() string {
	if e.Ambiguous {
		return fmt.Sprintf("the code cannot be checked for nesting: it can be read in more than %d ways at once (where a slash may divide or start a regular expression)", MaxReadings)
	}
	return fmt.Sprintf("the code nests too deeply: more than %d levels of brackets, blocks or nested expressions", e.Max)
}

// Check reports where src nests deeper than Max, or nil.
func Check(src string) *Error { return CheckMax(src, Max) }

// CheckMax reports where src nests deeper than max in any of its
// readings, or nil.
func CheckMax(src string, max int) *Error {
	s := scanner{src: src, max: max}
	s.run()
	if s.over < 0 {
		return nil
	}
	line, col := lineCol(src, s.over)
	return &Error{Offset: s.over, Line: line, Column: col, Max: max, Ambiguous: s.ambiguous}
}

// Depth is the deepest nesting of src over its readings, counted as Check
// counts it (of a program refused as ambiguous, the deepest until then).
func Depth(src string) int {
	s := scanner{src: src, max: int(^uint(0) >> 1)}
	s.run()
	return s.deepest
}

// Readings is the most readings of src followed at once (1 for most
// programs; more than MaxReadings for one refused as ambiguous).
func Readings(src string) int {
	s := scanner{src: src, max: int(^uint(0) >> 1)}
	s.run()
	return s.readings
}

// BlankLiterals is src with the text of its strings, template literals
// (not their substitutions), regular expressions and comments made spaces,
// every offset, line terminator and line continuation kept: for a parser
// that goes on after a syntax error (MaxRecovering), which can then read no
// literal's text as code. It reports false for a program that Check
// refuses or that can be read in more than one way (a slash that may divide
// or start a regular expression, a legacy HTML comment): no one reading's
// literals are known.
func BlankLiterals(src string) (string, bool) {
	s := scanner{src: src, max: Max, record: true}
	s.run()
	if s.over >= 0 || s.readings > 1 {
		return "", false
	}
	out := []byte(src)
	for _, l := range s.literals {
		for i := l[0]; i < l[1]; i++ {
			switch c := out[i]; {
			case c == '\n' || c == '\r':
			case c == 0xE2 && isLS(src, i):
				i += 2
			case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r' || isLS(src, i+1)):
				// a line continuation
			default:
				out[i] = ' '
			}
		}
	}
	return string(out), true
}

// lineCol is the 1-based line and column of a byte offset.
func lineCol(s string, off int) (line, col int) {
	off = min(max(off, 0), len(s))
	start := strings.LastIndexByte(s[:off], '\n') + 1
	return strings.Count(s[:off], "\n") + 1, utf8.RuneCountInString(s[start:off]) + 1
}

// level is an open bracket, or the program. kind, control and operand
// are its shape, and shape a hash of the shape of it and the levels below;
// base, low and high are its counters.
type level struct {
	kind      byte // 0 (the program), '(', '[', '{', '$' (${ of a template), '<'
	base      int  // the depth inside it
	low, high int  // right-nesting operators, prefix and postfix chains
	control   bool // the ( of an if, for, while, with, switch or catch head
	operand   bool // a < where an operand was expected: a type assertion
	shape     uint64
}

// frame is a level that readings share since one forked from another:
// never changed (a reading that changes it changes its own copy).
type frame struct {
	level
	up *frame // the level below, or nil
	n  int    // the number of levels up to this one
}

// What a slash starts, after the token before it.
const (
	slashRegex  = iota // a regular expression: an operand is expected
	slashDivide        // a division, after the end of an operand
	slashEither        // either: both are read
)

// scanner reads the source in every reading its slashes allow: each
// reading is a branch, and the branches furthest behind step together, a
// token (or the white space before one) at a time, so that two branches at
// the same offset are compared there and merged if nothing tells them
// apart but their counters.
type scanner struct {
	src   string
	max   int
	live  []*branch
	alive int // the live readings not dropped
	// failFrom, failEnd: a regular expression scanned from the slash at
	// failFrom did not end on its line, which ends at failEnd (regexEnd).
	failFrom, failEnd int
	over              int  // where the bound was passed, or -1
	ambiguous         bool // over is where the readings outgrew MaxReadings
	deepest           int  // the deepest depth seen
	readings          int  // the most branches live at once
	// record: note in literals where the text of strings, templates,
	// regular expressions and comments is (BlankLiterals).
	record   bool
	literals [][2]int
	// noMerge keeps every reading apart, and noDrop keeps the readings
	// that close a bracket they did not open (for the test that merging
	// bounds the readings it replaces).
	noMerge, noDrop bool
}

// branch is one reading of the source: the open levels, where it is, and
// what the last token tells of the next.
type branch struct {
	sc *scanner
	i  int
	// The open levels, the program's first: those below own are shared
	// with other readings (copied up to own to be changed); own's are this
	// reading's, the top last. A fork costs what was opened or changed
	// since the last one.
	below *frame
	own   []level
	// prevEnd: the last token ended an operand (an identifier, a literal,
	// a closing bracket), so what follows is an operator, or a new statement.
	prevEnd bool
	// regexOK: what follows starts a statement even though prevEnd (after
	// a block's }, or an if head's )), as far as calls, indexing, tagged
	// templates and prefix operators are concerned.
	regexOK bool
	// slash: what a slash starts now (slashRegex, slashDivide, slashEither).
	slash byte
	// nl: a line terminator came since the last token.
	nl bool
	// semi: a semicolon ended a statement; the level starts over unless
	// else follows.
	semi bool
	// afterDot: the last token was . or ?., so an identifier is a property
	// name, never a keyword.
	afterDot bool
	prevWord string // the last token, when it was a word
	forAwait bool   // the last two words were for await
	dead     bool   // a syntax error in this reading: dropped
	key      uint64 // shapeKey, while readings are compared
}

// run scans the source in every reading, until its end or the bound. The
// readings furthest behind take a step each, then those that meet are
// merged: a round costs n log n for n readings.
func (s *scanner) run() {
	s.over, s.failFrom, s.failEnd = -1, -1, -1
	b := &branch{sc: s, own: make([]level, 1, 64), nl: true}
	if strings.HasPrefix(s.src, "#!") {
		b.i = lineEnd(s.src, 0)
	}
	s.live, s.alive, s.readings = []*branch{b}, 1, 1
	for s.over < 0 && len(s.live) > 0 {
		if len(s.live) == 1 {
			// One reading, as for almost every program: no comparisons.
			b := s.live[0]
			for s.over < 0 && len(s.live) == 1 && b.i < len(s.src) {
				b.step()
			}
			if len(s.live) == 1 && b.i >= len(s.src) {
				s.live = s.live[:0]
			}
			continue
		}
		at := s.live[0].i
		for _, o := range s.live[1:] {
			at = min(at, o.i)
		}
		n := len(s.live) // forks made in this round wait for the next
		for k := 0; k < n && s.over < 0; k++ {
			if b := s.live[k]; b.i == at && !b.dead {
				if b.i < len(s.src) {
					b.step()
				} else {
					b.dead = true
					s.alive--
				}
			}
		}
		live := s.live[:0]
		for _, b := range s.live {
			if !b.dead {
				live = append(live, b)
			}
		}
		clear(s.live[len(live):])
		s.live = live
		if s.noMerge || len(s.live) < 2 {
			continue
		}
		for _, b := range s.live {
			b.key = b.shapeKey()
		}
		slices.SortFunc(s.live, func(x, y *branch) int {
			if x.i != y.i {
				return x.i - y.i
			}
			return cmp.Compare(x.key, y.key)
		})
		live = s.live[:1]
		for _, b := range s.live[1:] {
			if o := live[len(live)-1]; o.i == b.i && o.key == b.key && o.sameShape(b) {
				o.absorb(b)
				s.alive--
				continue
			}
			live = append(live, b)
		}
		clear(s.live[len(live):])
		s.live = live
	}
}

// shapeKey sums up what sameShape compares: equal shapes, equal keys.
func (b *branch) shapeKey() uint64 {
	k := b.peekTop().shape ^ uint64(b.levels())<<20 ^ uint64(b.slash)<<8 ^ uint64(len(b.prevWord))<<12
	for i, f := range [...]bool{b.prevEnd, b.regexOK, b.nl, b.semi, b.afterDot, b.forAwait} {
		k ^= boolBit(f) << i
	}
	return k
}

// fork adds a copy of b as a new reading, or refuses the program at at
// when there are MaxReadings already (and returns nil).
func (b *branch) fork(at int) *branch {
	s := b.sc
	if s.alive >= MaxReadings {
		if s.over < 0 {
			s.over, s.ambiguous = at, true
		}
		return nil
	}
	for _, l := range b.own {
		n := 1
		if b.below != nil {
			n = b.below.n + 1
		}
		b.below = &frame{level: l, up: b.below, n: n}
	}
	b.own = b.own[:0]
	c := *b
	c.own = nil
	s.live = append(s.live, &c)
	s.alive++
	s.readings = max(s.readings, s.alive)
	return &c
}

// sameShape reports whether o and b, at the same offset, read the rest of
// the source alike: the same open levels, of the same kinds, and the same
// state between tokens. Only their counters may differ.
func (b *branch) sameShape(o *branch) bool {
	if b.prevEnd != o.prevEnd || b.regexOK != o.regexOK || b.slash != o.slash || b.nl != o.nl ||
		b.semi != o.semi || b.afterDot != o.afterDot || b.forAwait != o.forAwait ||
		b.prevWord != o.prevWord || b.levels() != o.levels() || b.peekTop().shape != o.peekTop().shape {
		return false
	}
	same := true
	b.walk(o, func(x, y *level) bool {
		same = x.kind == y.kind && x.control == y.control && x.operand == y.operand
		return same
	})
	return same
}

// walk calls f with the levels of b and o (as many), from the top down,
// until f returns false or the two share the rest.
func (b *branch) walk(o *branch, f func(x, y *level) bool) {
	ib, io, fb, fo := len(b.own)-1, len(o.own)-1, b.below, o.below
	for {
		var x, y *level
		switch {
		case ib >= 0:
			x = &b.own[ib]
		case fb != nil:
			x = &fb.level
		}
		switch {
		case io >= 0:
			y = &o.own[io]
		case fo != nil:
			y = &fo.level
		}
		if x == nil || y == nil || ib < 0 && io < 0 && fb == fo || !f(x, y) {
			return
		}
		if ib >= 0 {
			ib--
		} else {
			fb = fb.up
		}
		if io >= 0 {
			io--
		} else {
			fo = fo.up
		}
	}
}

// absorb makes b count for o as well, b and o having the same shape at
// the same offset: each counter becomes the greater of the two.
//
// This bounds both readings from here on. What the scanner does next
// depends on the source, the offset and the shape, never on a counter, so
// the merged reading takes the same steps as each of the two; and every
// step is monotone in the counters: push makes base depth()+1, incLow
// and incHigh add one, reset and a binary operator set low or high to 0
// (in both alike), pop removes the top level of the same kind in both,
// exposing the level below, itself the greater of the two. By induction,
// each counter of the merged reading stays at least that of either, so
// does its depth, and the bound is passed no later than in either.
// (TestMergeMonotone checks each step; TestMergeBounds, merged readings
// against the same readings followed apart.)
func (b *branch) absorb(o *branch) {
	// The levels the two do not share become b's own, then the greater.
	k := 0
	b.walk(o, func(x, y *level) bool { k++; return true })
	if more := k - len(b.own); more > 0 {
		own := make([]level, more, k+16)
		for i := more - 1; i >= 0; i-- {
			own[i] = b.below.level
			b.below = b.below.up
		}
		b.own = append(own, b.own...)
	}
	b.walk(o, func(x, y *level) bool {
		x.base, x.low, x.high = max(x.base, y.base), max(x.low, y.low), max(x.high, y.high)
		return true
	})
}

// levels is the number of open levels.
func (b *branch) levels() int {
	n := len(b.own)
	if b.below != nil {
		n += b.below.n
	}
	return n
}

// peekTop is the top level, not to be changed.
func (b *branch) peekTop() *level {
	if len(b.own) > 0 {
		return &b.own[len(b.own)-1]
	}
	return &b.below.level
}

// pop closes the top level.
func (b *branch) pop() {
	if len(b.own) > 0 {
		b.own = b.own[:len(b.own)-1]
	} else {
		b.below = b.below.up
	}
}

// top is the top level, to be changed: this reading's own.
func (b *branch) top() *level {
	if len(b.own) == 0 {
		b.own = append(b.own, b.below.level)
		b.below = b.below.up
	}
	return &b.own[len(b.own)-1]
}

func (b *branch) depth() int {
	t := b.peekTop()
	return t.base + t.low + t.high
}

// exceeded records the first token that goes past the bound.
func (b *branch) exceeded(at int) bool {
	s, d := b.sc, b.depth()
	s.deepest = max(s.deepest, d)
	if d > s.max {
		if s.over < 0 {
			s.over = at
		}
		return true
	}
	return false
}

func (b *branch) incLow(at int) bool {
	t := b.top()
	t.low++
	t.high = 0
	return b.exceeded(at)
}

func (b *branch) incHigh(at int) bool {
	b.top().high++
	return b.exceeded(at)
}

// reset starts the level over, as at a new statement or list element.
func (b *branch) reset() {
	b.popAngles()
	if t := b.peekTop(); t.low != 0 || t.high != 0 {
		t = b.top()
		t.low, t.high = 0, 0
	}
}

// zeroHigh ends a prefix or postfix chain, as a binary operator does.
func (b *branch) zeroHigh() {
	if b.peekTop().high != 0 {
		b.top().high = 0
	}
}

func (b *branch) popAngles() {
	for b.peekTop().kind == '<' && b.levels() > 1 {
		b.pop()
	}
}

func (b *branch) push(kind byte, at int, control, operand bool) bool {
	t := b.peekTop()
	shape := (t.shape^uint64(kind)<<1^boolBit(control)<<9^boolBit(operand)<<10)*0x9E3779B97F4A7C15 + 1
	b.own = append(b.own, level{kind: kind, base: t.base + t.low + t.high + 1, control: control, operand: operand, shape: shape})
	return b.exceeded(at)
}

func boolBit(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// startToken is called at the start of every token but comments: a pending
// semicolon takes effect unless the token is else.
func (b *branch) startToken(word string) {
	if b.semi {
		b.semi = false
		if word != "else" {
			b.reset()
		}
	}
}

// operandStart is called at the start of a token that begins an operand
// (identifier, literal, string, template): after the end of an operand, that
// is a new statement.
func (b *branch) operandStart() {
	if b.prevEnd {
		b.reset()
	}
}

// step reads the white space and comments at b.i, then one token. With
// more than one reading, it stops after the white space, where readings
// meet again.
func (b *branch) step() {
	src := b.sc.src
	start := b.i
	for b.i < len(src) {
		c := src[b.i]
		k := charClass[c]
		switch k {
		case cSpace:
			b.i++
			continue
		case cLine:
			b.nl = true
			b.i++
			continue
		case cHigh:
			r, n := utf8.DecodeRuneInString(src[b.i:])
			switch {
			case r == '\u2028' || r == '\u2029':
				b.nl = true
				b.i += n
				continue
			case unicode.IsSpace(r) || r == '\uFEFF':
				b.i += n
				continue
			}
		case cSlash:
			switch b.peek(1) {
			case '/':
				end := lineEnd(src, b.i)
				b.literal(b.i+2, end)
				b.i = end
				continue
			case '*':
				end := strings.Index(src[b.i+2:], "*/")
				if end < 0 {
					b.literal(b.i+2, len(src))
					b.i = len(src)
					return
				}
				b.literal(b.i+2, b.i+2+end)
				if strings.ContainsAny(src[b.i+2:b.i+2+end], "\n\r\u2028\u2029") {
					b.nl = true
				}
				b.i += end + 4
				continue
			}
		case cLess, cMinus:
			if c == '<' && strings.HasPrefix(src[b.i:], "<!--") || c == '-' && b.nl && strings.HasPrefix(src[b.i:], "-->") {
				// A legacy HTML comment, to the end of the line, as esbuild
				// reads it (`-->` only first on its line). sobek reads
				// operators, but only with the comment blanked, opener and
				// all.
				end := lineEnd(src, b.i)
				b.literal(b.i, end)
				b.i = end
				continue
			}
		}
		if b.i > start && len(b.sc.live) > 1 {
			return
		}
		switch k {
		case cHigh, cIdent:
			b.word()
		case cSlash:
			b.slashToken()
		case cQuote:
			b.startToken("")
			b.operandStart()
			b.str(c)
			b.ended()
		case cTick:
			b.startToken("")
			at := b.i
			if b.prevEnd && !b.regexOK {
				if b.incHigh(at) { // a tagged template
					break
				}
			} else {
				b.operandStart()
			}
			b.i++
			b.template()
		case cDigit:
			b.startToken("")
			b.operandStart()
			b.number()
			b.ended()
		case cOpen:
			b.startToken("")
			b.open(c)
		case cClose:
			b.startToken("")
			b.close(c)
		default:
			if c == '.' && b.peek(1) >= '0' && b.peek(1) <= '9' {
				b.startToken("")
				b.operandStart()
				b.number()
				b.ended()
				break
			}
			b.startToken("")
			b.operator()
		}
		b.nl = false
		return
	}
}

// The classes of the bytes a token or a blank starts with.
const (
	cOther = iota
	cSpace
	cLine
	cHigh
	cSlash
	cLess
	cMinus
	cIdent
	cQuote
	cTick
	cDigit
	cOpen
	cClose
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch b := byte(c); {
		case b == ' ' || b == '\t' || b == '\v' || b == '\f':
			t[c] = cSpace
		case b == '\n' || b == '\r':
			t[c] = cLine
		case b >= 0x80:
			t[c] = cHigh
		case b == '/':
			t[c] = cSlash
		case b == '<':
			t[c] = cLess
		case b == '-':
			t[c] = cMinus
		case isIdentStart(b):
			t[c] = cIdent
		case b == '\'' || b == '"':
			t[c] = cQuote
		case b == '`':
			t[c] = cTick
		case b >= '0' && b <= '9':
			t[c] = cDigit
		case b == '(' || b == '[' || b == '{':
			t[c] = cOpen
		case b == ')' || b == ']' || b == '}':
			t[c] = cClose
		}
	}
	return t
}()

// slashToken reads a slash that is not a comment: a regular expression, a
// division, or, where the token before cannot tell, both.
func (b *branch) slashToken() {
	src := b.sc.src
	mode := b.slash
	if mode == slashDivide && b.nl {
		// After the end of an operand and a line break, a statement may
		// have ended where a slash could not go on (a declaration, a type
		// annotation, break, import 'x'): a regular expression.
		mode = slashEither
	}
	switch mode {
	case slashRegex:
		b.startToken("")
		b.operandStart()
		if end := b.sc.regexEnd(b.i); end >= 0 {
			b.literal(b.i+1, strings.LastIndexByte(src[:end], '/'))
			b.i = end
			b.ended()
			return
		}
		// No regular expression ends on this line: a parser that reads one
		// here stops at this error. The reading is dropped while another
		// remains; the only one reads the rest as code all the same.
		if b.drop() {
			return
		}
		b.operator()
	case slashDivide:
		b.startToken("")
		b.operator()
	case slashEither:
		if end := b.sc.regexEnd(b.i); end >= 0 {
			k := b.fork(b.i)
			if k == nil {
				return
			}
			k.startToken("")
			k.operandStart()
			k.i = end
			k.ended()
			k.nl = false
		}
		b.startToken("")
		b.operator()
	}
}

func (b *branch) peek(k int) byte {
	if b.i+k < len(b.sc.src) {
		return b.sc.src[b.i+k]
	}
	return 0
}

// lineEnd is the offset of the line terminator at or after i, or len(src).
func lineEnd(src string, i int) int {
	for ; i < len(src); i++ {
		switch src[i] {
		case '\n', '\r':
			return i
		case 0xE2:
			if isLS(src, i) {
				return i
			}
		}
	}
	return len(src)
}

// isLS reports whether src holds U+2028 or U+2029 at i.
func isLS(src string, i int) bool {
	return strings.HasPrefix(src[i:], "\u2028") || strings.HasPrefix(src[i:], "\u2029")
}

// ended marks the end of an operand.
func (b *branch) ended() {
	b.prevEnd, b.regexOK, b.afterDot, b.prevWord, b.slash = true, false, false, "", slashDivide
}

// operatorEnded marks the end of an operator: an operand follows.
func (b *branch) operatorEnded() {
	b.prevEnd, b.regexOK, b.afterDot, b.prevWord, b.slash = false, false, false, "", slashRegex
}

func (b *branch) open(c byte) {
	at := b.i
	b.i++
	control := c == '(' && (wordClass[b.prevWord]&controlHead != 0 || b.prevWord == "await" && b.forAwait)
	if b.prevEnd && !b.regexOK && c != '{' {
		// a call or an index: a postfix chain as well as a level
		if b.incHigh(at) {
			return
		}
	}
	b.push(c, at, control, false)
	b.operatorEnded()
}

// drop ends this reading, at a syntax error of every parser that stops at
// its first (esbuild), and reports true, when another reading remains:
// esbuild does not read on in it, and the readings are fewer.
func (b *branch) drop() bool {
	if b.sc.alive > 1 && !b.sc.noDrop {
		b.dead = true
		b.sc.alive--
	}
	return b.dead
}

// closes reports whether a closing bracket c closes a level of kind k.
func closes(k, c byte) bool {
	return k == '(' && c == ')' || k == '[' && c == ']' || (k == '{' || k == '$') && c == '}'
}

func (b *branch) close(c byte) {
	b.i++
	b.popAngles()
	t := b.peekTop()
	kind, control := t.kind, t.control
	if !closes(kind, c) && b.drop() {
		// A closer that closes nothing, or another bracket: every parser
		// that stops at its first error stops here in this reading.
		return
	}
	if b.levels() == 1 {
		b.ended() // more closers than openers: the parser reports it
		return
	}
	b.pop()
	if kind == '$' && c == '}' {
		b.template()
		return
	}
	b.ended()
	switch {
	case control:
		// if (x) /re/, if (x) if (y): what follows starts the body
		b.prevEnd, b.slash = false, slashRegex
	case c == '}':
		// After a block a slash starts a regular expression; after an
		// object literal, a function or class expression, it divides.
		b.regexOK, b.slash = true, slashEither
	}
}

// word scans an identifier or a keyword.
func (b *branch) word() {
	src := b.sc.src
	start := b.i
	if src[b.i] == '#' {
		b.i++
	}
	last := b.prevWord
	for b.i < len(src) {
		c := src[b.i]
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(src[b.i:])
			if r == '\u2028' || r == '\u2029' || r == '\uFEFF' || unicode.IsSpace(r) {
				break
			}
			b.i += n
			continue
		}
		if !isIdentPart(c) {
			break
		}
		b.i++
	}
	if b.i == start {
		b.i++ // a byte no token starts with
	}
	w := src[start:b.i]
	if b.afterDot || strings.HasPrefix(w, "#") {
		b.startToken("")
		b.operandStart()
		b.ended()
		return
	}
	class := wordClass[w]
	b.startToken(w)
	if b.prevEnd && class&continuation == 0 || w == "case" || w == "default" {
		b.reset() // a new statement, or a switch's clause
	}
	switch {
	case class&prefixWord != 0:
		if b.incHigh(start) {
			return
		}
	case class&lowWord != 0:
		if b.incLow(start) {
			return
		}
	case class&binaryWord != 0:
		b.zeroHigh()
	}
	if w == "as" || w == "satisfies" {
		// x as T as T: a postfix chain
		if b.incHigh(start) {
			return
		}
	}
	if class&notEnd != 0 || b.prevEnd && class&continuation != 0 {
		b.operatorEnded()
	} else {
		b.ended()
	}
	switch {
	case class&slashEitherWord != 0:
		b.slash = slashEither
	case class&slashDivideWord != 0:
		b.slash = slashDivide
	case class&slashRegexWord != 0:
		b.slash = slashRegex
	}
	b.prevWord, b.forAwait = w, last == "for" && w == "await"
}

// identEnd is the offset after the identifier characters from i, as in
// a regular expression's flags or a number's tail.
func identEnd(src string, i int) int {
	for i < len(src) {
		c := src[i]
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(src[i:])
			if r == '\u2028' || r == '\u2029' || r == '\uFEFF' || unicode.IsSpace(r) {
				break
			}
			i += n
			continue
		}
		if !isIdentPart(c) || c == '\\' {
			break
		}
		i++
	}
	return i
}

func (b *branch) number() {
	src := b.sc.src
	hex := src[b.i] == '0' && (b.peek(1) == 'x' || b.peek(1) == 'X')
	for b.i < len(src) {
		c := src[b.i]
		switch {
		case c == '.' || c < 0x80 && c != '\\' && isIdentPart(c):
			b.i++
		case (c == '+' || c == '-') && !hex && (src[b.i-1] == 'e' || src[b.i-1] == 'E'):
			b.i++
		case c >= 0x80:
			// a letter after a number is an error; a line terminator or
			// a space ends it
			end := identEnd(src, b.i)
			if end == b.i {
				return
			}
			b.i = end
		default:
			return
		}
	}
}

// str scans a string literal; a line terminator ends an unterminated one.
func (b *branch) str(q byte) {
	src := b.sc.src
	b.i++
	start := b.i
	for b.i < len(src) {
		c := src[b.i]
		switch {
		case c == q:
			b.literal(start, b.i)
			b.i++
			return
		case c == '\\':
			b.i += 2
			if b.i <= len(src) && src[b.i-1] == '\r' && b.peek(0) == '\n' {
				b.i++
			}
		case c == '\n' || c == '\r':
			// unterminated: a syntax error
			b.literal(start, b.i)
			b.drop()
			return
		default:
			b.i++
		}
	}
	b.i = len(src)
	b.literal(start, b.i)
}

// template scans the text of a template literal from b.i, up to its end or
// the next ${, which opens a level.
func (b *branch) template() {
	src := b.sc.src
	start := b.i
	for b.i < len(src) {
		switch src[b.i] {
		case '\\':
			b.i += 2
		case '`':
			b.literal(start, b.i)
			b.i++
			b.ended()
			return
		case '$':
			if b.peek(1) == '{' {
				b.literal(start, b.i)
				at := b.i
				b.i += 2
				b.push('$', at, false, false)
				b.operatorEnded()
				return
			}
			b.i++
		default:
			b.i++
		}
	}
	b.i = len(src)
	b.literal(start, b.i)
	b.ended()
}

// literal notes that src[from:to] is the text of a literal or a comment,
// when the scanner records them.
func (b *branch) literal(from, to int) {
	if b.sc.record && to > from {
		b.sc.literals = append(b.sc.literals, [2]int{from, min(to, len(b.sc.src))})
	}
}

// regexEnd is the offset after the regular expression literal that starts
// with the slash at at (its flags included), or -1 when none ends on the
// line.
//
// A scan that fails reads to the end of the line, and a line with many
// slashes could be read again from each: once a scan from a slash p has
// failed, a scan from a later slash q on that line stops at the first [
// or ]. The two scans read the same characters from q on, in step, the
// first in a class at q (or it would have ended at q, unless q was
// escaped, which leaves the classes alike); after the first [ or ] their
// states agree, so the second fails where the first did unless it ends
// before.
func (s *scanner) regexEnd(at int) int {
	src := s.src
	limited := s.failFrom >= 0 && at > s.failFrom && at < s.failEnd
	class := false
	for i := at + 1; i < len(src); {
		c := src[i]
		switch {
		case c == '\\':
			if i+1 >= len(src) || src[i+1] == '\n' || src[i+1] == '\r' || isLS(src, i+1) {
				return s.regexFailed(at, limited)
			}
			i += 2
			if src[i-1] >= 0x80 {
				_, n := utf8.DecodeRuneInString(src[i-1:])
				i += n - 1
			}
			continue
		case c == '\n' || c == '\r' || c == 0xE2 && isLS(src, i):
			return s.regexFailed(at, limited)
		case c == '[' || c == ']':
			if limited {
				return -1
			}
			class = c == '['
		case c == '/' && !class:
			return identEnd(src, i+1)
		}
		i++
	}
	return s.regexFailed(at, limited)
}

func (s *scanner) regexFailed(at int, limited bool) int {
	if !limited {
		s.failFrom, s.failEnd = at, lineEnd(s.src, at)
	}
	return -1
}

// punctuators, longest first.
var punctuators = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=",
	"/=", "%=", "&=", "|=", "^=", "**", "<<", ">>",
}

// punctuatorsBy lists the punctuators by their first character.
var punctuatorsBy = func() (t [256][]string) {
	for _, p := range punctuators {
		t[p[0]] = append(t[p[0]], p)
	}
	return t
}()

// operator scans a punctuator.
func (b *branch) operator() {
	src := b.sc.src
	at := b.i
	c := src[b.i]
	// A > closes an angle bracket first, one character at a time, as
	// TypeScript's scanner reads type arguments.
	if c == '>' && b.peekTop().kind == '<' {
		b.i++
		operand := b.peekTop().operand
		b.pop()
		if operand {
			// <T>x: a type assertion, a prefix operator
			b.operatorEnded()
			b.incHigh(at)
			return
		}
		// f<T>(x), or a < b > c: after it a slash divides (TypeScript's
		// instantiation expression) or starts a regular expression.
		b.ended()
		b.slash = slashEither
		return
	}
	op := src[b.i : b.i+1]
	for _, p := range punctuatorsBy[c] {
		if strings.HasPrefix(src[b.i:], p) {
			op = p
			break
		}
	}
	if op == "?." && b.peek(2) >= '0' && b.peek(2) <= '9' {
		op = "?" // a ? .5 : b
	}
	b.i += len(op)
	switch op {
	case "<":
		operand := !b.prevEnd || b.regexOK
		b.push('<', at, false, operand)
		b.operatorEnded()
		return
	case ".", "?.":
		b.incHigh(at)
		b.operatorEnded()
		b.afterDot = true
		return
	case ",":
		if t := b.peekTop(); t.low != 0 || t.high != 0 {
			t = b.top()
			t.low, t.high = 0, 0
		}
		b.operatorEnded()
		return
	case ";":
		b.semi = true
		b.operatorEnded()
		return
	case "!", "++", "--":
		if b.prevEnd && !b.regexOK {
			if !b.nl {
				if op == "!" {
					b.incHigh(at) // x!: TypeScript's non-null assertion
				}
				return // postfix: still the end of an operand
			}
			// On a new line, a prefix operator: the statement before ended.
			b.reset()
		}
		b.incHigh(at)
	case "~", "...":
		b.incHigh(at)
	case "+", "-":
		if b.prevEnd && !b.regexOK {
			b.popAngles()
			b.zeroHigh()
		} else {
			b.incHigh(at)
		}
	case "=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=",
		"&&=", "||=", "??=", "=>", "**", "?", ":":
		b.incLow(at)
	case "|", "&":
		b.zeroHigh() // also unions and intersections of types
	default:
		// a binary operator: not inside type arguments
		b.popAngles()
		b.zeroHigh()
	}
	b.operatorEnded()
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c == '\\' || c == '#' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) && c != '#' || c >= '0' && c <= '9' || c >= 0x80
}

// The classes of words, as bits.
const (
	// prefixWord: keywords the parser recurses on as prefix operators.
	prefixWord = 1 << iota
	// lowWord: keywords that nest to the right without a bracket.
	lowWord
	// binaryWord: keyword operators between two operands.
	binaryWord
	// continuation: words that continue a statement after an operand, so
	// they do not start a new one.
	continuation
	// notEnd: keywords after which an operand follows.
	notEnd
	// controlHead: keywords whose parenthesized head is followed by a
	// statement.
	controlHead
	// slashEitherWord: words after which a slash may start a regular
	// expression (the keyword) or divide (the same word as an identifier).
	slashEitherWord
	// slashDivideWord: words after which a slash divides (an identifier),
	// though an operand may follow the keyword: as a keyword, none of them
	// is followed by a slash.
	slashDivideWord
	// slashRegexWord: words that end an operand, or a statement, after
	// which a slash can only start a regular expression.
	slashRegexWord
)

var wordClass = func() map[string]uint16 {
	m := map[string]uint16{}
	add := func(class uint16, words ...string) {
		for _, w := range words {
			m[w] |= class
		}
	}
	add(prefixWord, "typeof", "void", "delete", "await", "new", "keyof", "readonly", "infer", "unique", "asserts", "class")
	add(lowWord, "if", "for", "while", "with", "do", "yield", "extends")
	add(binaryWord, "in", "instanceof", "is")
	add(continuation, "in", "instanceof", "of", "as", "satisfies", "else", "catch", "finally", "extends", "implements", "is", "from")
	add(notEnd, "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case",
		"do", "else", "yield", "await", "extends", "if", "for", "while", "with", "switch", "catch",
		"keyof", "readonly", "infer", "unique", "asserts", "is", "as", "satisfies", "async", "class",
		"export", "default", "import", "var", "let", "const")
	add(controlHead, "if", "for", "while", "with", "switch", "catch")
	add(slashEitherWord, "of", "yield", "await")
	add(slashDivideWord, "async", "as", "is", "satisfies", "keyof", "readonly", "infer", "unique", "asserts",
		"let", "from", "implements")
	add(slashRegexWord, "break", "continue", "debugger")
	return m
}()
