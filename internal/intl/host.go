package intl

import (
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zone data for hosts without /usr/share/zoneinfo

	"unicode"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// Call answers the Intl code's host operation op with arguments a.
// Unknown operations and malformed arguments answer "".
//
//   - "tz", zone, ms: the zone's offset from UTC at the instant ms (in
//     seconds), its abbreviation and its canonical name, joined by "|";
//     "" for a zone Go does not know.
//   - "cmp", options, x, y: -1, 0 or 1, as the collator the options name
//     (see collatorFor) orders x and y.
func Call(op string, a []string, ms float64) string {
	switch op {
	case "tz":
		if len(a) < 1 {
			return ""
		}
		return zoneAt(a[0], ms)
	case "cmp":
		if len(a) < 3 {
			return ""
		}
		return strconv.Itoa(compare(a[0], a[1], a[2]))
	}
	return ""
}

// maxZones bounds the cache of loaded zones. Only names that load are
// cached, and there are about 600 of them.
const maxZones = 1024

var zones struct {
	sync.Mutex
	m map[string]*time.Location
}

// validZone reports whether name can be a zone name: IANA names are short
// and of letters, digits, '_', '-', '+' and '/'; no "..", no leading '/'.
func validZone(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '/' || strings.Contains(name, "..") {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '+', r == '/':
		default:
			return false
		}
	}
	return true
}

func loadZone(name string) *time.Location {
	if !validZone(name) {
		return nil
	}
	zones.Lock()
	defer zones.Unlock()
	if l, ok := zones.m[name]; ok {
		return l
	}
	l, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil
	}
	if zones.m == nil {
		zones.m = make(map[string]*time.Location)
	}
	if len(zones.m) < maxZones {
		zones.m[name] = l
	}
	return l
}

func zoneAt(name string, ms float64) string {
	l := loadZone(name)
	if l == nil || ms != ms || ms > 8.64e15 || ms < -8.64e15 {
		return ""
	}
	sec := int64(ms / 1000)
	if float64(sec)*1000 > ms {
		sec-- // floor
	}
	abbr, off := time.Unix(sec, 0).In(l).Zone()
	return strconv.Itoa(off) + "|" + abbr + "|" + l.String()
}

// collators pools collators by their options: a collate.Collator is not
// safe for concurrent use. The options are few (see collatorFor), so the
// map stays small.
var collators sync.Map // string -> *sync.Pool

// collatorFor makes the collator that opts describes: the locale, then
// one letter per option, separated by '|': sensitivity (b base, a accent,
// c case, v variant), numeric (n or -), case first (u upper, l lower, -),
// ignore punctuation (p or -).
func collatorFor(opts string) *collate.Collator {
	f := strings.Split(opts, "|")
	if len(f) != 5 || !strings.Contains("bacv", f[1]) || !strings.Contains("n-", f[2]) ||
		!strings.Contains("ul-", f[3]) || !strings.Contains("p-", f[4]) || len(f[1])*len(f[2])*len(f[3])*len(f[4]) != 1 {
		return nil
	}
	tag := language.Make(f[0])
	var o []collate.Option
	switch f[1] {
	case "b":
		o = append(o, collate.IgnoreCase, collate.IgnoreDiacritics, collate.IgnoreWidth)
	case "a":
		o = append(o, collate.IgnoreCase, collate.IgnoreWidth)
	case "c":
		o = append(o, collate.IgnoreWidth) // the marks are removed first (see compare)
	}
	if f[2] == "n" {
		o = append(o, collate.Numeric)
	}
	return collate.New(tag, o...)
}

// tabled holds the languages the collation tables tailor.
var tabled = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range collate.Supported() {
		b, _ := t.Base()
		m[b.String()] = true
	}
	return m
}()

func compare(opts, x, y string) int {
	// The key keeps the locale's language only (tailorings are by
	// language), so that the pool's map is bounded by the languages the
	// tables know times the option letters.
	loc, rest, _ := strings.Cut(opts, "|")
	tag, err := language.Parse(loc)
	if err != nil {
		tag = language.Und
	}
	base, _ := tag.Base()
	if !tabled[base.String()] {
		base, _ = language.Und.Base()
	}
	opts = base.String() + "|" + rest
	p, ok := collators.Load(opts)
	if !ok {
		// The collator that tells whether the options are valid is the
		// pool's first, not made a second time.
		c := collatorFor(opts)
		if c == nil {
			return strings.Compare(x, y)
		}
		pool := &sync.Pool{New: func() any { return collatorFor(opts) }}
		pool.Put(c)
		p, _ = collators.LoadOrStore(opts, pool)
	}
	pool := p.(*sync.Pool)
	c := pool.Get().(*collate.Collator)
	defer pool.Put(c)
	f := strings.Split(opts, "|")
	if f[1] == "c" {
		// sensitivity "case": ICU compares the base letters and their case,
		// not their accents; x/text has no such level, so the accents go.
		x, y = unaccent(x), unaccent(y)
	}
	if f[4] == "p" {
		// ignorePunctuation: x/text's alternate=shifted (und-u-ka-shifted)
		// compares "a-c" and "ab" equal, so the punctuation and the spaces
		// are removed here instead (RATIONALE.md, "Intl").
		x, y = unpunct(x), unpunct(y)
	}
	r := c.CompareString(x, y)
	if r != 0 && f[3] == "u" && f[1] != "b" && f[1] != "a" {
		// caseFirst "upper" (x/text has no kf): a difference of case only
		// is turned round, so that the capital comes first.
		if compare(base.String()+"|a|"+f[2]+"|-|"+f[4], x, y) == 0 {
			r = -r
		}
	}
	return r
}

// unpunct removes the punctuation and the white space of s: what ICU's
// root collation makes variable, and ignorePunctuation ignores.
func unpunct(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// unaccent removes the combining marks of s, once decomposed.
func unaccent(s string) string {
	d := norm.NFD.String(s)
	var b strings.Builder
	for _, r := range d {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}
