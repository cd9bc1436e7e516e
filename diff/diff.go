// Package diff says how the tools changed between two lists: the
// structural changes of each tool, graded and decided under a profile
// (schemadiff), and the change of what the server puts before the model
// beside its tools when the sides pin it. Load and Resolve read a side
// from a file (a manifest, a snapshot, or a declared baseline through the
// snapshot beside it); Run compares two.
package diff

import (
	"context"
	"slices"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
)

// Options are a comparison of two sides.
type Options struct {
	Old, New schemadiff.Input
	// Profile decides each tool (nil: review).
	Profile *schemadiff.DecisionProfile
	// Classifier grades added and removed tools (nil: the built-in
	// table).
	Classifier *classify.Classifier
}

// Result is a comparison.
type Result struct {
	// Report holds the changes, each tool's decision, the surface's
	// comparison and the exit code: 0 nothing changed (or notation
	// only), 1 changed, 3 a partial new side.
	Report *schemadiff.Report
}

// Run compares the two sides: every tool structurally, and when either
// side pins a surface, the surfaces (a change needs review, and is denied
// when the profile denies its code). A pinned surface that cannot be read
// is a runerr.Usage error.
func Run(ctx context.Context, opt Options) (*Result, error) {
	prof := opt.Profile
	if prof == nil {
		prof = schemadiff.ReviewProfile
	}
	c := opt.Classifier
	if c == nil {
		c = classify.Default()
	}
	r := schemadiff.Compare(opt.Old, opt.New, prof, schemadiff.ToolOptions{Classifier: c})
	if err := compareSurfaces(r, opt.Old, opt.New, prof); err != nil {
		return nil, err
	}
	return &Result{Report: r}, ctx.Err()
}

// compareSurfaces compares the surfaces two sides pin (when either pins
// one) into r: a change of the surface needs review, or is denied when
// the profile denies its code (instructions under fail-closed), and makes
// the diff exit 1.
func compareSurfaces(r *schemadiff.Report, old, nw schemadiff.Input, prof *schemadiff.DecisionProfile) error {
	if old.Surface == nil && nw.Surface == nil {
		return nil
	}
	po, err := PinnedSurface(old.Source, old.Surface)
	if err != nil {
		return err
	}
	pn, err := PinnedSurface(nw.Source, nw.Surface)
	if err != nil {
		return err
	}
	if pn == nil {
		r.Warnings = append(r.Warnings, "the new side pins no surface (instructions, prompts, resource templates), so the surfaces were not compared")
		return nil
	}
	res := surface.Compare(po, pn)
	r.Surface = &res
	for _, c := range res.Changes {
		if _, deny := prof.Deny[c.Code]; deny {
			r.Decision = schemadiff.Deny
			if !slices.Contains(r.DeniedBy, c.Code) {
				r.DeniedBy = append(r.DeniedBy, c.Code)
			}
		} else if r.Decision == schemadiff.Allow {
			r.Decision = schemadiff.Review
		}
		r.DecisionReason = ""
		r.ExitCode = schemadiff.ExitChanged
	}
	slices.Sort(r.DeniedBy)
	return nil
}

// PinnedSurface reads the surface a snapshot pins (nil, nil when it pins
// none); file names it in the error.
func PinnedSurface(file string, raw []byte) (*surface.Surface, error) {
	if raw == nil {
		return nil, nil
	}
	doc, err := jcs.Parse(raw)
	if err != nil {
		return nil, runerr.Usagef("%s: %s", safetext.Quote(file), safetext.Inert(err.Error()))
	}
	s, err := surface.Parse(doc.Root())
	if err != nil {
		return nil, runerr.Usagef("%s: %s", safetext.Quote(file), safetext.Inert(err.Error()))
	}
	return s, nil
}
