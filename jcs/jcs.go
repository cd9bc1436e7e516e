// Package jcs implements strict RFC 8785 JSON Canonicalization (JCS).
//
// Parse validates a JSON text strictly and builds a compact, read-only tree
// whose nodes remember the byte span they came from; AppendCanonical writes
// the canonical form of any node. Canonicalize does both for a whole text.
//
// Strictness (each is an *Error that names the byte offset, line, column and
// the JSON pointer of the problem):
//
//   - duplicate object member names at any depth, compared after unescaping
//     ("a" and "\u0061" are the same name);
//   - invalid UTF-8 anywhere, including in raw string bytes, and UTF-8 that
//     encodes a surrogate;
//   - lone surrogates in \u escapes (a high surrogate not followed by a low
//     one, or a low surrogate on its own);
//   - numbers whose magnitude rounds beyond the float64 range (1e400), and
//     anything that is not the RFC 8259 number grammar: NaN, Infinity, a
//     leading "+", leading zeros ("01"), a bare "." or exponent;
//   - raw control characters in strings, unknown escapes, a byte order mark;
//   - trailing data after the value, and empty input;
//   - nesting deeper than MaxDepth (1000) arrays/objects.
//
// Canonical output follows RFC 8785: object members sorted by the UTF-16
// code units of their names, numbers serialised as ECMAScript's
// Number.prototype.toString (shortest round-trip digits), strings with only
// the mandatory escapes (\" \\ \b \f \n \r \t and \u00xx for other
// controls), no insignificant whitespace. Numbers that underflow (1e-400)
// become 0, as in ECMAScript.
//
// The package knows nothing about MCP. It allocates a handful of slices per
// document, never per value, and does no I/O.
package jcs

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// MaxDepth is the deepest nesting of arrays and objects Parse accepts. JSON
// Schemas seen in real MCP servers stay far below 64; 1000 leaves room for
// machine-generated schemas while bounding recursion.
const MaxDepth = 1000

// MaxInputSize is the largest text Parse accepts (offsets are 32-bit).
const MaxInputSize = math.MaxInt32 - 1

// Kind is the JSON type of a value.
type Kind uint8

