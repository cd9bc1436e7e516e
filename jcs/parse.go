package jcs

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Error is a syntax or strictness violation. Offset is the byte offset in
// the input; Line and Column are 1-based (Column counts bytes); Pointer is the
// RFC 6901 JSON pointer of the value being read when the problem was found
// ("" for the root).
type Error struct {
	Offset  int
	Line    int
	Column  int
	Pointer string
	Msg     string

	segs []string // reversed pointer segments collected while unwinding
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("byte ")
	b.WriteString(strconv.Itoa(e.Offset))
	if e.Line > 0 {
		b.WriteString(" (line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(", column ")
		b.WriteString(strconv.Itoa(e.Column))
		b.WriteString(")")
	}
	b.WriteString(", at JSON pointer ")
	ptr := e.Pointer
	if len(ptr) > 160 {
		// Keep messages readable for deep documents; Pointer stays whole.
		cut := 80
		for cut < len(ptr) && ptr[cut]&0xc0 == 0x80 {
			cut++
		}
		ptr = ptr[:cut] + "/.../" + strconv.Itoa(strings.Count(ptr, "/")) + " segments in all"
	}
	b.WriteString(safetext.Quote(ptr))
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) push(seg string) *Error {
	e.segs = append(e.segs, seg)
	return e
}

func (e *Error) finish(src []byte) *Error {
	if e.Line == 0 {
		var ptr strings.Builder
		for i := len(e.segs) - 1; i >= 0; i-- {
			ptr.WriteByte('/')
			ptr.WriteString(PointerToken(e.segs[i]))
		}
		e.Pointer = ptr.String()
		e.segs = nil
		off := min(e.Offset, len(src))
		e.Line = bytes.Count(src[:off], []byte{'\n'}) + 1
		e.Column = off - (bytes.LastIndexByte(src[:off], '\n') + 1) + 1
	}
	return e
}

type parser struct {
	depth0 int // the depth of the text's root (ParseNested)
	src    []byte
	pos    int
	nodes  []node
	kinds  []uint8
	kids   []int32
	escs   []escInfo
	floats []floatInfo
	stack  []int32
	sbuf   []byte
}

func (p *parser) errAt(off int, msg string) *Error {
	return &Error{Offset: off, Msg: msg}
}

func (p *parser) skipWS() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) keyBytes(k int32) []byte {
	n := p.nodes[k]
	if p.kinds[k]&flagEscaped != 0 {
		e := p.escs[n.x]
		return p.sbuf[e.off : e.off+e.n]
	}
	return p.src[n.start+1 : n.start+n.x-1]
}

func (p *parser) newNode(kind Kind) int32 {
	p.nodes = append(p.nodes, node{start: int32(p.pos)})
	p.kinds = append(p.kinds, uint8(kind))
	return int32(len(p.nodes) - 1)
}

func describe(c byte) string {
	if c >= 0x21 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// value parses one value at p.pos (whitespace already skipped).
func (p *parser) value(depth int) (int32, *Error) {
	if p.pos >= len(p.src) {
		return 0, p.errAt(p.pos, "unexpected end of input, expected a value")
	}
	switch c := p.src[p.pos]; c {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		return p.str()
	case 't':
		return p.literal("true", True)
	case 'f':
		return p.literal("false", False)
	case 'n':
		return p.literal("null", Null)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number()
		}
		switch {
		case c == 'N' && bytes.HasPrefix(p.src[p.pos:], []byte("NaN")):
			return 0, p.errAt(p.pos, "NaN is not a JSON number")
		case c == 'I' && bytes.HasPrefix(p.src[p.pos:], []byte("Infinity")):
			return 0, p.errAt(p.pos, "Infinity is not a JSON number")
		case c == '+':
			return 0, p.errAt(p.pos, "a number may not start with '+'")
		case c == '.':
			return 0, p.errAt(p.pos, "a number must have digits before '.'")
		}
		return 0, p.errAt(p.pos, "unexpected "+describe(c)+", expected a value")
	}
}

