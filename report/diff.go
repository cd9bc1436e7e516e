package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// DiffFormats lists the formats of RenderDiff.
func DiffFormats() []string { return []string{"json", "text", "markdown", "html"} }

// RenderDiff writes a diff report: json (the versioned contract
// schemadiff.ReportSchemaID), text (grouped by tool, most severe first,
// one readable sentence per change), markdown or html.
func RenderDiff(w io.Writer, r *schemadiff.Report, format string, opt Options) error {
	switch format {
	case "json":
		return writeJSON(w, r)
	case "html":
		// From the report alone; mcpdrift diff builds the page with the
		// readable deltas of the two lists (DiffSection).
		return RenderHTML(w, &Page{Title: "mcpdrift diff", ToolVersion: opt.ToolVersion, Sections: []Section{DiffSection(r, nil)}})
	case "text":
		t := &textWriter{color: opt.Color}
		color := ansiGreen
		switch r.Decision {
		case schemadiff.Deny:
			color = ansiRed
		case schemadiff.Review:
			color = ansiYellow
		}
		reason := ""
		if r.DecisionReason != "" {
			reason = ": " + msg(r.DecisionReason)
		}
		t.line("mcpdrift diff: %s%s (profile %s, %d change(s))", t.paint(color, strings.ToUpper(e(r.Decision))), reason, e(r.Profile), len(r.Changes))
		t.line("  old: %s", sideText(r.Old))
		t.line("  new: %s", sideText(r.New))
		if len(r.DeniedBy) > 0 {
			t.line("  denied by: %s", e(strings.Join(r.DeniedBy, ", ")))
		}
		structuralTextMarked(t, r.Changes, notationTools(r))
		surfaceText(t, r.Surface)
		if len(r.Unverified) > 0 {
			t.line("")
			t.line("Identity not compared (known on one side only): %s", e(strings.Join(r.Unverified, ", ")))
		}
		for _, w := range r.Warnings {
			t.line("")
			t.line("%s %s", t.paint(ansiYellow, "Warning:"), msg(w))
		}
		if len(r.Inconclusive) > 0 {
			t.line("")
			t.line("%s %s", t.paint(ansiYellow, "Inconclusive:"), e(strings.Join(r.Inconclusive, ", ")))
		}
		t.line("")
		switch r.ExitCode {
		case schemadiff.ExitNoChange:
			t.line("%s", exitNoChange(r))
		case schemadiff.ExitInconclusive:
			t.line("Exit 3: inconclusive: nothing changed among the tools seen, but the new list is partial, so the tools on its unseen pages cannot be judged.")
		default:
			t.line("Exit 1: changes need review%s.", map[bool]string{true: " and are denied by the profile", false: ""}[r.Decision == schemadiff.Deny])
		}
		_, err := io.WriteString(w, t.b.String())
		return err
	case "markdown":
		var b strings.Builder
		if r.DecisionReason != "" {
			fmt.Fprintf(&b, "### mcpdrift diff: %s (%s)\n\n", mdEscape(r.Decision), mdMsg(r.DecisionReason))
		} else {
			fmt.Fprintf(&b, "### mcpdrift diff: %s\n\n", mdEscape(r.Decision))
		}
		fmt.Fprintf(&b, "%d change(s), profile %s", len(r.Changes), mdEscape(r.Profile))
		if len(r.DeniedBy) > 0 {
			codes := make([]string, len(r.DeniedBy))
			for i, c := range r.DeniedBy {
				codes[i] = mdCode(c)
			}
			fmt.Fprintf(&b, "; denied by %s", strings.Join(codes, ", "))
		}
		b.WriteString(".\n")
		if len(r.Inconclusive) > 0 {
			codes := make([]string, len(r.Inconclusive))
			for i, c := range r.Inconclusive {
				codes[i] = mdCode(c)
			}
			fmt.Fprintf(&b, "\n**Inconclusive:** %s\n", strings.Join(codes, ", "))
		}
		structuralMarkdown(&b, r.Changes)
		surfaceMarkdown(&b, r.Surface)
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "\n> %s\n", mdMsg(w))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("unknown diff format %q (known: %s)", format, strings.Join(DiffFormats(), ", "))
}

func sideText(s schemadiff.Side) string {
	out := fmt.Sprintf("%s (%s, %s, tools/list %s)", safetext.Quote(s.Source), e(s.Form), tools(s.ToolCount), orNone(s.Completeness))
	if s.ManifestDigest != "" {
		out += " " + digestText(s.ManifestDigest)
	}
	return out
}

// exitNoChange is the closing line of a diff that exits 0.
func exitNoChange(r *schemadiff.Report) string {
	switch {
	case len(r.Changes) == 0:
		return "Exit 0: nothing changed."
	case r.DecisionReason == schemadiff.ReasonValidatesSame:
		return "Exit 0: every change validates the same (notation, a dialect no keyword of the schemas reads differently, annotations validation never reads, members outside the digest projection); nothing to review."
	case r.DecisionReason == schemadiff.ReasonInformationOnly:
		return "Exit 0: what changed is information under profile " + r.Profile + " (members outside the digest projection, or an identity change each tool's digest already judges); nothing to review."
	}
	return "Exit 0: only notation changed (the schemas are spelled differently and accept the same instances); nothing to review."
}

// notationTools names the tools of a diff report whose changes need no
// review, with the reason their decision gives ("notation only",
// "validates the same").
func notationTools(r *schemadiff.Report) map[string]string {
	m := map[string]string{}
	for _, v := range r.Tools {
		if v.Decision == schemadiff.Allow && v.Reason != "" {
			m[v.Name] = v.Reason
		}
	}
	return m
}

// structuralText renders change records grouped by tool, the tool with the
// most severe change first (the order schemadiff.Sort gives).
func structuralText(t *textWriter, cs []schemadiff.Change) { structuralTextMarked(t, cs, nil) }

// structuralTextMarked is structuralText with the tools whose changes need
// no review marked so, with their reason.
func structuralTextMarked(t *textWriter, cs []schemadiff.Change, notation map[string]string) {
	if len(cs) == 0 {
		return
	}
	t.line("")
	t.line("%s", t.paint(ansiBold, fmt.Sprintf("Structural changes (%d)", len(cs))))
	current := "\x00"
	for _, c := range cs {
		if c.Name != current {
			current = c.Name
			label := safetext.QuoteASCII(c.Name)
			if c.Name == "" {
				label = "(server)"
			}
			if why := notation[c.Name]; why != "" {
				label += " (" + e(why) + ": no review needed)"
			}
			t.line("  %s", label)
		}
		t.line("    - %s %s  %s", t.paint(severityColor(c.Severity), strings.ToUpper(e(c.Severity))), schemadiff.Sentence(c, safetext.Quote), "["+e(c.Kind)+"]")
	}
}

func structuralMarkdown(b *strings.Builder, cs []schemadiff.Change) {
	if len(cs) == 0 {
		return
	}
	b.WriteString("\n| severity | tool | change | kind |\n|---|---|---|---|\n")
	for _, c := range cs {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdEscape(c.Severity), mdName(c.Name), schemadiff.Sentence(c, mdCode), mdCode(c.Kind))
	}
}
