package classify

import (
	"unicode"
	"unicode/utf8"
)

// Normalize returns the word tokens the classifier sees for name. It is
// exported so that tools and documentation can show why a name matched.
//
// A name is split into tokens on every rune that is not a letter or digit
// (".", "_", "-", "/", ":", spaces, "@", ... and any invalid UTF-8) and on
// camelCase boundaries:
//
//   - a lower-case letter followed by an upper-case one: "addDeployKey" -> add deploy key
//   - an acronym followed by a capitalised word: "APIKey" -> api key (but
//     "IDs" and "URLs" stay one token)
//   - a digit followed by a capitalised word: "R2Bucket" -> r2 bucket (but
//     "2FA" stays one token, and letters followed by digits never split: "s3", "d1")
//
// Tokens are lower-cased and reduced by a tiny plural stemmer: "ies" -> "y"
// (policies -> policy), "sses"/"ches"/"shes"/"xes" lose "es"
// (branches -> branch), and a trailing "s" is dropped from words longer than
// three letters unless they end in "ss", "us" or "is" (files -> file, but
// dns, access, status and redis are kept). Patterns in rule files go through
// the same function, so "deploy_keys" and "deployKey" in a pattern mean the
// same thing as in a name.
//
// Full-width forms are folded to ASCII first ("ＤＥＬＥＴＥ＿ＦＩＬＥ" is "delete file").
// Other look-alike letters (a Cyrillic "е" in "dеlete") are not folded.
//
// Concatenated lower-case words are not split: "deploykey" is one token.
func Normalize(name string) []string {
	var out []string
	var buf [64]byte
	t := tokenizer{s: name}
	for {
		tok := t.next(buf[:0])
		if tok == nil {
			return out
		}
		out = append(out, string(tok))
	}
}

// tokenizer yields the normalised tokens of s one at a time.
type tokenizer struct {
	s string
	i int
}

// foldWidth maps full-width ASCII forms (U+FF01..U+FF5E, e.g. "ＤＥＬＥＴＥ＿ＦＩＬＥ")
// to ASCII so that they cannot be used to dodge the rules.
func foldWidth(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		return r - 0xFEE0
	}
	return r
}

// decode returns the next rune of s, width-folded, and its size in s.
func decode(s string) (rune, int) {
	r, n := utf8.DecodeRuneInString(s)
	return foldWidth(r), n
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// lowerRun counts the lower-case letters at the start of s.
func lowerRun(s string) int {
	n := 0
	for len(s) > 0 {
		r, size := decode(s)
		if !unicode.IsLower(r) {
			break
		}
		n++
		s = s[size:]
	}
	return n
}

// next appends the next token to buf and returns it, or returns nil at the
// end of the name.
func (t *tokenizer) next(buf []byte) []byte {
	s := t.s
	for t.i < len(s) {
		r, n := decode(s[t.i:])
		if isWordRune(r) {
			break
		}
		t.i += n
	}
	if t.i >= len(s) {
		return nil
	}
	prev := rune(-1)
	for t.i < len(s) {
		r, n := decode(s[t.i:])
		if !isWordRune(r) {
			break
		}
		if prev >= 0 && unicode.IsUpper(r) {
			switch {
			case unicode.IsLower(prev):
				// fooBar
				return stem(buf)
			case unicode.IsDigit(prev) && lowerRun(s[t.i+n:]) >= 1:
				// r2Bucket, R2Bucket (but not 2FA)
				return stem(buf)
			case unicode.IsUpper(prev) && lowerRun(s[t.i+n:]) >= 2:
				// APIKey (but not IDs)
				return stem(buf)
			}
		}
		buf = utf8.AppendRune(buf, unicode.ToLower(r))
		prev = r
		t.i += n
	}
	return stem(buf)
}

func hasSuffix(b []byte, suf string) bool {
	if len(b) < len(suf) {
		return false
	}
	return string(b[len(b)-len(suf):]) == suf
}

// stem applies the plural rules documented on Normalize.
func stem(b []byte) []byte {
	n := len(b)
	switch {
	case n > 4 && hasSuffix(b, "ies"):
		return append(b[:n-3], 'y')
	case n > 4 && (hasSuffix(b, "sses") || hasSuffix(b, "ches") || hasSuffix(b, "shes") || hasSuffix(b, "xes")):
		return b[:n-2]
	case n > 3 && b[n-1] == 's' && !hasSuffix(b, "ss") && !hasSuffix(b, "us") && !hasSuffix(b, "is"):
		return b[:n-1]
	}
	return b
}
