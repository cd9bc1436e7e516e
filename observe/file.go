package observe

import (
	"context"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/runerr"
)

// FileOptions observe a saved tools/list.
type FileOptions struct {
	// Tools is the list (diff.Resolve reads one from a file).
	Tools    *manifest.ToolList
	ServerID string
	// Complete, when set, is the completeness recorded: it sets a bare
	// tool array's, and may only lower what pages prove.
	Complete   manifest.Completeness
	Classifier *classify.Classifier // nil: the built-in table
}

// FileResult is the observation of a saved list.
type FileResult struct {
	// Observed is the observed record (assay.mcp_manifest_observed.v0).
	Observed     *manifest.Observed
	Completeness manifest.Completeness
	// Warnings say which numbers the digests cannot tell apart.
	Warnings []string
}

// File builds the observed record of a saved tools/list. A completeness
// the list does not prove is a runerr.Usage error.
func File(ctx context.Context, opt FileOptions) (*FileResult, error) {
	if opt.ServerID == "" {
		return nil, runerr.Usagef("an observed record needs its server id")
	}
	tl := opt.Tools
	if tl == nil {
		return nil, runerr.Usagef("no list to observe")
	}
	comp := tl.Completeness
	if opt.Complete != "" {
		if tl.Form != manifest.FormToolArray && rank(opt.Complete) > rank(comp) {
			return nil, runerr.Usagef("--complete %s: the input proves only %s (%s); --complete may lower completeness, never raise it", opt.Complete, comp, tl.Reason)
		}
		comp = opt.Complete
	}
	return &FileResult{Observed: manifest.BuildObserved(opt.ServerID, tl, comp, opt.Classifier), Completeness: comp,
		Warnings: manifest.PrecisionWarnings("", tl.Tools)}, ctx.Err()
}

func rank(c manifest.Completeness) int {
	switch c {
	case manifest.Complete:
		return 2
	case manifest.Partial:
		return 1
	}
	return 0
}