// The JSON kinds.
const (
	Invalid Kind = iota
	Null
	False
	True
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"invalid", "null", "false", "true", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// The kinds byte of a node: its Kind in the low three bits, and flags.
const (
	kindMask       = 7
	flagEscaped    = 1 << (3 + iota) // string: value decoded into sbuf (had escapes); x indexes escs
	flagNumFloat                     // number: x indexes floats (float64 bits); needs ES6 formatting
	flagNumNegZero                   // number: canonical form is "0"
)

// node is one JSON value: where it starts in the source and x, whose
// meaning depends on its kind (the kinds byte, kept in a parallel slice so
// that a node is 8 bytes and a tree about 0.7 bytes per byte of source):
//
//   - null, true, false: unused (the token's length is known);
//   - a number: the token's length, or with flagNumFloat the index of its
//     floatInfo;
//   - a string: the token's length (the decoded value is the token
//     without its quotes), or with flagEscaped the index of its escInfo;
//   - an array or object: the offset in kids of its header, the count and
//     the end offset, followed by the children (objects list their key
//     nodes, sorted canonically; a member's value node is always key+1).
type node struct {
	start, x int32
}

// escInfo locates a string with escapes: the end of its token and its
// decoded value in sbuf.
type escInfo struct {
	end, off, n int32
}

// floatInfo is a number that needs ES6 formatting: its float64 bits and
// the end of its token.
type floatInfo struct {
	bits uint64
	end  int32
}

// Doc is a parsed, validated JSON text. It is immutable and safe for
// concurrent reads.
type Doc struct {
	src    []byte
	nodes  []node
	kinds  []uint8
	kids   []int32
	escs   []escInfo
	floats []floatInfo
	sbuf   []byte
}

func (d *Doc) kind(i int32) Kind { return Kind(d.kinds[i] & kindMask) }

// end is the offset just past node i's token.
func (d *Doc) end(i int32) int32 {
	n := d.nodes[i]
	k := d.kinds[i]
	switch Kind(k & kindMask) {
	case Null, True:
		return n.start + 4
	case False:
		return n.start + 5
	case Number:
		if k&flagNumFloat != 0 {
			return d.floats[n.x].end
		}
	case String:
		if k&flagEscaped != 0 {
			return d.escs[n.x].end
		}
	case Array, Object:
		return d.kids[n.x+1]
	}
	return n.start + n.x
}

// children returns the child node indices of container node i (keys, for
// an object).
func (d *Doc) children(i int32) []int32 {
	x := d.nodes[i].x
	return d.kids[x+2 : x+2+d.kids[x]]
}

// strBytes returns the decoded value of string node i.
func (d *Doc) strBytes(i int32) []byte {
	n := d.nodes[i]
	if d.kinds[i]&flagEscaped != 0 {
		e := d.escs[n.x]
		return d.sbuf[e.off : e.off+e.n]
	}
	return d.src[n.start+1 : n.start+n.x-1]
}

// float returns the float64 of a flagNumFloat number node.
func (d *Doc) float(i int32) float64 {
	return math.Float64frombits(d.floats[d.nodes[i].x].bits)
}

// Value is a handle to one value inside a Doc.
type Value struct {
	d *Doc
	i int32
}

// Parse validates src strictly and returns its tree. src is retained (not
// copied); the caller must not modify it afterwards.
func Parse(src []byte) (*Doc, error) {
	if len(src) > MaxInputSize {
		return nil, &Error{Offset: 0, Line: 1, Column: 1, Msg: "input larger than 2 GiB"}
	}
	d, err := parse(src)
	if err != nil {
		return nil, err.finish(src)
	}
	return d, nil
}

func parse(src []byte) (*Doc, *Error) {
	p := parser{src: src}
	p.presize()
	return p.run()
}

// ParseNested is Parse of a value that sits depth containers deep in a
// larger text (MaxDepth counts from that text's root): a part of a text
// parsed on its own (MemberSpan, Elements) is refused for depth exactly
// when the whole would be.
func ParseNested(src []byte, depth int) (*Doc, error) {
	if len(src) > MaxInputSize {
		return Parse(src)
	}
	p := parser{src: src, depth0: depth}
	p.presize()
	d, err := p.run()
	if err != nil {
		return nil, err.finish(src)
	}
	return d, nil
}

// run parses p.src into p's (possibly reused) slices.
func (p *parser) run() (*Doc, *Error) {
	src := p.src
	p.skipWS()
	if p.pos >= len(src) {
		if len(src) == 0 {
			return nil, p.errAt(0, "empty input")
		}
		return nil, p.errAt(p.pos, "no JSON value (only whitespace)")
	}
	if len(src) >= 3 && src[0] == 0xef && src[1] == 0xbb && src[2] == 0xbf {
		return nil, p.errAt(0, "byte order mark is not allowed")
	}
	if _, err := p.value(p.depth0); err != nil {
		return nil, err
	}
	p.skipWS()
	if p.pos != len(src) {
		return nil, p.errAt(p.pos, "trailing data after the JSON value")
	}
	return &Doc{src: src, nodes: p.nodes, kinds: p.kinds, kids: p.kids, escs: p.escs, floats: p.floats, sbuf: p.sbuf}, nil
}

// presize makes room for a typical document: realistic tool lists
// average about 12 bytes per node, and about a fifth of the nodes are
// containers. append grows the rest.
func (p *parser) presize() {
	n := len(p.src)/12 + 4
	p.nodes = make([]node, 0, n)
	p.kinds = make([]uint8, 0, n)
	p.kids = make([]int32, 0, n*4/5+4)
}

// scratch holds parsers whose slices Canonicalize reuses: its Doc never
// escapes, so the tree can be recycled once the output is written.
var scratch = sync.Pool{New: func() any { return new(parser) }}

// A pooled parser is dropped rather than kept when its slices grew beyond
// these (~40 MB of nodes, 16 MB of unescaped strings), so one huge input
// does not pin memory for the life of the process.
const (
	maxPooledNodes = 2 << 20
	maxPooledSbuf  = 16 << 20
)

// Canonicalize parses src strictly and returns its RFC 8785 canonical form.
func Canonicalize(src []byte) ([]byte, error) {
	if len(src) > MaxInputSize {
		_, err := Parse(src) // reports the size error
		return nil, err
	}
	p := scratch.Get().(*parser)
	*p = parser{src: src, nodes: p.nodes[:0], kinds: p.kinds[:0], kids: p.kids[:0], escs: p.escs[:0], floats: p.floats[:0], stack: p.stack[:0], sbuf: p.sbuf[:0]}
	if cap(p.nodes) == 0 {
		p.presize()
	}
	d, err := p.run()
	var out []byte
	if err == nil {
		out = d.Root().AppendCanonical(make([]byte, 0, len(src)))
	}
	p.src = nil
	if cap(p.nodes) <= maxPooledNodes && cap(p.sbuf) <= maxPooledSbuf {
		scratch.Put(p)
	}
	if err != nil {
		return nil, err.finish(src)
	}
	return out, nil
}

// Root returns the top-level value.
func (d *Doc) Root() Value { return Value{d, 0} }

// Source returns the bytes the Doc was parsed from.
func (d *Doc) Source() []byte { return d.src }

// Kind returns the JSON type of v.
func (v Value) Kind() Kind { return v.d.kind(v.i) }

// Raw returns the exact bytes of v as they appear in the source.
func (v Value) Raw() []byte {
	return v.d.src[v.d.nodes[v.i].start:v.d.end(v.i)]
}

// Offset is the byte offset of v in the source.
func (v Value) Offset() int { return int(v.d.nodes[v.i].start) }

// Str returns the decoded value of a string (empty for other kinds).
func (v Value) Str() string {
	b := v.strBytes()
	return string(b)
}

// StrBytes returns the decoded bytes of a string (nil for other kinds)
// without allocating. They belong to the document: they must not be
// modified, and are valid as long as it is.
func (v Value) StrBytes() []byte { return v.strBytes() }

func (v Value) strBytes() []byte {
	if v.d.kind(v.i) != String {
		return nil
	}
	return v.d.strBytes(v.i)
}

// StrEqual reports whether v is a string whose decoded value equals s,
// without allocating.
func (v Value) StrEqual(s string) bool {
	if v.Kind() != String {
		return false
	}
	return string(v.strBytes()) == s
}

// Len returns the number of elements of an array or members of an object.
func (v Value) Len() int {
	if k := v.d.kind(v.i); k != Array && k != Object {
		return 0
	}
	return int(v.d.kids[v.d.nodes[v.i].x])
}

// Index returns element i of an array.
func (v Value) Index(i int) Value {
	return Value{v.d, v.d.children(v.i)[i]}
}

// Member returns the name and value of member i of an object, in canonical
// (UTF-16 sorted) order.
func (v Value) Member(i int) (name, value Value) {
	k := v.d.children(v.i)[i]
	return Value{v.d, k}, Value{v.d, k + 1}
}

// Get returns the value of the member named key, if v is an object that
// has one.
func (v Value) Get(key string) (Value, bool) {
	d := v.d
	if d.kind(v.i) != Object {
		return Value{}, false
	}
	// A member name is valid UTF-8 (Parse refuses anything else); a key
	// that is not names no member, though the comparison below, which
	// decodes an invalid byte as U+FFFD, would call it equal to "\ufffd".
	if !utf8.ValidString(key) {
		return Value{}, false
	}
	ks := d.children(v.i)
	kb := unsafe.Slice(unsafe.StringData(key), len(key))
	// Members are sorted by UTF-16 order; binary search with that order.
	lo, hi := 0, len(ks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := compareUTF16(d.strBytes(ks[m]), kb)
		if c == 0 {
			return Value{v.d, ks[m] + 1}, true
		}
		if c < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return Value{}, false
}

// VariantOf is the name of the first member of object v that is not
// name but that decoders matching names without regard to case take for
// it (safetext.SameMember: "Tools" for "tools"); ok is false when there
// is none.
func (v Value) VariantOf(name string) (variant string, ok bool) {
	if !v.Valid() || v.Kind() != Object {
		return "", false
	}
	for i := range v.Len() {
		k, _ := v.Member(i)
		if b := k.StrBytes(); string(b) != name && safetext.SameMember(b, []byte(name)) {
			return string(b), true
		}
	}
	return "", false
}

// Keys returns the member names of an object in canonical order.
func (v Value) Keys() []string {
	n := v.Len()
	if v.Kind() != Object {
		return nil
	}
	out := make([]string, n)
	for i := range n {
		k, _ := v.Member(i)
		out[i] = k.Str()
	}
	return out
}

// Float returns the value of a number as float64.
func (v Value) Float() float64 {
	if v.d.kind(v.i) != Number {
		return 0
	}
	if v.d.kinds[v.i]&flagNumFloat != 0 {
		return v.d.float(v.i)
	}
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(v.Raw()), len(v.Raw())), 64)
	return f
}

