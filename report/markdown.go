package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// mdEscape makes untrusted text inert in GitHub-flavoured Markdown, in
// running text and in table cells alike. It first applies safetext.Escape
// (control, bidirectional and invisible characters become visible \uXXXX,
// and newlines become \u000a, so the text stays on one line), then:
//
//   - backslash-escapes the Markdown punctuation that starts emphasis,
//     strikethrough, code, links, images, headings and math
//     (\ ` * _ ~ [ ] # ! $), the dot (so "www.example.com" and
//     "a.b@c.d" are not autolinked) and the table cell separator |;
//   - writes the HTML metacharacters < > & and " as entities, so no tag
//     or entity of the input survives;
//   - writes @ as &#64; and : as &#58;, so the Markdown source holds no
//     mention and no scheme autolink ("https://...") is formed. GitHub
//     looks for mentions in the rendered text, where &#64; is "@" again:
//     identifiers therefore go through mdCode, which puts them inside a
//     code element, where GitHub makes no mentions or references.
//
// It never inserts invisible characters. The rendered text reads the same
// as safetext.Escape(s).
func mdEscape(s string) string { return mdInert(safetext.Escape(s)) }

// mdMsg is msg in Markdown: a composed message, inert, its Markdown
// escaped, and each of its quoted spans (the values safetext.Quote put in
// it: a server's names, its error message, a file's text) inside a code
// element, as mdCode puts identifiers, so that a server's "@org/team" or
// "#1" makes no mention and no reference where GitHub renders the
// report.
func mdMsg(s string) string {
	s = safetext.Inert(s)
	var b strings.Builder
	b.Grow(len(s) + 16)
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		j := safetext.QuoteEnd(s, i, '"')
		if j < 0 {
			break
		}
		b.WriteString(mdInert(s[:i]))
		b.WriteString("<code>")
		b.WriteString(mdInert(s[i : j+1]))
		b.WriteString("</code>")
		s = s[j+1:]
	}
	b.WriteString(mdInert(s))
	return b.String()
}

// mdInert applies mdEscape's Markdown escaping to text that safetext has
// already escaped.
func mdInert(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '~', '[', ']', '#', '!', '$', '.', '|':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '@':
			b.WriteString("&#64;")
		case ':':
			b.WriteString("&#58;")
		case '\n', '\r':
			// Unreachable after safetext.Escape; kept as a guard.
			b.WriteString(" ")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode renders untrusted identifiers (tool names, the server id,
// digests) as escaped text inside an HTML code element. GitHub applies
// neither mentions, issue and commit references nor emoji inside code.
// An empty string renders as an em dash.
func mdCode(s string) string {
	if s == "" {
		return "—"
	}
	return "<code>" + mdEscape(s) + "</code>"
}

// mdName is mdCode for a tool name: every non-ASCII code point is shown
// escaped too (safetext.EscapeASCII), so a look-alike letter of another
// script can never pass for the ASCII one.
func mdName(s string) string {
	if s == "" {
		return "—"
	}
	return "<code>" + mdInert(safetext.EscapeASCII(s)) + "</code>"
}

// renderMarkdown writes a compact pull-request comment.
func renderMarkdown(w io.Writer, r *gate.Report, _ Options) error {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}

	line("### mcpdrift gate: %s", statusWord(r.Verdict))
	line("")
	line("Verdict %s for server %s (mode %s, profile %s, tools/list %s). Exit %d: %s.",
		mdCode(r.Verdict), mdCode(r.ServerID), mdEscape(r.Mode), mdEscape(r.Profile),
		mdEscape(orDash(r.ToolsListComplete)), r.ExitCode, exitMeaning(r.ExitCode))

	if len(r.Findings) > 0 {
		line("")
		line("| severity | tool | code | field |")
		line("|---|---|---|---|")
		for _, f := range r.Findings {
			tool := mdName(f.Name)
			if f.Name == "" {
				tool = "(whole manifest)"
			}
			if f.Privileged {
				tool += " (privileged)"
			}
			line("| %s | %s | %s | %s |", mdEscape(orDash(f.Severity)), tool, mdCode(f.ReasonCode), mdEscape(orDash(f.Field)))
		}
	}

	if len(r.Suppressed) > 0 {
		line("")
		line("**Suppressed: %d** (accepted by the suppression file; not holding the run)", len(r.Suppressed))
		line("")
		line("| tool | code | reason | where |")
		line("|---|---|---|---|")
		for _, sf := range r.Suppressed {
			line("| %s | %s | %s | %s |", mdName(sf.Name), mdCode(sf.ReasonCode), mdEscape(sf.Suppression.Reason), mdEscape(sf.Suppression.Source))
		}
	}

	if len(r.StructuralChanges) > 0 {
		line("")
		line("**How the tools changed**")
		structuralMarkdown(&b, r.StructuralChanges)
	}

	bullets := func(heading string, codes []string) {
		if len(codes) == 0 {
			return
		}
		line("")
		line("**%s**", heading)
		line("")
		for _, c := range codes {
			ds := detailsFor(r, c)
			if len(ds) == 0 {
				line("- %s: %s", mdCode(c), mdEscape(titleFor(c)))
				continue
			}
			for _, d := range ds {
				msg := mdMsg(d.Message)
				if d.Name != "" {
					msg = mdName(d.Name) + ": " + msg
				}
				line("- %s: %s", mdCode(c), msg)
			}
		}
	}
	bullets("Inconclusive", r.Inconclusive)
	bullets("Warnings", r.Warnings)

	line("")
	line("<details><summary>Digests</summary>")
	line("")
	line("| | digest |")
	line("|---|---|")
	line("| observed (%s) | %s |", tools(r.ObservedToolCount), mdCode(deref(r.ObservedManifestDigest)))
	if r.DeclaredManifestDigest != "" || r.DeclaredToolCount > 0 {
		line("| declared (%s) | %s |", tools(r.DeclaredToolCount), mdCode(r.DeclaredManifestDigest))
	}
	if r.PolicyManifestDigest != "" {
		line("| policy | %s |", mdCode(r.PolicyManifestDigest))
	}
	line("")
	line("</details>")

	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
