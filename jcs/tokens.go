package jcs

// SameTokens reports whether two JSON texts are the same tokens: the same
// bytes once the whitespace between tokens is left out (whitespace inside
// a string counts). Both must be valid JSON. Nothing two such texts hold
// can differ, not even a number's spelling, so a caller need not parse
// them to compare them: a tool kept indented in a snapshot is the same
// tokens as the compact tool a server serves.
func SameTokens(a, b []byte) bool {
	i, j := 0, 0
	inStr := false
	for {
		if !inStr {
			for i < len(a) && isSpace(a[i]) {
				i++
			}
			for j < len(b) && isSpace(b[j]) {
				j++
			}
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		c := a[i]
		if c != b[j] {
			return false
		}
		i, j = i+1, j+1
		switch {
		case inStr && c == '\\':
			// The escaped byte, whatever it is, is part of the string.
			if i == len(a) || j == len(b) || a[i] != b[j] {
				return false
			}
			i, j = i+1, j+1
		case c == '"':
			inStr = !inStr
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
