package report

import (
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/surface"
)

// surfaceLine says, on one line, what the run saw of the model-facing
// surface: each kind observed (with its count) or not observed, and why
// not; "" when there is none to say.
func surfaceLine(s *probe.SurfaceReport) string {
	if s == nil || len(s.Kinds) == 0 {
		return ""
	}
	parts := make([]string, 0, len(s.Kinds))
	for _, k := range s.Kinds {
		noun := k.Kind.Noun()
		if k.Kind != surface.Instructions {
			noun = k.Kind.Plural()
		}
		switch k.State {
		case surface.Observed:
			if k.Kind == surface.Instructions {
				parts = append(parts, noun+" observed")
			} else if k.Count == 1 {
				parts = append(parts, "1 "+k.Kind.Noun())
			} else {
				parts = append(parts, fmt.Sprintf("%d %s", k.Count, noun))
			}
		case surface.NotAdvertised:
			parts = append(parts, noun+" not observed (not advertised)")
		case surface.NotRequested:
			parts = append(parts, noun+" not observed (not requested)")
		default:
			parts = append(parts, noun+" not observed ("+safetext.Inert(safetext.ClipEscaped(k.Reason, 200))+")")
		}
	}
	line := strings.Join(parts, ", ")
	if !s.Pinned {
		line += "; the declared side pins none, so none was compared"
	}
	return line
}

// surfaceText writes the surface comparison of a diff (a *surface.Result
// in schemadiff.Report.Surface; nothing for anything else).
func surfaceText(t *textWriter, v any) {
	res, ok := v.(*surface.Result)
	if !ok || res == nil {
		return
	}
	if len(res.Changes) > 0 {
		t.line("")
		t.line("%s", t.paint(ansiBold, fmt.Sprintf("Surface: %d change(s)", len(res.Changes))))
		for _, c := range res.Changes {
			t.line("  %s", e(c.Code))
			t.line("        %s", msg(c.Message))
		}
	}
	for _, n := range res.Notes {
		t.line("")
		t.line("Note: %s", msg(n))
	}
}

// surfaceMarkdown writes the surface comparison of a diff.
func surfaceMarkdown(b *strings.Builder, v any) {
	res, ok := v.(*surface.Result)
	if !ok || res == nil {
		return
	}
	if len(res.Changes) > 0 {
		b.WriteString("\n| surface change | message |\n|---|---|\n")
		for _, c := range res.Changes {
			fmt.Fprintf(b, "| %s | %s |\n", mdCode(c.Code), mdMsg(c.Message))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(b, "\n> %s\n", mdMsg(n))
	}
}

// lockSurfaceLines writes a server's surface in a lock check: each change
// (its code, severity and message), what to approve, and the notes. put
// writes a composed, escaped line.
func lockSurfaceLines(put func(prefix, line string), name string, sr *lock.SurfaceResult) {
	if sr == nil {
		return
	}
	for _, c := range sr.Changes {
		put("  ", fmt.Sprintf("%s (%s): %s", safetext.Escape(c.Code), catalog.Get(c.Code).Severity, c.Message))
	}
	if len(sr.Pending) > 0 {
		put("  ", "surface to review: "+strings.Join(sr.Pending, ", ")+" — mcpdrift review "+safetext.QuoteASCII(name)+
			", or mcpdrift approve "+safetext.QuoteASCII(name)+" --instructions | --prompt NAME | --template URI | --resource URI")
	}
	for _, c := range sr.Suppressed {
		put("  ", "suppressed: "+safetext.Escape(c.Code)+": "+c.Message)
	}
	for _, n := range sr.Notes {
		put("  ", "surface: "+n)
	}
}

// changeLabel names the item a surface change is of: "the
// instructions", a kind's noun for a whole list, or the item by its key.
func changeLabel(c surface.Change) string {
	switch {
	case c.Kind == surface.Instructions:
		return "the instructions"
	case c.Key == "":
		return c.Kind.Noun()
	}
	return surface.Label(c.Kind, c.Key)
}

// SurfaceChangeText is one change of the surface as the readable delta
// shows it: its code, severity and label, then each text's word diff in
// colour (schemadiff.Words.Inline), or the message.
func SurfaceChangeText(c surface.Change, opt Options) []byte {
	t := &textWriter{color: opt.Color}
	label := changeLabel(c)
	sev := catalog.Get(c.Code).Severity
	t.line("%s: %s (%s)", t.paint(ansiBold, label), e(c.Code), e(string(sev)))
	if len(c.Texts) == 0 {
		t.line("  %s", msg(c.Message))
	}
	for _, x := range c.Texts {
		t.line("  %s (word diff):", e(x.Member))
		wordLines(t, "    ", x.Words)
	}
	return []byte(t.b.String())
}

// surfaceResults adds a result for each change of a server's surface
// (lock check): the change's code and catalogued severity, its item and
// message; a suppressed change is marked accepted.
func (s *sarifBuilder) surfaceResults(sr *lock.SurfaceResult) {
	if sr == nil {
		return
	}
	add := func(c surface.Change) {
		id, idx := s.ruleIndex(c.Code)
		label := changeLabel(c)
		sev := string(catalog.Get(c.Code).Severity)
		s.results = append(s.results, sarifResult{
			RuleID: id, RuleIndex: idx, Level: severityLevel(sev),
			Message:   sarifMessage{Text: titleFor(c.Code) + ": " + sarifMsg(label) + ", server " + sarifQuote(s.r.ServerID) + ": " + sarifMsg(c.Message)},
			Locations: s.location(""),
			PartialFingerprints: map[string]string{
				fingerprintKey: fingerprint(s.r.ServerID, string(c.Kind)+"/"+c.Key, c.Code, "", c.To),
			},
			Properties: sarifResultProps{Kind: string(catalog.Finding), Severity: sarifEscape(sev)},
		})
	}
	for _, c := range sr.Changes {
		add(c)
	}
	for _, c := range sr.Suppressed {
		add(c)
		s.results[len(s.results)-1].Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted", Justification: "accepted by the suppression file"}}
	}
}
