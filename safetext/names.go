package safetext

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Tool names: the safe set, the escapers that show a name's code points,
// and the folds that say when two names look alike.
//
// The MCP specification (server/tools "Tool Names", 2025-11-25 and
// 2026-07-28) says a tool name SHOULD be 1 to 128 characters from
// A-Z a-z 0-9 _ - . (no spaces, case-sensitive, unique within a server).
// SEP-986 itself and the conformance suite also allow "/" with a 64
// character limit; mcpdrift follows the specification text, so "/" is
// outside the safe set.
//
// # Folds
//
// Three nested folds say when two different names can be taken for one
// another; each is coarser than the one before (equal under one implies
// equal under the next):
//
//   - NFCKey: Unicode normalization form C. "café" written with U+00E9 and
//     with "e" + U+0301 are different strings that print identically.
//   - CaseKey: canonical caseless matching (Unicode §3.13, D145):
//     NFD(toCasefold(NFD(s))), full case folding. "Delete_File" and
//     "delete_file".
//   - Fold: the confusable fold, which classification and the name check
//     match on. Every code point of the case key is folded on its own, and
//     the results are concatenated (so equal case keys fold alike). A code
//     point is folded in rounds, one round being
//
//     NFKD, drop default-ignorable code points and combining marks
//     (Mn, Me), map every code point to its UTS #39 prototype
//     (confusables.txt), NFKD of the full case fold, drop
//     default-ignorable code points and combining marks again,
//
//     until the string stops changing, so Fold(Fold(s)) == Fold(s). NFKD folds compatibility forms (fullwidth
//     "ＤＥＬＥＴＥ", mathematical "𝐝𝐞𝐥𝐞𝐭𝐞", the "ﬁ" ligature, superscripts)
//     to their base letters; the prototypes fold look-alikes from other
//     scripts (Cyrillic "е", Greek "ο") and ASCII look-alikes ("0" → "o",
//     "1" → "l", "m" → "rn": both sides of a comparison are folded, so
//     ASCII names still compare as they should); dropping the ignorables
//     removes zero-width and other invisible characters, tag characters and
//     variation selectors; dropping combining marks makes "dèlete" fold
//     like "delete" (a name that differs only by an accent is read as the
//     same word). The case folds come before and after the mapping because
//     prototypes can be capitals ("0" → "O").
//
// Fold is coarser than the UTS #39 skeleton in three ways (case, marks,
// compatibility forms) and, because it folds case before mapping, finer in
// one: an upper-case "I" folds to "i", while UTS #39 maps it to "l". The
// name check (package toolname) therefore groups names that share either a
// Fold or a Skeleton.
//
// Folded strings are keys for comparison, never text to show: a fold mixes
// scripts and is not itself a name.
//
// Invalid UTF-8 is read as U+FFFD by every fold.

// SafeNameMaxLen is the longest name the safe set allows, in characters.
const SafeNameMaxLen = 128

// SafeName reports whether name matches ^[A-Za-z0-9_.-]{1,128}$, the
// characters and length the MCP specification says a tool name should have.
func SafeName(name string) bool {
	if len(name) == 0 || len(name) > SafeNameMaxLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !safeNameByte(name[i]) {
			return false
		}
	}
	return true
}

func safeNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// EscapeName shows every code point of name that is outside the safe set
// [A-Za-z0-9_.-] as \uXXXX (\U00XXXXXX above U+FFFF), including "\" itself
// (\u005c), and each invalid UTF-8 byte as \xNN: "dеlete_file" with a
// Cyrillic е is "d\u0435lete_file". The result holds only characters of the
// safe set and "\"; two different names never escape alike. Use it where a
// finding must say exactly which code points a name has.
func EscapeName(name string) string {
	i := 0
	for i < len(name) && safeNameByte(name[i]) {
		i++
	}
	if i == len(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 16)
	b.WriteString(name[:i])
	for i < len(name) {
		c := name[i]
		if safeNameByte(c) {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteString(`\x`)
			b.WriteString(hex2(c))
			i++
			continue
		}
		writeRuneEscape(&b, r)
		i += size
	}
	return b.String()
}

// EscapeASCII is Escape with every non-ASCII code point escaped as well, so
// the result is printable ASCII: a look-alike letter from another script
// can never pass for the ASCII one ("dеlete_file" with a Cyrillic е is
// "d\u0435lete_file"), while ASCII punctuation stays readable. For ASCII
// input it equals Escape. Renderers show tool names through it (or
// QuoteASCII).
func EscapeASCII(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\' {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
			i++
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				b.WriteString(`\x`)
				b.WriteString(hex2(c))
				i++
				continue
			}
			writeRuneEscape(&b, r)
			i += size
		}
	}
	return b.String()
}