// Bool returns the value of true/false.
func (v Value) Bool() bool { return v.Kind() == True }

// Valid reports whether v refers to a value (the zero Value does not).
func (v Value) Valid() bool { return v.d != nil }

// AppendCanonical appends the RFC 8785 canonical form of v to dst.
func (v Value) AppendCanonical(dst []byte) []byte {
	return v.d.appendCanon(dst, v.i)
}

// Canonical returns the RFC 8785 canonical form of v.
func (v Value) Canonical() []byte { return v.AppendCanonical(nil) }

func (d *Doc) appendCanon(dst []byte, i int32) []byte {
	n := d.nodes[i]
	k := d.kinds[i]
	switch Kind(k & kindMask) {
	case Null:
		return append(dst, "null"...)
	case True:
		return append(dst, "true"...)
	case False:
		return append(dst, "false"...)
	case Number:
		switch {
		case k&flagNumNegZero != 0:
			return append(dst, '0')
		case k&flagNumFloat != 0:
			return AppendNumber(dst, d.float(i))
		default:
			return append(dst, d.src[n.start:n.start+n.x]...)
		}
	case String:
		if k&flagEscaped == 0 {
			// A raw JSON string with no escapes has no control characters,
			// quotes or backslashes: its token is already canonical.
			return append(dst, d.src[n.start:n.start+n.x]...)
		}
		e := d.escs[n.x]
		return appendString(dst, d.sbuf[e.off:e.off+e.n])
	case Array:
		dst = append(dst, '[')
		for j, c := range d.children(i) {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = d.appendCanon(dst, c)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for j, c := range d.children(i) {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = d.appendCanon(dst, c)
			dst = append(dst, ':')
			dst = d.appendCanon(dst, c+1)
		}
		return append(dst, '}')
	}
	return dst
}

// AppendString appends the canonical JSON string for s (which must be valid
// UTF-8) to dst.
func AppendString(dst []byte, s string) []byte {
	return appendString(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}

func appendString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if i = escapeRun(s, i); i == len(s) {
			break
		}
		c := s[i]
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			const hexd = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendNumber appends f serialised as ECMAScript Number.prototype.toString
// does (RFC 8785 section 3.2.2.3). f must be finite.
func AppendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	// Shortest round-trip digits in scientific form: d[.ddd]e±XX.
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	var digits [24]byte
	k := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[k] = e[i]
			k++
		}
	}
	exp := 0
	neg := e[i+1] == '-'
	for j := i + 2; j < len(e); j++ {
		exp = exp*10 + int(e[j]-'0')
	}
	if neg {
		exp = -exp
	}
	n := exp + 1 // value = 0.d1..dk × 10^n
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits[:k]...)
		for j := 0; j < n-k; j++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:k]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for j := 0; j < -n; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits[:k]...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:k]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// compareUTF16 orders two valid UTF-8 strings by their UTF-16 code units.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	if a[i] < utf8.RuneSelf || b[i] < utf8.RuneSelf {
		// An ASCII byte starts a rune in both (the bytes before it are
		// equal), and an ASCII character sorts below every other in
		// UTF-16 as in UTF-8.
		return int(a[i]) - int(b[i])
	}
	// Back up to the start of the rune that differs.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	ua, ub := utf16Key(ra), utf16Key(rb)
	if ua != ub {
		if ua < ub {
			return -1
		}
		return 1
	}
	// Same high surrogate; the runes differ, so the low surrogates decide.
	_, la := utf16.EncodeRune(ra)
	_, lb := utf16.EncodeRune(rb)
	return int(la) - int(lb)
}

