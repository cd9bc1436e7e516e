package jcs

import (
	"net/url"
	"strings"
)

// JSON pointers (RFC 6901), the one implementation: a reference token's
// escape and unescape, joining and splitting pointers, resolving one in a
// Value, and the URI fragment form a JSON Schema "$ref" writes them in
// ("#/$defs/a%20b"). Everything else that reads or writes a pointer calls
// these.

// PointerToken escapes s as one reference token of a JSON pointer ("~" as
// "~0", "/" as "~1").
func PointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// PointerJoin appends tokens to the pointer ptr, each escaped
// (PointerJoin("/a", "b/c") is "/a/b~1c").
func PointerJoin(ptr string, tokens ...string) string {
	n := len(ptr)
	for _, t := range tokens {
		n += 1 + len(t) + strings.Count(t, "~") + strings.Count(t, "/")
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(ptr)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(PointerToken(t))
	}
	return b.String()
}

// UnescapePointerToken undoes PointerToken: "~1" is "/" and "~0" is "~".
// ok is false when tok holds a "~" followed by neither "0" nor "1", which
// RFC 6901 does not allow; such a "~" is kept as it is (what a reader that
// only replaces "~1" and then "~0" makes of it).
func UnescapePointerToken(tok string) (s string, ok bool) {
	i := strings.IndexByte(tok, '~')
	if i < 0 {
		return tok, true
	}
	ok = true
	b := make([]byte, 0, len(tok))
	b = append(b, tok[:i]...)
	for ; i < len(tok); i++ {
		c := tok[i]
		if c == '~' {
			if i+1 < len(tok) && (tok[i+1] == '0' || tok[i+1] == '1') {
				b = append(b, "~/"[tok[i+1]-'0'])
				i++
				continue
			}
			ok = false
		}
		b = append(b, c)
	}
	return string(b), ok
}

// CutPointer cuts the first reference token off ptr: the token, unescaped,
// and the rest of the pointer ("" after the last token). ok is false when
// ptr does not start with "/" or the token's escapes are not RFC 6901's
// (see UnescapePointerToken).
func CutPointer(ptr string) (token, rest string, ok bool) {
	if ptr == "" || ptr[0] != '/' {
		return "", ptr, false
	}
	raw := ptr[1:]
	if i := strings.IndexByte(raw, '/'); i >= 0 {
		raw, rest = raw[:i], raw[i:]
	}
	token, ok = UnescapePointerToken(raw)
	return token, rest, ok
}

// SplitPointer returns the reference tokens of ptr, unescaped ("" has
// none). ok is false when ptr is not a JSON pointer: it does not start
// with "/", or an escape is not RFC 6901's.
func SplitPointer(ptr string) (tokens []string, ok bool) {
	for ptr != "" {
		var t string
		if t, ptr, ok = CutPointer(ptr); !ok {
			return nil, false
		}
		tokens = append(tokens, t)
	}
	return tokens, true
}

// PointerIndex reads a reference token as an array index: decimal digits
// without a sign or a leading zero (RFC 6901), at most nine of them.
func PointerIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
		n = n*10 + int(tok[i]-'0')
	}
	return n, true
}

// Step is the value the reference token tok (unescaped) names in v: the
// member of an object, the element of an array (see PointerIndex). ok is
// false when there is none, or v is neither.
func (v Value) Step(tok string) (Value, bool) {
	if !v.Valid() {
		return Value{}, false
	}
	switch v.Kind() {
	case Object:
		return v.Get(tok)
	case Array:
		if i, ok := PointerIndex(tok); ok && i < v.Len() {
			return v.Index(i), true
		}
	}
	return Value{}, false
}

// Resolve returns the value the JSON pointer ptr names in v ("" is v
// itself). ok is false (and the Value zero) when it names nothing or is
// not a JSON pointer.
func (v Value) Resolve(ptr string) (Value, bool) {
	if !v.Valid() {
		return Value{}, false
	}
	for ptr != "" {
		tok, rest, ok := CutPointer(ptr)
		if !ok {
			return Value{}, false
		}
		if v, ok = v.Step(tok); !ok {
			return Value{}, false
		}
		ptr = rest
	}
	return v, true
}

// FragmentPointer reads the URI fragment form of a JSON pointer (RFC 6901
// section 6): frag is what follows the "#", %-escaped. The result is a
// JSON pointer when it is "" (the whole document) or starts with "/";
// anything else (a JSON Schema anchor's name) is the caller's to read. ok
// is false when a %-escape is invalid.
func FragmentPointer(frag string) (string, bool) {
	p, err := url.PathUnescape(frag)
	return p, err == nil
}

// ResolveFragment resolves ref, a URI reference that is a fragment only ("#"
// and a JSON pointer in its URI fragment form: "#/$defs/a%20b"), in v.
// Any other reference (one with a URI before the "#", an anchor) names
// nothing here: ok is false.
func (v Value) ResolveFragment(ref string) (Value, bool) {
	if !strings.HasPrefix(ref, "#") {
		return Value{}, false
	}
	ptr, ok := FragmentPointer(ref[1:])
	if !ok || (ptr != "" && ptr[0] != '/') {
		return Value{}, false
	}
	return v.Resolve(ptr)
}
