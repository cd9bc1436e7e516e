package report

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The HTML report: one self-contained file for a reviewer who would rather
// look than read JSON. It holds no script and no link, loads nothing (no
// font, image or style sheet), and says so to the browser with a
// Content-Security-Policy that allows only its own style element (by hash,
// so even an injected style element would not apply). Every string a
// server controls is escaped twice over: first by safetext (control,
// bidirectional and invisible characters become escapes such as \u202e,
// which the page highlights; a tool name has every non-ASCII code point
// escaped), then by html/template's contextual escaping. Server text is
// only ever element content, never an attribute, a URL, a style or a
// script.

//go:embed html/page.tmpl html/style.css
var htmlFiles embed.FS

var (
	htmlTemplate = template.Must(template.New("").ParseFS(htmlFiles, "html/page.tmpl"))
	htmlStyle    = mustRead("html/style.css")
	// HTMLContentSecurityPolicy is the policy every HTML report declares
	// in a meta element: nothing may load or run; the one style element is
	// allowed by its SHA-256.
	HTMLContentSecurityPolicy = "default-src 'none'; script-src 'none'; style-src '" + styleHash(htmlStyle) + "'; img-src 'none'; font-src 'none'; connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; child-src 'none'; worker-src 'none'; manifest-src 'none'; form-action 'none'; base-uri 'none'"
)

func mustRead(name string) string {
	b, err := htmlFiles.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return strings.TrimRight(string(b), "\n")
}

