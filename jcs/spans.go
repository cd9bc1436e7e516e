package jcs

// A large artifact (a snapshot of thousands of tools) need not be parsed
// as one tree: MemberSpan finds its array of tools and Elements splits it,
// so that the rest and each element are parsed on their own, one small
// tree at a time. Neither validates anything: each part is parsed
// strictly (Parse) by the caller, which checks all they skip. A false ok
// says the text is not laid out as expected, not why: parse it whole to
// learn that.

// MemberSpan is where the value of the member name of the object text src
// is: src[start:end]. The name must be written without escapes; a text
// with another spelling of it, or with it twice, is laid out as a parse of
// the rest will refuse or find it, not as this finds it.
func MemberSpan(src []byte, name string) (start, end int, ok bool) {
	i := skipSpace(src, 0)
	if i >= len(src) || src[i] != '{' {
		return 0, 0, false
	}
	for i = skipSpace(src, i+1); i < len(src); i = skipSpace(src, i+1) {
		if src[i] != '"' {
			return 0, 0, false
		}
		k := i
		if i, ok = skipString(src, i); !ok {
			return 0, 0, false
		}
		key := src[k+1 : i-1]
		if i = skipSpace(src, i); i >= len(src) || src[i] != ':' {
			return 0, 0, false
		}
		v := skipSpace(src, i+1)
		if i, ok = skipValue(src, v); !ok {
			return 0, 0, false
		}
		if string(key) == name {
			return v, i, true
		}
		if i = skipSpace(src, i); i >= len(src) || src[i] != ',' {
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// Elements splits the array text src into the texts of its elements.
func Elements(src []byte) (elems [][]byte, ok bool) {
	i := skipSpace(src, 0)
	if i >= len(src) || src[i] != '[' {
		return nil, false
	}
	i = skipSpace(src, i+1)
	if i < len(src) && src[i] == ']' {
		return [][]byte{}, skipSpace(src, i+1) == len(src)
	}
	for i < len(src) {
		e := i
		if i, ok = skipValue(src, i); !ok {
			return nil, false
		}
		elems = append(elems, src[e:i])
		if i = skipSpace(src, i); i >= len(src) {
			return nil, false
		}
		switch src[i] {
		case ']':
			return elems, skipSpace(src, i+1) == len(src)
		case ',':
			i = skipSpace(src, i+1)
		default:
			return nil, false
		}
	}
	return nil, false
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	return i
}

// skipString is the end of the string that starts at src[i] ('"').
func skipString(src []byte, i int) (int, bool) {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(src), false
}

// skipValue is the end of the value that starts at src[i]: a string, a
// container to its matching bracket, or a scalar to the next delimiter.
func skipValue(src []byte, i int) (int, bool) {
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
