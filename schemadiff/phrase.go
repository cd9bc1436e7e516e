package schemadiff

import (
	"regexp"
	"slices"
	"strings"
)

// A phrase is a pattern a description is searched for (capPhrases):
// a case-insensitive regexp of whole words, and its anchors, literals at
// least one of which every match of the regexp holds.
//
// Go's regexp has no DFA: over a long description its six capability
// patterns are slow together, and a server controls every byte of that
// description. A phrase searches a long text
// only in the windows around its anchors' occurrences, found by byte
// search, with its regexp's language as a trie (phraselit.go; a text
// dense with anchors is searched whole by it); what it reports is exactly
// what the regexp over the whole text reports (match):
//
//   - an anchor is lowercase ASCII without 'k' or 's', the only ASCII
//     letters that (?i) also matches with a non-ASCII rune (U+212A KELVIN
//     SIGN, U+017F LATIN SMALL LETTER LONG S), so an ASCII case-insensitive
//     search finds every occurrence the regexp could match;
//   - a match reaches at most phraseReach bytes around its anchor
//     (TestPhraseReach holds the patterns to it);
//   - a window starts after, and ends before, an ASCII byte that is not a
//     word byte (or at the text's ends): \b, ASCII in Go's regexp, then
//     says the same inside the window as inside the text, and no UTF-8
//     sequence is cut, so the window's matches are the text's.
type phrase struct {
	re      *regexp.Regexp
	anchors []string
	// lits is re's language as a trie (phraselit.go), which the search
	// runs instead of re; nil: re is run.
	lits *litTrie
}

// newPhrase is the phrase of pattern (a regexp) and its anchors.
func newPhrase(pattern string, anchors ...string) phrase {
	return phrase{re: regexp.MustCompile(pattern), anchors: anchors, lits: compileLits(pattern)}
}

// find reports whether p's language occurs in text.
func (p phrase) find(text string) bool {
	if p.lits != nil {
		return p.lits.match(text)
	}
	return p.re.MatchString(text)
}

// phraseReach bounds how far a phrase's match reaches beyond the anchor
// it holds, in bytes.
const phraseReach = 160

// phraseDense: a text with more anchor occurrences than one in this many
// bytes is searched whole (by its trie), not in windows.
const phraseDense = 256

// phraseWhole is the longest text searched whole, without windows.
const phraseWhole = 4 << 10

// match reports whether p.re matches text; low is text with its ASCII
// letters lowercased (lowerASCII), for the anchors' search in a long
// text (a short one is searched as it is). A text that
// holds none of the anchors is not searched at all: most descriptions
// name no capability, and the regexps backtrack (they were a large share
// of a changed tool's diff).
func (p phrase) match(text, low string) bool {
	if len(text) <= phraseWhole {
		return p.anyAnchor(text) && p.find(text)
	}
	// The occurrences of the anchors as [lo, hi) windows, in order. A text
	// dense with them (more than one in phraseDense bytes) is searched
	// whole: the windows would cover it, and cost their own memory.
	var wins [][2]int
	for _, a := range p.anchors {
		for i := 0; ; {
			j := strings.Index(low[i:], a)
			if j < 0 {
				break
			}
			at := i + j
			wins = append(wins, [2]int{max(0, at-phraseReach), min(len(text), at+len(a)+phraseReach)})
			i = at + 1
			if p.lits != nil && len(wins) > len(text)/phraseDense {
				return p.lits.match(text)
			}
		}
	}
	if len(wins) == 0 {
		return false
	}
	slices.SortFunc(wins, func(a, b [2]int) int { return a[0] - b[0] })
	// Merged and widened to clean edges; every scan moves forward, so each
	// byte is looked at a bounded number of times.
	widenRight := func(hi int) int {
		for hi < len(text) && !cleanEdge(text[hi]) {
			hi++
		}
		return hi
	}
	lo, hi := wins[0][0], widenRight(wins[0][1])
	for lo > 0 && !cleanEdge(text[lo-1]) {
		lo--
	}
	for _, w := range wins[1:] {
		if w[0] <= hi {
			if w[1] > hi {
				hi = widenRight(w[1])
			}
			continue
		}
		// text[hi] is a clean edge, between this window and the next.
		if p.find(text[lo:hi]) {
			return true
		}
		lo, hi = w[0], widenRight(w[1])
		for lo > 0 && !cleanEdge(text[lo-1]) {
			lo--
		}
	}
	return p.find(text[lo:hi])
}

// anyAnchor reports whether text holds one of p's anchors, its ASCII
// letters in either case (the anchors are lowercase ASCII letters).
func (p phrase) anyAnchor(text string) bool {
	for _, a := range p.anchors {
		for i := 0; i+len(a) <= len(text); i++ {
			j := 0
			for j < len(a) && text[i+j]|0x20 == a[j] {
				j++
			}
			if j == len(a) {
				return true
			}
		}
	}
	return false
}

// cleanEdge reports whether a window may end before, or start after, c:
// an ASCII byte that is not a word byte ([0-9A-Za-z_]).
func cleanEdge(c byte) bool {
	return c < 0x80 && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_')
}

// lowerASCII is s with its ASCII letters lowercased, byte for byte (the
// same length: other bytes are kept).
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
