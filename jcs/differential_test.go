package jcs_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/go-json-experiment/json/jsontext"
	gowebpki "github.com/gowebpki/jcs"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// This file generates random JSON documents from a model, writes each in a
// randomly chosen textual form (escapes, number spellings, whitespace) and
// checks Canonicalize against the model's own canonical form, gowebpki and
// jsontext. It then corrupts one value or member name per document and
// checks that the error names exactly that place. Byte-level fuzzing rarely
// builds deep valid JSON; this does it on every test run.

type mval struct {
	kind  jcs.Kind
	num   float64
	str   string // decoded
	elems []*mval
	keys  []string // decoded member names, in document order
	vals  []*mval
}

type docGen struct {
	r *rand.Rand
}

var specialFloats = []float64{
	0, math.Copysign(0, -1), 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64,
	math.SmallestNonzeroFloat64 * 3, 2.2250738585072014e-308,
	1e21, 1e-6, 1e-7, 9.999999999999997e-7, 999999999999999900000, 1e20,
	9007199254740992, 9007199254740993, 0.1, 0.2, 0.30000000000000004,
	333333333.33333325, 1e23, 9.999999999999997e+22, 123456789012345680000,
}

func (g *docGen) float() float64 {
	r := g.r
	switch r.IntN(7) {
	case 0:
		for {
			f := math.Float64frombits(r.Uint64())
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
	case 1:
		return float64(r.IntN(2001) - 1000)
	case 2:
		return specialFloats[r.IntN(len(specialFloats))]
	case 3:
		return float64(r.Int64() >> r.IntN(64))
	case 4:
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(60)-30))
	case 5:
		b := []float64{1e21, 1e-6, 1e-7, 1e15, 1e16, 1e17}[r.IntN(6)]
		for range r.IntN(3) + 1 {
			if r.IntN(2) == 0 {
				b = math.Nextafter(b, 0)
			} else {
				b = math.Nextafter(b, math.Inf(1))
			}
		}
		return b
	default:
		return float64(r.IntN(1<<20)) / float64(int(1)<<r.IntN(30))
	}
}