// utf16Key is the first UTF-16 code unit of r.
func utf16Key(r rune) rune {
	if r >= 0x10000 {
		h, _ := utf16.EncodeRune(r)
		return h
	}
	return r
}

// sortKeys sorts key node indices in canonical order and returns the
// position of the second of two equal keys, or -1 when the keys are
// unique. An object of up to smallObject members (nearly every one) is
// sorted by insertion beside its keys' bytes, looked up once each.
func sortKeys(p *parser, ks []int32) int {
	if len(ks) < 2 {
		return -1
	}
	if len(ks) <= smallObject {
		var kb [smallObject][]byte
		for i, k := range ks {
			kb[i] = p.keyBytes(k)
		}
		for i := 1; i < len(ks); i++ {
			k, b := ks[i], kb[i]
			j := i
			for ; j > 0 && compareUTF16(kb[j-1], b) > 0; j-- {
				ks[j], kb[j] = ks[j-1], kb[j-1]
			}
			ks[j], kb[j] = k, b
		}
		for j := 1; j < len(ks); j++ {
			if bytes.Equal(kb[j-1], kb[j]) {
				return j
			}
		}
		return -1
	}
	slices.SortFunc(ks, func(x, y int32) int {
		return compareUTF16(p.keyBytes(x), p.keyBytes(y))
	})
	for j := 1; j < len(ks); j++ {
		if bytes.Equal(p.keyBytes(ks[j-1]), p.keyBytes(ks[j])) {
			return j
		}
	}
	return -1
}

// smallObject is the most members sortKeys sorts by insertion.
const smallObject = 16
