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

// Error reports where a program nests too deeply: the byte offset of the
// token that went past the bound, and its 1-based line and column (the
// column counts characters).
type Error struct {
	Offset       int
	Line, Column int
	Max          int
}

// Error is the message, without the position.
func (e *Error) Error() string {
	return fmt.Sprintf("the code nests too deeply: more than %d levels of brackets, blocks or nested expressions", e.Max)
}

// Check reports where src nests deeper than Max, or nil.
func Check(src string) *Error { return CheckMax(src, Max) }

// CheckMax reports where src nests deeper than max, or nil.
func CheckMax(src string, max int) *Error {
	s := scanner{src: src, max: max}
	s.stack = append(s.stack, level{})
	off := s.run()
	if off < 0 {
		return nil
	}
	line, col := lineCol(src, off)
	return &Error{Offset: off, Line: line, Column: col, Max: max}
}

// Depth is the deepest nesting of src, counted as Check counts it.
func Depth(src string) int {
	s := scanner{src: src, max: int(^uint(0) >> 1)}
	s.stack = append(s.stack, level{})
	s.run()
	return s.deepest
}

// lineCol is the 1-based line and column of a byte offset.
func lineCol(s string, off int) (line, col int) {
	off = min(max(off, 0), len(s))
	start := strings.LastIndexByte(s[:off], '\n') + 1
	return strings.Count(s[:off], "\n") + 1, utf8.RuneCountInString(s[start:off]) + 1
}

// level is an open bracket, or the program.
type level struct {
	kind      byte // 0 (the program), '(', '[', '{', '$' (${ of a template), '<'
	base      int  // the depth inside it
	low, high int  // right-nesting operators, prefix and postfix chains
	control   bool // the ( of an if, for, while, with, switch or catch head
	operand   bool // a < where an operand was expected: a type assertion
}

type scanner struct {
	src   string
	max   int
	i     int
	stack []level
	// prevEnd: the last token ended an operand (an identifier, a literal,
	// a closing bracket), so what follows is an operator, or a new statement.
	prevEnd bool
	// regexOK: a slash now starts a regular expression even though prevEnd
	// (after a block's }, or an if head's )).
	regexOK bool
	// noRegex: a regular expression failed to end on this line; until the
	// next line, slashes divide.
	noRegex bool
	// semi: a semicolon ended a statement; the level starts over unless
	// else follows.
	semi bool
	// afterDot: the last token was . or ?., so an identifier is a property
	// name, never a keyword.
	afterDot bool
	prevWord string // the last token, when it was a word
	forAwait bool   // the last two words were for await
	over     int    // where the bound was passed, or -1
	deepest  int    // the deepest depth seen
}

func (s *scanner) top() *level { return &s.stack[len(s.stack)-1] }

func (s *scanner) depth() int {
	t := s.top()
	return t.base + t.low + t.high
}

// exceeded records the first token that goes past the bound.
func (s *scanner) exceeded(at int) bool {
	d := s.depth()
	s.deepest = max(s.deepest, d)
	if d > s.max {
		s.over = at
		return true
	}
	return false
}

func (s *scanner) incLow(at int) bool {
	t := s.top()
	t.low++
	t.high = 0
	return s.exceeded(at)
}

func (s *scanner) incHigh(at int) bool {
	s.top().high++
	return s.exceeded(at)
}

// reset starts the level over, as at a new statement or list element.
func (s *scanner) reset() {
	s.popAngles()
	t := s.top()
	t.low, t.high = 0, 0
}

func (s *scanner) popAngles() {
	for len(s.stack) > 1 && s.top().kind == '<' {
		s.stack = s.stack[:len(s.stack)-1]
	}
}

func (s *scanner) push(kind byte, at int, control, operand bool) bool {
	d := s.depth() + 1
	s.stack = append(s.stack, level{kind: kind, base: d, control: control, operand: operand})
	return s.exceeded(at)
}

// startToken is called at the start of every token but comments: a pending
// semicolon takes effect unless the token is else.
func (s *scanner) startToken(word string) {
	if s.semi {
		s.semi = false
		if word != "else" {
			s.reset()
		}
	}
}

// operandStart is called at the start of a token that begins an operand
// (identifier, literal, string, template): after the end of an operand, that
// is a new statement.
func (s *scanner) operandStart() {
	if s.prevEnd {
		s.reset()
	}
}

