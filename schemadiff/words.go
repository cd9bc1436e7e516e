package schemadiff

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// WordDiff renders a compact word diff of two texts: the common prefix and
// suffix are shortened to a few words of context, and the changed middle is
// shown as [-removed-]{+added+}. Work is linear in the input; the result is
// at most about max bytes (long runs are elided with "…"). The texts are
// server-controlled: callers escape the result before printing it.
func WordDiff(old, new string, max int) string {
	if old == new {
		return ""
	}
	a, b := splitWords(old), splitWords(new)
	p, s := commonEnds(a, b)
	const ctx = 4
	var out strings.Builder
	if p > ctx {
		out.WriteString("… ")
		out.WriteString(strings.Join(a[p-ctx:p], " "))
	} else {
		out.WriteString(strings.Join(a[:p], " "))
	}
	budget := max / 2
	if del := a[p : len(a)-s]; len(del) > 0 {
		sep(&out)
		out.WriteString("[-")
		out.WriteString(safetext.Clip(strings.Join(del, " "), budget))
		out.WriteString("-]")
	}
	if ins := b[p : len(b)-s]; len(ins) > 0 {
		sep(&out)
		out.WriteString("{+")
		out.WriteString(safetext.Clip(strings.Join(ins, " "), budget))
		out.WriteString("+}")
	}
	if s > 0 {
		suffix := a[len(a)-s:]
		sep(&out)
		if s > ctx {
			out.WriteString(strings.Join(suffix[:ctx], " "))
			out.WriteString(" …")
		} else {
			out.WriteString(strings.Join(suffix, " "))
		}
	}
	return out.String()
}

func sep(b *strings.Builder) {
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
}

func splitWords(s string) []string {
	return strings.FieldsFunc(s, unicode.IsSpace)
}

// Word-diff run kinds (WordRun.Kind).
const (
	WordsSame     = "same"     // words both texts have, in this place
	WordsDeleted  = "deleted"  // words only the old text has
	WordsInserted = "inserted" // words only the new text has
	WordsElided   = "elided"   // unchanged words left out (Count of them)
)

// WordRun is one run of a word diff: words joined by single spaces (Text),
// or, for WordsElided, how many unchanged words were left out (Count).
// The text is server-controlled: renderers escape it.
type WordRun struct {
	Kind  string `json:"kind"`
	Text  string `json:"text,omitempty"`
	Count int    `json:"count,omitempty"`
}

// Words is the word diff of two texts (DiffWords). Two texts that are
// equal have no runs and no flag set.
type Words struct {
	Runs []WordRun `json:"runs,omitempty"`
	// WhitespaceOnly: the texts have the same words in the same order and
	// differ only in whitespace (spaces, tabs, line breaks). Runs is empty.
	WhitespaceOnly bool `json:"whitespace_only,omitempty"`
	// Approximate: the texts differ in more places than the work bound
	// allows an exact diff for (WordOptions.MaxEdits); the changed middle
	// (from the first changed word to the last) is one deletion and one
	// insertion, as WordDiff shows it.
	Approximate bool `json:"approximate,omitempty"`
}

// Changed reports whether the two texts differed.
func (w Words) Changed() bool { return w.WhitespaceOnly || len(w.Runs) > 0 }

// WordOptions bound DiffWords; zero values mean the defaults.
type WordOptions struct {
	// Context is how many unchanged words are kept on each side of a
	// change (default 6); longer unchanged stretches are elided.
	Context int
	// MaxRun bounds the bytes of one run's text (default 4096): longer runs
	// are clipped with "…" (safetext.Clip).
	MaxRun int
	// MaxEdits bounds the words inserted plus deleted that an exact diff
	// looks for (default 512), and so its work: O((n+m)·MaxEdits) for texts
	// of n and m words after their common prefix and suffix.
	MaxEdits int
}

// maxExactWords bounds the middle (after the common prefix and suffix) an
// exact diff is tried on; a longer one is approximate.
const maxExactWords = 1 << 16

