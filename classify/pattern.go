package classify

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Pattern syntax (see the package documentation for the full description):
//
//	word        one token equal to word (compared by their confusable folds)
//	{a,b,c}     one token equal to a, b or c
//	{,a,b}      an empty alternative makes the group optional: zero tokens, or one of a, b
//	?           exactly one token, any
//	*           zero or more tokens, any
//
// Elements are separated by "_", ".", "-", "/", ":" or spaces; "*", "?" and
// groups also end the word before them. Patterns are anchored: they must
// account for every token of the name.

const (
	maxPatternBytes    = 1024
	maxPatternElements = 48 // the matcher keeps its state in a uint64
)

type elemKind uint8

const (
	elemWord elemKind = iota // one token out of words
	elemOpt                  // zero tokens, or one token out of words
	elemAny                  // exactly one token
	elemStar                 // zero or more tokens
)

type patElem struct {
	kind  elemKind
	words []string // matching keys (see normalizeKeys), not display tokens
}

type pattern struct {
	src   string
	elems []patElem
}

func isPatternSeparator(r rune) bool {
	switch r {
	case '_', '.', '-', '/', ':', ' ', '\t':
		return true
	}
	return false
}

// parsePattern parses src. Errors are plain messages; the caller adds the
// file and line.
func parsePattern(src string) (pattern, error) {
	p := pattern{src: src}
	if strings.TrimSpace(src) == "" {
		return p, fmt.Errorf("empty pattern")
	}
	if len(src) > maxPatternBytes {
		return p, fmt.Errorf("pattern is longer than %d bytes", maxPatternBytes)
	}
	if !utf8.ValidString(src) {
		return p, fmt.Errorf("pattern %s is not valid UTF-8", safetext.Quote(src))
	}
	wordStart := -1
	flush := func(end int) {
		if wordStart < 0 {
			return
		}
		_, keys := normalizeKeys(src[wordStart:end])
		for _, k := range keys {
			p.elems = append(p.elems, patElem{kind: elemWord, words: []string{k}})
		}
		wordStart = -1
	}
	for i := 0; i < len(src); {
		r, size := decode(src[i:])
		switch {
		case isWordRune(r):
			if wordStart < 0 {
				wordStart = i
			}
		case isPatternSeparator(r):
			flush(i)
		case r == '*':
			flush(i)
			if n := len(p.elems); n == 0 || p.elems[n-1].kind != elemStar {
				p.elems = append(p.elems, patElem{kind: elemStar})
			}
		case r == '?':
			flush(i)
			p.elems = append(p.elems, patElem{kind: elemAny})
		case r == '{':
			flush(i)
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				return p, fmt.Errorf("pattern %s: unclosed '{'", safetext.Quote(src))
			}
			el, err := parseGroup(src, src[i+1:i+end])
			if err != nil {
				return p, err
			}
			p.elems = append(p.elems, el)
			size = end + 1
		case r == '}':
			return p, fmt.Errorf("pattern %s: unexpected '}'", safetext.Quote(src))
		case r == ',':
			return p, fmt.Errorf("pattern %s: ',' is only allowed inside {...}", safetext.Quote(src))
		default:
			return p, fmt.Errorf("pattern %s: invalid character %s (use words, *, ?, {a,b} and the separators _ . - / : space)", safetext.Quote(src), safetext.Quote(string(r)))
		}
		i += size
	}
	flush(len(src))

	hasWord := false
	for _, e := range p.elems {
		if e.kind == elemWord {
			hasWord = true
		}
	}
	if !hasWord {
		return p, fmt.Errorf("pattern %s must contain at least one required word", safetext.Quote(src))
	}
	if len(p.elems) > maxPatternElements {
		return p, fmt.Errorf("pattern %s has more than %d elements", safetext.Quote(src), maxPatternElements)
	}
	return p, nil
}