// QuoteASCII is EscapeASCII in double quotes, with any double quote inside
// escaped; for ASCII input it equals Quote.
func QuoteASCII(s string) string {
	e := EscapeASCII(s)
	if strings.IndexByte(e, '"') >= 0 {
		e = strings.ReplaceAll(e, `"`, `\"`)
	}
	return `"` + e + `"`
}

// MaxOutside bounds how many code points OutsideSafeSet reports.
const MaxOutside = 32

// OutsideSafeSet returns the distinct code points of name outside
// [A-Za-z0-9_.-], in order of first appearance, at most MaxOutside of them;
// an invalid UTF-8 byte is reported as utf8.RuneError.
func OutsideSafeSet(name string) []rune {
	var out []rune
	for i := 0; i < len(name) && len(out) < MaxOutside; {
		if safeNameByte(name[i]) {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		seen := false
		for _, x := range out {
			if x == r {
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, r)
		}
	}
	return out
}

// IsDefaultIgnorable reports whether r has the Unicode property
// Default_Ignorable_Code_Point: invisible in normal rendering (zero-width
// characters, joiners, bidirectional and other format controls, the soft
// hyphen, variation selectors, tag characters, Hangul fillers ...).
func IsDefaultIgnorable(r rune) bool {
	if r < 0xad {
		return false
	}
	return unicode.Is(defaultIgnorable, r)
}

// prototype returns the UTS #39 prototype of r.
func prototype(r rune) (string, bool) {
	lo, hi := 0, len(confusableSrc)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if confusableSrc[m] < int32(r) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(confusableSrc) || confusableSrc[lo] != int32(r) {
		return "", false
	}
	start := 0
	if lo > 0 {
		start = int(confusableEnd[lo-1])
	}
	return confusableProto[start:confusableEnd[lo]], true
}

// Skeleton is the UTS #39 skeleton of s (Unicode Technical Standard #39,
// section 4, as revised for Unicode 15.1): NFD, remove every
// Default_Ignorable_Code_Point, replace every code point by its prototype
// in confusables.txt, NFD again. Two strings with the same skeleton are
// confusable. It is case-sensitive, like the standard ("I" and "l" share a
// skeleton, "I" and "i" do not). The tables are Unicode ConfusablesVersion;
// normalization is golang.org/x/text's (norm.Version).
func Skeleton(s string) string {
	if isASCII(s) {
		return skeletonASCII(s)
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if IsDefaultIgnorable(r) {
			continue
		}
		if p, ok := prototype(r); ok {
			b.WriteString(p)
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFD.String(b.String())
}

// skeletonASCII is Skeleton for ASCII input: NFD leaves ASCII alone, no
// ASCII character is default-ignorable, and no ASCII prototype has a
// canonical decomposition (a test checks), so it is the prototypes
// concatenated.
func skeletonASCII(s string) string {
	t := asciiProtoTable()
	i := 0
	for i < len(s) && t[s[i]] == "" {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		if p := t[s[i]]; p != "" {
			b.WriteString(p)
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// asciiProtoTable[c] is the prototype of ASCII c, or "" when c has none.
var asciiProtoTable = sync.OnceValue(func() *[128]string {
	var t [128]string
	for c := range t {
		t[c], _ = prototype(rune(c))
	}
	return &t
})

// NFCKey is s in normalization form C (invalid UTF-8 read as U+FFFD).
func NFCKey(s string) string {
	return norm.NFC.String(strings.ToValidUTF8(s, "\uFFFD"))
}

// CaseKey is the canonical caseless key of s, NFD(toCasefold(NFD(s))): two
// strings are equal ignoring case (full case folding) exactly when their
// keys are equal.
func CaseKey(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if isASCII(s) {
		return asciiLower(s)
	}
	return norm.NFD.String(caseFold(norm.NFD.String(s)))
}

// casers pools full case folders: a cases.Caser keeps state, so one is
// never shared between goroutines, and making one per call is the
// largest cost of a fold.
var casers = sync.Pool{New: func() any { c := cases.Fold(); return &c }}

func caseFold(s string) string {
	c := casers.Get().(*cases.Caser)
	defer casers.Put(c)
	return c.String(s)
}

// maxFoldRounds bounds Fold's iteration. Every code point settles within
// it (a test checks all of them): most in one round, a few in two or three,
// and the Cherokee letters cycle between their two cases (full case folding
// maps Cherokee to upper case, confusables.txt maps some capitals to the
// small letters), which Fold resolves to the smaller string of the cycle.
const maxFoldRounds = 8

// Fold is the confusable fold of s (see the package documentation on
// folds): the key on which classification and the name check match.
func Fold(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if isASCII(s) {
		return foldASCII(s)
	}
	k := CaseKey(s)
	var b strings.Builder
	b.Grow(len(k))
	for _, r := range k {
		b.WriteString(foldRune(r))
	}
	return b.String()
}

// foldCache holds the folds of the non-ASCII code points met so far, at
// most maxFoldCache of them (a hostile input cannot grow it without bound).
var (
	foldCache    sync.Map // rune → string
	foldCacheLen atomic.Int64
)

const maxFoldCache = 1 << 16

// FoldRune is Fold(string(r)), from a cache: Fold of a string is the
// concatenation of the folds of the code points of its case key, so a
// caller that folds text rune by rune (the classifier's tokens) gets the
// fold of each rune cheaply.
func FoldRune(r rune) string {
	if r >= 0 && r < utf8.RuneSelf {
		return asciiFoldTable()[r]
	}
	if v, ok := runeFoldCache.Load(r); ok {
		return v.(string)
	}
	f := Fold(string(r))
	if runeFoldCacheLen.Add(1) <= maxFoldCache {
		runeFoldCache.Store(r, f)
	}
	return f
}

var (
	runeFoldCache    sync.Map // rune → Fold(string(rune))
	runeFoldCacheLen atomic.Int64
)

// foldRune is the fold of one code point of a case key.
func foldRune(r rune) string {
	if r < utf8.RuneSelf {
		return asciiFoldTable()[r]
	}
	if v, ok := foldCache.Load(r); ok {
		return v.(string)
	}
	f := foldSlow(caseOrbitMin(string(r)))
	if foldCacheLen.Add(1) <= maxFoldCache {
		foldCache.Store(r, f)
	}
	return f
}

// caseOrbitMin is the smallest string of s's orbit under CaseKey. Case
// folding is idempotent for nearly every code point (the orbit is s and
// its key, which fold alike), but not for Cherokee: x/text's full folding
// maps a capital to the small letter and that small letter back to the
// capital (CaseKey("Ꭲ") = "ꭲ", CaseKey("ꭲ") = "Ꭲ"). A case key's code
// points are folded one by one, so each must fold as every member of its
// orbit does, or Fold(CaseKey(s)) would differ from Fold(s).
func caseOrbitMin(s string) string {
	m, prev := s, s
	for range maxFoldRounds {
		x := CaseKey(prev)
		if x == s || x == prev {
			break
		}
		m, prev = min(m, x), x
	}
	return m
}

func foldSlow(s string) string {
	seen := [maxFoldRounds]string{foldRound(CaseKey(s))}
	for i := 1; i < maxFoldRounds; i++ {
		y := foldRound(seen[i-1])
		for j := i - 1; j >= 0; j-- {
			if seen[j] != y {
				continue
			}
			// A fixed point (j == i-1) or a cycle seen[j..i-1]: the
			// smallest member stands for it, whichever member the
			// iteration entered by.
			m := seen[j]
			for _, c := range seen[j:i] {
				m = min(m, c)
			}
			return m
		}
		seen[i] = y
	}
	return seen[maxFoldRounds-1]
}

func isMark(r rune) bool {
	return r >= 0x300 && (unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r))
}

// strip drops default-ignorable code points and combining marks, and maps
// each remaining code point to its prototype when mapProto is set.
func strip(x string, mapProto bool) string {
	var b strings.Builder
	b.Grow(len(x))
	for _, r := range x {
		if IsDefaultIgnorable(r) || isMark(r) {
			continue
		}
		if mapProto {
			if p, ok := prototype(r); ok {
				b.WriteString(p)
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func foldRound(x string) string {
	x = strip(norm.NFKD.String(x), true)
	x = norm.NFKD.String(caseFold(x))
	return strip(x, false)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// asciiFoldTable[c] is the fold of the ASCII code point c, computed by the
// general path; the case key of an ASCII string is its lower case, so an
// ASCII string folds to the concatenation.
var asciiFoldTable = sync.OnceValue(func() *[128]string {
	var t [128]string
	for c := 0; c < 128; c++ {
		t[c] = foldSlow(string(rune(c)))
	}
	return &t
})

func foldASCII(s string) string {
	t := asciiFoldTable()
	same := true
	for i := 0; i < len(s); i++ {
		if f := t[s[i]]; len(f) != 1 || f[0] != s[i] {
			same = false
			break
		}
	}
	if same {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		b.WriteString(t[s[i]])
	}
	return b.String()
}

// AppendFoldASCII appends Fold(s) to dst for an ASCII s without allocating
// beyond dst's growth, and reports false (appending nothing) when s is not
// ASCII. The classifier uses it on every token.
func AppendFoldASCII(dst []byte, s []byte) ([]byte, bool) {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return dst, false
		}
	}
	t := asciiFoldTable()
	for _, c := range s {
		dst = append(dst, t[c]...)
	}
	return dst, true
}

// QuoteNames quotes names as renderers show a list of them: each with
// QuoteASCII (every non-ASCII code point escaped), joined by ", ".
func QuoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = QuoteASCII(n)
	}
	return strings.Join(q, ", ")
}