func styleHash(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// Page is one HTML report: a summary of each section, then the sections
// (one per server or per run). Build the sections with GateSection,
// DiffSection and DriftSection; render the page with RenderHTML.
//
// A page with more than one section opens with an overview table, one row
// per section (its server, subject, status, counts by severity and exit
// code, linked to the section), so a page of many servers reads from the
// top. lock check renders one page with one section per server of the
// lock, each named with ForServer:
//
//	p := &report.Page{Title: "mcpdrift lock check", ToolVersion: v}
//	for _, srv := range servers { // in the lock's order
//		p.Sections = append(p.Sections, report.DriftSection(srv.Report, srv.Deltas).ForServer(srv.Name))
//	}
//	err := report.RenderHTML(w, p)
//
// The demo renders one page with its gate and drift sections.
type Page struct {
	// Title heads the page ("" gives "mcpdrift report"). It is escaped.
	Title string
	// ToolVersion is the mcpdrift version, named in the footer.
	ToolVersion string
	Sections    []Section
}

// Section is one report on a Page. Its contents are built by GateSection,
// DiffSection or DriftSection from the report and the readable deltas.
type Section struct{ v *htmlSection }

// ForServer returns the section named for the server it reports on (the
// name a lock gives it): the name heads the section and its overview row.
// The name is escaped like a tool name. s itself is unchanged.
func (s Section) ForServer(name string) Section {
	if s.v == nil {
		return s
	}
	v := *s.v
	v.Server = hname(name)
	return Section{&v}
}

// RenderHTML writes p as one self-contained HTML file. The output is a
// deterministic function of p: no clock, no randomness.
func RenderHTML(w io.Writer, p *Page) error {
	if p == nil {
		return fmt.Errorf("report: nil page")
	}
	title := p.Title
	if title == "" {
		title = "mcpdrift report"
	}
	version := p.ToolVersion
	if version == "" {
		version = "(version unknown)"
	}
	view := htmlPage{
		Title: safetext.Escape(title), CSP: HTMLContentSecurityPolicy, Style: template.CSS(htmlStyle),
		Version: safetext.Escape(version), Overview: len(p.Sections) > 1,
	}
	var cards, changes int
	for i, s := range p.Sections {
		if s.v == nil {
			return fmt.Errorf("report: section %d was not built by GateSection, DiffSection or DriftSection", i+1)
		}
		v := *s.v
		v.ID = "r" + strconv.Itoa(i+1)
		view.Sections = append(view.Sections, v)
		cards += len(v.Cards)
		view.Servers = view.Servers || v.Server != nil
		changes += v.records
	}
	view.Sub = fmt.Sprintf("%d report(s), %d tool(s) with changes or findings, %d change record(s).", len(view.Sections), cards, changes)
	var buf bytes.Buffer
	if err := htmlTemplate.ExecuteTemplate(&buf, "page", view); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// htmlText is escaped text split into plain runs and escapes
// (safetext.Segments); the template writes each run as element content.
type htmlText []safetext.Segment

// htmlClip bounds any one untrusted text on the page, above a word run's
// own clip (4 KiB) so that a run is never cut twice. The readable delta's
// texts are clipped tighter, as RenderDelta clips them (deltaTextClip,
// deltaRefClip, deltaNameClip).
const htmlClip = 4200

// ht escapes untrusted text (safetext.Escape) for the page.
func ht(s string) htmlText { return safetext.Segments(safetext.Escape(safetext.Clip(s, htmlClip))) }

// hq is ht quoted (safetext.Quote).
func hq(s string) htmlText { return safetext.Segments(safetext.Quote(safetext.Clip(s, htmlClip))) }

// hname shows a tool name with every non-ASCII code point escaped.
func hname(s string) htmlText {
	return safetext.Segments(safetext.EscapeASCII(safetext.Clip(s, deltaNameClip)))
}

// hsafe is text mcpdrift composed with safetext already (a Sentence, a
// message built with Quote).
func hsafe(s string) htmlText { return safetext.Segments(safetext.Inert(s)) }

// hmsg is msg in HTML: a composed message, clipped, inert.
func hmsg(s string) htmlText {
	return safetext.Segments(safetext.Inert(safetext.ClipEscaped(s, htmlClip)))
}

type htmlPage struct {
	Title, CSP, Version, Sub string
	Style                    template.CSS
	Overview, Servers        bool
	Sections                 []htmlSection
}

type htmlFact struct {
	Label string
	Value htmlText
}

type htmlCount struct {
	Label, Class string
	N            int
}

type htmlSection struct {
	ID, Command      string
	Server           htmlText // ForServer; nil when not named
	Subject, Verdict htmlText
	Status, Class    string
	Exit             int
	ExitText         string
	Counts           []htmlCount
	CountsOf         string
	Decisions        []htmlCount
	Profile          htmlText
	Facts            []htmlFact
	Cards            []htmlCard
	NoCards          string
	Blocks           []htmlBlock
	records          int
}

// htmlBlock is a list under the cards: findings, warnings, notes.
type htmlBlock struct {
	Title string
	Items []htmlLine
}

type htmlLine struct {
	Severity, SevClass string
	Text               htmlText
	Sub                []htmlText
}

type htmlCard struct {
	Name                       htmlText
	Status, Severity, SevClass string
	CardClass                  string
	Decision, DecClass         string
	Why                        htmlText
	Open                       bool
	Groups                     []htmlGroup
	Params                     []htmlParam
	Texts                      []htmlWords
	Hints                      []htmlHint
	Findings                   []htmlLine
	Records                    []htmlRecord
	sevRank                    int
}

type htmlGroup struct {
	Title, Class string
	Items        []htmlItem
}

type htmlItem struct {
	Mark, Severity, SevClass string
	Sentence                 htmlText
	Decl                     []htmlFact
	Words                    *htmlWords
}

type htmlParam struct {
	Name, Type, Description htmlText
	Required                bool
}

type htmlWords struct {
	Label      string
	Known      bool
	Fallback   htmlText
	Whitespace bool
	Approx     bool
	Runs       []htmlRun
}

type htmlRun struct {
	Kind  string
	Text  htmlText
	Count int
}

type htmlHint struct {
	Key                string
	Old, New           htmlText
	Severity, SevClass string
	What, Note         string
}

type htmlRecord struct {
	Severity, SevClass       string
	Kind, Pointer, Direction htmlText
}

// sevClass is the CSS class of a severity: only the three known ones.
// cardClass is the CSS class of a card's border: only the three known
// severities.
func cardClass(s string) string {
	switch s {
	case "high", "medium", "low":
		return "c-" + s
	}
	return ""
}

func sevClass(s string) string {
	switch s {
	case "high", "medium", "low":
		return "sev-" + s
	}
	return ""
}

func sevTag(s string) (label, class string) {
	switch s {
	case "high", "medium", "low":
		return strings.ToUpper(s), s
	case "":
		return "", ""
	}
	return strings.ToUpper(safetext.Escape(s)), ""
}

func decClass(d string) string {
	switch d {
	case schemadiff.Deny, schemadiff.Review, schemadiff.Allow:
		return "dec-" + d
	}
	return ""
}

func decLabel(d string) string {
	if d == "" {
		return "NO DECISION"
	}
	return strings.ToUpper(safetext.Escape(d))
}

// severityCounts counts severities in the order high, medium, low.
func severityCounts(sevs []string) []htmlCount {
	n := map[string]int{}
	for _, s := range sevs {
		n[s]++
	}
	return []htmlCount{
		{Label: "high", Class: "sev-high", N: n["high"]},
		{Label: "medium", Class: "sev-medium", N: n["medium"]},
		{Label: "low", Class: "sev-low", N: n["low"]},
	}
}

func decisionCounts(vs []schemadiff.ToolVerdict) []htmlCount {
	if len(vs) == 0 {
		return nil
	}
	n := map[string]int{}
	unchanged := 0
	for _, v := range vs {
		if v.Status == schemadiff.StatusUnchanged && v.Changes == 0 {
			unchanged++
			continue
		}
		n[v.Decision]++
	}
	out := []htmlCount{
		{Label: "deny", Class: "dec-deny", N: n[schemadiff.Deny]},
		{Label: "review", Class: "dec-review", N: n[schemadiff.Review]},
		{Label: "allow", Class: "dec-allow", N: n[schemadiff.Allow]},
	}
	if unchanged > 0 {
		out = append(out, htmlCount{Label: "unchanged", N: unchanged})
	}
	return out
}

// htmlCards turns readable deltas into cards.
func htmlCards(tools []delta.Tool) []htmlCard {
	out := make([]htmlCard, 0, len(tools))
	for _, d := range tools {
		out = append(out, htmlCardOf(d))
	}
	return out
}

func htmlCardOf(d delta.Tool) htmlCard {
	sev, _ := sevTag(d.Severity)
	c := htmlCard{
		Name: hname(d.Name), Status: clipEscape(d.Status), Severity: sev, SevClass: sevClass(d.Severity), CardClass: cardClass(d.Severity),
		Decision: decLabel(d.Decision), DecClass: decClass(d.Decision),
		Open:    d.Decision != schemadiff.Allow,
		sevRank: schemadiff.SeverityRank(d.Severity),
	}
	switch {
	case len(d.DeniedBy) > 0:
		c.Why = ht("denied by " + strings.Join(d.DeniedBy, ", "))
	case d.Reason != "":
		c.Why = ht(d.Reason)
	}
	groups := []struct {
		title, class, mark string
		items              []delta.Item
	}{
		{"Signals", "g-signals", "!", d.Signals},
		{"Can now do", "g-gained", "+", d.Gained},
		{"Can no longer do", "g-lost", "−", d.Lost},
		{"Other changes", "g-other", "~", d.Other},
		{"What it returns", "g-output", "~", d.Output},
	}
	var all []schemadiff.Change
	for _, g := range groups {
		if len(g.items) == 0 {
			continue
		}
		hg := htmlGroup{Title: g.title, Class: g.class}
		for _, it := range g.items {
			hg.Items = append(hg.Items, htmlItemOf(g.mark, it))
			all = append(all, it.Change)
		}
		c.Groups = append(c.Groups, hg)
	}
	for _, p := range d.Params {
		hp := htmlParam{Name: ht(safetext.Clip(p.Name, deltaNameClip)), Type: ht(safetext.Clip(p.Type, deltaTextClip)), Required: p.Required}
		if p.Description != "" {
			hp.Description = ht(safetext.Clip(p.Description, deltaTextClip))
		}
		c.Params = append(c.Params, hp)
	}
	if d.Description != nil {
		label := "Description"
		switch d.Status {
		case schemadiff.StatusAdded:
			label = "Description (new tool)"
		case schemadiff.StatusRemoved:
			label = "Description (removed tool)"
		}
		c.Texts = append(c.Texts, htmlWordsOf(label, d.Description.Words, d.Description.Known, d.Description.Change))
		if d.Description.Change.Kind == schemadiff.DescriptionChanged {
			all = append(all, d.Description.Change)
		}
	}
	for _, t := range d.Titles {
		label := "Title"
		if t.Change.Pointer == "/annotations/title" {
			label = "Title (annotations.title)"
		}
		c.Texts = append(c.Texts, htmlWordsOf(label, t.Words, t.Known, t.Change))
		all = append(all, t.Change)
	}
	for _, h := range d.Hints {
		sev, cls := sevTag(h.Change.Severity)
		hh := htmlHint{Key: clipEscape(h.Key), Severity: sev, SevClass: cls}
		if h.Old != "" || h.New != "" {
			hh.Old, hh.New = ht(safetext.Clip(h.Old, deltaTextClip)), ht(safetext.Clip(h.New, deltaTextClip))
		} else {
			hh.New = ht(safetext.Clip(h.Change.Detail, deltaTextClip))
		}
		switch h.Change.Kind {
		case schemadiff.AnnotationHintWeakened:
			hh.What = "weakened"
		case schemadiff.AnnotationHintStrengthened:
			hh.What = "strengthened"
		default:
			hh.What = "not a boolean"
		}
		if h.Meaningless {
			hh.Note = "meaningless while readOnlyHint is true: a read-only tool modifies nothing"
		}
		c.Hints = append(c.Hints, hh)
		all = append(all, h.Change)
	}
	for _, ch := range all {
		sev, cls := sevTag(ch.Severity)
		c.Records = append(c.Records, htmlRecord{Severity: sev, SevClass: cls, Kind: ht(safetext.Clip(ch.Kind, deltaNameClip)), Pointer: ht(safetext.Clip(ch.Pointer, deltaTextClip)), Direction: ht(safetext.Clip(string(ch.Direction), deltaNameClip))})
	}
	return c
}

func htmlItemOf(mark string, it delta.Item) htmlItem {
	c := it.Change
	sev, cls := sevTag(c.Severity)
	hi := htmlItem{Mark: mark, Severity: sev, SevClass: cls, Sentence: hsafe(itemSentence(it))}
	if d := it.Decl; d != nil {
		if c.Kind != schemadiff.ParamAddedOptional && c.Kind != schemadiff.ParamAddedRequired && c.Kind != schemadiff.ParamRemoved {
			hi.Decl = append(hi.Decl, htmlFact{"type", ht(d.Type)})
		}
		if d.Title != "" {
			hi.Decl = append(hi.Decl, htmlFact{"title", ht(safetext.Clip(d.Title, deltaTextClip))})
		}
		desc := htmlText{{Text: "none"}}
		if d.Description != "" {
			desc = ht(safetext.Clip(d.Description, deltaTextClip))
		}
		hi.Decl = append(hi.Decl, htmlFact{"description", desc})
	}
	if it.Ref != "" {
		hi.Decl = append(hi.Decl, htmlFact{"reference (not fetched)", ht(safetext.Clip(it.Ref, deltaRefClip))})
	}
	if it.Words != nil {
		w := htmlWordsOf("", *it.Words, true, c)
		hi.Words = &w
	}
	return hi
}

func htmlWordsOf(label string, w schemadiff.Words, known bool, c schemadiff.Change) htmlWords {
	hw := htmlWords{Label: label, Known: known, Whitespace: w.WhitespaceOnly, Approx: w.Approximate}
	if !known {
		hw.Fallback = ht(safetext.Clip(c.Detail, deltaTextClip))
		return hw
	}
	for _, r := range w.Runs {
		hw.Runs = append(hw.Runs, htmlRun{Kind: r.Kind, Text: ht(r.Text), Count: r.Count})
	}
	return hw
}

// ---- gate ----

// GateSection is the HTML section of a gate report. deltas are the readable
// deltas (delta.Build over the two snapshots, r.StructuralChanges and
// r.Tools); nil builds them from the report alone (without the
// definitions: no parameter descriptions, no word diffs). Findings are
// shown on their tool's card, and all of them in a list below.
func GateSection(r *gate.Report, deltas []delta.Tool) Section {
	if deltas == nil {
		deltas = delta.Build(nil, nil, r.StructuralChanges, r.Tools)
	}
	s := &htmlSection{
		Command: "gate", Subject: hq(r.ServerID), Verdict: ht(r.Verdict), Status: statusWord(r.Verdict),
		Class: verdictHTMLClass(classOf(r.Verdict)), Exit: r.ExitCode, ExitText: exitMeaning(r.ExitCode),
		CountsOf: "findings, by severity", Decisions: decisionCounts(r.Tools), Profile: ht(r.DecisionProfile),
	}
	var sevs []string
	for _, f := range r.Findings {
		sevs = append(sevs, f.Severity)
	}
	s.Counts = severityCounts(sevs)
	s.Facts = []htmlFact{
		{"mode", ht(r.Mode + ", severity profile " + r.Profile)},
		{"completeness", ht("tools/list " + orNoneRaw(r.ToolsListComplete) + ", status " + orNoneRaw(r.ObservedStatus))},
		{"observed", ht(digestOrNone(deref(r.ObservedManifestDigest)) + " (" + tools(r.ObservedToolCount) + ")")},
	}
	if r.DeclaredManifestDigest != "" || r.DeclaredToolCount > 0 {
		s.Facts = append(s.Facts, htmlFact{"declared", ht(digestOrNone(r.DeclaredManifestDigest) + " (" + tools(r.DeclaredToolCount) + ")")})
	}
	if r.PolicyManifestDigest != "" {
		s.Facts = append(s.Facts, htmlFact{"policy", ht(r.PolicyManifestDigest)})
	}
	if r.DecisionProfile != "" {
		s.Facts = append(s.Facts, htmlFact{"decision profile", ht(r.DecisionProfile)})
	}
	cards := htmlCards(deltas)
	byName := map[string]int{}
	for i, d := range deltas {
		byName[d.Name] = i
	}
	var findings []htmlLine
	for _, f := range r.Findings {
		l := gateFindingLine(f)
		findings = append(findings, l)
		if f.Name == "" {
			continue // whole-manifest: in the list below
		}
		i, ok := byName[f.Name]
		if !ok {
			// A tool only the digests know about: a card of its findings.
			byName[f.Name] = len(cards)
			i = len(cards)
			cards = append(cards, htmlCard{Name: hname(f.Name), Status: "digest finding", Decision: decLabel(""), Open: true})
		}
		cards[i].Findings = append(cards[i].Findings, l)
		if r := schemadiff.SeverityRank(f.Severity); r > cards[i].sevRank && len(cards[i].Groups) == 0 {
			cards[i].sevRank, cards[i].Severity, cards[i].SevClass, cards[i].CardClass = r, strings.ToUpper(safetext.Escape(f.Severity)), sevClass(f.Severity), cardClass(f.Severity)
		}
	}
	s.Cards = cards
	s.NoCards = "No tool changed."
	if len(r.StructuralChanges) == 0 && len(r.Findings) > 0 {
		s.NoCards = "No tool-level finding."
	}
	s.records = len(r.StructuralChanges)
	if len(findings) > 0 {
		s.Blocks = append(s.Blocks, htmlBlock{Title: "Findings", Items: findings})
	}
	var sup []htmlLine
	for _, sf := range r.Suppressed {
		sev, cls := sevTag(sf.Severity)
		sup = append(sup, htmlLine{Severity: sev, SevClass: cls, Text: hsafe(toolLabel(sf.Name) + "  " + safetext.Escape(sf.ReasonCode)), Sub: []htmlText{hsafe(suppressionText(sf.Suppression))}})
	}
	if len(sup) > 0 {
		s.Blocks = append(s.Blocks, htmlBlock{Title: "Suppressed (accepted by the suppression file; not holding the run)", Items: sup})
	}
	codeBlock := func(title string, codes []string) {
		var items []htmlLine
		for _, c := range codes {
			l := htmlLine{Text: hsafe(safetext.Escape(c) + ": " + titleFor(c))}
			for _, d := range detailsFor(r, c) {
				if d.Name != "" {
					l.Sub = append(l.Sub, hsafe(toolLabel(d.Name)+": "+safetext.Inert(d.Message)))
				} else {
					l.Sub = append(l.Sub, hmsg(d.Message))
				}
			}
			items = append(items, l)
		}
		if len(items) > 0 {
			s.Blocks = append(s.Blocks, htmlBlock{Title: title, Items: items})
		}
	}
	codeBlock("Inconclusive", r.Inconclusive)
	codeBlock("Warnings", r.Warnings)
	var todo []htmlLine
	for _, c := range distinctCodes(r) {
		remedy := "this code is not in mcpdrift's catalogue; check that the report comes from a matching mcpdrift version."
		if en, ok := entryFor(c); ok {
			remedy = en.Remedy
		}
		todo = append(todo, htmlLine{Text: hsafe(safetext.Escape(c) + ": " + remedy)})
	}
	if len(todo) > 0 {
		s.Blocks = append(s.Blocks, htmlBlock{Title: "What to do", Items: todo})
	}
	return Section{s}
}

func gateFindingLine(f gate.Finding) htmlLine {
	sev, cls := sevTag(f.Severity)
	head := toolLabel(f.Name) + "  " + safetext.Escape(f.ReasonCode)
	if f.Field != "" {
		head += "  field " + safetext.Escape(f.Field)
	}
	if f.Privileged {
		head += "  [privileged]"
	}
	if f.ActionClass != "" {
		head += "  action " + safetext.Escape(f.ActionClass)
	}
	title := titleFor(f.ReasonCode)
	if len(f.Notes) > 0 {
		notes := make([]string, len(f.Notes))
		for i, n := range f.Notes {
			notes[i] = safetext.Inert(n)
		}
		title += " (note: " + strings.Join(notes, ", ") + ")"
	}
	l := htmlLine{Severity: sev, SevClass: cls, Text: hsafe(head), Sub: []htmlText{hsafe(title)}}
	if f.Name == "" && (f.ObservedDigest != "" || f.DeclaredDigest != "") {
		l.Sub = append(l.Sub, ht("observed "+digestOrNone(f.ObservedDigest)+", expected "+digestOrNone(f.DeclaredDigest)))
	}
	return l
}

func verdictHTMLClass(c verdictClass) string {
	switch c {
	case classClean:
		return "v-ok"
	case classWarning, classInconclusive:
		return "v-warn"
	case classFindings:
		return "v-bad"
	}
	return "v-unknown"
}

func digestOrNone(d string) string {
	if d == "" {
		return "none"
	}
	return d
}

// ---- diff ----

// DiffSection is the HTML section of a diff report. deltas are the readable
// deltas (delta.Build over the two lists, r.Changes and r.Tools); nil
// builds them from the report alone.
func DiffSection(r *schemadiff.Report, deltas []delta.Tool) Section {
	if deltas == nil {
		deltas = delta.Build(nil, nil, r.Changes, r.Tools)
	}
	s := &htmlSection{
		Command: "diff", Subject: hsafe(safetext.Quote(r.Old.Source) + " → " + safetext.Quote(r.New.Source)),
		Status: strings.ToUpper(safetext.Escape(r.Decision)), Exit: r.ExitCode,
		CountsOf: "changes, by severity", Decisions: decisionCounts(r.Tools), Profile: ht(r.Profile),
	}
	s.Verdict = ht(r.Decision)
	if r.DecisionReason != "" {
		s.Verdict = hmsg(safetext.Escape(r.Decision) + ": " + r.DecisionReason)
	}
	switch r.Decision {
	case schemadiff.Allow:
		s.Class = "v-ok"
	case schemadiff.Review:
		s.Class = "v-warn"
	case schemadiff.Deny:
		s.Class = "v-bad"
	default:
		s.Class = "v-unknown"
	}
	switch r.ExitCode {
	case schemadiff.ExitNoChange:
		s.ExitText = "nothing changed, or only notation"
	case schemadiff.ExitInconclusive:
		s.ExitText = "inconclusive: the new list is partial"
	default:
		s.ExitText = "changes need review"
		if r.Decision == schemadiff.Deny {
			s.ExitText += " and are denied by the profile"
		}
	}
	var sevs []string
	for _, c := range r.Changes {
		sevs = append(sevs, c.Severity)
	}
	s.Counts = severityCounts(sevs)
	s.Facts = []htmlFact{
		{"profile", ht(r.Profile)},
		{"old", hsafe(sideText(r.Old))},
		{"new", hsafe(sideText(r.New))},
	}
	if len(r.DeniedBy) > 0 {
		s.Facts = append(s.Facts, htmlFact{"denied by", ht(strings.Join(r.DeniedBy, ", "))})
	}
	s.Cards = htmlCards(deltas)
	s.NoCards = "No tool changed."
	s.records = len(r.Changes)
	var server []htmlLine
	for _, c := range r.Changes {
		if schemadiff.IdentityKind(c.Kind) {
			sev, cls := sevTag(c.Severity)
			server = append(server, htmlLine{Severity: sev, SevClass: cls, Text: hsafe(schemadiff.Sentence(c, clipQuote) + "  [" + safetext.Escape(c.Kind) + "]")})
		}
	}
	if len(server) > 0 {
		s.Blocks = append(s.Blocks, htmlBlock{Title: "Server identity", Items: server})
	}
	if len(r.Unverified) > 0 {
		s.Blocks = append(s.Blocks, htmlBlock{Title: "Identity not compared (known on one side only)", Items: []htmlLine{{Text: ht(strings.Join(r.Unverified, ", "))}}})
	}
	lines := func(title string, xs []string) {
		var items []htmlLine
		for _, x := range xs {
			items = append(items, htmlLine{Text: hmsg(x)})
		}
		if len(items) > 0 {
			s.Blocks = append(s.Blocks, htmlBlock{Title: title, Items: items})
		}
	}
	lines("Inconclusive", r.Inconclusive)
	lines("Warnings", r.Warnings)
	return Section{s}
}

// ---- drift ----

// DriftSection is the HTML section of a live drift report. deltas are the
// readable deltas (delta.Build over the declared and the served list, the
// per-tool changes and r.Tools); nil builds them from the report alone
// (the changes its findings carry).
func DriftSection(r *probe.Report, deltas []delta.Tool) Section {
	if deltas == nil {
		deltas = delta.Build(nil, nil, DriftChanges(r), r.Tools)
	}
	s := &htmlSection{
		Command: "drift", Subject: hq(targetText(r.Target)), Exit: r.ExitCode,
		CountsOf: "findings, by severity", Decisions: decisionCounts(r.Tools), Profile: ht(r.Profile),
	}
	switch r.ExitCode {
	case probe.ExitOK:
		s.Status, s.Class, s.ExitText = "NO FINDING", "v-ok", "no finding"
	case probe.ExitFindings:
		s.Status, s.Class, s.ExitText = "FINDINGS", "v-bad", "findings need review"
	default:
		s.Status, s.Class, s.ExitText = "INCONCLUSIVE", "v-warn", "nothing was compared"
	}
	s.Verdict = ht(strconv.Itoa(len(r.Findings)) + " finding(s)")
	var sevs []string
	for _, f := range r.Findings {
		sevs = append(sevs, f.Severity)
	}
	s.Counts = severityCounts(sevs)
	rev := r.Protocol.Revision
	if rev == "" {
		rev = "unknown"
	}
	s.Facts = []htmlFact{
		{"target", hsafe(safetext.Quote(targetText(r.Target)) + " (classified " + safetext.Escape(r.Target.Class) + ")")},
		{"protocol", ht(orNoneRaw(r.Protocol.Era) + " era, " + orNoneRaw(r.Protocol.Transport) + ", revision " + rev)},
	}
	if r.Protocol.ServerName != "" || r.Protocol.ServerVersion != "" {
		s.Facts = append(s.Facts, htmlFact{"server", hsafe(safetext.Quote(r.Protocol.ServerName) + " " + safetext.Quote(r.Protocol.ServerVersion))})
	}
	s.Facts = append(s.Facts, htmlFact{"declared", hsafe(safetext.Quote(r.Declared.Source) + " (" + tools(r.Declared.ToolCount) + ")")})
	if r.NotObserved != "" {
		s.Facts = append(s.Facts, htmlFact{"served", hsafe("not observed: " + safetext.Inert(r.NotObserved))})
	}
	if r.Served != nil {
		s.Facts = append(s.Facts, htmlFact{"served", ht(fmt.Sprintf("%s in %d page(s), tools/list %s %s", tools(r.Served.ToolCount), r.Served.Pages, r.Served.Completeness, digestOrNone(r.Served.ManifestDigest)))})
	}
	if r.Profile != "" {
		s.Facts = append(s.Facts, htmlFact{"decision profile", ht(r.Profile)})
	}
	cards := htmlCards(deltas)
	byName := map[string]int{}
	for i, d := range deltas {
		byName[d.Name] = i
	}
	var findings []htmlLine
	for _, f := range r.Findings {
		l := driftFindingLine(f)
		findings = append(findings, l)
		if f.Tool == "" {
			continue
		}
		i, ok := byName[f.Tool]
		if !ok {
			byName[f.Tool] = len(cards)
			i = len(cards)
			cards = append(cards, htmlCard{Name: hname(f.Tool), Status: "finding", Decision: decLabel(""), Open: true})
		}
		cards[i].Findings = append(cards[i].Findings, l)
	}
	s.Cards = cards
	s.NoCards = "No tool drifted."
	for _, c := range cards {
		s.records += len(c.Records)
	}
	if len(findings) > 0 {
		s.Blocks = append(s.Blocks, htmlBlock{Title: "Findings", Items: findings})
	}
	var sup []htmlLine
	for _, sf := range r.Suppressed {
		head := safetext.Escape(sf.RuleID)
		if sf.Tool != "" {
			head += "  " + safetext.QuoteASCII(sf.Tool)
		}
		sup = append(sup, htmlLine{Text: hsafe(head + "  " + safetext.Escape(sf.Level)), Sub: []htmlText{hsafe(suppressionText(sf.Suppression))}})
	}
	if len(sup) > 0 {
		s.Blocks = append(s.Blocks, htmlBlock{Title: "Suppressed (accepted by the suppression file; not holding the run)", Items: sup})
	}
	lines := func(title string, xs []string) {
		var items []htmlLine
		for _, x := range xs {
			items = append(items, htmlLine{Text: hmsg(x)})
		}
		if len(items) > 0 {
			s.Blocks = append(s.Blocks, htmlBlock{Title: title, Items: items})
		}
	}
	lines("Notes", r.Notes)
	lines("Warnings", r.Warnings)
	return Section{s}
}

func driftFindingLine(f probe.Finding) htmlLine {
	sev, cls := sevTag(f.Severity)
	head := safetext.Escape(f.Level) + " " + safetext.Escape(f.RuleID)
	if f.Tool != "" {
		head += "  " + safetext.QuoteASCII(f.Tool)
	}
	l := htmlLine{Severity: sev, SevClass: cls, Text: hsafe(head), Sub: []htmlText{hmsg(f.Message)}}
	if e, ok := catalog.Lookup(f.RuleID); ok {
		l.Sub = append(l.Sub, ht(e.Title))
	}
	return l
}

// DriftChanges collects the change records a drift report's findings
// carry, once each, in the order they first appear: the per-tool changes
// delta.Build reads when the declared and served lists are not at hand.
func DriftChanges(r *probe.Report) []schemadiff.Change {
	type key struct{ name, kind, ptr, detail string }
	seen := map[key]bool{}
	var out []schemadiff.Change
	for _, f := range r.Findings {
		for _, c := range f.Changes {
			k := key{c.Name, c.Kind, c.Pointer, c.Detail}
			if !seen[k] {
				seen[k] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// htmlLayer is how the HTML report writes text safetext already escaped
// or quoted (for redact.Set: see Escapers): its escapes marked, then
// html/template's escaping, exactly as the page writes it.
func htmlLayer(s string) string {
	var b bytes.Buffer
	if err := htmlTemplate.ExecuteTemplate(&b, "txt", htmlText(safetext.Segments(s))); err != nil {
		return s
	}
	return b.String()
}
