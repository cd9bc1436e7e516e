package pin

import (
	"context"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/runerr"
)

// FileOptions pin a saved tools/list.
type FileOptions struct {
	// Tools is the list (a file read with diff.Resolve: a manifest in any
	// form observe accepts, or a snapshot's).
	Tools *manifest.ToolList
	// Source names the list in messages (its file).
	Source   string
	ServerID string
	// Identity is what the snapshot records of where the tools came from
	// (the endpoint, publisher key, server name and version, as given).
	Identity   manifest.Identity
	Classifier *classify.Classifier // nil: the built-in table
	AllowEmpty bool
	Vouch      manifest.Vouch
}

// File observes a saved tools/list and pins it in one step.
func File(ctx context.Context, opt FileOptions) (*Result, error) {
	if opt.ServerID == "" {
		return nil, runerr.Usagef("a pin of a list needs its server id")
	}
	if opt.Tools == nil {
		return nil, runerr.Usagef("no list to pin")
	}
	tl := opt.Tools
	c := &checks{}
	c.check(tl.Tools)
	r := &Result{Tools: tl, Identity: opt.Identity, Completeness: tl.Completeness, Target: opt.Source}
	r.Observed = manifest.BuildObserved(opt.ServerID, tl, tl.Completeness, opt.Classifier)
	if r.Observed.Observed.ManifestDigest != nil {
		r.SnapshotOptions.ManifestDigest = *r.Observed.Observed.ManifestDigest
	}
	r.Warnings = append(r.Warnings, c.precisionWarnings()...)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r, r.pin(opt.Source, opt.AllowEmpty, opt.Vouch, c)
}
