package schemadiff

import (
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
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
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
