package report

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// SARIF constants.
const (
	sarifSchemaURI   = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion     = "2.1.0"
	toolName         = "mcpdrift"
	toolInfoURI      = "https://github.com/mcpdrift/mcpdrift"
	reasonCodesDoc   = "https://github.com/mcpdrift/mcpdrift/blob/main/docs/reason-codes.md"
	defaultArtifact  = "mcp-manifest"
	fingerprintKey   = "mcpdriftFinding/v1"
	uncataloguedName = "UncataloguedReasonCode"
)

// The subset of the SARIF 2.1.0 object model mcpdrift writes.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool              sarifTool         `json:"tool"`
		Invocations       []sarifInvocation `json:"invocations"`
		AutomationDetails *sarifAutomation  `json:"automationDetails,omitempty"`
		Taxonomies        []sarifTaxonomy   `json:"taxonomies"`
		Results           []sarifResult     `json:"results"`
		Properties        sarifRunProps     `json:"properties"`
	}
	sarifRunProps struct {
		Schema   string `json:"mcpdriftReportSchema"`
		Verdict  string `json:"verdict"`
		ExitCode int    `json:"exitCode"`
		ServerID string `json:"serverId"`
		Mode     string `json:"mode"`
		Profile  string `json:"profile"`
	}
	sarifInvocation struct {
		ExecutionSuccessful        bool                `json:"executionSuccessful"`
		ExitCode                   int                 `json:"exitCode"`
		ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	}
	sarifNotification struct {
		Level   string       `json:"level"`
		Message sarifMessage `json:"message"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name                string              `json:"name"`
		InformationURI      string              `json:"informationUri"`
		Version             string              `json:"version,omitempty"`
		Rules               []sarifRule         `json:"rules"`
		SupportedTaxonomies []sarifComponentRef `json:"supportedTaxonomies"`
	}
	sarifRule struct {
		ID                   string              `json:"id"`
		Name                 string              `json:"name"`
		ShortDescription     sarifMessage        `json:"shortDescription"`
		FullDescription      sarifMessage        `json:"fullDescription"`
		Help                 sarifMultiMessage   `json:"help"`
		HelpURI              string              `json:"helpUri"`
		DefaultConfiguration sarifConfiguration  `json:"defaultConfiguration"`
		Relationships        []sarifRelationship `json:"relationships,omitempty"`
		Properties           sarifRuleProps      `json:"properties"`
	}
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifMultiMessage struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown,omitempty"`
	}
	sarifConfiguration struct {
		Level string `json:"level"`
	}
	sarifRuleProps struct {
		Tags             []string `json:"tags"`
		Kind             string   `json:"kind"`
		SecuritySeverity string   `json:"security-severity,omitempty"`
		Precision        string   `json:"precision"`
	}
	sarifResult struct {
		RuleID              string             `json:"ruleId"`
		RuleIndex           int                `json:"ruleIndex"`
		Level               string             `json:"level"`
		Message             sarifMessage       `json:"message"`
		Locations           []sarifLocation    `json:"locations"`
		PartialFingerprints map[string]string  `json:"partialFingerprints"`
		Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
		Properties          sarifResultProps   `json:"properties"`
	}
	// sarifSuppression marks a result a suppression file accepted (code
	// scanning shows it as dismissed, with the justification).
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Status        string `json:"status"`
		Justification string `json:"justification"`
	}
	sarifResultProps struct {
		Kind        string `json:"kind"`
		Severity    string `json:"severity,omitempty"`
		Privileged  bool   `json:"privileged,omitempty"`
		ActionClass string `json:"actionClass,omitempty"`
		Field       string `json:"field,omitempty"`
		// TraceID and SpanID (drift) name the exported span of the request
		// that established the finding; absent without export.
		TraceID string `json:"traceId,omitempty"`
		SpanID  string `json:"spanId,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysicalLocation  `json:"physicalLocation"`
		LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
	}
	sarifPhysicalLocation struct {
		ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
		Region           sarifRegion           `json:"region"`
	}
	sarifArtifactLocation struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
	sarifLogicalLocation struct {
		Name               string `json:"name"`
		Kind               string `json:"kind"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
	}
)

// camelCase turns "mcp_tool_added" into "McpToolAdded" and
// "MCP-DRIFT-TOOL-MISSING" into "McpDriftToolMissing".
func camelCase(code string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(code, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(strings.ToLower(part[1:]))
	}
	return b.String()
}

// severityLevel maps a finding severity to a SARIF level.
func severityLevel(sev string) string {
	switch catalog.Severity(sev) {
	case catalog.High:
		return "error"
	case catalog.Medium:
		return "warning"
	case catalog.Low, catalog.None:
		return "note"
	}
	return "warning"
}

