package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// ANSI SGR sequences: the only escape sequences text output may contain,
// and only when Options.Color is set.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
)

// ansiCodes lists every sequence the text renderer can emit (tests strip
// these and then require that no ESC byte is left).
var ansiCodes = []string{ansiReset, ansiBold, ansiRed, ansiGreen, ansiYellow}

type textWriter struct {
	b     strings.Builder
	color bool
}

func (t *textWriter) paint(code, s string) string {
	if !t.color || code == "" {
		return s
	}
	return code + s + ansiReset
}

func (t *textWriter) line(format string, args ...any) {
	fmt.Fprintf(&t.b, format, args...)
	t.b.WriteByte('\n')
}

func verdictColor(verdict string) string {
	switch classOf(verdict) {
	case classClean:
		return ansiGreen
	case classFindings:
		return ansiRed
	}
	return ansiYellow
}

func severityColor(sev string) string {
	switch sev {
	case "high":
		return ansiRed
	case "medium":
		return ansiYellow
	}
	return ""
}

// e escapes untrusted text for the terminal.
func e(s string) string { return safetext.Escape(s) }

// msg shows a message mcpdrift composed (a finding's message, a note, a
// warning, why a server was not observed): its parts were escaped where
// it was made, so it is let through inert, never escaped again.
func msg(s string) string { return safetext.Inert(s) }

// digestText renders a digest shortened and escaped, or "none".
func digestText(d string) string {
	if d == "" {
		return "none"
	}
	return e(shortDigest(d))
}

func toolLabel(name string) string {
	if name == "" {
		return "(whole manifest)"
	}
	return safetext.QuoteASCII(name)
}

// renderText writes a terminal summary. Every string taken from the report
// is escaped with safetext, so the output holds no control character other
// than '\n' (and, with Options.Color, the SGR sequences in ansiCodes).
func renderText(w io.Writer, r *gate.Report, opt Options) error {
	t := &textWriter{color: opt.Color}

	t.line("mcpdrift gate: %s (%s)", t.paint(verdictColor(r.Verdict), statusWord(r.Verdict)), e(r.Verdict))
	t.line("  server:       %s", safetext.Quote(r.ServerID))
	t.line("  mode:         %s, profile %s", e(r.Mode), e(r.Profile))
	t.line("  completeness: tools/list %s, status %s", orNone(r.ToolsListComplete), orNone(r.ObservedStatus))
	t.line("  observed:     %s (%s)", digestText(deref(r.ObservedManifestDigest)), tools(r.ObservedToolCount))
	if r.DeclaredManifestDigest != "" || r.DeclaredToolCount > 0 {
		t.line("  declared:     %s (%s)", digestText(r.DeclaredManifestDigest), tools(r.DeclaredToolCount))
	}
	if r.PolicyManifestDigest != "" {
		t.line("  policy:       %s", digestText(r.PolicyManifestDigest))
	}

	if len(r.Findings) > 0 {
		t.line("")
		t.line("%s", t.paint(ansiBold, fmt.Sprintf("Findings (%d)", len(r.Findings))))
		for _, sev := range severityGroups(r.Findings) {
			label := strings.ToUpper(e(sev))
			if sev == "" {
				label = "NO SEVERITY"
			}
			t.line("  %s", t.paint(severityColor(sev), label))
			for _, f := range r.Findings {
				if f.Severity != sev {
					continue
				}
				head := toolLabel(f.Name) + "  " + e(f.ReasonCode)
				if f.Field != "" {
					head += "  field " + e(f.Field)
				}
				if f.Privileged {
					head += "  " + t.paint(ansiRed, "[privileged]")
				}
				if f.ActionClass != "" {
					head += "  action " + e(f.ActionClass)
				}
				t.line("    - %s", head)
				title := titleFor(f.ReasonCode)
				if len(f.Notes) > 0 {
					notes := make([]string, len(f.Notes))
					for i, n := range f.Notes {
						notes[i] = msg(n)
					}
					title += " (note: " + strings.Join(notes, ", ") + ")"
				}
				t.line("      %s", title)
				if f.Name == "" && (f.ObservedDigest != "" || f.DeclaredDigest != "") {
					t.line("      observed %s, expected %s", digestText(f.ObservedDigest), digestText(f.DeclaredDigest))
				}
			}
		}
	}

	if len(r.Suppressed) > 0 {
		t.line("")
		t.line("%s", t.paint(ansiBold, fmt.Sprintf("Suppressed: %d (accepted by the suppression file; not holding the run)", len(r.Suppressed))))
		for _, sf := range r.Suppressed {
			t.line("  - %s  %s  %s", toolLabel(sf.Name), e(sf.ReasonCode), strings.ToUpper(e(sf.Severity)))
			t.line("      %s", suppressionText(sf.Suppression))
		}
	}

	structuralText(t, r.StructuralChanges)

	codeSection := func(heading, color string, codes []string) {
		if len(codes) == 0 {
			return
		}
		t.line("")
		t.line("%s", t.paint(color, heading))
		for _, c := range codes {
			t.line("  - %s: %s", e(c), titleFor(c))
			for _, d := range detailsFor(r, c) {
				if d.Name != "" {
					t.line("      %s: %s", toolLabel(d.Name), msg(d.Message))
				} else {
					t.line("      %s", msg(d.Message))
				}
			}
		}
	}
	codeSection("Inconclusive", ansiYellow, r.Inconclusive)
	codeSection("Warnings", ansiYellow, r.Warnings)

	if codes := distinctCodes(r); len(codes) > 0 {
		t.line("")
		t.line("%s", t.paint(ansiBold, "What to do"))
		for _, c := range codes {
			remedy := "this code is not in mcpdrift's catalogue; check that the report comes from a matching mcpdrift version."
			if en, ok := entryFor(c); ok {
				remedy = en.Remedy
			}
			t.line("  - %s: %s", e(c), remedy)
		}
	}

	t.line("")
	t.line("Exit %d: %s.", r.ExitCode, exitMeaning(r.ExitCode))
	_, err := io.WriteString(w, t.b.String())
	return err
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return e(s)
}

// suppressionText says why and where a finding was suppressed.
func suppressionText(s manifest.Suppression) string {
	out := "reason: " + safetext.Quote(s.Reason) + " (" + e(s.Source)
	if s.Expires != "" {
		out += ", until " + e(s.Expires)
	}
	return out + ")"
}