// DiffWords is the word diff of two texts, the structured form of WordDiff
// (the same words: runs of non-space characters, unicode.IsSpace
// separating them; the same common prefix and suffix). Between the first
// and the last changed word it finds a shortest edit script (Myers' O(ND)
// algorithm), so two separate edits are two changes, not one replaced
// stretch; past WordOptions.MaxEdits it gives the stretch (Approximate).
// Deleted words come before the inserted words that replace them. Work and
// output are bounded by opt.
func DiffWords(old, new string, opt WordOptions) Words {
	if old == new {
		return Words{}
	}
	if opt.Context <= 0 {
		opt.Context = 6
	}
	if opt.MaxRun <= 0 {
		opt.MaxRun = 4096
	}
	if opt.MaxEdits <= 0 {
		opt.MaxEdits = 512
	}
	a, b := splitWords(old), splitWords(new)
	p, s := commonEnds(a, b)
	if p == len(a) && p == len(b) {
		return Words{WhitespaceOnly: true}
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	var w Words
	ops, ok := myersWords(am, bm, opt.MaxEdits)
	if !ok {
		w.Approximate = true
		ops = make([]byte, 0, len(am)+len(bm))
		for range am {
			ops = append(ops, '-')
		}
		for range bm {
			ops = append(ops, '+')
		}
	}
	// The whole script: prefix, middle, suffix.
	script := make([]byte, 0, p+len(ops)+s)
	for range p {
		script = append(script, '=')
	}
	script = append(script, ops...)
	for range s {
		script = append(script, '=')
	}
	w.Runs = wordRuns(a, b, script, opt)
	return w
}

// commonEnds returns the lengths of the common prefix and suffix of two
// word lists (the suffix never overlaps the prefix).
func commonEnds(a, b []string) (p, s int) {
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return p, s
}

// wordRuns groups an edit script ('=' both, '-' old only, '+' new only)
// into runs, elides unchanged stretches beyond the context and puts each
// deletion before the insertion beside it.
func wordRuns(a, b []string, script []byte, opt WordOptions) []WordRun {
	var runs []WordRun
	i, j := 0, 0
	for k := 0; k < len(script); {
		op := script[k]
		e := k
		for e < len(script) && (script[e] == op || op != '=' && script[e] != '=') {
			e++
		}
		if op == '=' {
			n := e - k
			words := a[i : i+n]
			first, last := k == 0, e == len(script)
			ctx := opt.Context
			switch {
			case first && last:
			case first && n > ctx:
				runs = append(runs, WordRun{Kind: WordsElided, Count: n - ctx}, WordRun{Kind: WordsSame, Text: safetext.Clip(strings.Join(words[n-ctx:], " "), opt.MaxRun)})
			case last && n > ctx:
				runs = append(runs, WordRun{Kind: WordsSame, Text: safetext.Clip(strings.Join(words[:ctx], " "), opt.MaxRun)}, WordRun{Kind: WordsElided, Count: n - ctx})
			case !first && !last && n > 2*ctx:
				runs = append(runs, WordRun{Kind: WordsSame, Text: safetext.Clip(strings.Join(words[:ctx], " "), opt.MaxRun)},
					WordRun{Kind: WordsElided, Count: n - 2*ctx},
					WordRun{Kind: WordsSame, Text: safetext.Clip(strings.Join(words[n-ctx:], " "), opt.MaxRun)})
			default:
				runs = append(runs, WordRun{Kind: WordsSame, Text: safetext.Clip(strings.Join(words, " "), opt.MaxRun)})
			}
			i, j = i+n, j+n
			k = e
			continue
		}
		// A stretch of deletions and insertions, in any order: the
		// deleted words, then the inserted ones.
		var del, ins []string
		for ; k < e; k++ {
			if script[k] == '-' {
				del = append(del, a[i])
				i++
			} else {
				ins = append(ins, b[j])
				j++
			}
		}
		if len(del) > 0 {
			runs = append(runs, WordRun{Kind: WordsDeleted, Text: safetext.Clip(strings.Join(del, " "), opt.MaxRun)})
		}
		if len(ins) > 0 {
			runs = append(runs, WordRun{Kind: WordsInserted, Text: safetext.Clip(strings.Join(ins, " "), opt.MaxRun)})
		}
	}
	return runs
}

// myersWords finds a shortest edit script from a to b with at most max
// insertions plus deletions ('=' keep, '-' delete, '+' insert); ok is false
// when there is none within max, or the lists are too long to try.
func myersWords(a, b []string, max int) (script []byte, ok bool) {
	n, m := len(a), len(b)
	if n+m > maxExactWords {
		return nil, false
	}
	if n == 0 || m == 0 {
		if n+m > max {
			return nil, false
		}
		script = make([]byte, 0, n+m)
		for range n {
			script = append(script, '-')
		}
		for range m {
			script = append(script, '+')
		}
		return script, true
	}
	// Words as small integers, so the inner loop compares ints.
	ids := make(map[string]int32, n+m)
	ai, bi := make([]int32, n), make([]int32, m)
	for x, w := range a {
		id, seen := ids[w]
		if !seen {
			id = int32(len(ids))
			ids[w] = id
		}
		ai[x] = id
	}
	for y, w := range b {
		id, seen := ids[w]
		if !seen {
			id = int32(len(ids))
			ids[w] = id
		}
		bi[y] = id
	}
	limit := min(max, n+m)
	off := limit + 1
	v := make([]int32, 2*limit+3)
	var trace [][]int32
	for d := 0; d <= limit; d++ {
		// V before this round, for the backtrack: only diagonals -d..d
		// are read, so only they are kept.
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int32
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - int32(k)
			for int(x) < n && int(y) < m && ai[x] == bi[y] {
				x++
				y++
			}
			v[off+k] = x
			if int(x) >= n && int(y) >= m {
				return myersBacktrack(trace, d, n, m), true
			}
		}
	}
	return nil, false
}