func (p *parser) literal(word string, k Kind) (int32, *Error) {
	if !bytes.HasPrefix(p.src[p.pos:], unsafe.Slice(unsafe.StringData(word), len(word))) {
		if k == Null && bytes.HasPrefix(p.src[p.pos:], []byte("nan")) {
			return 0, p.errAt(p.pos, "NaN is not a JSON number")
		}
		return 0, p.errAt(p.pos, "invalid literal, expected "+word)
	}
	i := p.newNode(k)
	p.pos += len(word)
	return i, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) number() (int32, *Error) {
	src := p.src
	start := p.pos
	i := start
	neg := false
	if src[i] == '-' {
		neg = true
		i++
		if i < len(src) && src[i] == 'I' {
			return 0, p.errAt(start, "-Infinity is not a JSON number")
		}
	}
	if i >= len(src) || !isDigit(src[i]) {
		return 0, p.errAt(i, "a number needs at least one digit")
	}
	intStart := i
	if src[i] == '0' {
		i++
		if i < len(src) && isDigit(src[i]) {
			return 0, p.errAt(intStart, "leading zeros are not allowed in numbers")
		}
	} else {
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	intDigits := i - intStart
	simple := true
	if i < len(src) && src[i] == '.' {
		simple = false
		i++
		if i >= len(src) || !isDigit(src[i]) {
			return 0, p.errAt(i, "a number needs digits after '.'")
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		simple = false
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) || !isDigit(src[i]) {
			return 0, p.errAt(i, "a number needs digits in its exponent")
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	n := p.newNode(Number)
	p.pos = i
	p.nodes[n].x = int32(i - start)
	if simple && intDigits <= 15 {
		// An integer of at most 15 digits is exactly representable and
		// ECMAScript prints it as written, except -0.
		if neg && intDigits == 1 && src[intStart] == '0' {
			p.kinds[n] |= flagNumNegZero
		}
		return n, nil
	}
	raw := src[start:i]
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(raw), len(raw)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, p.errAt(start, "number "+string(clip(raw))+" is outside the range of an IEEE 754 double")
	}
	if f == 0 {
		p.kinds[n] |= flagNumNegZero // canonical "0" (covers -0.0 and underflow)
		return n, nil
	}
	p.kinds[n] |= flagNumFloat
	p.nodes[n].x = int32(len(p.floats))
	if len(p.floats) == cap(p.floats) {
		p.floats = growDoubling(p.floats, 1)
	}
	p.floats = append(p.floats, floatInfo{bits: math.Float64bits(f), end: int32(i)})
	return n, nil
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return append(append([]byte{}, b[:37]...), "..."...)
	}
	return b
}

// strTable marks bytes that end the fast scan of a string body.
var strTable = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// Eight bytes at a time (SWAR): swarLo has 1 in every byte, swarHi the
// high bit of every byte.
const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// escapeRun returns the index of the first byte of s at or after i that
// a JSON string must escape (a quote, a backslash, a control character),
// or len(s): plainRun's tests but the one for bytes of multi-byte UTF-8
// sequences, which canonical output writes as they are.
func escapeRun(s []byte, i int) int {
	for i+8 <= len(s) {
		w := binary.LittleEndian.Uint64(s[i:])
		q := w ^ ('"' * swarLo)
		b := w ^ ('\\' * swarLo)
		m := ((q - swarLo) &^ q) | ((b - swarLo) &^ b) | ((w - 0x20*swarLo) &^ w)
		if m &= swarHi; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(s) && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' {
		i++
	}
	return i
}

// plainRun returns the index of the first byte of src at or after i that
// strTable marks (a quote, a backslash, a control character or a byte of
// a multi-byte UTF-8 sequence), or len(src). It reads eight bytes at a
// time: (x - swarLo) &^ x has the high bit set in the lowest zero byte of
// x (and perhaps in bytes above it, never below), so the lowest high bit
// of the combined mask is the first byte any of the four tests marks.
func plainRun(src []byte, i int) int {
	for i+8 <= len(src) {
		w := binary.LittleEndian.Uint64(src[i:])
		q := w ^ ('"' * swarLo)
		b := w ^ ('\\' * swarLo)
		m := ((q - swarLo) &^ q) | ((b - swarLo) &^ b) | ((w - 0x20*swarLo) &^ w) | w
		if m &= swarHi; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(src) && !strTable[src[i]] {
		i++
	}
	return i
}

// str parses a string at p.pos (which holds the opening quote).
func (p *parser) str() (int32, *Error) {
	n := p.newNode(String)
	src := p.src
	i := p.pos + 1
	bodyStart := i
	for {
		i = plainRun(src, i)
		if i >= len(src) {
			return 0, p.errAt(p.pos, "unterminated string")
		}
		c := src[i]
		if c == '"' {
			p.pos = i + 1
			p.nodes[n].x = int32(p.pos) - p.nodes[n].start
			return n, nil
		}
		if c == '\\' {
			return p.strEscaped(n, bodyStart, i)
		}
		if c < 0x20 {
			return 0, p.errAt(i, "raw control character "+describe(c)+" in string (must be escaped)")
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size <= 1 {
			return 0, p.errAt(i, "invalid UTF-8 in string")
		}
		i += size
	}
}

// sbufRoom is the room strEscaped makes in sbuf before a string: one
// decoded string longer than it still grows the buffer as append does.
const sbufRoom = 4096

// strEscaped continues a string that has escapes, decoding into sbuf.
func (p *parser) strEscaped(n int32, bodyStart, i int) (int32, *Error) {
	src := p.src
	if cap(p.sbuf)-len(p.sbuf) < sbufRoom {
		// Doubled, not by append's 1.25 for a large slice: a document
		// of many escaped strings grows its buffer to tens of megabytes,
		// and growing by a quarter copies it many times over.
		p.sbuf = growDoubling(p.sbuf, sbufRoom)
	}
	off := len(p.sbuf)
	p.sbuf = append(p.sbuf, src[bodyStart:i]...)
	for {
		start := i
		i = plainRun(src, i)
		p.sbuf = append(p.sbuf, src[start:i]...)
		if i >= len(src) {
			return 0, p.errAt(p.pos, "unterminated string")
		}
		c := src[i]
		switch {
		case c == '"':
			p.pos = i + 1
			p.kinds[n] |= flagEscaped
			p.nodes[n].x = int32(len(p.escs))
			if len(p.escs) == cap(p.escs) {
				p.escs = growDoubling(p.escs, 1)
			}
			p.escs = append(p.escs, escInfo{end: int32(p.pos), off: int32(off), n: int32(len(p.sbuf) - off)})
			return n, nil
		case c == '\\':
			if i+1 >= len(src) {
				return 0, p.errAt(p.pos, "unterminated string")
			}
			e := src[i+1]
			switch e {
			case '"', '\\', '/':
				p.sbuf = append(p.sbuf, e)
				i += 2
			case 'b':
				p.sbuf = append(p.sbuf, '\b')
				i += 2
			case 'f':
				p.sbuf = append(p.sbuf, '\f')
				i += 2
			case 'n':
				p.sbuf = append(p.sbuf, '\n')
				i += 2
			case 'r':
				p.sbuf = append(p.sbuf, '\r')
				i += 2
			case 't':
				p.sbuf = append(p.sbuf, '\t')
				i += 2
			case 'u':
				r, ok := hex4(src, i+2)
				if !ok {
					return 0, p.errAt(i, "invalid \\u escape (needs four hex digits)")
				}
				switch {
				case r >= 0xdc00 && r <= 0xdfff:
					return 0, p.errAt(i, "lone low surrogate \\u"+strconv.FormatInt(int64(r), 16)+" in string")
				case r >= 0xd800 && r <= 0xdbff:
					if i+7 < len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
						lo, ok := hex4(src, i+8)
						if ok && lo >= 0xdc00 && lo <= 0xdfff {
							r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
							p.sbuf = utf8.AppendRune(p.sbuf, r)
							i += 12
							continue
						}
					}
					return 0, p.errAt(i, "lone high surrogate \\u"+strconv.FormatInt(int64(r), 16)+" in string")
				}
				p.sbuf = utf8.AppendRune(p.sbuf, r)
				i += 6
			default:
				// The byte after the backslash is the input's: named by
				// describe when it is not printable ASCII (a raw ESC or a
				// C1 control would reach a terminal through the message).
				if e >= 0x21 && e < 0x7f {
					return 0, p.errAt(i, "invalid escape \\"+string(rune(e))+" in string")
				}
				return 0, p.errAt(i, "invalid escape: a backslash before "+describe(e)+" in string")
			}
		case c < 0x20:
			return 0, p.errAt(i, "raw control character "+describe(c)+" in string (must be escaped)")
		default:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size <= 1 {
				return 0, p.errAt(i, "invalid UTF-8 in string")
			}
			p.sbuf = append(p.sbuf, src[i:i+size]...)
			i += size
		}
	}
}

func hex4(src []byte, i int) (rune, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *parser) array(depth int) (int32, *Error) {
	if depth > MaxDepth {
		return 0, p.errAt(p.pos, "nesting deeper than "+strconv.Itoa(MaxDepth)+" levels")
	}
	n := p.newNode(Array)
	p.pos++
	base := len(p.stack)
	p.skipWS()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
	} else {
		for idx := 0; ; idx++ {
			p.skipWS()
			c, err := p.value(depth)
			if err != nil {
				p.stack = p.stack[:base]
				return 0, err.push(strconv.Itoa(idx))
			}
			p.stack = append(p.stack, c)
			p.skipWS()
			if p.pos >= len(p.src) {
				p.stack = p.stack[:base]
				return 0, p.errAt(p.pos, "unexpected end of input in array")
			}
			if p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.src[p.pos] == ']' {
				p.pos++
				break
			}
			p.stack = p.stack[:base]
			return 0, p.errAt(p.pos, "unexpected "+describe(p.src[p.pos])+" in array, expected ',' or ']'")
		}
	}
	p.nodes[n].x = int32(len(p.kids))
	p.kids = append(p.kids, int32(len(p.stack)-base), int32(p.pos))
	p.kids = append(p.kids, p.stack[base:]...)
	p.stack = p.stack[:base]
	return n, nil
}

func (p *parser) object(depth int) (int32, *Error) {
	if depth > MaxDepth {
		return 0, p.errAt(p.pos, "nesting deeper than "+strconv.Itoa(MaxDepth)+" levels")
	}
	n := p.newNode(Object)
	p.pos++
	base := len(p.stack)
	p.skipWS()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
	} else {
		for {
			p.skipWS()
			if p.pos >= len(p.src) {
				p.stack = p.stack[:base]
				return 0, p.errAt(p.pos, "unexpected end of input in object")
			}
			if p.src[p.pos] != '"' {
				p.stack = p.stack[:base]
				return 0, p.errAt(p.pos, "unexpected "+describe(p.src[p.pos])+", expected a member name string")
			}
			k, err := p.str()
			if err != nil {
				p.stack = p.stack[:base]
				return 0, err
			}
			p.skipWS()
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				p.stack = p.stack[:base]
				if p.pos >= len(p.src) {
					return 0, p.errAt(p.pos, "unexpected end of input in object")
				}
				return 0, p.errAt(p.pos, "unexpected "+describe(p.src[p.pos])+" after member name, expected ':'")
			}
			p.pos++
			p.skipWS()
			if _, err := p.value(depth); err != nil {
				p.stack = p.stack[:base]
				return 0, err.push(string(p.keyBytes(k)))
			}
			p.stack = append(p.stack, k)
			p.skipWS()
			if p.pos >= len(p.src) {
				p.stack = p.stack[:base]
				return 0, p.errAt(p.pos, "unexpected end of input in object")
			}
			if p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.src[p.pos] == '}' {
				p.pos++
				break
			}
			p.stack = p.stack[:base]
			return 0, p.errAt(p.pos, "unexpected "+describe(p.src[p.pos])+" in object, expected ',' or '}'")
		}
	}
	ks := p.stack[base:]
	if j := sortKeys(p, ks); j >= 0 {
		later := max(ks[j-1], ks[j])
		name := string(p.keyBytes(later))
		e := p.errAt(int(p.nodes[later].start), "duplicate member name "+safetext.Quote(name))
		p.stack = p.stack[:base]
		return 0, e.push(name)
	}
	p.nodes[n].x = int32(len(p.kids))
	p.kids = append(p.kids, int32(len(ks)), int32(p.pos))
	p.kids = append(p.kids, ks...)
	p.stack = p.stack[:base]
	return n, nil
}

// growDoubling is slices.Grow by doubling: s with room for at least n more
// elements, in a new array of at least twice its capacity when it has not.
func growDoubling[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	g := make([]T, len(s), max(len(s)+n, 2*cap(s)))
	copy(g, s)
	return g
}
