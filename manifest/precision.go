package manifest

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// MaxPrecisionWarnings bounds the warnings PrecisionWarnings returns for
// one tool list (a summary line says how many more there are).
const MaxPrecisionWarnings = 50

// ImpreciseNumber is a number in a tool's digested fields that RFC 8785
// misstates: its canonical form, which every digest hashes, denotes a
// different number than the server wrote (jcs.Value.Inexact). The digests
// of the specification stay as they are; this says what they cannot see:
// a change from one such number to another that canonicalizes alike
// (9007199254740993 → 9007199254740992) leaves every digest unchanged.
type ImpreciseNumber struct {
	Tool      string // the tool's name (server-controlled: escape it)
	Pointer   string // JSON pointer into the tool object, e.g. "/inputSchema/properties/id/maximum"
	Text      string // the number as written, clipped to 40 bytes (only JSON number characters)
	Canonical string // what RFC 8785 makes of it
	Integer   bool   // the text denotes an integer (9007199254740993, 9007199254740993.0, 9007199254740993e0)
}

// digestedMembers are the tool members a digest covers that can hold
// numbers (name and description are strings; a non-string there is
// refused or projected as is, and searched like the others).
var digestedMembers = []string{"description", "inputSchema", "input_schema", "outputSchema", "output_schema", "annotations"}

// ImpreciseNumbers finds, in the digested fields of each tool (description,
// input and output schema, annotations, under whichever spelling the
// projection read), every number whose canonical form denotes another
// value. It returns at most limit of them (all when limit is negative), by
// tool and then document order, and the total count. Linear time; it is
// not part of BuildObserved, so digests cost the same whether or not a
// caller asks.
func ImpreciseNumbers(tools []Tool, limit int) ([]ImpreciseNumber, int) {
	// Each tool is its own work, spread over the CPUs when there are
	// many; the ranges' findings are joined in tool order, so the first
	// limit are those a walk in order finds.
	type part struct {
		found []ImpreciseNumber
		total int
	}
	var (
		mu    sync.Mutex
		parts = map[int]part{}
	)
	par.Range(len(tools), func(lo, hi int) {
		found, total := impreciseNumbersOf(tools[lo:hi], limit)
		mu.Lock()
		parts[lo] = part{found, total}
		mu.Unlock()
	})
	los := slices.Sorted(maps.Keys(parts))
	var out []ImpreciseNumber
	total := 0
	for _, lo := range los {
		p := parts[lo]
		total += p.total
		if limit >= 0 {
			p.found = p.found[:min(len(p.found), max(limit-len(out), 0))]
		}
		out = append(out, p.found...)
	}
	return out, total
}

// impreciseNumbersOf is ImpreciseNumbers over tools, in order, on this
// goroutine.
func impreciseNumbersOf(tools []Tool, limit int) ([]ImpreciseNumber, int) {
	var out []ImpreciseNumber
	total := 0
	for i := range tools {
		rest := -1
		if limit >= 0 {
			rest = max(limit-len(out), 0)
		}
		found, n := impreciseNumbers(&tools[i], rest)
		out = append(out, found...)
		total += n
	}
	return out, total
}

// impreciseNumbers is ImpreciseNumbers of one tool.
func impreciseNumbers(t *Tool, limit int) ([]ImpreciseNumber, int) {
	var out []ImpreciseNumber
	total := 0
	// Most tools hold none, and the count was taken when the tool was
	// read: the tool is parsed again only for numbers to be returned.
	if t.inexact == 0 || limit == 0 {
		return out, t.inexact
	}
	v := t.Value()
	p := Project(v)
	for _, m := range digestedMembers {
		x, ok := v.Get(m)
		if !ok || !projected(p, m, x) {
			continue
		}
		rest := -1
		if limit >= 0 {
			rest = max(limit-len(out), 0)
		}
		found, n := jcs.InexactNumbers(x, rest)
		total += n
		for _, f := range found {
			out = append(out, ImpreciseNumber{Tool: t.Name, Pointer: jcs.PointerJoin("", m) + f.Pointer,
				Text: safetext.Clip(string(f.Value.Raw()), 40), Canonical: string(f.Value.Canonical()), Integer: f.Value.IsInteger()})
		}
	}
	return out, total
}

// inexactFacts are what a tool keeps of its numbers beyond float64
// precision, from one walk of the tool object v (projection p): how many
// are in its digested members, and the SHA-256 of all of them in document
// order, each as its pointer and its spelling (zero: none; Equivalent).
func inexactFacts(v jcs.Value, p Projection) (count int, sum [32]byte) {
	if !v.HasInexact() {
		return 0, sum
	}
	found, _ := jcs.InexactNumbers(v, -1)
	var b []byte
	for _, f := range found {
		b = jcs.AppendString(b, f.Pointer)
		b = append(append(b, ':'), f.Value.Raw()...)
		b = append(b, ',')
	}
	for _, m := range digestedMembers {
		if x, ok := v.Get(m); ok && projected(p, m, x) {
			at := jcs.PointerJoin("", m)
			for _, f := range found {
				if f.Pointer == at || strings.HasPrefix(f.Pointer, at+"/") {
					count++
				}
			}
		}
	}
	return count, sha256.Sum256(b)
}

func projected(p Projection, m string, v jcs.Value) bool {
	var x jcs.Value
	switch m {
	case "description":
		x = p.Description
	case "inputSchema", "input_schema":
		x = p.InputSchema
	case "outputSchema", "output_schema":
		x = p.OutputSchema
	case "annotations":
		x = p.Annotations
	}
	return x.Valid() && x.Offset() == v.Offset()
}

// Warning is the one-line warning for n, with every server-controlled part
// escaped. side, when not empty, names the list ("old", "new", "declared").
func (n ImpreciseNumber) Warning(side string) string {
	what := "the number"
	if n.Integer {
		what = "the integer"
	}
	where := "tool " + safetext.Quote(n.Tool)
	if side != "" {
		where = side + " " + where
	}
	return fmt.Sprintf("%s at %s: %s %s is beyond float64 precision and canonicalizes (RFC 8785) to %s; the digests cannot tell it from another number that rounds alike, so a change to it can go unseen",
		where, safetext.Quote(n.Pointer), what, safetext.Escape(n.Text), safetext.Escape(n.Canonical))
}

// PrecisionWarnings returns one warning line per ImpreciseNumber of tools
// (at most MaxPrecisionWarnings, then one line saying how many more), or
// nil. side is as for Warning.
func PrecisionWarnings(side string, tools []Tool) []string {
	found, total := ImpreciseNumbers(tools, MaxPrecisionWarnings)
	return PrecisionWarningsOf(side, found, total)
}

// PrecisionWarningsOf is PrecisionWarnings of numbers found already (the
// first of them, up to MaxPrecisionWarnings, and how many in all): a
// producer that reads a list page by page gathers them as it reads.
func PrecisionWarningsOf(side string, found []ImpreciseNumber, total int) []string {
	found = found[:min(len(found), MaxPrecisionWarnings)]
	if total == 0 {
		return nil
	}
	out := make([]string, 0, len(found)+1)
	for _, n := range found {
		out = append(out, n.Warning(side))
	}
	if total > len(found) {
		list := "the tool list"
		if side != "" {
			list = "the " + side + " tool list"
		}
		out = append(out, fmt.Sprintf("%s holds %d more numbers beyond float64 precision (%d in all)", list, total-len(found), total))
	}
	return out
}
