package jcs

import (
	"math/big"
	"strconv"
	"strings"
)

// Exact decimal values of numbers. RFC 8785 serialises a number as the
// shortest text that reads back as the same IEEE 754 double, so two numbers
// written differently can canonicalize to the same bytes although they are
// different numbers (9007199254740993 and 9007199254740992 both become
// 9007199254740992). Nothing here changes canonical output or digests: these
// functions read the text as written, exactly, so a caller can say what the
// canonical form cannot.

// decimal is the exact value of a number text: value = digits × 10^exp,
// with digits free of leading and trailing zeros ("" for zero, whose sign
// is dropped: -0 and 0 are the same value). When the written exponent does
// not fit comfortably in an int64 (more than 18 digits), huge is set and
// exp is meaningless; NumberKey then computes it with math/big.
type decimal struct {
	neg    bool
	digits []byte // significant digits; may alias the source only when contiguous
	exp    int64
	huge   bool
}

// parts splits a number text (RFC 8259 grammar, or the ECMAScript form
// AppendNumber writes, which differs only by a "+" in the exponent) into its
// sign, integer digits, fraction digits and exponent text (sign included).
func parts(raw []byte) (neg bool, intPart, frac, exp []byte) {
	i := 0
	if i < len(raw) && raw[i] == '-' {
		neg = true
		i++
	}
	s := i
	for i < len(raw) && isDigit(raw[i]) {
		i++
	}
	intPart = raw[s:i]
	if i < len(raw) && raw[i] == '.' {
		i++
		s = i
		for i < len(raw) && isDigit(raw[i]) {
			i++
		}
		frac = raw[s:i]
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		exp = raw[i+1:]
	}
	return neg, intPart, frac, exp
}

// sigSpan locates the significant digits of intPart followed by frac: the
// index of the first and one past the last non-zero digit in the
// concatenation (lo == hi for zero).
func sigSpan(intPart, frac []byte) (lo, hi int) {
	n := len(intPart) + len(frac)
	at := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	for lo < n && at(lo) == '0' {
		lo++
	}
	hi = n
	for hi > lo && at(hi-1) == '0' {
		hi--
	}
	return lo, hi
}

