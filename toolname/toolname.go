// Package toolname checks the tool names of one list: names outside the
// safe set the MCP specification gives ([A-Za-z0-9_.-], 1 to 128
// characters), and groups of different names that a person or a client can
// take for one another, because they are equal after Unicode normalization
// (NFC), after case folding, or after the confusable fold (see
// safetext.Fold and safetext.Skeleton).
//
// It is the one place the gate, the live drift rules and the structural
// diff ask; each turns the issues into its own findings. Exact duplicates
// are not reported here: the specification already makes a list with a
// duplicate name ambiguous.
//
// Check is linear in the total length of the names: every name is folded
// once per key and grouped by hash, never compared pairwise.
package toolname

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Fold names the finest fold under which every name of a group is equal.
type Fold string

// Folds, from the finest to the coarsest.
const (
	// FoldNFC: equal after Unicode normalization form C; they print
	// identically.
	FoldNFC Fold = "nfc"
	// FoldCase: equal after full case folding (canonical caseless match).
	FoldCase Fold = "case_fold"
	// FoldConfusable: equal after the confusable fold or sharing a UTS #39
	// skeleton: look-alike letters, invisible characters, compatibility
	// forms, combining marks.
	FoldConfusable Fold = "confusable"
)

// Unsafe is a name outside the safe set.
type Unsafe struct {
	Name string
	// Index is the position of the name's first occurrence in the list.
	Index int
	// Escaped is safetext.EscapeName(Name), of the first MaxEscaped bytes
	// and marked with a trailing "..." when the name is longer.
	Escaped string
	// Outside lists the distinct code points outside [A-Za-z0-9_.-], in
	// order of appearance (utf8.RuneError for an invalid byte), at most
	// safetext.MaxOutside of them.
	Outside []rune
	// Length is the name's length in characters (code points); the safe
	// set allows 1 to safetext.SafeNameMaxLen.
	Length int
}

// Group is a set of different names that collide under Fold.
type Group struct {
	Fold Fold
	// Names are the group's distinct names in list order.
	Names []string
	// Indexes are the positions of their first occurrences.
	Indexes []int
}

// MaxEscaped bounds the part of a long name that Unsafe.Escaped shows.
const MaxEscaped = 512

// MaxFoldInput bounds the names that take part in grouping: a longer name is
// far outside the safe set already (and reported as unsafe), and folding it
// would let one hostile name cost the check more than the whole list.
const MaxFoldInput = 4096

// Result is what Check found.
type Result struct {
	Unsafe    []Unsafe // in list order
	Ambiguous []Group  // ordered by the position of each group's first name
}

// Empty reports whether the check found nothing.
func (r Result) Empty() bool { return len(r.Unsafe) == 0 && len(r.Ambiguous) == 0 }

