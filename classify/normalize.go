package classify

import (
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/safetext"
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
// What a person cannot see does not split or change a word: default-ignorable
// code points (zero-width characters, joiners, format and bidirectional
// controls, the soft hyphen, variation selectors, tag characters), combining
// marks and the few letters whose confusable fold is empty are skipped, so
// "del\u200bete" is the one token "delete" (and "delete\u200bfile" the one
// token "deletefile"; the classifier, when that reading is not privileged,
// also reads the default-ignorable code points as separators). A character that is not a
// letter or digit but whose confusable fold is made of letters ("|" folds
// to "l") is read as a letter. Full-width forms are shown as ASCII
// ("ＤＥＬＥＴＥ＿ＦＩＬＥ" is "delete file").
//
// The tokens are shown as written (lower-cased): a Cyrillic "е" stays in
// "dеlete". Matching compares their confusable folds (safetext.Fold, then
// the stemmer), not the tokens themselves, so "dеlete", "𝐝𝐞𝐥𝐞𝐭𝐞", "dèlete"
// and "DELETE" all match the pattern word "delete".
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
		out = append(out, string(stem(tok)))
	}
}

// tokenizer yields the lower-cased, unstemmed tokens of s one at a time.
type tokenizer struct {
	s string
	i int
	// splitOnInvisible reads default-ignorable code points as separators
	// instead of skipping them (the classifier's second reading).
	splitOnInvisible bool
	// sawInvisible is set when a default-ignorable code point was skipped.
	sawInvisible bool
}

// kind is kindOf, with the tokenizer's reading of invisible runes.
func (t *tokenizer) kind(r rune) runeKind {
	k := kindOf(r)
	if k == kindSkip && r >= utf8.RuneSelf && safetext.IsDefaultIgnorable(r) {
		if t.splitOnInvisible {
			return kindSep
		}
		t.sawInvisible = true
	}
	return k
}

// foldWidth maps full-width ASCII forms (U+FF01..U+FF5E, e.g. "ＤＥＬＥＴＥ＿ＦＩＬＥ")
// to ASCII so that they read as what they show.
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

// isWordRune reports whether r can be part of a word in a pattern: a
// letter or a digit.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Rune kinds for the tokenizer.
type runeKind uint8

const (
	kindSep   runeKind = iota // separates words
	kindSkip                  // invisible: neither a letter nor a separator
	kindUpper                 // upper-case letter
	kindLower                 // lower-case letter
	kindDigit                 // digit
	kindOther                 // a letter without case, or a look-alike of letters
)

func (k runeKind) word() bool { return k >= kindUpper }

// asciiKinds holds the kind of every ASCII rune.
var asciiKinds = func() (t [utf8.RuneSelf]runeKind) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		t[c] = kindOfSlow(c)
	}
	return t
}()

func kindOf(r rune) runeKind {
	if r >= 0 && r < utf8.RuneSelf {
		return asciiKinds[r]
	}
	if k, ok := kindCache.Load(r); ok {
		return k.(runeKind)
	}
	k := kindOfSlow(r)
	if kindCacheLen.Add(1) <= maxKindCache {
		kindCache.Store(r, k)
	}
	return k
}

// kindCache holds the kinds of the non-ASCII runes met so far, at most
// maxKindCache of them.
var (
	kindCache    sync.Map // rune → runeKind
	kindCacheLen atomic.Int64
)

const maxKindCache = 1 << 16

// emptyFoldLetters are the letters and digits whose confusable fold is
// empty and that are not default-ignorable: the halfwidth katakana voiced
// sound marks, which decompose to combining marks. (A test checks every
// code point.) They are skipped like the invisible runes.
var emptyFoldLetters = [...]rune{0xFF9E, 0xFF9F}

func kindOfSlow(r rune) runeKind {
	switch {
	case r == utf8.RuneError:
		return kindSep
	case safetext.IsDefaultIgnorable(r), unicode.In(r, unicode.Mn, unicode.Me):
		return kindSkip
	case r == emptyFoldLetters[0] || r == emptyFoldLetters[1]:
		return kindSkip
	case unicode.IsUpper(r):
		return kindUpper
	case unicode.IsLower(r):
		return kindLower
	case unicode.IsDigit(r):
		return kindDigit
	case unicode.IsLetter(r):
		return kindOther
	}
	// Not a letter or digit: a word rune only if it is a look-alike of
	// letters or digits ("|" for "l", "℮" for "e", circled letters).
	f := safetext.Fold(string(r))
	for _, c := range f {
		if !isWordRune(c) {
			return kindSep
		}
	}
	if f == "" {
		return kindSep
	}
	return kindOther
}

// lowerRun counts the lower-case letters at the start of s, skipping
// invisible runes.
func lowerRun(s string) int {
	n := 0
	for len(s) > 0 {
		r, size := decode(s)
		s = s[size:]
		switch kindOf(r) {
		case kindSkip:
		case kindLower:
			n++
		default:
			return n
		}
	}
	return n
}

// next appends the next token to buf and returns it, or returns nil at the
// end of the name.
func (t *tokenizer) next(buf []byte) []byte {
	s := t.s
	for t.i < len(s) {
		r, n := decode(s[t.i:])
		if t.kind(r).word() {
			break
		}
		t.i += n
	}
	if t.i >= len(s) {
		return nil
	}
	prev := kindSep
	for t.i < len(s) {
		r, n := decode(s[t.i:])
		k := t.kind(r)
		if k == kindSkip {
			t.i += n
			continue
		}
		if !k.word() {
			break
		}
		if prev != kindSep && k == kindUpper {
			switch {
			case prev == kindLower:
				// fooBar
				return buf
			case prev == kindDigit && lowerRun(s[t.i+n:]) >= 1:
				// r2Bucket, R2Bucket (but not 2FA)
				return buf
			case prev == kindUpper && lowerRun(s[t.i+n:]) >= 2:
				// APIKey (but not IDs)
				return buf
			}
		}
		buf = utf8.AppendRune(buf, unicode.ToLower(r))
		prev = k
		t.i += n
	}
	return buf
}

// maxKeyInput bounds the token a key is computed for: no vocabulary word is
// anywhere near this long, so a longer token simply matches nothing (and a
// hostile name cannot make the fold expensive).
const maxKeyInput = 256

// appendKey appends the matching key of tok (the confusable folds of its
// runes, then the stemmer) to dst, and reports false when tok is too long
// to be a word. Folding rune by rune (safetext.FoldRune, cached) gives
// safetext.Fold of the token but for the order of combining marks, which
// the fold drops anyway; names and pattern words are keyed the same way.
func appendKey(dst, tok []byte) ([]byte, bool) {
	if len(tok) > maxKeyInput {
		return dst, false
	}
	start := len(dst)
	dst, ok := safetext.AppendFoldASCII(dst, tok)
	if !ok {
		for len(tok) > 0 {
			r, n := utf8.DecodeRune(tok)
			dst = append(dst, safetext.FoldRune(r)...)
			tok = tok[n:]
		}
	}
	return append(dst[:start], stem(dst[start:])...), true
}

// normalizeKeys returns the tokens of s as Normalize shows them and as
// the matcher compares them.
func normalizeKeys(s string) (display, keys []string) {
	var buf [64]byte
	t := tokenizer{s: s}
	for {
		tok := t.next(buf[:0])
		if tok == nil {
			return display, keys
		}
		k, _ := appendKey(nil, tok)
		keys = append(keys, string(k))
		display = append(display, string(stem(tok)))
	}
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
