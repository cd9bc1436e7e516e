package report

import (
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Clips of server text in the readable delta: a description or title, a
// reference.
const (
	deltaTextClip = 2000
	deltaRefClip  = 300
	// deltaNameClip bounds a tool or parameter name as a heading shows it
	// (a name is quoted whole in change records up to deltaTextClip).
	deltaNameClip = 300
)

// clipQuote quotes one server-controlled string of a sentence
// (schemadiff.Sentence's quote), clipped first so one value cannot flood
// the delta.
func clipQuote(s string) string { return safetext.Quote(safetext.Clip(s, deltaTextClip)) }

// clipEscape escapes server-controlled text, clipped first.
func clipEscape(s string) string { return safetext.Escape(safetext.Clip(s, deltaTextClip)) }

// RenderDelta writes the readable delta of each tool (delta.Build) for a
// terminal: one block per tool, its status, severity and the profile's
// decision first, then what it can now do, what it can no longer do, its
// other changes, what it returns, its description as a word diff and its
// hints. Every server-controlled string is escaped with safetext (a tool
// name as QuoteASCII, other text quoted with Quote, so each one's
// boundaries are visible and a word-diff marker can never come from the
// server); with Options.Color the severities and decisions are coloured.
//
// The signature is stable: mcpdrift review calls it once per tool it asks
// about (a slice of one), lock check once per server. tools come from
// delta.Build(old, new, changes, verdicts); blocks are separated by an
// empty line and every line ends in "\n".
func RenderDelta(w io.Writer, tools []delta.Tool, opt Options) error {
	t := &textWriter{color: opt.Color}
	for i, d := range tools {
		if i > 0 {
			t.line("")
		}
		deltaTool(t, d)
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

func decisionColor(d string) string {
	switch d {
	case schemadiff.Deny:
		return ansiRed
	case schemadiff.Review:
		return ansiYellow
	case schemadiff.Allow:
		return ansiGreen
	}
	return ""
}

// deltaHeading says a tool's status, severity and decision:
// `"get_repo": changed, severity HIGH, decision DENY (denied by ...)`.
func deltaHeading(t *textWriter, d delta.Tool) string {
	var b strings.Builder
	b.WriteString(safetext.QuoteASCII(safetext.Clip(d.Name, deltaNameClip)))
	b.WriteString(": ")
	b.WriteString(clipEscape(d.Status))
	if d.Severity != "" {
		b.WriteString(", severity ")
		b.WriteString(t.paint(severityColor(d.Severity), strings.ToUpper(clipEscape(d.Severity))))
	}
	b.WriteString(", decision ")
	if d.Decision == "" {
		b.WriteString("not given")
	} else {
		b.WriteString(t.paint(decisionColor(d.Decision), strings.ToUpper(clipEscape(d.Decision))))
	}
	switch {
	case len(d.DeniedBy) > 0:
		b.WriteString(" (denied by " + clipEscape(strings.Join(d.DeniedBy, ", ")) + ")")
	case d.Reason != "":
		b.WriteString(" (" + clipEscape(d.Reason) + ")")
	}
	return b.String()
}

func deltaTool(t *textWriter, d delta.Tool) {
	t.line("%s", deltaHeading(t, d))
	groups := []struct {
		title, mark string
		items       []delta.Item
	}{
		{"Signals", "!", d.Signals},
		{"Can now do", "+", d.Gained},
		{"Can no longer do", "-", d.Lost},
		{"Other changes", "~", d.Other},
		{"What it returns", "~", d.Output},
	}
	for _, g := range groups {
		if len(g.items) == 0 {
			continue
		}
		t.line("  %s:", g.title)
		for _, it := range g.items {
			deltaItem(t, g.mark, it)
		}
	}
	if len(d.Params) > 0 {
		t.line("  Parameters:")
		for _, p := range d.Params {
			req := "optional"
			if p.Required {
				req = "required"
			}
			t.line("    - %s (%s), %s", safetext.Quote(safetext.Clip(p.Name, deltaNameClip)), typeText(p.Type), req)
			declLines(t, "        ", &p.Decl, false)
		}
	}
	if d.Description != nil {
		label := "Description"
		switch d.Status {
		case schemadiff.StatusAdded:
			label = "Description (new tool)"
		case schemadiff.StatusRemoved:
			label = "Description (removed tool)"
		}
		textLines(t, "  ", label, d.Description, label != "Description")
	}
	for i := range d.Titles {
		label := "Title"
		if d.Titles[i].Change.Pointer == "/annotations/title" {
			label = "Title (annotations.title)"
		}
		textLines(t, "  ", label, &d.Titles[i], false)
	}
	if len(d.Hints) > 0 {
		t.line("  Hints:")
		for _, h := range d.Hints {
			t.line("    %s", hintLine(t, h))
		}
	}
}

// hintLine is "readOnlyHint: true → default (false)  weakened, HIGH".
func hintLine(t *textWriter, h delta.Hint) string {
	s := clipEscape(h.Key) + ": "
	if h.Old != "" || h.New != "" {
		s += clipEscape(h.Old) + " → " + clipEscape(h.New)
	} else {
		s += clipQuote(h.Change.Detail)
	}
	what := strings.TrimPrefix(h.Change.Kind, "annotation_hint_")
	if h.Change.Kind == schemadiff.KeywordUnmodeled {
		what = "not a boolean"
	}
	s += "  " + clipEscape(what) + ", " + t.paint(severityColor(h.Change.Severity), strings.ToUpper(clipEscape(h.Change.Severity)))
	if h.Meaningless {
		s += " (meaningless while readOnlyHint is true: a read-only tool modifies nothing)"
	}
	if h.Change.SeverityRaised != nil {
		s += " [" + h.Change.SeverityRaised.Sentence(clipQuote) + "]"
	}
	return s
}

// itemSentence is an item's sentence; a text whose word diff is shown on
// its own is not said twice.
func itemSentence(it delta.Item) string {
	c := it.Change
	if it.Words != nil && (c.Kind == schemadiff.DescriptionChanged || c.Kind == schemadiff.TitleChanged) {
		c.Detail = ""
	}
	return schemadiff.Sentence(c, clipQuote)
}

func deltaItem(t *textWriter, mark string, it delta.Item) {
	c := it.Change
	t.line("    %s %s %s", mark, t.paint(severityColor(c.Severity), strings.ToUpper(e(c.Severity))), itemSentence(it))
	// A parameter record's detail says the type already.
	declLines(t, "        ", it.Decl, c.Kind != schemadiff.ParamAddedOptional && c.Kind != schemadiff.ParamAddedRequired && c.Kind != schemadiff.ParamRemoved)
	if it.Ref != "" {
		t.line("        reference: %s (not fetched)", safetext.Quote(safetext.Clip(it.Ref, deltaRefClip)))
	}
	if it.Words != nil {
		wordLines(t, "        ", *it.Words)
	}
}

// typeText shows a declared type: plain when it is a JSON type (or a union
// of them), quoted when the schema spelled something else.
func typeText(s string) string {
	for _, p := range strings.Split(s, "|") {
		switch p {
		case "string", "object", "array", "number", "integer", "boolean", "null", "any", "nothing":
			continue
		}
		return clipQuote(s)
	}
	return s
}

func declLines(t *textWriter, indent string, d *schemadiff.Decl, withType bool) {
	if d == nil {
		return
	}
	if withType {
		t.line("%stype: %s", indent, typeText(d.Type))
	}
	if d.Title != "" {
		t.line("%stitle: %s", indent, safetext.Quote(safetext.Clip(d.Title, deltaTextClip)))
	}
	if d.Description != "" {
		t.line("%sdescription: %s", indent, safetext.Quote(safetext.Clip(d.Description, deltaTextClip)))
	} else {
		t.line("%sdescription: none", indent)
	}
}

// textLines shows a changed text: its word diff, or what the record says
// when the texts are not known. whole: the label already says the text is
// all new or all gone (a new or removed tool).
func textLines(t *textWriter, indent, label string, x *delta.Text, whole bool) {
	if !x.Known {
		t.line("%s%s changed: %s", indent, label, clipQuote(x.Change.Detail))
		return
	}
	w := x.Words
	switch {
	case w.WhitespaceOnly:
		t.line("%s%s: whitespace only (the same words; spaces or line breaks changed)", indent, label)
		return
	case len(w.Runs) == 1 && w.Runs[0].Kind == schemadiff.WordsInserted:
		if !whole {
			label += " added"
		}
		t.line("%s%s: %s", indent, label, safetext.Quote(w.Runs[0].Text))
		return
	case len(w.Runs) == 1 && w.Runs[0].Kind == schemadiff.WordsDeleted:
		if !whole {
			label += " removed"
		}
		t.line("%s%s: %s", indent, label, safetext.Quote(w.Runs[0].Text))
		return
	}
	t.line("%s%s (word diff):", indent, label)
	wordLines(t, indent+"  ", w)
}

// wordLines writes a word diff on one line (schemadiff.Words.Inline),
// the marked runs in colour.
func wordLines(t *textWriter, indent string, w schemadiff.Words) {
	t.line("%s%s", indent, w.Inline(func(kind, s string) string {
		if kind == schemadiff.WordsDeleted {
			return t.paint(ansiRed, s)
		}
		return t.paint(ansiGreen, s)
	}))
}