// expValue parses an exponent text ("", "5", "+05", "-000123"). ok is false
// when it has more than 18 significant digits.
func expValue(e []byte) (v int64, ok bool) {
	neg := false
	if len(e) > 0 && (e[0] == '+' || e[0] == '-') {
		neg = e[0] == '-'
		e = e[1:]
	}
	for len(e) > 0 && e[0] == '0' {
		e = e[1:]
	}
	if len(e) > 18 {
		return 0, false
	}
	for _, c := range e {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// decimalOf reads raw exactly. buf, when large enough, receives the
// significant digits (so the common case does not allocate).
func decimalOf(raw []byte, buf []byte) decimal {
	neg, intPart, frac, exp := parts(raw)
	lo, hi := sigSpan(intPart, frac)
	if lo == hi {
		return decimal{}
	}
	d := decimal{neg: neg}
	switch {
	case hi <= len(intPart):
		d.digits = intPart[lo:hi]
	case lo >= len(intPart):
		d.digits = frac[lo-len(intPart) : hi-len(intPart)]
	default:
		d.digits = append(append(buf[:0], intPart[lo:]...), frac[:hi-len(intPart)]...)
	}
	// value = (intPart frac as an integer) × 10^(e - len(frac)); dropping the
	// trailing zeros after hi multiplies by 10^(n - hi).
	e, ok := expValue(exp)
	if !ok {
		d.huge = true
		return d
	}
	d.exp = e - int64(len(frac)) + int64(len(intPart)+len(frac)-hi)
	return d
}

func (d decimal) equal(o decimal) bool {
	return !d.huge && !o.huge && d.neg == o.neg && d.exp == o.exp && string(d.digits) == string(o.digits)
}

// NumberKey returns, for a number, a string that two numbers share exactly
// when they denote the same mathematical value: 1, 1.0, 1e0 and 10E-1 share
// one; 9007199254740993 and 9007199254740992 do not, although they
// canonicalize alike; -0 and 0 share one. It is "" for a value that is not
// a number. The key is the sign, the significant digits and the decimal
// exponent ("1e0", "-9007199254740993e0", "0"); its length is linear in the
// number's text.
func (v Value) NumberKey() string {
	if !v.Valid() || v.Kind() != Number {
		return ""
	}
	return numberKey(v.Raw())
}

func numberKey(raw []byte) string {
	var buf [32]byte
	d := decimalOf(raw, buf[:])
	if len(d.digits) == 0 {
		return "0"
	}
	var b strings.Builder
	b.Grow(len(d.digits) + 24)
	if d.neg {
		b.WriteByte('-')
	}
	b.Write(d.digits)
	b.WriteByte('e')
	if !d.huge {
		b.WriteString(strconv.FormatInt(d.exp, 10))
		return b.String()
	}
	// An exponent of more than 18 digits (possible only for numbers that
	// underflow, or for zero): exact with math/big, linear in its length.
	_, intPart, frac, exp := parts(raw)
	_, hi := sigSpan(intPart, frac)
	e, ok := new(big.Int).SetString(strings.TrimPrefix(string(exp), "+"), 10)
	if !ok {
		// Unreachable for validated text; keep the key distinct and exact.
		b.WriteString("?" + string(exp))
		return b.String()
	}
	e.Add(e, big.NewInt(int64(len(intPart)+len(frac)-hi)-int64(len(frac))))
	b.WriteString(e.String())
	return b.String()
}

// NumbersEqual reports whether a and b are numbers with the same
// mathematical value, compared exactly (never through float64).
func NumbersEqual(a, b Value) bool {
	if !a.Valid() || !b.Valid() || a.Kind() != Number || b.Kind() != Number {
		return false
	}
	var ba, bb [32]byte
	da, db := decimalOf(a.Raw(), ba[:]), decimalOf(b.Raw(), bb[:])
	if da.huge || db.huge {
		return numberKey(a.Raw()) == numberKey(b.Raw())
	}
	return da.equal(db)
}

// maxCanonicalDigits bounds the significant digits of a canonical number
// (shortest round-trip digits of a double are at most 17).
const maxCanonicalDigits = 17

// Inexact reports whether v is a number whose canonical form denotes a
// different value than its text: RFC 8785 rounded it to the nearest double
// and printed that double's shortest digits, and those digits are another
// number. Examples: 9007199254740993 (canonical 9007199254740992),
// 12345678901234567890 (12345678901234567000), 2^60 written out as
// 1152921504606846976 (1152921504606847000, although the double is exactly
// 2^60), 0.10000000000000000001 (0.1), 1e-400 (0). Not inexact: 0.1 (the
// double is not exactly 0.1, but the canonical text is 0.1 again, so the
// text is what the digest says), 1.0, 1E3, -0, 9007199254740992,
// 9007199254740994. Any two texts of different value that canonicalize
// alike include at least one inexact text.
func (v Value) Inexact() bool {
	return v.Valid() && v.d.kind(v.i) == Number && v.d.inexact(v.i)
}

// HasInexact reports whether v holds an Inexact number (v itself
// included): InexactNumbers(v, 0) finds a total above 0. It reads one byte
// of each node inside v and allocates nothing.
func (v Value) HasInexact() bool {
	return v.Valid() && v.d.hasInexact(v.i)
}

// inexact is Inexact for number node i. Only numbers that went through
// float formatting can be inexact; the check reads no more than the text.
func (d *Doc) inexact(i int32) bool {
	k := d.kinds[i]
	if k&(flagNumFloat|flagNumNegZero) == 0 {
		return false // an integer of at most 15 digits, printed as written
	}
	raw := d.src[d.nodes[i].start:d.end(i)]
	if k&flagNumFloat == 0 {
		// Canonical "0": inexact only when the text is not zero (underflow).
		_, intPart, frac, _ := parts(raw)
		lo, hi := sigSpan(intPart, frac)
		return lo != hi
	}
	_, intPart, frac, exp := parts(raw)
	lo, hi := sigSpan(intPart, frac)
	if hi-lo > maxCanonicalDigits {
		return true
	}
	if hi-lo <= 15 {
		// A decimal of at most 15 significant digits in the normal range
		// reads back from its double unchanged (DBL_DIG), so no other
		// decimal of at most 15 digits rounds to the same double: the
		// shortest digits of that double are this decimal.
		if e, ok := expValue(exp); ok {
			// The leading digit is worth 10^lead.
			lead := e + int64(len(intPart)) - int64(lo) - 1
			if lead >= -307 && lead <= 307 {
				return false
			}
		}
	}
	var cbuf [32]byte
	canon := d.appendCanon(cbuf[:0], i)
	if string(canon) == string(raw) {
		return false
	}
	var rb, cb [32]byte
	return !decimalOf(raw, rb[:]).equal(decimalOf(canon, cb[:]))
}

// integral reports whether the value is an integer.
func (d decimal) integral(raw []byte) bool {
	if len(d.digits) == 0 {
		return true
	}
	if !d.huge {
		return d.exp >= 0
	}
	_, _, _, exp := parts(raw)
	return len(exp) == 0 || exp[0] != '-'
}

// IsInteger reports whether v is a number whose text denotes an integer
// (9007199254740993, 9007199254740993.0, 9007199254740993e0, 1E3, -0),
// decided exactly from the text.
func (v Value) IsInteger() bool {
	if !v.Valid() || v.Kind() != Number {
		return false
	}
	var buf [32]byte
	return decimalOf(v.Raw(), buf[:]).integral(v.Raw())
}

// NumberAt is a number found inside a value.
type NumberAt struct {
	// Pointer is the RFC 6901 pointer of the number, relative to the value
	// searched.
	Pointer string
	// Value is the number: Raw() is its text, Canonical() what RFC 8785
	// makes of it.
	Value Value
}

// InexactNumbers finds every Inexact number inside v (v itself included)
// and returns the first limit of them in document order (all when limit is
// negative) with the total count. It takes time linear in the size of v,
// plus the length of the pointers it returns; it allocates only for what it
// returns. It is never called on the digest path: canonical output is the
// same whether or not anyone asks.
func InexactNumbers(v Value, limit int) (found []NumberAt, total int) {
	if !v.Valid() {
		return nil, 0
	}
	d := v.d
	var targets []int32
	for k, hi := v.i, d.subtreeEnd(v.i); k < hi; k++ {
		if mayBeInexact(d.kinds[k]) && d.inexact(k) {
			if limit < 0 || len(targets) < limit {
				targets = append(targets, k)
			}
			total++
		}
	}
	if len(targets) == 0 {
		return nil, total
	}
	w := pointerWalk{d: d, targets: targets, ptrs: make([]string, len(targets))}
	w.walk(v.i)
	found = make([]NumberAt, len(targets))
	for j, t := range targets {
		found[j] = NumberAt{Pointer: w.ptrs[j], Value: Value{d, t}}
	}
	return found, total
}

// pointerWalk finds the pointers of target nodes (sorted node indices),
// descending only into subtrees that hold one.
type pointerWalk struct {
	d       *Doc
	targets []int32
	ptrs    []string
	segs    []seg
}

// seg is one pointer segment: a member name (key valid) or an index.
type seg struct {
	key Value
	idx int32
}

// holds returns the index in targets of the first target inside the span
// of node i, or -1.
func (w *pointerWalk) holds(i int32) int {
	start, end := w.d.nodes[i].start, w.d.end(i)
	lo, hi := 0, len(w.targets)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if w.d.nodes[w.targets[m]].start < start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(w.targets) && w.d.nodes[w.targets[lo]].start < end {
		return lo
	}
	return -1
}

func (w *pointerWalk) walk(i int32) {
	switch w.d.kind(i) {
	case Number:
		if j := w.holds(i); j >= 0 && w.targets[j] == i {
			w.ptrs[j] = joinPointer(w.segs)
		}
	case Array:
		for j, c := range w.d.children(i) {
			if w.holds(c) >= 0 {
				w.segs = append(w.segs, seg{idx: int32(j)})
				w.walk(c)
				w.segs = w.segs[:len(w.segs)-1]
			}
		}
	case Object:
		for _, k := range w.d.children(i) {
			if w.holds(k+1) >= 0 {
				w.segs = append(w.segs, seg{key: Value{w.d, k}})
				w.walk(k + 1)
				w.segs = w.segs[:len(w.segs)-1]
			}
		}
	}
}

func joinPointer(segs []seg) string {
	var b strings.Builder
	for _, sg := range segs {
		b.WriteByte('/')
		if !sg.key.Valid() {
			b.WriteString(strconv.Itoa(int(sg.idx)))
			continue
		}
		b.WriteString(PointerToken(string(sg.key.strBytes())))
	}
	return b.String()
}

// NumberPair is a number at the same pointer of two values.
type NumberPair struct {
	Pointer  string
	Old, New Value
}

// PrecisionChanges walks old and new in parallel (members with the same
// name, elements with the same index) and returns the numbers at the same
// pointer whose canonical forms are equal but whose values differ: the
// changes RFC 8785, and every digest over it, cannot see (old 9007199254740993,
// new 9007199254740992). It returns the first limit of them (all when
// limit is negative) in canonical order (members as RFC 8785 sorts them,
// elements by index) and the total count. Linear time; values without an
// Inexact number are recognised by one scan of their nodes.
func PrecisionChanges(old, new Value, limit int) (found []NumberPair, total int) {
	if !old.Valid() || !new.Valid() || (!old.d.hasInexact(old.i) && !new.d.hasInexact(new.i)) {
		return nil, 0
	}
	w := pairWalk{limit: limit}
	w.walk(old, new)
	return w.found, w.total
}

func (d *Doc) hasInexact(i int32) bool {
	for k, hi := i, d.subtreeEnd(i); k < hi; k++ {
		if mayBeInexact(d.kinds[k]) && d.inexact(k) {
			return true
		}
	}
	return false
}

// mayBeInexact reports whether a node of kind byte k is a number that can
// be Inexact: one that went through float formatting, or whose canonical
// form is "0". The scans for Inexact numbers read nothing else of the
// other nodes.
func mayBeInexact(k uint8) bool {
	return Kind(k&kindMask) == Number && k&(flagNumFloat|flagNumNegZero) != 0
}

// subtreeEnd returns the index just past the last node of node i's
// value: the parse numbers nodes in document order, so node i and
// everything inside it are the nodes from i that start before its token
// ends. (A scan: a binary search on the starts took longer for the few
// hundred nodes of a tool.)
func (d *Doc) subtreeEnd(i int32) int32 {
	end, nodes := d.end(i), d.nodes
	hi := i + 1
	for hi < int32(len(nodes)) && nodes[hi].start < end {
		hi++
	}
	return hi
}

type pairWalk struct {
	segs  []seg
	found []NumberPair
	total int
	limit int
}

func (w *pairWalk) walk(a, b Value) {
	if a.d.kind(a.i) != b.d.kind(b.i) {
		return
	}
	switch a.d.kind(a.i) {
	case Number:
		var ca, cb [32]byte
		if string(a.d.appendCanon(ca[:0], a.i)) == string(b.d.appendCanon(cb[:0], b.i)) && !NumbersEqual(a, b) {
			w.total++
			if w.limit < 0 || len(w.found) < w.limit {
				w.found = append(w.found, NumberPair{Pointer: joinPointer(w.segs), Old: a, New: b})
			}
		}
	case Array:
		ca, cb := a.d.children(a.i), b.d.children(b.i)
		for j := range min(len(ca), len(cb)) {
			w.segs = append(w.segs, seg{idx: int32(j)})
			w.walk(Value{a.d, ca[j]}, Value{b.d, cb[j]})
			w.segs = w.segs[:len(w.segs)-1]
		}
	case Object:
		// Both member lists are in canonical order: merge them.
		ca, cb := a.d.children(a.i), b.d.children(b.i)
		i, j := 0, 0
		for i < len(ca) && j < len(cb) {
			ka, kb := ca[i], cb[j]
			c := compareUTF16(Value{a.d, ka}.strBytes(), Value{b.d, kb}.strBytes())
			switch {
			case c < 0:
				i++
			case c > 0:
				j++
			default:
				w.segs = append(w.segs, seg{key: Value{a.d, ka}})
				w.walk(Value{a.d, ka + 1}, Value{b.d, kb + 1})
				w.segs = w.segs[:len(w.segs)-1]
				i++
				j++
			}
		}
	}
}
