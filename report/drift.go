package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// DriftFormats lists the formats of RenderDrift.
func DriftFormats() []string { return []string{"json", "text", "sarif", "markdown", "html"} }

// RenderDrift writes a live drift report.
func RenderDrift(w io.Writer, r *probe.Report, format string, opt Options) error {
	if r.Findings == nil {
		r.Findings = []probe.Finding{}
	}
	if r.Notes == nil {
		r.Notes = []string{}
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	if r.Suppressed == nil {
		r.Suppressed = []probe.SuppressedFinding{}
	}
	switch format {
	case "json":
		return writeJSON(w, r)
	case "text":
		return driftText(w, r, opt)
	case "markdown":
		return driftMarkdown(w, r)
	case "sarif":
		return driftSARIF(w, r, opt)
	case "html":
		// From the report alone; mcpdrift drift builds the page with the
		// readable deltas of the declared and served lists (DriftSection).
		return RenderHTML(w, &Page{Title: "mcpdrift drift", ToolVersion: opt.ToolVersion, Sections: []Section{DriftSection(r, nil)}})
	}
	return fmt.Errorf("unknown drift format %q (known: %s)", format, strings.Join(DriftFormats(), ", "))
}

func targetText(t probe.Target) string {
	if t.URL != "" {
		return t.URL
	}
	return "stdio: " + strings.Join(t.Command, " ")
}

func levelColor(level string) string {
	switch level {
	case probe.LevelError:
		return ansiRed
	case probe.LevelWarn:
		return ansiYellow
	}
	return ""
}

func driftText(w io.Writer, r *probe.Report, opt Options) error {
	t := &textWriter{color: opt.Color}
	status := "NO FINDING"
	color := ansiGreen
	switch r.ExitCode {
	case probe.ExitFindings:
		status, color = "FINDINGS", ansiRed
	case probe.ExitUnreachable:
		status, color = "INCONCLUSIVE", ansiYellow
	}
	t.line("mcpdrift drift: %s", t.paint(color, status))
	t.line("  target:    %s (classified %s)", safetext.Quote(targetText(r.Target)), e(r.Target.Class))
	rev := r.Protocol.Revision
	if rev == "" {
		rev = "unknown"
	}
	if r.Protocol.Reason != "" {
		rev += " (" + r.Protocol.Reason + ")"
	}
	over := ""
	switch r.Protocol.Transport {
	case "sse":
		over = " over HTTP+SSE (deprecated)"
	case "streamable-http":
		over = " over Streamable HTTP"
	}
	if r.Protocol.LegacyVersion != "" {
		rev += ", session at " + r.Protocol.LegacyVersion
	}
	t.line("  protocol:  %s era%s, revision %s", orNone(r.Protocol.Era), over, e(rev))
	if c := string(r.Client.Capabilities); c != "" && c != "{}" {
		t.line("  client:    declared capabilities %s (server requests refused)", e(c))
	}
	if r.Protocol.ServerName != "" || r.Protocol.ServerVersion != "" {
		t.line("  server:    %s %s", safetext.Quote(r.Protocol.ServerName), safetext.Quote(r.Protocol.ServerVersion))
	}
	t.line("  declared:  %s (%s)", safetext.Quote(r.Declared.Source), tools(r.Declared.ToolCount))
	if r.NotObserved != "" {
		t.line("  served:    %s", t.paint(ansiYellow, "not observed: "+safetext.Inert(r.NotObserved)))
	}
	if r.Served != nil {
		t.line("  served:    %s in %d page(s), tools/list %s %s", tools(r.Served.ToolCount), r.Served.Pages, e(r.Served.Completeness), digestText(r.Served.ManifestDigest))
	}
	if line := surfaceLine(r.Surface); line != "" {
		t.line("  surface:   %s", line)
	}
	ap := r.AuthPosture
	if ap.Applicable {
		t.line("  auth:      credentials presented %t (headers: %s), anonymous probe %s", ap.AuthorizationPresented, e(strings.Join(ap.HeaderNames, ", ")), e(ap.AnonymousProbe))
	}
	if len(r.CallPlan) > 0 {
		t.line("")
		heading := "Tool calls (sent)"
		if !r.CallPlan[0].Sent {
			heading = "Tool call plan (nothing sent; add --execute to send)"
		}
		t.line("%s", t.paint(ansiBold, heading))
		for _, c := range r.CallPlan {
			t.line("  - %s with arguments %s", safetext.QuoteASCII(c.Tool), e(string(c.Arguments)))
		}
	}
	if len(r.Findings) > 0 {
		t.line("")
		t.line("%s", t.paint(ansiBold, fmt.Sprintf("Findings (%d)", len(r.Findings))))
		for _, f := range r.Findings {
			head := t.paint(levelColor(f.Level), fmt.Sprintf("%-5s", f.Level)) + " " + e(f.RuleID)
			if f.Tool != "" {
				head += "  " + safetext.QuoteASCII(f.Tool)
			}
			t.line("  %s", head)
			t.line("        %s", msg(f.Message))
			for _, c := range f.Changes {
				t.line("        - %s", schemadiff.Sentence(c, safetext.Quote))
			}
		}
	}
	if len(r.Suppressed) > 0 {
		t.line("")
		t.line("%s", t.paint(ansiBold, fmt.Sprintf("Suppressed: %d (accepted by the suppression file; not holding the run)", len(r.Suppressed))))
		for _, sf := range r.Suppressed {
			head := e(sf.RuleID)
			if sf.Tool != "" {
				head += "  " + safetext.QuoteASCII(sf.Tool)
			}
			t.line("  - %s  %s", head, e(sf.Level))
			t.line("      %s", suppressionText(sf.Suppression))
		}
	}
	for _, n := range r.Notes {
		t.line("")
		t.line("Note: %s", msg(n))
	}
	for _, wn := range r.Warnings {
		t.line("")
		t.line("%s %s", t.paint(ansiYellow, "Warning:"), msg(wn))
	}
	t.line("")
	switch r.ExitCode {
	case probe.ExitOK:
		t.line("Exit 0: no finding.")
	case probe.ExitFindings:
		t.line("Exit 1: findings need review.")
	default:
		t.line("Exit %d: nothing was compared.", r.ExitCode)
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

func driftMarkdown(w io.Writer, r *probe.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### mcpdrift drift: %d finding(s)\n\n", len(r.Findings))
	fmt.Fprintf(&b, "Target %s (classified %s), declared %s. Exit %d.\n", mdCode(targetText(r.Target)), mdEscape(r.Target.Class), mdCode(r.Declared.Source), r.ExitCode)
	if r.NotObserved != "" {
		fmt.Fprintf(&b, "\n**Not observed:** %s\n", mdMsg(r.NotObserved))
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n| level | rule | tool | message |\n|---|---|---|---|\n")
		for _, f := range r.Findings {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(f.Level), mdCode(f.RuleID), mdName(f.Tool), mdMsg(f.Message))
		}
	}
	if len(r.Suppressed) > 0 {
		fmt.Fprintf(&b, "\n**Suppressed: %d** (accepted by the suppression file; not holding the run)\n\n| rule | tool | reason | where |\n|---|---|---|---|\n", len(r.Suppressed))
		for _, sf := range r.Suppressed {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCode(sf.RuleID), mdCode(sf.Tool), mdEscape(sf.Suppression.Reason), mdEscape(sf.Suppression.Source))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n> %s\n", mdMsg(n))
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "\n> **Warning:** %s\n", mdMsg(wn))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func driftSARIF(w io.Writer, r *probe.Report, opt Options) error {
	return writeSARIFLog(w, driftSARIFRun(r, opt))
}

func driftSARIFRun(r *probe.Report, opt Options) sarifRun {
	served := ""
	if r.Served != nil {
		served = r.Served.ManifestDigest
	}
	// The builder keys fingerprints and logical locations on a server id
	// and an observed digest; for a live run those are the target and the
	// served digest.
	g := &gate.Report{Schema: r.Schema, ServerID: targetText(r.Target), Verdict: "drift", Mode: "live", ExitCode: r.ExitCode, ObservedManifestDigest: &served}
	s := newSARIFBuilder(g, opt)
	type item struct {
		f   probe.Finding
		sup *manifest.Suppression
	}
	items := make([]item, 0, len(r.Findings)+len(r.Suppressed))
	for _, f := range r.Findings {
		items = append(items, item{f: f})
	}
	for i := range r.Suppressed {
		items = append(items, item{f: r.Suppressed[i].Finding, sup: &r.Suppressed[i].Suppression})
	}
	for _, it := range items {
		f := it.f
		id, idx := s.ruleIndex(f.RuleID)
		msg := sarifMsg(f.Message)
		if f.Tool != "" {
			msg = "tool " + sarifQuoteName(f.Tool) + ": " + msg
		}
		for _, c := range f.Changes {
			msg += "; " + schemadiff.Sentence(c, sarifQuote)
		}
		level := "note"
		switch f.Level {
		case probe.LevelError:
			level = "error"
		case probe.LevelWarn:
			level = "warning"
		}
		s.results = append(s.results, sarifResult{
			RuleID: id, RuleIndex: idx, Level: level, Message: sarifMessage{Text: msg},
			Locations:           s.location(f.Tool),
			PartialFingerprints: map[string]string{fingerprintKey: fingerprint(g.ServerID, f.Tool, f.RuleID, "", served)},
			Properties:          sarifResultProps{Kind: string(catalog.Finding), Severity: sarifEscape(f.Severity), TraceID: hexID(f.TraceID), SpanID: hexID(f.SpanID)},
		})
		if it.sup != nil {
			s.suppressLast(*it.sup)
		}
	}
	verdict := "drift"
	if r.NotObserved != "" {
		verdict = "not_observed"
		id, idx := s.ruleIndex("MCP-DRIFT-NOT-OBSERVED")
		s.results = append(s.results, sarifResult{
			RuleID: id, RuleIndex: idx, Level: "error", Message: sarifMessage{Text: sarifMsg(r.NotObserved)},
			Locations:           s.location(""),
			PartialFingerprints: map[string]string{fingerprintKey: fingerprint(g.ServerID, "", "MCP-DRIFT-NOT-OBSERVED", "", "")},
			Properties:          sarifResultProps{Kind: string(catalog.Inconclusive)},
		})
	}
	run := s.run(sarifRunProps{Schema: sarifEscape(r.Schema), Verdict: verdict, ExitCode: r.ExitCode, ServerID: sarifEscape(g.ServerID), Mode: "live"}, r.NotObserved)
	run.AutomationDetails = automationID("drift", g.ServerID)
	return run
}

// hexID is a trace or span id as SARIF carries it: lowercase hex only
// (anything else is dropped; the ids come from mcpdrift's own spans).
func hexID(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return s
}

// DemoSchema is the id of the demo's JSON document: the gate report and the
// drift report of one demo run.
const DemoSchema = "mcpdrift.demo_report.v1"

// RenderDemo writes the demo's two reports as one document: one JSON
// object, one SARIF log with two runs, one HTML page with two sections, or
// the two reports one after the other in text and Markdown.
func RenderDemo(w io.Writer, g *gate.Report, d *probe.Report, format string, opt Options) error {
	switch format {
	case "json":
		return writeJSON(w, struct {
			Schema string        `json:"schema"`
			Gate   *gate.Report  `json:"gate"`
			Drift  *probe.Report `json:"drift,omitempty"`
		}{DemoSchema, g, d})
	case "sarif":
		runs := []sarifRun{gateSARIFRun(g, opt)}
		if d != nil {
			runs = append(runs, driftSARIFRun(d, opt))
		}
		return writeSARIFLog(w, runs...)
	case "html":
		p := &Page{Title: "mcpdrift demo", ToolVersion: opt.ToolVersion, Sections: []Section{GateSection(g, nil)}}
		if d != nil {
			p.Sections = append(p.Sections, DriftSection(d, nil))
		}
		return RenderHTML(w, p)
	case "text", "markdown":
		if err := Render(w, g, format, opt); err != nil {
			return err
		}
		if d == nil {
			return nil
		}
		io.WriteString(w, "\n")
		return RenderDrift(w, d, format, opt)
	}
	return fmt.Errorf("unknown demo format %s (known: html, json, markdown, sarif, text)", safetext.Quote(format))
}