// myersBacktrack rebuilds the script from the V arrays kept before each
// round: trace[d] holds diagonals -d..d (index k+d) as they were after
// round d-1.
func myersBacktrack(trace [][]int32, dEnd, n, m int) []byte {
	script := make([]byte, 0, n+m)
	x, y := n, m
	for d := dEnd; d > 0; d-- {
		prev := trace[d]
		k := x - y
		var pk int
		if k == -d || k != d && prev[k-1+d] < prev[k+1+d] {
			pk = k + 1 // from the diagonal above: an insertion
		} else {
			pk = k - 1 // from the diagonal below: a deletion
		}
		px := int(prev[pk+d])
		py := px - pk
		// Where the edit landed; the snake after it runs to (x, y).
		mx := px
		if pk == k-1 {
			mx = px + 1
		}
		for x > mx {
			script = append(script, '=')
			x--
			y--
		}
		if pk == k+1 {
			script = append(script, '+')
		} else {
			script = append(script, '-')
		}
		x, y = px, py
	}
	for x > 0 {
		script = append(script, '=')
		x--
	}
	for i, j := 0, len(script)-1; i < j; i, j = i+1, j-1 {
		script[i], script[j] = script[j], script[i]
	}
	return script
}

// Inline is the word diff on one line, escaped: unchanged words quoted,
// [-deleted-] and {+inserted+} around quoted words (the markers outside
// the quotes, so server text can never forge one), …N words… for an
// elided stretch, and a note when the diff is approximate. paint, when
// set, wraps each marked run (its kind, WordsDeleted or WordsInserted,
// and the marked text): a terminal's colours.
func (w Words) Inline(paint func(kind, s string) string) string {
	if w.WhitespaceOnly {
		return "whitespace only (the same words; spaces or line breaks changed)"
	}
	if paint == nil {
		paint = func(_, s string) string { return s }
	}
	parts := make([]string, 0, len(w.Runs))
	for _, r := range w.Runs {
		switch r.Kind {
		case WordsSame:
			parts = append(parts, safetext.Quote(r.Text))
		case WordsDeleted:
			parts = append(parts, paint(WordsDeleted, "[-"+safetext.Quote(r.Text)+"-]"))
		case WordsInserted:
			parts = append(parts, paint(WordsInserted, "{+"+safetext.Quote(r.Text)+"+}"))
		case WordsElided:
			unit := "words"
			if r.Count == 1 {
				unit = "word"
			}
			parts = append(parts, "…"+strconv.Itoa(r.Count)+" "+unit+"…")
		}
	}
	line := strings.Join(parts, " ")
	if w.Approximate {
		line += " (changed in many places: shown as one replaced stretch)"
	}
	return line
}
