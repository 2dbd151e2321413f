// Package nesting bounds how deeply a program (or a tool's schema) nests
// before a recursive parser in the host reads it.
//
// The TypeScript transform (esbuild) and the executor's parser (sobek) are
// recursive descent parsers on the Go stack, and so are the passes over the
// trees they build: a program a few hundred KB long that nests a few hundred
// thousand levels deep takes the host down with Go's "fatal error: stack
// overflow", which no recover catches, and at a hundred thousand levels it
// costs the host most of a GB. [Check] reads the text once, in linear time
// and constant memory per level, and finds where it nests deeper than
// [Max]: only then does a parser see it.
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
// also starts over at a binary operator. Strings, template literals,
// comments and regular expression literals are skipped as a JavaScript
// scanner skips them; whether a slash starts a regular expression or
// divides is decided by the token before it, as well as a scanner can
// without parsing. Where this guess is wrong (a regular expression right
// after a closing parenthesis that is not an if, for, while or with head),
// the count inside it can be off by what the regular expression holds.
//
// The count is an upper bound of the parsers' recursion for the shapes that
// nest, and close to the brackets' depth for ordinary code: real programs
// stay far below [Max] (model-written code rarely passes 20).
//
// A tool's JSON Schema is bounded the same way, by [CheckSchema], before a
// schema decoder or compiler reads it: their time grows with a power of
// the depth, and the JSON decoders' own limit (10,000 levels) is far too
// deep for them.
package nesting

import (
	"fmt"
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
// are followed until they meet again. Real programs need two or three;
// code that keeps more than MaxReadings apart at once is refused.
const MaxReadings = 64

// MaxRecovering is the longest source, in bytes, given to a parser that
// goes on after a syntax error: sobek, which the agent's instrumentation
// reads code with (internal/instrument). After an error sobek reads on from
// wherever its recovery leaves it: a template's text after a skipped
// backtick, a regular expression's body, a closer inside what it then
// takes for a regular expression. No scan of the grammar bounds that, so
// its input is bounded instead: sobek needs at most about 2.2 KB of Go stack
// per byte whatever it reads (a parenthesis costs it the most), 150 MB at
// 64 KiB, against Go's 1 GB.
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
		return fmt.Sprintf("the code cannot be checked for nesting: more than %d places where a slash may start a regular expression or divide are open at once", MaxReadings)
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
// are its shape; base, low and high its counters.
type level struct {
	kind      byte // 0 (the program), '(', '[', '{', '$' (${ of a template), '<'
	base      int  // the depth inside it
	low, high int  // right-nesting operators, prefix and postfix chains
	control   bool // the ( of an if, for, while, with, switch or catch head
	operand   bool // a < where an operand was expected: a type assertion
}

// What a slash starts, after the token before it.
const (
	slashRegex  = iota // a regular expression: an operand is expected
	slashDivide        // a division, after the end of an operand
	slashEither        // either: both are read
)

// scanner reads the source in every reading its slashes allow: each
// reading is a branch, and the branch furthest behind advances first, one
// token at a time, so that two branches at the same offset are compared
// there and merged if they can no longer tell apart.
type scanner struct {
	src  string
	max  int
	live []*branch
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
	sc    *scanner
	i     int
	stack []level
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
}

// run scans the source in every reading, until its end or the bound.
func (s *scanner) run() {
	s.over, s.failFrom, s.failEnd = -1, -1, -1
	b := &branch{sc: s, stack: make([]level, 1, 64), nl: true}
	if strings.HasPrefix(s.src, "#!") {
		b.i = lineEnd(s.src, 0)
	}
	s.live, s.readings = []*branch{b}, 1
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
		b := s.live[0]
		for _, o := range s.live[1:] {
			if o.i < b.i {
				b = o
			}
		}
		if b.i >= len(s.src) {
			s.remove(b)
			continue
		}
		b.step()
		if b.dead {
			s.remove(b)
			continue
		}
		for _, o := range s.live {
			if !s.noMerge && o != b && o.i == b.i && o.sameShape(b) {
				o.absorb(b)
				s.remove(b)
				break
			}
		}
	}
}

func (s *scanner) remove(b *branch) {
	for k, o := range s.live {
		if o == b {
			s.live[k] = s.live[len(s.live)-1]
			s.live = s.live[:len(s.live)-1]
			return
		}
	}
}

// fork adds a copy of b as a new reading, or refuses the program at at
// when there are MaxReadings already (and returns nil).
func (b *branch) fork(at int) *branch {
	s := b.sc
	if len(s.live) >= MaxReadings {
		if s.over < 0 {
			s.over, s.ambiguous = at, true
		}
		return nil
	}
	c := *b
	c.stack = append(make([]level, 0, len(b.stack)+16), b.stack...)
	s.live = append(s.live, &c)
	s.readings = max(s.readings, len(s.live))
	return &c
}

