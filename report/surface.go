package report

import (
	"fmt"
	"strings"

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