// numberText writes a JSON number that parses to exactly f.
func (g *docGen) numberText(f float64) string {
	r := g.r
	if f == 0 && math.Signbit(f) {
		return []string{"-0", "-0.0", "-0e0", "-0E+00", "-0.000e-5"}[r.IntN(5)]
	}
	var s string
	switch r.IntN(6) {
	case 0:
		s = strconv.FormatFloat(f, 'g', -1, 64)
	case 1:
		s = strconv.FormatFloat(f, 'e', -1, 64)
	case 2:
		s = strconv.FormatFloat(f, 'E', -1, 64)
	case 3:
		s = strconv.FormatFloat(f, 'f', -1, 64)
	case 4:
		s = strconv.FormatFloat(f, 'e', 17+r.IntN(10), 64) // more digits than needed
	default:
		// Shortest digits, then an exponent shifted and padded.
		s = strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		sign := ""
		if strings.HasPrefix(mant, "-") {
			sign, mant = "-", mant[1:]
		}
		digits := strings.Replace(mant, ".", "", 1)
		// digits × 10^(e - len(digits) + 1), written with trailing zeros.
		z := r.IntN(4)
		e = e - (len(digits) - 1) - z
		es := strconv.Itoa(e)
		if e >= 0 && r.IntN(2) == 0 {
			es = "+" + es
		}
		if r.IntN(2) == 0 {
			es = strings.Replace(es, strconv.Itoa(abs(e)), "00"+strconv.Itoa(abs(e)), 1)
		}
		s = sign + strings.TrimLeft(digits, "0") + strings.Repeat("0", z) + "e" + es
		if strings.HasPrefix(strings.TrimPrefix(s, "-"), "e") || strings.HasPrefix(strings.TrimPrefix(s, "-"), "0") {
			s = strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return s
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func (g *docGen) rune() rune {
	r := g.r
	switch r.IntN(10) {
	case 0:
		return rune(r.IntN(0x20))
	case 1:
		return []rune{'"', '\\', '/', 0x7f, 0x2028, 0x2029, 0xfeff, 0xfffd, 0xffff, '<', '&'}[r.IntN(11)]
	case 2:
		return rune(0x80 + r.IntN(0x80))
	case 3:
		return rune(0x100 + r.IntN(0xd800-0x100))
	case 4:
		return rune(0xe000 + r.IntN(0x2000))
	case 5:
		return rune(0x10000 + r.IntN(0x100000))
	default:
		return rune(0x20 + r.IntN(0x5f))
	}
}

var nameAlphabet = []string{"a", "b", "A", "é", "e\u0301", "\uffff", "\U00010000", "\U0001F600", "\x00", "\n", "/", "~", "1", "10"}

func (g *docGen) name() string {
	var b strings.Builder
	for range g.r.IntN(4) {
		b.WriteString(nameAlphabet[g.r.IntN(len(nameAlphabet))])
	}
	return b.String()
}

func (g *docGen) value(depth int) *mval {
	r := g.r
	k := r.IntN(10)
	switch {
	case depth == 0 && r.IntN(8) != 0:
		k = 7 + r.IntN(3) // mostly containers at the root
	case depth >= 6 && k >= 7:
		k = r.IntN(7)
	}
	switch {
	case k == 0:
		return &mval{kind: []jcs.Kind{jcs.Null, jcs.True, jcs.False}[r.IntN(3)]}
	case k <= 3:
		return &mval{kind: jcs.Number, num: g.float()}
	case k <= 6:
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteRune(g.rune())
		}
		return &mval{kind: jcs.String, str: b.String()}
	case k <= 8:
		v := &mval{kind: jcs.Array}
		for range r.IntN(6) {
			v.elems = append(v.elems, g.value(depth+1))
		}
		return v
	default:
		v := &mval{kind: jcs.Object}
		for range r.IntN(8) {
			n := g.name()
			if slices.Contains(v.keys, n) {
				continue
			}
			v.keys = append(v.keys, n)
			v.vals = append(v.vals, g.value(depth+1))
		}
		return v
	}
}

// canonical is the model's RFC 8785 form, computed independently of jcs.
func (v *mval) canonical(b []byte) []byte {
	switch v.kind {
	case jcs.Null, jcs.True, jcs.False:
		return append(b, v.kind.String()...)
	case jcs.Number:
		return es6Reference(b, v.num)
	case jcs.String:
		return canonString(b, v.str)
	case jcs.Array:
		b = append(b, '[')
		for i, e := range v.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.canonical(b)
		}
		return append(b, ']')
	}
	order := make([]int, len(v.keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		a, c := utf16.Encode([]rune(v.keys[x])), utf16.Encode([]rune(v.keys[y]))
		return slices.Compare(a, c)
	})
	b = append(b, '{')
	for j, i := range order {
		if j > 0 {
			b = append(b, ',')
		}
		b = canonString(b, v.keys[i])
		b = append(b, ':')
		b = v.vals[i].canonical(b)
	}
	return append(b, '}')
}

func canonString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if r < 0x20 {
				b = fmt.Appendf(b, `\u%04x`, r)
			} else {
				b = append(b, string(r)...)
			}
		}
	}
	return append(b, '"')
}

// writer renders a model as JSON text. If target >= 0, the target-th value
// (counting values in document order, root = 0) or, if badName, the
// target-th member name is replaced by a bad token, and writer records where.
type writer struct {
	g       *docGen
	b       []byte
	count   int
	names   int
	target  int
	badName bool
	tok     badToken
	dupAt   *mval // object that gets a duplicate member name
	errOff  int
	errPtr  string
}

type badToken struct {
	text  string
	inner int // offset of the error inside text
	msg   string
	str   bool // usable as a member name
}

