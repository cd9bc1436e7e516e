package schemadiff

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode/utf8"
)

// allPhrases are the phrases capability detection searches for.
func allPhrases() []phrase {
	var out []phrase
	for _, d := range capPhrases().all {
		out = append(out, d.p)
	}
	return out
}

// maxRunes is the most runes a match of re can have (-1: unbounded).
func maxRunes(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return 0
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpQuest:
		return maxRunes(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			m := maxRunes(s)
			if m < 0 {
				return -1
			}
			n += m
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			m := maxRunes(s)
			if m < 0 {
				return -1
			}
			n = max(n, m)
		}
		return n
	case syntax.OpRepeat:
		if re.Max < 0 {
			return -1
		}
		m := maxRunes(re.Sub[0])
		if m < 0 {
			return -1
		}
		return m * re.Max
	}
	return -1 // star, plus, anything else: unbounded
}

// TestPhraseReach: a match of every phrase is bounded, and reaches at most
// phraseReach bytes beyond the anchor it holds (a rune is at most
// utf8.UTFMax bytes); every anchor is lowercase ASCII without 'k' or 's',
// the letters (?i) also matches with a non-ASCII rune.
func TestPhraseReach(t *testing.T) {
	for _, p := range allPhrases() {
		re, err := syntax.Parse(p.re.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		n := maxRunes(re.Simplify())
		if n < 0 || n*utf8.UTFMax > phraseReach {
			t.Errorf("%s: a match has up to %d runes; phraseReach %d bytes does not cover it", p.re, n, phraseReach)
		}
		if len(p.anchors) == 0 {
			t.Errorf("%s: no anchor", p.re)
		}
		for _, a := range p.anchors {
			for _, c := range []byte(a) {
				if c < 'a' || c > 'z' || c == 'k' || c == 's' {
					t.Errorf("%s: anchor %q: lowercase ASCII letters other than k and s only", p.re, a)
				}
			}
		}
	}
}

// phraseText builds a text longer than phraseWhole from words of the
// phrases, near-misses, the non-ASCII runes (?i) folds to k and s, and
// separators, so that matches and near-matches fall anywhere, also next
// to window edges.
func phraseText(r *rand.Rand, n int) string {
	words := []string{"shell", "bash", "terminal", "kubectl", "cli", "system", "command", "commands", "line", "to", "run", "execute",
		"javascript", "typescript", "python", "node.js", "nodejs", "js", "ruby", "lua", "php", "code", "function", "snippet", "expression",
		"source", "evaluate", "eval", "evals", "runs", "arbitrary", "the", "this", "script", "scripts", "powershell", "sql", "cypher",
		"environment", "variable", "variables", "env", "var", "vars", "http", "header", "headers", "request", "command-line",
		"\u017fql", "\u212aubectl", "\u017fhell", "ja\u017fcript", "x", "_", "9", "é", "COMMAND", "Sql", "HeAdErS"}
	seps := []string{" ", " ", " ", "  ", "-", ".", "_", "\n", ",", "", "é", "\u017f", "\u212a", "\xff"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteString(seps[r.IntN(len(seps))])
	}
	return b.String()
}

// TestPhraseMatchAgrees: on long texts, a phrase's windowed search says
// what its regexp over the whole text says (on short ones, its search
// behind the anchors' check), for texts with and without
// matches, and with matches only at the very start or end.
func TestPhraseMatchAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	filler := strings.Repeat("The number of results to return, at most one hundred. ", 200)
	check := func(text string) {
		t.Helper()
		low := lowerASCII(text)
		for _, p := range allPhrases() {
			if got, want := p.match(text, low), p.re.MatchString(text); got != want {
				t.Fatalf("%s over %d bytes: %v, the regexp says %v\n%q", p.re, len(text), got, want, text[:min(len(text), 300)])
			}
		}
	}
	for range 120 {
		check(phraseText(r, phraseWhole+1+r.IntN(phraseWhole)))
	}
	// Short texts are searched whole, once an anchor is in them.
	for range 3000 {
		check(phraseText(r, r.IntN(200)))
	}
	for _, hit := range []string{"shell command", "sql", "xſql", "http headers", "env vars", "eval code", "command-line", "ruby source"} {
		check(hit + " " + filler)
		check(filler + hit)
		check(filler + hit + filler)
		check(filler[:len(filler)-1] + "x" + hit + "y" + filler)
		check(strings.Repeat("a", 3*phraseWhole) + " " + hit)
		check(strings.Repeat("a", 3*phraseWhole) + hit + strings.Repeat("b", 100))
	}
	check(filler)
	check(strings.Repeat("command", 2000))
	check(strings.Repeat("commandé", 2000))
}

