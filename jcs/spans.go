package jcs

import "bytes"

// A large artifact (a snapshot of thousands of tools) need not be parsed
// as one tree: MemberStart finds where a member's value starts, and
// ValueEnd where a value ends, so that a caller can cut a text into parts
// and parse each on its own (ParseNested). Neither validates anything: the
// caller parses every part strictly, which checks all they skip. A false
// ok says the text is not laid out as expected, not why: parse it whole to
// learn that.

// MemberStart is where the value of the member name of the object text
// src starts. The name must be written without escapes; a text with
// another spelling of it, or with it twice, is laid out as a parse of the
// rest will refuse or find it, not as this finds it.
func MemberStart(src []byte, name string) (start int, ok bool) {
	i := SkipSpace(src, 0)
	if i >= len(src) || src[i] != '{' {
		return 0, false
	}
	for i = SkipSpace(src, i+1); i < len(src); i = SkipSpace(src, i+1) {
		if src[i] != '"' {
			return 0, false
		}
		k := i
		if i, ok = skipString(src, i); !ok {
			return 0, false
		}
		key := src[k+1 : i-1]
		if i = SkipSpace(src, i); i >= len(src) || src[i] != ':' {
			return 0, false
		}
		v := SkipSpace(src, i+1)
		if string(key) == name {
			return v, true
		}
		if i, ok = ValueEnd(src, v); !ok {
			return 0, false
		}
		if i = SkipSpace(src, i); i >= len(src) || src[i] != ',' {
			return 0, false
		}
	}
	return 0, false
}

// SkipSpace is the index of the first byte of src from i that is not JSON
// whitespace (len(src): none).
func SkipSpace(src []byte, i int) int {
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	return i
}

// isSpace reports whether c is JSON whitespace.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipString is the end of the string that starts at src[i] ('"'): the
// first quote after it not escaped by an odd run of backslashes.
func skipString(src []byte, i int) (int, bool) {
	for j := i + 1; ; j++ {
		k := bytes.IndexByte(src[j:], '"')
		if k < 0 {
			return len(src), false
		}
		j += k
		n := 0
		for b := j - 1; b > i && src[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
	}
}

// ValueEnd is the end of the value that starts at src[i]: a string, a
// container to its matching bracket, or a scalar to the next delimiter.
func ValueEnd(src []byte, i int) (int, bool) {
	if i >= len(src) {
		return i, false
	}
	switch src[i] {
	case '"':
		return skipString(src, i)
	case '{', '[':
		depth := 0
		for i < len(src) {
			switch src[i] {
			case '"':
				var ok bool
				if i, ok = skipString(src, i); !ok {
					return i, false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	j := i
	for j < len(src) && !isSpace(src[j]) && src[j] != ',' && src[j] != ']' && src[j] != '}' {
		j++
	}
	return j, j > i
}