// run scans the source and returns where the bound was passed, or -1.
func (s *scanner) run() int {
	s.over = -1
	src := s.src
	if strings.HasPrefix(src, "#!") {
		s.i = s.lineEnd(0)
	}
	for s.i < len(src) && s.over < 0 {
		c := src[s.i]
		switch {
		case c == '\n' || c == '\r':
			s.noRegex = false
			s.i++
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			s.i++
		case c >= 0x80:
			r, n := utf8.DecodeRuneInString(src[s.i:])
			switch {
			case r == '\u2028' || r == '\u2029':
				s.noRegex = false
				s.i += n
			case unicode.IsSpace(r) || r == '\uFEFF':
				s.i += n
			default:
				s.word()
			}
		case c == '/' && s.peek(1) == '/':
			s.i = s.lineEnd(s.i)
		case c == '/' && s.peek(1) == '*':
			end := strings.Index(src[s.i+2:], "*/")
			if end < 0 {
				s.i = len(src)
			} else {
				if strings.ContainsAny(src[s.i+2:s.i+2+end], "\n\r\u2028\u2029") {
					s.noRegex = false
				}
				s.i += end + 4
			}
		case c == '/' && (!s.prevEnd || s.regexOK) && !s.noRegex:
			s.startToken("")
			s.operandStart()
			if !s.regex() {
				s.noRegex = true
				s.operator()
			}
		case c == '\'' || c == '"':
			s.startToken("")
			s.operandStart()
			s.str(c)
			s.ended()
		case c == '`':
			s.startToken("")
			at := s.i
			if s.prevEnd && !s.regexOK {
				if s.incHigh(at) { // a tagged template
					break
				}
			} else {
				s.operandStart()
			}
			s.i++
			s.template()
		case c >= '0' && c <= '9' || c == '.' && s.peek(1) >= '0' && s.peek(1) <= '9':
			s.startToken("")
			s.operandStart()
			s.number()
			s.ended()
		case isIdentStart(c):
			s.word()
		case c == '(' || c == '[' || c == '{':
			s.startToken("")
			s.open(c)
		case c == ')' || c == ']' || c == '}':
			s.startToken("")
			s.close(c)
		default:
			s.startToken("")
			s.operator()
		}
	}
	return s.over
}

func (s *scanner) peek(k int) byte {
	if s.i+k < len(s.src) {
		return s.src[s.i+k]
	}
	return 0
}

// lineEnd is the offset of the line terminator at or after i, or len(src).
func (s *scanner) lineEnd(i int) int {
	for ; i < len(s.src); i++ {
		switch s.src[i] {
		case '\n', '\r':
			return i
		case 0xE2:
			if strings.HasPrefix(s.src[i:], "\u2028") || strings.HasPrefix(s.src[i:], "\u2029") {
				return i
			}
		}
	}
	return len(s.src)
}

// ended marks the end of an operand.
func (s *scanner) ended() {
	s.prevEnd, s.regexOK, s.afterDot, s.prevWord = true, false, false, ""
}

// operatorEnded marks the end of an operator: an operand follows.
func (s *scanner) operatorEnded() {
	s.prevEnd, s.regexOK, s.afterDot, s.prevWord = false, false, false, ""
}

func (s *scanner) open(c byte) {
	at := s.i
	s.i++
	control := c == '(' && (wordClass[s.prevWord]&controlHead != 0 || s.prevWord == "await" && s.forAwait)
	kind := c
	if s.prevEnd && !s.regexOK && c != '{' {
		// a call or an index: a postfix chain as well as a level
		if s.incHigh(at) {
			return
		}
	}
	s.push(kind, at, control, false)
	s.operatorEnded()
}

func (s *scanner) close(c byte) {
	s.i++
	s.popAngles()
	if len(s.stack) == 1 {
		s.ended() // more closers than openers: the parser reports it
		return
	}
	t := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	if t.kind == '$' && c == '}' {
		s.template()
		return
	}
	s.ended()
	switch {
	case t.control:
		// if (x) /re/, if (x) if (y): what follows starts the body
		s.prevEnd = false
	case c == '}':
		// after a block a slash starts a regular expression; after an
		// object literal it could divide, which programs do not do
		s.regexOK = true
	}
}

// word scans an identifier or a keyword.
func (s *scanner) word() {
	start := s.i
	if s.src[s.i] == '#' {
		s.i++
	}
	last := s.prevWord
	for s.i < len(s.src) {
		c := s.src[s.i]
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(s.src[s.i:])
			if r == '\u2028' || r == '\u2029' || r == '\uFEFF' || unicode.IsSpace(r) {
				break
			}
			s.i += n
			continue
		}
		if !isIdentPart(c) {
			break
		}
		s.i++
	}
	if s.i == start {
		s.i++ // a byte no token starts with
	}
	w := s.src[start:s.i]
	if s.afterDot || strings.HasPrefix(w, "#") {
		s.startToken("")
		s.operandStart()
		s.ended()
		return
	}
	class := wordClass[w]
	s.startToken(w)
	if s.prevEnd && class&continuation == 0 || w == "case" || w == "default" {
		s.reset() // a new statement, or a switch's clause
	}
	switch {
	case class&prefixWord != 0:
		if s.incHigh(start) {
			return
		}
	case class&lowWord != 0:
		if s.incLow(start) {
			return
		}
	case class&binaryWord != 0:
		s.top().high = 0
	}
	if w == "as" || w == "satisfies" {
		// x as T as T: a postfix chain
		if s.incHigh(start) {
			return
		}
	}
	if class&notEnd != 0 || s.prevEnd && class&continuation != 0 {
		s.operatorEnded()
	} else {
		s.ended()
	}
	s.prevWord, s.forAwait = w, last == "for" && w == "await"
}