// sameShape reports whether o and b, at the same offset, read the rest of
// the source alike: the same open levels, of the same kinds, and the same
// state between tokens. Only their counters may differ.
func (b *branch) sameShape(o *branch) bool {
	if b.prevEnd != o.prevEnd || b.regexOK != o.regexOK || b.slash != o.slash || b.nl != o.nl ||
		b.semi != o.semi || b.afterDot != o.afterDot || b.forAwait != o.forAwait ||
		b.prevWord != o.prevWord || len(b.stack) != len(o.stack) {
		return false
	}
	for k := range b.stack {
		x, y := &b.stack[k], &o.stack[k]
		if x.kind != y.kind || x.control != y.control || x.operand != y.operand {
			return false
		}
	}
	return true
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
// (TestMergeBounds checks it on every pair of readings of the tests'
// programs.)
func (b *branch) absorb(o *branch) {
	for k := range b.stack {
		x, y := &b.stack[k], &o.stack[k]
		x.base, x.low, x.high = max(x.base, y.base), max(x.low, y.low), max(x.high, y.high)
	}
}

func (b *branch) top() *level { return &b.stack[len(b.stack)-1] }

func (b *branch) depth() int {
	t := b.top()
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
	t := b.top()
	t.low, t.high = 0, 0
}

func (b *branch) popAngles() {
	for len(b.stack) > 1 && b.top().kind == '<' {
		b.stack = b.stack[:len(b.stack)-1]
	}
}

func (b *branch) push(kind byte, at int, control, operand bool) bool {
	d := b.depth() + 1
	b.stack = append(b.stack, level{kind: kind, base: d, control: control, operand: operand})
	return b.exceeded(at)
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

// step reads one token, or a run of white space or a comment.
func (b *branch) step() {
	src := b.sc.src
	c := src[b.i]
	switch {
	case c == '\n' || c == '\r':
		b.nl = true
		b.i++
		return
	case c == ' ' || c == '\t' || c == '\v' || c == '\f':
		b.i++
		return
	case c >= 0x80:
		r, n := utf8.DecodeRuneInString(src[b.i:])
		switch {
		case r == '\u2028' || r == '\u2029':
			b.nl = true
			b.i += n
			return
		case unicode.IsSpace(r) || r == '\uFEFF':
			b.i += n
			return
		}
	case c == '/' && b.peek(1) == '/':
		end := lineEnd(src, b.i)
		b.literal(b.i+2, end)
		b.i = end
		return
	case c == '/' && b.peek(1) == '*':
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
		return
	case c == '<' && strings.HasPrefix(src[b.i:], "<!--"), c == '-' && b.nl && strings.HasPrefix(src[b.i:], "-->"):
		// esbuild reads a comment to the end of the line (a legacy HTML
		// comment, `-->` only first on its line); a parser without them,
		// operators. Both are read.
		if k := b.fork(b.i); k != nil {
			k.i = lineEnd(src, k.i)
		}
	}
	b.token()
	b.nl = false
}

// token reads the token at b.i.
func (b *branch) token() {
	src := b.sc.src
	c := src[b.i]
	switch {
	case c >= 0x80 || isIdentStart(c):
		b.word()
	case c == '/':
		b.slashToken()
	case c == '\'' || c == '"':
		b.startToken("")
		b.operandStart()
		b.str(c)
		b.ended()
	case c == '`':
		b.startToken("")
		at := b.i
		if b.prevEnd && !b.regexOK {
			if b.incHigh(at) { // a tagged template
				return
			}
		} else {
			b.operandStart()
		}
		b.i++
		b.template()
	case c >= '0' && c <= '9' || c == '.' && b.peek(1) >= '0' && b.peek(1) <= '9':
		b.startToken("")
		b.operandStart()
		b.number()
		b.ended()
	case c == '(' || c == '[' || c == '{':
		b.startToken("")
		b.open(c)
	case c == ')' || c == ']' || c == '}':
		b.startToken("")
		b.close(c)
	default:
		b.startToken("")
		b.operator()
	}
}

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
		// here stops at this error. The rest is read as code all the same.
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

// closes reports whether a closing bracket c closes a level of kind k.
func closes(k, c byte) bool {
	return k == '(' && c == ')' || k == '[' && c == ']' || (k == '{' || k == '$') && c == '}'
}

func (b *branch) close(c byte) {
	b.i++
	b.popAngles()
	t := b.stack[len(b.stack)-1]
	if !closes(t.kind, c) && len(b.sc.live) > 1 && !b.sc.noDrop {
		// A closer that closes nothing, or another bracket: every parser
		// that stops at its first error stops here in this reading, which
		// is dropped while another remains.
		b.dead = true
		return
	}
	if len(b.stack) == 1 {
		b.ended() // more closers than openers: the parser reports it
		return
	}
	b.stack = b.stack[:len(b.stack)-1]
	if t.kind == '$' && c == '}' {
		b.template()
		return
	}
	b.ended()
	switch {
	case t.control:
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
		b.top().high = 0
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
		if c == '.' {
			b.i++
			continue
		}
		if (c == '+' || c == '-') && !hex && (src[b.i-1] == 'e' || src[b.i-1] == 'E') {
			b.i++
			continue
		}
		if end := identEnd(src, b.i); end > b.i {
			b.i = end
			continue
		}
		break
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
			b.literal(start, b.i)
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
	if c == '>' && b.top().kind == '<' {
		b.i++
		t := b.stack[len(b.stack)-1]
		b.stack = b.stack[:len(b.stack)-1]
		if t.operand {
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
	t := b.top()
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
		t.low, t.high = 0, 0
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
			b.top().high = 0
		} else {
			b.incHigh(at)
		}
	case "=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=",
		"&&=", "||=", "??=", "=>", "**", "?", ":":
		b.incLow(at)
	case "|", "&":
		t.high = 0 // also unions and intersections of types
	default:
		// a binary operator: not inside type arguments
		b.popAngles()
		b.top().high = 0
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