func parseGroup(src, inner string) (patElem, error) {
	if strings.ContainsAny(inner, "{*?") {
		return patElem{}, fmt.Errorf("pattern %s: groups may only contain words separated by ','", safetext.Quote(src))
	}
	el := patElem{kind: elemWord}
	seen := map[string]bool{}
	for _, alt := range strings.Split(inner, ",") {
		alt = strings.TrimSpace(alt)
		if alt == "" {
			el.kind = elemOpt
			continue
		}
		for _, r := range alt {
			if !isWordRune(r) {
				return patElem{}, fmt.Errorf("pattern %s: alternative %s must be a single word (letters and digits only)", safetext.Quote(src), safetext.Quote(alt))
			}
		}
		toks, keys := normalizeKeys(alt)
		if len(toks) != 1 {
			return patElem{}, fmt.Errorf("pattern %s: alternative %s is %d words after normalisation (%s); use one word per alternative or a separate pattern",
				safetext.Quote(src), safetext.Quote(alt), len(toks), strings.Join(toks, " "))
		}
		if !seen[keys[0]] {
			seen[keys[0]] = true
			el.words = append(el.words, keys[0])
		}
	}
	if len(el.words) == 0 {
		return patElem{}, fmt.Errorf("pattern %s: empty group {%s}", safetext.Quote(src), inner)
	}
	return el, nil
}

// bitset is a set of vocabulary ids.
type bitset []uint64

func (b bitset) has(id int32) bool {
	return id >= 0 && int(id>>6) < len(b) && b[id>>6]&(1<<(uint(id)&63)) != 0
}

// hasAny reports whether any of ids is in b.
func (b bitset) hasAny(ids []int32) bool {
	for _, id := range ids {
		if b.has(id) {
			return true
		}
	}
	return false
}

type celem struct {
	kind elemKind
	set  bitset
}

// cpattern is a pattern compiled against a classifier's vocabulary.
type cpattern struct {
	elems     []celem
	required  []int // indexes of elemWord elements, used as a cheap pre-filter
	selective int   // the required element with the fewest words, for the rule index
}

func compilePattern(p pattern, vocab map[string]int32, nwords int) cpattern {
	cp := cpattern{elems: make([]celem, len(p.elems))}
	for i, e := range p.elems {
		ce := celem{kind: e.kind}
		if e.kind == elemWord || e.kind == elemOpt {
			ce.set = make(bitset, nwords)
			for _, w := range e.words {
				id := vocab[w]
				ce.set[id>>6] |= 1 << (uint(id) & 63)
			}
		}
		if e.kind == elemWord {
			if len(cp.required) == 0 || len(e.words) < len(p.elems[cp.selective].words) {
				cp.selective = i
			}
			cp.required = append(cp.required, i)
		}
		cp.elems[i] = ce
	}
	return cp
}

// closure adds the states reachable without consuming a token.
func (p *cpattern) closure(s uint64) uint64 {
	for i, e := range p.elems {
		if s&(1<<uint(i)) != 0 && (e.kind == elemStar || e.kind == elemOpt) {
			s |= 1 << uint(i+1)
		}
	}
	return s
}

// match reports whether the token ids (−1 for words outside the vocabulary)
// match the whole pattern. The matcher simulates the pattern as an NFA, so
// it is linear in the number of tokens whatever the pattern.
func (p *cpattern) match(ids []int32) bool {
	for _, i := range p.required {
		if !p.elems[i].set.hasAny(ids) {
			return false
		}
	}
	m := len(p.elems)
	cur := p.closure(1)
	for _, id := range ids {
		var next uint64
		for i := 0; i < m; i++ {
			if cur&(1<<uint(i)) == 0 {
				continue
			}
			e := &p.elems[i]
			switch e.kind {
			case elemStar:
				next |= 1 << uint(i)
			case elemAny:
				next |= 1 << uint(i+1)
			default:
				if e.set.has(id) {
					next |= 1 << uint(i+1)
				}
			}
		}
		if next == 0 {
			return false
		}
		cur = p.closure(next)
	}
	return cur&(1<<uint(m)) != 0
}
