package safetext

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Decoders in common use do not all match a JSON member name exactly.
// Go's encoding/json (and every Go SDK built on it) matches a struct
// field without regard to case, by Unicode simple folding, so "Name", "ſ"
// for "s" and the Kelvin sign for "k" all reach the field "name", and the
// last match wins. .NET's System.Text.Json with case-insensitive names
// (ASP.NET's default) compares by simple upper-case mapping, so the dotless
// "ı" matches "i"; Java's equalsIgnoreCase compares upper- and lower-case
// mappings, so "İ" matches "i" too. A decoder written in C may stop a name
// at U+0000. A gateway that decides on one reading and forwards the bytes
// decides on something else than what such a server acts on.
//
// MemberKey is the key that makes all of these one name: each code point is
// replaced by the least code point of its class under the union of those
// relations (the simple case-folding orbit, and the upper-, lower- and
// title-case mappings), and the name ends at its first U+0000. Two names
// that any of those decoders would match have the same key (a test checks
// every code point with a case mapping). Full case folding's expansions
// ("ß" as "ss") are not matched by any decoder of member names we know of,
// and are not keyed.

// foldClasses maps each code point with a case relation to the least code
// point of its class (code points without one are their own class).
var foldClasses = sync.OnceValue(func() map[rune]rune {
	parent := map[rune]rune{}
	var find func(r rune) rune
	find = func(r rune) rune {
		p, ok := parent[r]
		if !ok || p == r {
			return r
		}
		root := find(p)
		parent[r] = root
		return root
	}
	union := func(a, b rune) {
		ra, rb := find(a), find(b)
		switch {
		case ra == rb:
		case ra < rb:
			parent[rb] = ra
		default:
			parent[ra] = rb
		}
	}
	for _, cr := range unicode.CaseRanges {
		for r := rune(cr.Lo); r <= rune(cr.Hi); r++ {
			union(r, unicode.ToUpper(r))
			union(r, unicode.ToLower(r))
			union(r, unicode.ToTitle(r))
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				union(r, f)
			}
		}
	}
	out := make(map[rune]rune, len(parent))
	for r := range parent {
		if root := find(r); root != r {
			out[r] = root
		}
	}
	return out
})

// MemberKey is the key under which decoders in common use match a JSON
// member name (see above): equal keys, one name to some decoder.
func MemberKey(s string) string { return string(AppendMemberKey(make([]byte, 0, len(s)), []byte(s))) }

// AppendMemberKey appends MemberKey(name) to dst (no allocation beyond
// dst's growth: a caller keys a name into a buffer of its own).
func AppendMemberKey(dst, name []byte) []byte {
	var classes map[rune]rune
	for i := 0; i < len(name); {
		c := name[i]
		if c == 0 {
			break
		}
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		if classes == nil {
			classes = foldClasses()
		}
		r, n := utf8.DecodeRune(name[i:])
		if k, ok := classes[r]; ok {
			r = k
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// SameMember reports whether MemberKey(a) == MemberKey(b), without
// allocating when both are ASCII.
func SameMember(a, b []byte) bool {
	a, b = beforeNUL(a), beforeNUL(b)
	if asciiBytes(a) && asciiBytes(b) {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			x, y := a[i], b[i]
			if 'a' <= x && x <= 'z' {
				x -= 'a' - 'A'
			}
			if 'a' <= y && y <= 'z' {
				y -= 'a' - 'A'
			}
			if x != y {
				return false
			}
		}
		return true
	}
	var ka, kb [64]byte
	return string(AppendMemberKey(ka[:0], a)) == string(AppendMemberKey(kb[:0], b))
}

func beforeNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

func asciiBytes(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