// securitySeverity is GitHub code scanning's numeric severity.
func securitySeverity(sev catalog.Severity) string {
	switch sev {
	case catalog.High:
		return "8.0"
	case catalog.Medium:
		return "5.0"
	case catalog.Low:
		return "2.0"
	}
	return ""
}

// ruleLevel is a rule's defaultConfiguration.level.
func ruleLevel(e catalog.Entry) string {
	switch e.Kind {
	case catalog.Finding, catalog.Change:
		return severityLevel(string(e.Severity))
	case catalog.Inconclusive:
		return "warning"
	}
	return "note"
}

func ruleFor(e catalog.Entry) sarifRule {
	help := reasonCodesDoc + "#" + catalog.Anchor(e.Code)
	return sarifRule{
		ID:               e.Code,
		Name:             camelCase(e.Code),
		ShortDescription: sarifMessage{Text: e.Title},
		FullDescription:  sarifMessage{Text: e.Explanation},
		Help: sarifMultiMessage{
			Text:     e.Remedy,
			Markdown: "**" + e.Title + ".** " + e.Explanation + "\n\nWhat to do: " + e.Remedy + "\n\n[Reference](" + help + ")",
		},
		HelpURI:              help,
		DefaultConfiguration: sarifConfiguration{Level: ruleLevel(e)},
		Relationships:        owaspRelationship(e.Code),
		Properties: sarifRuleProps{
			Tags:             append([]string{"security", "mcp", e.Family}, owaspTag(e.Code)...),
			Kind:             string(e.Kind),
			SecuritySeverity: securitySeverity(e.Severity),
			Precision:        "very-high",
		},
	}
}

// sarifEscape escapes untrusted text for SARIF: the safetext escaping,
// then [ and ] backslash-escaped, so viewers that resolve embedded links
// ("[text](id)", SARIF §3.11.6) in plain-text messages find none. Every
// untrusted string in the log (messages, logical locations, properties)
// goes through it.
func sarifEscape(s string) string { return sarifBrackets(safetext.Escape(s)) }

// sarifMsg is msg in SARIF: a composed message, inert, its brackets
// escaped.
func sarifMsg(s string) string { return sarifBrackets(safetext.Inert(s)) }

func sarifBrackets(s string) string {
	if strings.ContainsAny(s, "[]") {
		s = strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)
	}
	return s
}

// sarifQuote is sarifEscape with visible quote boundaries.
func sarifQuote(s string) string {
	return `"` + strings.ReplaceAll(sarifEscape(s), `"`, `\"`) + `"`
}

// sarifName is sarifEscape for a tool name: every non-ASCII code point is
// escaped too (safetext.EscapeASCII), so a look-alike letter of another
// script can never pass for the ASCII one.
func sarifName(s string) string {
	s = safetext.EscapeASCII(s)
	if strings.ContainsAny(s, "[]") {
		s = strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)
	}
	return s
}

// sarifQuoteName is sarifName with visible quote boundaries.
func sarifQuoteName(s string) string {
	return `"` + strings.ReplaceAll(sarifName(s), `"`, `\"`) + `"`
}