// Check checks the names of one tool list.
func Check(names []string) Result {
	var res Result
	first := make(map[string]int, len(names)) // exact name → index of its first occurrence
	distinct := make([]int, 0, len(names))    // indexes of first occurrences, in order
	for i, n := range names {
		if _, dup := first[n]; dup {
			continue
		}
		first[n] = i
		distinct = append(distinct, i)
		if !safetext.SafeName(n) {
			res.Unsafe = append(res.Unsafe, Unsafe{Name: n, Index: i, Escaped: escaped(n),
				Outside: safetext.OutsideSafeSet(n), Length: utf8.RuneCountInString(n)})
		}
	}
	if len(distinct) < 2 {
		return res
	}

	// Union-find over the distinct names: two names are joined when they
	// share a Fold or a Skeleton. Each key is hashed once per name.
	parent := make([]int, len(distinct))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int) {
		ra, rb := find(a), find(b)
		if ra == rb {
			return
		}
		if ra > rb {
			ra, rb = rb, ra
		}
		parent[rb] = ra // the root is always the earliest name
	}
	byFold := make(map[string]int, len(distinct))
	bySkel := make(map[string]int, len(distinct))
	for k, i := range distinct {
		n := names[i]
		if len(n) > MaxFoldInput {
			continue
		}
		f := safetext.Fold(n)
		if j, ok := byFold[f]; ok {
			union(j, k)
		} else {
			byFold[f] = k
		}
		// The case-sensitive UTS #39 skeleton adds what the case-folding
		// Fold cannot see: an upper-case "I" standing for an "l".
		s := safetext.Skeleton(n)
		if j, ok := bySkel[s]; ok {
			union(j, k)
		} else {
			bySkel[s] = k
		}
	}
	// The groups of more than one name, in the order of their roots (each
	// root its group's earliest name), each group's names in their order:
	// a list of distinct names, the usual case, allocates no group.
	size := make([]int32, len(distinct))
	for k := range distinct {
		size[find(k)]++
	}
	group := map[int]int{} // a root → its group in res.Ambiguous
	for k := range distinct {
		r := find(k)
		if size[r] < 2 {
			continue
		}
		gi, ok := group[r]
		if !ok { // k == r: a root comes before its group's other names
			gi = len(res.Ambiguous)
			group[r] = gi
			res.Ambiguous = append(res.Ambiguous, Group{Names: make([]string, 0, size[r]), Indexes: make([]int, 0, size[r])})
		}
		g := &res.Ambiguous[gi]
		g.Names = append(g.Names, names[distinct[k]])
		g.Indexes = append(g.Indexes, distinct[k])
	}
	for i := range res.Ambiguous {
		res.Ambiguous[i].Fold = finest(res.Ambiguous[i].Names)
	}
	return res
}

// finest returns the finest fold under which all names are equal.
func finest(names []string) Fold {
	nfc := safetext.NFCKey(names[0])
	same := true
	for _, n := range names[1:] {
		if safetext.NFCKey(n) != nfc {
			same = false
			break
		}
	}
	if same {
		return FoldNFC
	}
	c := safetext.CaseKey(names[0])
	for _, n := range names[1:] {
		if safetext.CaseKey(n) != c {
			return FoldConfusable
		}
	}
	return FoldCase
}

func escaped(n string) string {
	if len(n) <= MaxEscaped {
		return safetext.EscapeName(n)
	}
	cut := MaxEscaped
	for cut > 0 && !utf8.RuneStart(n[cut]) {
		cut--
	}
	return safetext.EscapeName(n[:cut]) + "..."
}

// Describe says, without quoting the name, why it is outside the safe set:
// its length when that is wrong, and its code points outside
// [A-Za-z0-9_.-] as U+XXXX (which every renderer prints as it is).
func (u Unsafe) Describe() string {
	var parts []string
	switch {
	case u.Length == 0:
		parts = append(parts, "the name is empty")
	case u.Length > safetext.SafeNameMaxLen:
		parts = append(parts, fmt.Sprintf("the name is %d characters long (the safe set allows 1 to %d)", u.Length, safetext.SafeNameMaxLen))
	}
	if len(u.Outside) > 0 {
		cps := make([]string, len(u.Outside))
		for i, r := range u.Outside {
			if r == utf8.RuneError {
				cps[i] = "an invalid UTF-8 byte"
			} else {
				cps[i] = fmt.Sprintf("U+%04X", r)
			}
		}
		s := fmt.Sprintf("%d code point(s) outside [A-Za-z0-9_.-]: %s", len(u.Outside), strings.Join(cps, ", "))
		if len(u.Outside) == safetext.MaxOutside {
			s = fmt.Sprintf("at least %d code points outside [A-Za-z0-9_.-], the first: %s", len(u.Outside), strings.Join(cps, ", "))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// Describe says, without quoting any name, how the group collides.
func (g Group) Describe() string {
	how := map[Fold]string{
		FoldNFC:        "Unicode normalization (NFC): they print identically",
		FoldCase:       "case folding",
		FoldConfusable: "the confusable fold (look-alike letters, invisible characters, compatibility forms, combining marks, case)",
	}[g.Fold]
	return fmt.Sprintf("one of %d different names of the list that are equal after %s", len(g.Names), how)
}
