package gate

import (
	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/toolname"
)

// foldNotes are the notes that say which fold made names collide.
var foldNotes = map[toolname.Fold]string{
	toolname.FoldNFC:        "mcp_tool_names_fold_nfc",
	toolname.FoldCase:       "mcp_tool_names_fold_case",
	toolname.FoldConfusable: "mcp_tool_names_fold_confusable",
}

// toolPrivilege is privileged and the action class of an observed tool: the
// artifact's word or the classifier's (which classifies the name's
// confusable fold, so a disguised privileged name is privileged).
func toolPrivilege(t *manifest.ToolEntry, c *classify.Classifier) (bool, string) {
	res := c.Classify(t.Name)
	ac := ""
	if t.ActionClass != nil {
		ac = *t.ActionClass
	}
	if ac == "" {
		ac = res.ActionClass
	}
	return t.Privileged || res.Privileged, ac
}

// checkNames runs the name check (package toolname) on the observed tool
// names. An unsafe name the reference vouches for (vouched) is a warning, a
// new one a finding: the baseline was reviewed, and repeating a reviewed
// name as a finding on every run would only teach people to ignore it. A
// group of names that collide is a finding for every name of the group,
// vouched or not, so the reviewer sees what a name imitates: a baseline
// vouches for a collision only through its acknowledgement, a suppression
// with a reason and an expiry. Messages never
// quote a name: the name is the finding's (or detail's) own, which every
// renderer escapes (non-ASCII code points as \uXXXX), and the messages give
// the code points as U+XXXX.
func checkNames(r *Report, o *manifest.Observed, vouched func(name string) bool, in Input) {
	tools := o.Observed.ToolDigests
	list := make([]string, len(tools))
	for i := range tools {
		list[i] = tools[i].Name
	}
	res := toolname.Check(list)
	if res.Empty() {
		return
	}
	for _, u := range res.Unsafe {
		if vouched(u.Name) {
			r.warn("mcp_pinned_tool_name_unsafe", u.Name, u.Describe())
			continue
		}
		t := &tools[u.Index]
		p, ac := toolPrivilege(t, in.Classifier)
		const code = "mcp_tool_name_unsafe"
		r.Findings = append(r.Findings, Finding{Name: u.Name, ReasonCode: code, Severity: string(in.Profile.severity(code, p)),
			Privileged: p, ActionClass: ac, ObservedDigest: t.ToolDigest})
		r.Details = append(r.Details, Detail{Code: code, Kind: string(catalog.Finding), Name: u.Name, Message: u.Describe()})
	}
	for _, g := range res.Ambiguous {
		groupPriv := false
		for k := range g.Names {
			if p, _ := toolPrivilege(&tools[g.Indexes[k]], in.Classifier); p {
				groupPriv = true
			}
		}
		msg := g.Describe()
		for k, n := range g.Names {
			// A baseline does not vouch for a collision: pin refuses one
			// the operator did not acknowledge, and the acknowledgement is
			// a suppression of this finding (manifest.NameCollisionRule),
			// which the gate applies as it applies any.
			t := &tools[g.Indexes[k]]
			p, ac := toolPrivilege(t, in.Classifier)
			const code = "mcp_tool_names_ambiguous"
			r.Findings = append(r.Findings, Finding{Name: n, ReasonCode: code, Severity: string(in.Profile.severity(code, groupPriv)),
				Privileged: p, ActionClass: ac, ObservedDigest: t.ToolDigest, Notes: []string{foldNotes[g.Fold]}})
			r.Details = append(r.Details, Detail{Code: code, Kind: string(catalog.Finding), Name: n, Message: msg})
		}
	}
}

// coarseNames runs the name check for the coarse gate, which has no
// per-tool baseline: when the manifest digest matches the policy, every
// name is the pinned one (warnings); when it drifted, none is vouched for
// (findings, beside the drift finding). A run that stopped before the
// digest comparison (not observed, ambiguous, partial) is left as it is.
func coarseNames(r *Report, o *manifest.Observed, in Input) {
	switch r.Verdict {
	case PendingReview:
		checkNames(r, o, func(string) bool { return false }, in)
	case NoFinding, NoFindingCoverageWarning:
		checkNames(r, o, func(string) bool { return true }, in)
		if len(r.Warnings) > 0 {
			r.Verdict = NoFindingCoverageWarning
		}
	}
}