// fingerprint is the stable identity of one drift: the same drift (server,
// tool, code, field) seen at the same new digest fingerprints the same on
// every run; a different observed digest makes a new fingerprint, so a
// dismissed alert does not hide a later change.
func fingerprint(serverID, tool, code, field, observedDigest string) string {
	h := sha256.New()
	for i, s := range []string{serverID, tool, code, field, observedDigest} {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// artifactURI makes the observed file path a URI reference.
func artifactURI(p string) string {
	if p == "" {
		return defaultArtifact
	}
	u := url.URL{Path: filepath.ToSlash(p)}
	return u.String()
}

type sarifBuilder struct {
	r       *gate.Report
	opt     Options
	rules   []sarifRule
	index   map[string]int // raw code -> rule index
	results []sarifResult
}

func (s *sarifBuilder) ruleIndex(code string) (string, int) {
	if i, ok := s.index[code]; ok {
		return s.rules[i].ID, i
	}
	// A code the catalogue does not know (a report from another version):
	// give it a rule of its own so the log stays self-consistent.
	id := sarifEscape(code)
	if id == "" {
		id = "(empty)"
	}
	s.rules = append(s.rules, sarifRule{
		ID:                   id,
		Name:                 uncataloguedName,
		ShortDescription:     sarifMessage{Text: "Uncatalogued reason code"},
		FullDescription:      sarifMessage{Text: "The report carries a reason code this version of mcpdrift does not know."},
		Help:                 sarifMultiMessage{Text: "Render the report with the mcpdrift version that produced it."},
		HelpURI:              reasonCodesDoc,
		DefaultConfiguration: sarifConfiguration{Level: "warning"},
		Properties:           sarifRuleProps{Tags: []string{"security", "mcp"}, Kind: "unknown", Precision: "very-high"},
	})
	i := len(s.rules) - 1
	s.index[code] = i
	return id, i
}

func (s *sarifBuilder) location(tool string) []sarifLocation {
	loc := sarifLocation{PhysicalLocation: sarifPhysicalLocation{
		ArtifactLocation: sarifArtifactLocation{URI: artifactURI(s.opt.ArtifactURI)},
		Region:           sarifRegion{StartLine: 1},
	}}
	if tool != "" {
		loc.LogicalLocations = []sarifLogicalLocation{{
			Name:               sarifName(tool),
			Kind:               "function",
			FullyQualifiedName: sarifEscape(s.r.ServerID) + "/" + sarifName(tool),
		}}
	}
	return []sarifLocation{loc}
}

func (s *sarifBuilder) finding(f gate.Finding) {
	id, idx := s.ruleIndex(f.ReasonCode)
	var msg strings.Builder
	msg.WriteString(titleFor(f.ReasonCode))
	if f.Name != "" {
		msg.WriteString(": tool " + sarifQuoteName(f.Name))
		if f.Field != "" {
			msg.WriteString(", field " + sarifEscape(f.Field))
		}
		if f.Privileged {
			msg.WriteString(" (privileged)")
		}
		msg.WriteString(", server " + sarifQuote(s.r.ServerID))
	} else {
		msg.WriteString(": server " + sarifQuote(s.r.ServerID))
	}
	if f.ObservedDigest != "" || f.DeclaredDigest != "" {
		msg.WriteString("; observed " + sarifEscape(orNoneRaw(f.ObservedDigest)) + ", expected " + sarifEscape(orNoneRaw(f.DeclaredDigest)))
	}
	msg.WriteString(".")
	s.results = append(s.results, sarifResult{
		RuleID:    id,
		RuleIndex: idx,
		Level:     severityLevel(f.Severity),
		Message:   sarifMessage{Text: msg.String()},
		Locations: s.location(f.Name),
		PartialFingerprints: map[string]string{
			fingerprintKey: fingerprint(s.r.ServerID, f.Name, f.ReasonCode, f.Field, f.ObservedDigest),
		},
		Properties: sarifResultProps{
			Kind:        string(catalog.Finding),
			Severity:    sarifEscape(f.Severity),
			Privileged:  f.Privileged,
			ActionClass: sarifEscape(f.ActionClass),
			Field:       sarifEscape(f.Field),
		},
	})
}

// suppressLast marks the last result as suppressed by sup.
func (s *sarifBuilder) suppressLast(sup manifest.Suppression) {
	just := sup.Reason + " (" + sup.Source
	if sup.Expires != "" {
		just += ", until " + sup.Expires
	}
	s.results[len(s.results)-1].Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted", Justification: sarifEscape(just + ")")}}
}

// change adds one result for a structural change record.
func (s *sarifBuilder) change(c schemadiff.Change) {
	id, idx := s.ruleIndex(c.Kind)
	msg := titleFor(c.Kind) + ": tool " + sarifQuoteName(c.Name) + ": " + schemadiff.Sentence(c, sarifQuote) + "."
	s.results = append(s.results, sarifResult{
		RuleID:    id,
		RuleIndex: idx,
		Level:     severityLevel(c.Severity),
		Message:   sarifMessage{Text: msg},
		Locations: s.location(c.Name),
		PartialFingerprints: map[string]string{
			fingerprintKey: fingerprint(s.r.ServerID, c.Name, c.Kind, c.Pointer, deref(s.r.ObservedManifestDigest)),
		},
		Properties: sarifResultProps{Kind: string(catalog.Change), Severity: sarifEscape(c.Severity)},
	})
}

// detail adds one result for an inconclusive or warning code and tool.
func (s *sarifBuilder) detail(code, kind, level, tool string, messages []string) {
	id, idx := s.ruleIndex(code)
	text := titleFor(code)
	if tool != "" {
		text += ": tool " + sarifQuoteName(tool)
	}
	if len(messages) > 0 {
		esc := make([]string, len(messages))
		for i, m := range messages {
			esc[i] = sarifMsg(m)
		}
		text += ": " + strings.Join(esc, "; ")
	}
	if !strings.HasSuffix(text, ".") {
		text += "."
	}
	s.results = append(s.results, sarifResult{
		RuleID:    id,
		RuleIndex: idx,
		Level:     level,
		Message:   sarifMessage{Text: text},
		Locations: s.location(tool),
		PartialFingerprints: map[string]string{
			fingerprintKey: fingerprint(s.r.ServerID, tool, code, "", deref(s.r.ObservedManifestDigest)),
		},
		Properties: sarifResultProps{Kind: kind},
	})
}

func (s *sarifBuilder) codes(codes []string, kind, level string, done map[string]bool) {
	for _, code := range codes {
		if done[code] {
			continue
		}
		done[code] = true
		kind := kind
		if e, ok := entryFor(code); ok {
			kind = string(e.Kind)
		}
		ds := detailsFor(s.r, code)
		if len(ds) == 0 {
			s.detail(code, kind, level, "", nil)
			continue
		}
		// One result per tool (or one for the whole manifest).
		var order []string
		msgs := map[string][]string{}
		for _, d := range ds {
			if _, ok := msgs[d.Name]; !ok {
				order = append(order, d.Name)
			}
			msgs[d.Name] = append(msgs[d.Name], d.Message)
		}
		for _, name := range order {
			s.detail(code, kind, level, name, msgs[name])
		}
	}
}

func orNoneRaw(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// renderSARIF writes a SARIF 2.1.0 log for GitHub code scanning and other
// SARIF consumers: one rule per catalogued reason code, one result per
// finding and per inconclusive or warning code (and tool).
func renderSARIF(w io.Writer, r *gate.Report, opt Options) error {
	return writeSARIFLog(w, gateSARIFRun(r, opt))
}

func gateSARIFRun(r *gate.Report, opt Options) sarifRun { return gateSARIFRunWith(r, nil, opt) }

// gateSARIFRunWith is gateSARIFRun with the results of a lock check's
// surface comparison (sr; nil: none) beside the gate's.
func gateSARIFRunWith(r *gate.Report, sr *lock.SurfaceResult, opt Options) sarifRun {
	s := newSARIFBuilder(r, opt)
	for _, f := range r.Findings {
		s.finding(f)
	}
	for _, sf := range r.Suppressed {
		s.finding(sf.Finding)
		s.suppressLast(sf.Suppression)
	}
	for _, c := range r.StructuralChanges {
		s.change(c)
	}
	s.surfaceResults(sr)
	done := map[string]bool{}
	s.codes(r.Inconclusive, string(catalog.Inconclusive), "warning", done)
	s.codes(r.Warnings, string(catalog.Warning), "note", done)

	run := s.run(sarifRunProps{
		Schema:   sarifEscape(r.Schema),
		Verdict:  sarifEscape(r.Verdict),
		ExitCode: r.ExitCode,
		ServerID: sarifEscape(r.ServerID),
		Mode:     sarifEscape(r.Mode),
		Profile:  sarifEscape(r.Profile),
	}, "")
	run.AutomationDetails = automationID("gate", r.ServerID)
	return run
}

// newSARIFBuilder starts a log with one rule per catalogued code.
func newSARIFBuilder(r *gate.Report, opt Options) *sarifBuilder {
	s := &sarifBuilder{r: r, opt: opt, index: map[string]int{}, results: []sarifResult{}}
	for _, e := range catalog.All() {
		if e.Kind == catalog.Decision {
			continue // the gateway's reasons never appear in a report
		}
		s.index[e.Code] = len(s.rules)
		s.rules = append(s.rules, ruleFor(e))
	}
	return s
}

// run wraps the builder's rules and results in a SARIF run. A run that
// could not observe (notObserved != "") says so as a failed invocation
// with its reason, beside the result that names it.
func (s *sarifBuilder) run(props sarifRunProps, notObserved string) sarifRun {
	inv := sarifInvocation{ExecutionSuccessful: notObserved == "", ExitCode: props.ExitCode}
	if notObserved != "" {
		inv.ToolExecutionNotifications = []sarifNotification{{Level: "error", Message: sarifMessage{Text: sarifMsg(notObserved)}}}
	}
	return sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:                toolName,
			InformationURI:      toolInfoURI,
			Version:             sarifEscape(s.opt.ToolVersion),
			Rules:               s.rules,
			SupportedTaxonomies: []sarifComponentRef{{Name: catalog.OWASPMCPName, Index: 0}},
		}},
		Invocations: []sarifInvocation{inv},
		Taxonomies:  []sarifTaxonomy{owaspTaxonomy()},
		Results:     s.results,
		Properties:  props,
	}
}

// writeSARIFLog writes one SARIF log holding runs.
func writeSARIFLog(w io.Writer, runs ...sarifRun) error {
	return writeJSON(w, &sarifLog{Schema: sarifSchemaURI, Version: sarifVersion, Runs: runs})
}