var badTokens = []badToken{
	{`"\ud800"`, 1, "lone high surrogate", true},
	{`"\ud83d\u0041"`, 1, "lone high surrogate", true},
	{`"x\udc00"`, 2, "lone low surrogate", true},
	{"\"\xff\"", 1, "invalid UTF-8", true},
	{"\"ab\xed\xa0\x80\"", 3, "invalid UTF-8", true},
	{"\"\xc0\x80\"", 1, "invalid UTF-8", true},
	{"\"a\x01\"", 2, "raw control character", true},
	{"\"\\n\x1f\"", 3, "raw control character", true},
	{`"\x"`, 1, "invalid escape", true},
	{`"\u00g0"`, 1, `invalid \u escape`, true},
	{`01`, 0, "leading zeros", false},
	{`-01`, 1, "leading zeros", false},
	{`1e400`, 0, "outside the range", false},
	{`-1.8e308`, 0, "outside the range", false},
	{`NaN`, 0, "NaN", false},
	{`Infinity`, 0, "Infinity", false},
	{`-Infinity`, 0, "-Infinity", false},
	{`+1`, 0, "'+'", false},
	{`.5`, 0, "before '.'", false},
	{`1.`, 2, "after '.'", false},
	{`1.5e`, 4, "exponent", false},
	{`tru`, 0, "invalid literal", false},
	{`'a'`, 0, "unexpected '''", false},
}

func (w *writer) ws() {
	if w.g.r.IntN(4) == 0 {
		for range w.g.r.IntN(3) + 1 {
			w.b = append(w.b, " \t\n\r"[w.g.r.IntN(4)])
		}
	}
}

func (w *writer) bad(ptr string) {
	w.errOff = len(w.b) + w.tok.inner
	w.errPtr = ptr
	w.b = append(w.b, w.tok.text...)
}

func ptrSeg(s string) string {
	return "/" + strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func (w *writer) value(v *mval, ptr string) {
	n := w.count
	w.count++
	if !w.badName && n == w.target {
		w.bad(ptr)
		return
	}
	switch v.kind {
	case jcs.Null, jcs.True, jcs.False:
		w.b = append(w.b, v.kind.String()...)
	case jcs.Number:
		w.b = append(w.b, w.g.numberText(v.num)...)
	case jcs.String:
		w.str(v.str)
	case jcs.Array:
		w.b = append(w.b, '[')
		w.ws()
		for i, e := range v.elems {
			if i > 0 {
				w.b = append(w.b, ',')
				w.ws()
			}
			w.value(e, ptr+"/"+strconv.Itoa(i))
			w.ws()
		}
		w.b = append(w.b, ']')
	case jcs.Object:
		w.b = append(w.b, '{')
		w.ws()
		for i, k := range v.keys {
			if i > 0 {
				w.b = append(w.b, ',')
				w.ws()
			}
			if w.badName && w.names == w.target {
				w.bad(ptr)
			} else {
				w.str(k)
			}
			w.names++
			w.ws()
			w.b = append(w.b, ':')
			w.ws()
			w.value(v.vals[i], ptr+ptrSeg(k))
			w.ws()
		}
		if w.dupAt == v {
			// Repeat a name, spelt differently where possible.
			i := w.g.r.IntN(len(v.keys))
			w.b = append(w.b, ',')
			w.ws()
			w.errOff = len(w.b)
			w.errPtr = ptr + ptrSeg(v.keys[i])
			w.str(v.keys[i])
			w.b = append(w.b, ':')
			w.value(v.vals[i], ptr+ptrSeg(v.keys[i]))
		}
		w.b = append(w.b, '}')
	}
}

// str writes s as a JSON string, choosing a random spelling for each rune.
func (w *writer) str(s string) {
	r := w.g.r
	w.b = append(w.b, '"')
	for _, c := range s {
		esc := r.IntN(3) == 0
		short := map[rune]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '"': `\"`, '\\': `\\`, '/': `\/`}[c]
		switch {
		case short != "" && (esc || c < 0x20 || c == '"' || c == '\\'):
			if r.IntN(2) == 0 {
				w.b = append(w.b, short...)
			} else {
				w.b = w.uescape(w.b, c)
			}
		case c < 0x20 || esc:
			w.b = w.uescape(w.b, c)
		default:
			w.b = append(w.b, string(c)...)
		}
	}
	w.b = append(w.b, '"')
}

