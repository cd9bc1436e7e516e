package schemadiff

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// A phrase's regexp names a finite set of word sequences: literals under
// (?i), optional letters, alternatives, \b. Go's regexp runs it slowly,
// with no DFA, and a text dense with a phrase's anchor words (a server's
// description made of them) is searched whole at that speed. litTrie is
// the same language as a trie of case-folded runes and word-boundary
// assertions, tried at each rune boundary of the text: the regexp's
// answer (TestPhraseMatchAgrees, FuzzPhraseMatch) at the cost of
// a few steps per position. A regexp with anything else in it (a star, a
// large class, a literal without (?i)) gets none, and is run as a regexp.

// litTrie is a node of the trie.
type litTrie struct {
	end      bool
	boundary *litTrie          // after a \b assertion
	next     map[rune]*litTrie // after a rune, by its fold key
	// At the root of a language whose every sequence starts with \b then
	// a rune: the bytes such a rune can start with (ASCII in both cases;
	// a non-ASCII rune's first byte when its fold key is one).
	starts *[256]bool
}

// litMax bounds the sequences a phrase's language may expand to.
const litMax = 4096

// foldKey is the smallest rune of r's case-folding orbit: two runes (?i)
// takes for one another have the same key.
func foldKey(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A' // the orbit's smallest: K for k and U+212A, S for s and U+017F
		}
		return r
	}
	k := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		k = min(k, f)
	}
	return k
}

// item is one step of a sequence: a rune's fold key, or -1 for \b.
type item = rune

const itemBoundary item = -1

// compileLits builds the trie of re's language, or nil when it is not a
// finite set of (?i) literals and boundaries.
func compileLits(pattern string) *litTrie {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	seqs, ok := expand(re.Simplify())
	if !ok {
		return nil
	}
	root := &litTrie{}
	for _, s := range seqs {
		n := root
		for _, it := range s {
			if it == itemBoundary {
				if n.boundary == nil {
					n.boundary = &litTrie{}
				}
				n = n.boundary
				continue
			}
			if n.next == nil {
				n.next = map[rune]*litTrie{}
			}
			c := n.next[it]
			if c == nil {
				c = &litTrie{}
				n.next[it] = c
			}
			n = c
		}
		n.end = true
	}
	if !root.end && root.next == nil && root.boundary != nil && !root.boundary.end && root.boundary.boundary == nil {
		var st [256]bool
		for k := range root.boundary.next {
			if k == utf8.RuneError {
				// Every invalid byte reads as U+FFFD: no table of first
				// bytes says where one starts, so every rune is tried.
				return root
			}
			// Every rune whose fold key is k: k's orbit.
			r := k
			for {
				var b [utf8.UTFMax]byte
				utf8.EncodeRune(b[:], r)
				st[b[0]] = true
				if r = unicode.SimpleFold(r); r == k {
					break
				}
			}
		}
		root.starts = &st
	}
	return root
}

// expand is the language of re as sequences of items.
func expand(re *syntax.Regexp) ([][]item, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return [][]item{{}}, true
	case syntax.OpWordBoundary:
		return [][]item{{itemBoundary}}, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return nil, false
		}
		s := make([]item, len(re.Rune))
		for i, r := range re.Rune {
			s[i] = foldKey(r)
		}
		return [][]item{s}, true
	case syntax.OpCharClass:
		var out [][]item
		seen := map[rune]bool{}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 64 {
				return nil, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				// A class is the whole orbit of each rune it takes (the
				// parser writes [Kk\x{212A}] for (?i)k): the key stands for
				// all of it only when the class holds all of it.
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					if !inClass(re.Rune, f) {
						return nil, false
					}
				}
				if k := foldKey(r); !seen[k] {
					seen[k] = true
					out = append(out, []item{k})
				}
			}
		}
		return out, len(out) > 0
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpQuest:
		sub, ok := expand(re.Sub[0])
		if !ok {
			return nil, false
		}
		return append([][]item{{}}, sub...), true
	case syntax.OpAlternate:
		var out [][]item
		for _, s := range re.Sub {
			sub, ok := expand(s)
			if !ok || len(out)+len(sub) > litMax {
				return nil, false
			}
			out = append(out, sub...)
		}
		return out, true
	case syntax.OpConcat:
		out := [][]item{{}}
		for _, s := range re.Sub {
			sub, ok := expand(s)
			if !ok || len(out)*len(sub) > litMax {
				return nil, false
			}
			var next [][]item
			for _, a := range out {
				for _, b := range sub {
					next = append(next, append(append([]item(nil), a...), b...))
				}
			}
			out = next
		}
		return out, true
	}
	return nil, false
}

func inClass(ranges []rune, r rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= r && r <= ranges[i+1] {
			return true
		}
	}
	return false
}

// isWordRune is \b's notion of a word character in Go's regexp: ASCII
// letters, digits and '_' only.
func isWordRune(r rune) bool {
	return r < utf8.RuneSelf && syntax.IsWordChar(r)
}

// boundaryAt reports whether \b holds before byte i of text.
func boundaryAt(text string, i int) bool {
	if i > 0 && i < len(text) && text[i-1] < utf8.RuneSelf && text[i] < utf8.RuneSelf {
		return syntax.IsWordChar(rune(text[i-1])) != syntax.IsWordChar(rune(text[i]))
	}
	before, after := false, false
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:i])
		before = isWordRune(r)
	}
	if i < len(text) {
		r, _ := utf8.DecodeRuneInString(text[i:])
		after = isWordRune(r)
	}
	return before != after
}

// match reports whether the language occurs anywhere in text, as the
// regexp would find it (leftmost-first or not, a match is a match).
func (t *litTrie) match(text string) bool {
	if t.starts != nil {
		// Only where a first rune can start and \b holds before it.
		for i := 0; i < len(text); i++ {
			if t.starts[text[i]] && boundaryAt(text, i) && t.boundary.matchAt(text, i) {
				return true
			}
		}
		return false
	}
	for i := 0; i <= len(text); {
		if t.matchAt(text, i) {
			return true
		}
		if i == len(text) {
			break
		}
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, w := utf8.DecodeRuneInString(text[i:])
		i += w
	}
	return false
}

// matchAt reports whether a sequence of the language starts at byte i.
func (t *litTrie) matchAt(text string, i int) bool {
	if t.end {
		return true
	}
	if t.boundary != nil && boundaryAt(text, i) && t.boundary.matchAt(text, i) {
		return true
	}
	if t.next == nil || i >= len(text) {
		return false
	}
	r, w := rune(text[i]), 1
	if r >= utf8.RuneSelf {
		r, w = utf8.DecodeRuneInString(text[i:])
	}
	if c := t.next[foldKey(r)]; c != nil {
		return c.matchAt(text, i+w)
	}
	return false
}
