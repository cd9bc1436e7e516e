// Package report renders a gate.Report for people and machines: the
// versioned JSON report, a terminal summary, a Markdown pull-request
// comment, SARIF 2.1.0 for code-scanning dashboards and a self-contained
// HTML page (RenderHTML; one section per report, a card per tool with its
// readable delta); and the readable delta of each tool for a terminal
// (RenderDelta).
//
// Everything in a report that an artifact controls (tool names, the server
// id, digests, and, when a report is re-rendered from a file, every other
// string too) is untrusted. Every renderer passes such text through
// safetext before it reaches the output; the Markdown renderer escapes it
// once more with mdEscape, and the JSON renderer escapes invisible and
// bidirectional characters with indentJSON.
package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Schema is the id of the JSON report format (the versioned contract the
// json format writes, in the report's "schema" field).
const Schema = gate.ReportSchemaID

// Options tune the renderers.
type Options struct {
	// Color enables ANSI colour in text output. The CLI sets it only on a
	// terminal and when NO_COLOR is unset.
	Color bool
	// ToolVersion is the mcpdrift version, for SARIF tool.driver.version.
	ToolVersion string
	// ArtifactURI is the observed file's path, the SARIF result location.
	// Empty means "mcp-manifest".
	ArtifactURI string
	// Verbose shows every detail the text and markdown of a report of
	// many servers otherwise cap (lock check: the clean servers too, and
	// each server's every line).
	Verbose bool
}

type renderer func(w io.Writer, r *gate.Report, opt Options) error

var renderers = map[string]renderer{
	"json":     renderJSON,
	"text":     renderText,
	"sarif":    renderSARIF,
	"markdown": renderMarkdown,
	"html":     renderHTML,
}

// renderHTML is the gate's HTML report from the report alone (its
// structural changes and tool decisions, when it has them); the gate
// command builds the page itself to give it the readable deltas of the
// snapshots (GateSection).
func renderHTML(w io.Writer, r *gate.Report, opt Options) error {
	return RenderHTML(w, &Page{Title: "mcpdrift gate", ToolVersion: opt.ToolVersion, Sections: []Section{GateSection(r, nil)}})
}

// Formats lists the output formats Render accepts, sorted.
func Formats() []string {
	out := make([]string, 0, len(renderers))
	for f := range renderers {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Render writes r to w in format (one of Formats()).
func Render(w io.Writer, r *gate.Report, format string, opt Options) error {
	f, ok := renderers[format]
	if !ok {
		return fmt.Errorf("unknown report format %s (known: %s)", safetext.Quote(format), strings.Join(Formats(), ", "))
	}
	if r == nil {
		return fmt.Errorf("report: nil report")
	}
	return f(w, r, opt)
}

// verdictClass groups the verdicts for colour and status words.
type verdictClass int

const (
	classUnknown verdictClass = iota
	classClean
	classWarning
	classFindings
	classInconclusive
)

func classOf(verdict string) verdictClass {
	switch verdict {
	case gate.NoFinding:
		return classClean
	case gate.NoFindingCoverageWarning:
		return classWarning
	case gate.PendingReview:
		return classFindings
	case gate.NotObserved, gate.PartialObservation, gate.ObservationAmbiguous, gate.Inconclusive:
		return classInconclusive
	}
	return classUnknown
}

// statusWord is the short, emoji-free status of a verdict.
func statusWord(verdict string) string {
	switch classOf(verdict) {
	case classClean:
		return "PASS"
	case classWarning:
		return "PASS WITH WARNINGS"
	case classFindings:
		return "REVIEW REQUIRED"
	case classInconclusive:
		return "INCONCLUSIVE"
	}
	return "UNKNOWN VERDICT"
}

// exitMeaning explains an exit code of the gate.
func exitMeaning(code int) string {
	switch code {
	case gate.ExitOK:
		return "no finding"
	case gate.ExitFindings:
		return "findings need review"
	case gate.ExitBadInput:
		return "the inputs could not be evaluated"
	case gate.ExitInconclusive:
		return "inconclusive: the evidence cannot support a verdict"
	}
	return "unknown exit code"
}

// shortDigest shortens "sha256:<hex>" to "sha256:<12 hex>…". It cuts at a
// rune boundary and does not escape: callers escape the result.
func shortDigest(d string) string {
	const keep = 12
	prefix, rest := "", d
	if i := strings.IndexByte(d, ':'); i >= 0 && i < 16 {
		prefix, rest = d[:i+1], d[i+1:]
	}
	if utf8.RuneCountInString(rest) <= keep+1 {
		return d
	}
	n := 0
	for i := range rest {
		if n == keep {
			return prefix + rest[:i] + "…"
		}
		n++
	}
	return d
}

// tools says "1 tool" or "n tools".
func tools(n int) string {
	if n == 1 {
		return "1 tool"
	}
	return fmt.Sprintf("%d tools", n)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// entryFor looks code up in the catalogue. A report read back from a file
// may carry a code the catalogue does not know; it never panics.
func entryFor(code string) (catalog.Entry, bool) {
	return catalog.Lookup(code)
}

func titleFor(code string) string {
	if e, ok := entryFor(code); ok {
		return e.Title
	}
	return "Uncatalogued reason code"
}

// severityGroups is the order of severity groups: known severities by rank
// (high first), then unknown ones alphabetically.
func severityGroups(fs []gate.Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if !seen[f.Severity] {
			seen[f.Severity] = true
			out = append(out, f.Severity)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := catalog.Severity(out[i]).Rank(), catalog.Severity(out[j]).Rank()
		if ri != rj {
			return ri > rj
		}
		return out[i] < out[j]
	})
	return out
}

// distinctCodes lists every code in the report once: findings first (in
// report order), then inconclusive codes, then warnings, then codes only
// named in finding notes.
func distinctCodes(r *gate.Report) []string {
	seen := map[string]bool{}
	var out []string
	add := func(c string) {
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, f := range r.Findings {
		add(f.ReasonCode)
	}
	for _, c := range r.Inconclusive {
		add(c)
	}
	for _, c := range r.Warnings {
		add(c)
	}
	for _, f := range r.Findings {
		for _, n := range f.Notes {
			if _, ok := entryFor(n); ok {
				add(n)
			}
		}
	}
	return out
}

// detailsFor returns the details of code, in report order.
func detailsFor(r *gate.Report, code string) []gate.Detail {
	var out []gate.Detail
	for _, d := range r.Details {
		if d.Code == code {
			out = append(out, d)
		}
	}
	return out
}

// Escapers are the renderers' layers over text that safetext already
// escaped or quoted: Markdown's escaping (mdInert, which mdEscape, mdMsg
// and mdCode write), SARIF's brackets, and the HTML report's markup. The
// CLI gives them to its redact.Set, which looks for a secret in each of
// its quoted and escaped forms through each layer, JSON-encoded or not,
// so a secret is found in a report whatever renderer wrote it.
func Escapers() []func(string) string {
	return []func(string) string{mdInert, sarifBrackets, htmlLayer}
}
