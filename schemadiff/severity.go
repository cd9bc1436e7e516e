package schemadiff

import (
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// How a change is recorded: its direction under the walk's polarity, its
// severity (the table in Options' comment, lowered for outputs), the text
// of its detail, and the result sorted without duplicates.

// Polarity of the walk: 1 as is, -1 inside "not" (mirrored), 0 inside "if"
// (neutral).
func schApply(dir Direction, pol int8) Direction {
	switch pol {
	case -1:
		return dir.Mirror()
	case 0:
		return Neutral
	}
	return dir
}

// emit records one change. dir is the input-schema direction before
// polarity; hi raises the severity where the table says so.
func (d *schDiffer) emit(kind, ptr string, dir Direction, pol int8, hi bool, detail, note string) {
	eff := schApply(dir, pol)
	sev := schSeverity(kind, eff, hi)
	if d.opt.Output {
		// What the tool returns is graded for the agent that reads it:
		// widening is what it may now receive unannounced, narrowing
		// (the tool returns less) is harmless, and low.
		if kind == ParamAddedOptional || kind == ParamAddedRequired {
			eff = schApply(Widening, pol)
		}
		if eff == Narrowing {
			sev = "low"
		} else if kind != ExternalRefIntroduced && kind != ExternalRefPresent {
			switch sev {
			case "high":
				sev = "medium"
			case "medium":
				sev = "low"
			}
		}
	}
	d.out = append(d.out, Change{Name: d.name, Kind: kind, Pointer: d.base + ptr,
		Direction: eff, Severity: sev, Detail: detail, Note: note})
}

func schSeverity(kind string, eff Direction, hi bool) string {
	switch kind {
	case ExternalRefIntroduced:
		return "high"
	case ExternalRefPresent, SchemaUnresolved, KeywordUnmodeled,
		ParamAddedRequired, RequiredAdded, RequiredDropped, DescriptionChanged, SchemaDefaultChanged:
		return "medium"
	case SchemaNotationChanged, SchemaDialectChanged, SchemaAnnotationChanged, TitleChanged:
		return "low"
	case ParamRemoved:
		// hi: the object is closed (callers sending it are rejected), or
		// the dropped declaration constrained the value in a way that
		// mattered.
		if hi {
			return "medium"
		}
		return "low"
	case ParamAddedOptional:
		if hi {
			return "high"
		}
		return "medium"
	case TypeChanged:
		return "high"
	}
	switch eff {
	case Widening:
		switch kind {
		case TypeWidened, TypeNarrowed, AdditionalPropertiesLoosened, AdditionalPropertiesTightened:
			return "high"
		}
		if hi {
			return "high"
		}
		return "medium"
	case Neutral:
		return "medium"
	}
	return "low"
}

func (d *schDiffer) unresolved(ptr, detail, note string) {
	d.out = append(d.out, Change{Name: d.name, Kind: SchemaUnresolved, Pointer: d.base + ptr,
		Direction: Neutral, Severity: schLower("medium", d.opt.Output), Detail: detail, Note: note})
}

func schLower(sev string, output bool) string {
	if !output {
		return sev
	}
	if sev == "high" {
		return "medium"
	}
	return "low"
}

// schPreview is a short canonical rendering of a value for a Detail.
func schPreview(v jcs.Value) string {
	return safetext.Clip(string(v.Canonical()), 60)
}

// schQuote quotes a schema's text in a detail, clipped, in safetext's
// dialect (as every value mcpdrift shows: an ESC reads \u001b, an
// invisible filler is escaped, where Go's quote wrote \x1b and left it).
func schQuote(s string) string { return safetext.Quote(safetext.Clip(s, 120)) }

func (d *schDiffer) finish() []Change {
	if len(d.out) == 0 {
		return nil
	}
	return schCompact(d.out)
}

// schCompact sorts changes by pointer, then kind (then direction, detail,
// note, severity) and drops duplicates.
func schCompact(out []Change) []Change {
	if len(out) == 0 {
		return out
	}
	slices.SortFunc(out, func(a, b Change) int {
		for _, c := range [...]int{
			strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Kind, b.Kind),
			strings.Compare(string(a.Direction), string(b.Direction)), strings.Compare(a.Detail, b.Detail),
			strings.Compare(a.Note, b.Note), strings.Compare(a.Severity, b.Severity),
		} {
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return slices.Compact(out)
}