func (w *writer) uescape(b []byte, c rune) []byte {
	format := `\u%04x`
	if w.g.r.IntN(2) == 0 {
		format = `\u%04X`
	}
	if c >= 0x10000 {
		hi, lo := utf16.EncodeRune(c)
		return fmt.Appendf(b, format+format, hi, lo)
	}
	return fmt.Appendf(b, format, c)
}

func countNodes(v *mval) (values, names int, objects []*mval) {
	values = 1
	if v.kind == jcs.Object && len(v.keys) > 0 {
		objects = append(objects, v)
	}
	for _, e := range append(append([]*mval(nil), v.elems...), v.vals...) {
		a, b, o := countNodes(e)
		values += a
		names += b
		objects = append(objects, o...)
	}
	return values, names + len(v.keys), objects
}

func TestGeneratedDocuments(t *testing.T) {
	t.Parallel()
	docs := 5000
	if testing.Short() {
		docs = 300
	}
	g := &docGen{r: rand.New(rand.NewPCG(8785, 2025))}
	var stats struct{ valid, badValue, badName, dup int }
	for i := range docs {
		root := g.value(0)
		want := root.canonical(nil)
		values, names, objects := countNodes(root)

		// 1. A valid rendering.
		w := &writer{g: g, target: -1}
		w.ws()
		w.value(root, "")
		w.ws()
		in := w.b
		got, err := jcs.Canonicalize(in)
		if err != nil {
			t.Fatalf("doc %d: %q rejected: %v", i, in, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("doc %d: %q\n got  %q\n want %q", i, in, got, want)
		}
		if theirs, err := gowebpki.Transform(in); err != nil || !bytes.Equal(theirs, want) {
			t.Fatalf("doc %d: %q\n gowebpki %q, %v\n want     %q", i, in, theirs, err, want)
		}
		jv := jsontext.Value(bytes.Clone(in))
		if err := jv.Canonicalize(); err != nil || !bytes.Equal(jv, want) {
			t.Fatalf("doc %d: %q\n jsontext %q, %v\n want     %q", i, in, []byte(jv), err, want)
		}
		stats.valid++

		// 2. The same document with one value or name replaced by a bad token.
		w = &writer{g: g, tok: badTokens[g.r.IntN(len(badTokens))]}
		if names > 0 && w.tok.str && g.r.IntN(2) == 0 {
			w.badName, w.target = true, g.r.IntN(names)
			stats.badName++
		} else {
			w.target = g.r.IntN(values)
			stats.badValue++
		}
		w.value(root, "")
		checkGeneratedError(t, i, w.b, w.errOff, w.errPtr, w.tok.msg)

		// 3. A duplicate member name in one object.
		if len(objects) > 0 {
			w = &writer{g: g, target: -1, dupAt: objects[g.r.IntN(len(objects))]}
			w.value(root, "")
			checkGeneratedError(t, i, w.b, w.errOff, w.errPtr, "duplicate member name")
			stats.dup++
		}
	}
	t.Logf("%d valid documents, %d with a bad value, %d with a bad name, %d with a duplicate name",
		stats.valid, stats.badValue, stats.badName, stats.dup)
}

func checkGeneratedError(t *testing.T, doc int, in []byte, off int, ptr, msg string) {
	t.Helper()
	got, err := jcs.Canonicalize(in)
	if err == nil {
		t.Fatalf("doc %d: %q accepted as %q, want error %q at %d %q", doc, in, got, msg, off, ptr)
	}
	e := checkJCSError(t, in, err)
	if e.Offset != off || e.Pointer != ptr || !strings.Contains(e.Msg, msg) {
		t.Fatalf("doc %d: %q:\n got  %d %q %q\n want %d %q %q", doc, in, e.Offset, e.Pointer, e.Msg, off, ptr, msg)
	}
	if _, err := gowebpki.Transform(in); err == nil {
		t.Fatalf("doc %d: gowebpki accepts %q (want %q)", doc, in, msg)
	}
}