func (s *scanner) number() {
	hex := s.src[s.i] == '0' && (s.peek(1) == 'x' || s.peek(1) == 'X')
	for s.i < len(s.src) {
		c := s.src[s.i]
		if isIdentPart(c) || c == '.' {
			s.i++
			continue
		}
		if (c == '+' || c == '-') && !hex && (s.src[s.i-1] == 'e' || s.src[s.i-1] == 'E') {
			s.i++
			continue
		}
		break
	}
}

// str scans a string literal; a line terminator ends an unterminated one.
func (s *scanner) str(q byte) {
	s.i++
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == q:
			s.i++
			return
		case c == '\\':
			s.i += 2
			if s.i <= len(s.src) && s.src[s.i-1] == '\r' && s.peek(0) == '\n' {
				s.i++
			}
		case c == '\n' || c == '\r':
			return
		default:
			s.i++
		}
	}
	s.i = len(s.src)
}

// template scans the text of a template literal from s.i, up to its end or
// the next ${, which opens a level.
func (s *scanner) template() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case '\\':
			s.i += 2
		case '`':
			s.i++
			s.ended()
			return
		case '$':
			if s.peek(1) == '{' {
				at := s.i
				s.i += 2
				s.push('$', at, false, false)
				s.operatorEnded()
				return
			}
			s.i++
		default:
			s.i++
		}
	}
	s.i = len(s.src)
	s.ended()
}

// regex scans a regular expression literal from the slash at s.i. It
// reports false, having consumed nothing, when none ends on this line.
func (s *scanner) regex() bool {
	i, class := s.i+1, false
	for i < len(s.src) {
		c := s.src[i]
		switch {
		case c == '\\':
			if i+1 >= len(s.src) || s.src[i+1] == '\n' || s.src[i+1] == '\r' {
				return false
			}
			i += 2
			continue
		case c == '\n' || c == '\r':
			return false
		case c == 0xE2 && (strings.HasPrefix(s.src[i:], "\u2028") || strings.HasPrefix(s.src[i:], "\u2029")):
			return false
		case c == '[':
			class = true
		case c == ']':
			class = false
		case c == '/' && !class:
			i++
			for i < len(s.src) && isIdentPart(s.src[i]) {
				i++
			}
			s.i = i
			s.ended()
			return true
		}
		i++
	}
	return false
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
func (s *scanner) operator() {
	at := s.i
	c := s.src[s.i]
	// A > closes an angle bracket first, one character at a time, as
	// TypeScript's scanner reads type arguments.
	if c == '>' && s.top().kind == '<' {
		s.i++
		t := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		if t.operand {
			// <T>x: a type assertion, a prefix operator
			s.operatorEnded()
			s.incHigh(at)
			return
		}
		s.ended()
		return
	}
	op := s.src[s.i : s.i+1]
	for _, p := range punctuatorsBy[c] {
		if strings.HasPrefix(s.src[s.i:], p) {
			op = p
			break
		}
	}
	if op == "?." && s.peek(2) >= '0' && s.peek(2) <= '9' {
		op = "?" // a ? .5 : b
	}
	s.i += len(op)
	t := s.top()
	switch op {
	case "<":
		operand := !s.prevEnd || s.regexOK
		s.push('<', at, false, operand)
		s.operatorEnded()
		return
	case ".", "?.":
		s.incHigh(at)
		s.operatorEnded()
		s.afterDot = true
		return
	case ",":
		t.low, t.high = 0, 0
		s.operatorEnded()
		return
	case ";":
		s.semi = true
		s.operatorEnded()
		return
	case "!", "++", "--":
		if s.prevEnd && !s.regexOK {
			if op == "!" {
				s.incHigh(at) // x!: TypeScript's non-null assertion
			}
			return // postfix: still the end of an operand
		}
		s.incHigh(at)
	case "~", "...":
		s.incHigh(at)
	case "+", "-":
		if s.prevEnd && !s.regexOK {
			s.popAngles()
			s.top().high = 0
		} else {
			s.incHigh(at)
		}
	case "=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=",
		"&&=", "||=", "??=", "=>", "**", "?", ":":
		s.incLow(at)
	case "|", "&":
		t.high = 0 // also unions and intersections of types
	default:
		// a binary operator: not inside type arguments
		s.popAngles()
		s.top().high = 0
	}
	s.operatorEnded()
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
	// notEnd: keywords after which an operand follows (a slash starts a
	// regular expression).
	notEnd
	// controlHead: keywords whose parenthesized head is followed by a
	// statement.
	controlHead
)

var wordClass = func() map[string]uint8 {
	m := map[string]uint8{}
	add := func(class uint8, words ...string) {
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
	return m
}()