// FuzzPhraseMatch: whatever the text (made longer than phraseWhole), the
// windowed search agrees with the regexp over the whole text.
func FuzzPhraseMatch(f *testing.F) {
	for _, s := range []string{"shell command", "xſql", "http \u212aeaders", "run the javascript", "a_sql", "sql_", "é sql é"} {
		f.Add(s, uint16(3))
	}
	f.Fuzz(func(t *testing.T, s string, pad uint16) {
		fill := strings.Repeat("word ", int(pad/4%200))
		text := [...]string{s + fill + strings.Repeat(" ", phraseWhole), fill + strings.Repeat(".", phraseWhole) + s, strings.Repeat(s+" ", phraseWhole/max(1, len(s))+1), s}[pad%4]
		low := lowerASCII(text)
		for _, p := range allPhrases() {
			if got, want := p.match(text, low), p.re.MatchString(text); got != want {
				t.Fatalf("%s: %v, the regexp says %v, over %q", p.re, got, want, text[:min(len(text), 200)])
			}
		}
	})
}

// BenchmarkCapabilityPhrases: every capability phrase over a 1 MB prose
// description (a server sends it, and the gateway decides each listing),
// the windowed search beside its baseline, the regexps over the whole
// text; and over 1 MB that is all anchors (the worst case: every window
// searched, merged); and over a short description, without an anchor and
// with one (searched whole behind the anchors' check).
func BenchmarkCapabilityPhrases(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"prose", strings.Repeat("The number of results to return for the search query, at most one hundred. ", 14000)},
		{"anchors", strings.Repeat("command code script sql env header ", 30000)},
		// A parameter's description as most are: no capability named.
		{"short", "The maximum number of results to return, between 1 and 100. Defaults to 20."},
		{"short-anchor", "The SQL query to run against the read-only replica."},
	} {
		low := lowerASCII(c.text)
		b.Run(c.name+"/windows", func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				for _, p := range allPhrases() {
					p.match(c.text, low)
				}
			}
		})
		b.Run(c.name+"/baseline=regexp-whole", func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				for _, p := range allPhrases() {
					p.re.MatchString(c.text)
				}
			}
		})
	}
}

// TestPhrasesCompiled: every capability phrase is searched as a trie, not
// as its regexp (a phrase that falls back is searched at the regexps'
// speed, which a text of its anchor words makes the whole text's).
func TestPhrasesCompiled(t *testing.T) {
	for _, p := range allPhrases() {
		if p.lits == nil {
			t.Errorf("%s: not compiled to a trie", p.re)
		}
	}
	// Patterns that compile say what their regexp says (U+FFFD first: an
	// invalid byte reads as it; the review's case).
	for _, c := range []struct{ pattern, text string }{
		{`(?i)\b\x{FFFD}`, "a\xff"}, {`(?i)\b\x{FFFD}`, "a\xe2\x84"}, {`(?i)\b(K|\x{FFFD})`, "sk 1\x80."},
		{`(?i)\bk`, "x \u212a"}, {`(?i)\bsql\b`, "x\u017fql"}, {`(?i)\bab\b`, "AB"}, {`(?i)\bab\b`, "xab"},
	} {
		l := compileLits(c.pattern)
		if l == nil {
			t.Errorf("%s: not compiled", c.pattern)
			continue
		}
		if got, want := l.match(c.text), regexp.MustCompile(c.pattern).MatchString(c.text); got != want {
			t.Errorf("%s on %q: %v, the regexp says %v", c.pattern, c.text, got, want)
		}
	}
	for _, s := range []string{`(?i)a*b`, `abc`, `(?i)[a-z]+`, `(?i)\w+`, `(?i)x.y`, `[a-c]`} {
		if compileLits(s) != nil {
			t.Errorf("%s compiled: it is not a finite set of (?i) literals", s)
		}
	}
}
