// Package gate implements the consumer side of the Assay MCP manifest-drift
// specification: the coarse gate (observed manifest_digest against the
// policy map), the granular per-tool gate against a declared baseline, and
// field-level attribution. It is pure: no I/O, no clock.
package gate

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Coarse verdicts, and the two granular ones.
const (
	NoFinding                = "no_finding"
	NoFindingCoverageWarning = "no_finding_with_coverage_warning"
	PendingReview            = "pending_tool_manifest_review"
	NotObserved              = "inconclusive_manifest_not_observed"
	PartialObservation       = "inconclusive_manifest_partial_observation"
	ObservationAmbiguous     = "manifest_observation_ambiguous"
	Inconclusive             = "inconclusive"
)

// Exit codes of the gate (a contract; see docs/configuration.md, "Exit codes").
const (
	ExitOK           = 0
	ExitFindings     = 1
	ExitBadInput     = 2
	ExitInconclusive = 3
)

// ReportSchemaID versions the JSON report.
const ReportSchemaID = "mcpdrift.gate_report.v1"

// Finding is one reviewable drift.
type Finding struct {
	Name           string   `json:"name,omitempty"`
	ReasonCode     string   `json:"reason_code"`
	Severity       string   `json:"severity"`
	Field          string   `json:"field,omitempty"`
	Privileged     bool     `json:"privileged"`
	ActionClass    string   `json:"action_class,omitempty"`
	ObservedDigest string   `json:"observed_digest,omitempty"`
	DeclaredDigest string   `json:"declared_digest,omitempty"`
	Notes          []string `json:"notes,omitempty"`
}

// Detail explains one inconclusive or warning code for people (and, in
// JSON, a name-check finding: which code points, which fold). It never
// holds server-controlled text other than a tool name.
type Detail struct {
	Code    string `json:"code"`
	Kind    string `json:"kind"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

// Report is the gate's result.
type Report struct {
	Schema                 string    `json:"schema"`
	Verdict                string    `json:"verdict"`
	Mode                   string    `json:"mode"`
	Profile                string    `json:"profile"`
	ServerID               string    `json:"server_id"`
	Canonicalization       string    `json:"canonicalization"`
	ObservedStatus         string    `json:"observed_status"`
	ToolsListComplete      string    `json:"tools_list_complete"`
	ObservedManifestDigest *string   `json:"observed_manifest_digest"`
	DeclaredManifestDigest string    `json:"declared_manifest_digest,omitempty"`
	PolicyManifestDigest   string    `json:"policy_manifest_digest,omitempty"`
	ObservedToolCount      int       `json:"observed_tool_count"`
	DeclaredToolCount      int       `json:"declared_tool_count,omitempty"`
	Findings               []Finding `json:"findings"`
	Inconclusive           []string  `json:"inconclusive"`
	Warnings               []string  `json:"warnings"`
	Details                []Detail  `json:"details"`
	// Suppressed are findings a suppression file accepted: they no longer
	// hold the run, and every format lists them with their reason.
	Suppressed []SuppressedFinding `json:"suppressed"`
	// StructuralChanges explain digest findings when raw snapshots exist on
	// both sides (mcpdrift diff's change records). They never change the
	// verdict: a digest-changed tool stays a finding.
	StructuralChanges []schemadiff.Change `json:"structural_changes,omitempty"`
	// Tools, with snapshots on both sides, is the decision on every tool
	// under the decision profile: the entries diff and drift carry.
	DecisionProfile string                   `json:"decision_profile,omitempty"`
	Tools           []schemadiff.ToolVerdict `json:"tools,omitempty"`
	ExitCode        int                      `json:"exit_code"`
}

// Input is what the gate reads.
type Input struct {
	Observed *manifest.Observed
	Declared *manifest.Declared // nil: coarse gate only
	// Definitions, when not nil, are the tool definitions pinned with
	// Declared (its snapshot, a lock's definitions): the baseline's
	// validity (manifest.CheckBaseline) then covers them too.
	Definitions *manifest.Definitions
	Policy      *manifest.Policy // nil: granular gate only
	Profile     *Profile         // nil: Default
	// Classifier re-classifies tool names on the consumer side; a tool is
	// privileged if either artifact or this classifier says so. nil means
	// the built-in table.
	Classifier *classify.Classifier
	// Suppressions accept findings by rule, server id and tool (nil:
	// none); Today (YYYY-MM-DD, UTC) decides expiry — the gate reads no
	// clock.
	Suppressions *manifest.Suppressions
	Today        string
}

// SuppressedFinding is a finding a suppression accepted.
type SuppressedFinding struct {
	Finding
	Suppression manifest.Suppression `json:"suppression"`
}

// InputError is a combination of inputs the gate cannot evaluate at all
// (exit 2), as opposed to evidence that is inconclusive (exit 3).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Evaluate evaluates the gate: the pure core of Run, on parsed artifacts.
func Evaluate(in Input) (*Report, error) {
	if in.Observed == nil {
		return nil, &InputError{"no observed record"}
	}
	if in.Declared == nil && in.Policy == nil {
		return nil, &InputError{"nothing to compare against: give a declared baseline, a policy, or both"}
	}
	if in.Profile == nil {
		in.Profile = Default
	}
	if in.Classifier == nil {
		in.Classifier = classify.Default()
	}
	o := in.Observed
	r := &Report{
		Schema:            ReportSchemaID,
		Profile:           in.Profile.Name,
		ServerID:          o.Server.ID,
		Canonicalization:  o.Observed.Canonicalization,
		ObservedStatus:    o.Status,
		ToolsListComplete: string(o.Observed.ToolsListComplete),
		ObservedToolCount: len(o.Observed.ToolDigests),
		Findings:          []Finding{},
		Inconclusive:      []string{},
		Warnings:          []string{},
		Details:           []Detail{},
		Suppressed:        []SuppressedFinding{},
	}
	if o.Observed.ManifestDigest != nil {
		d := *o.Observed.ManifestDigest
		r.ObservedManifestDigest = &d
	} else if o.Status == manifest.StatusObserved && !hasDuplicates(o.NameDigests()) {
		// Records of earlier producers may omit the digest; it is
		// deterministic from tool_digests.
		d := manifest.ManifestDigest(o.NameDigests())
		r.ObservedManifestDigest = &d
	}
	var pol *manifest.PolicyManifest
	if in.Policy != nil {
		if p, ok := in.Policy.DeclaredMCPManifests[o.Server.ID]; ok {
			pol = &p
			r.PolicyManifestDigest = p.ManifestDigest
		}
	}
	if in.Declared == nil {
		if pol == nil {
			return nil, &InputError{fmt.Sprintf("the policy has no declared_mcp_manifests entry for server %s", safetext.Quote(o.Server.ID))}
		}
		if o.Observed.Canonicalization != manifest.ProjectionID {
			return nil, &InputError{fmt.Sprintf("the observed record uses canonicalization %s; the policy map pins %s digests", safetext.Quote(o.Observed.Canonicalization), manifest.ProjectionID)}
		}
		r.Mode = "coarse"
		coarse(r, o, pol, in.Profile)
		coarseNames(r, o, in)
	} else {
		r.Mode = "granular"
		r.DeclaredManifestDigest = in.Declared.ManifestDigest
		r.DeclaredToolCount = len(in.Declared.Tools)
		granular(r, o, in.Declared, pol, in.Policy != nil, in)
	}
	suppress(r, in)
	finish(r)
	return r, nil
}

// suppress moves the findings a suppression accepts out of Findings, and
// warns of a matching suppression that has expired.
func suppress(r *Report, in Input) {
	if in.Suppressions == nil {
		return
	}
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		m, expired := in.Suppressions.Match(f.ReasonCode, f.Name, []string{r.ServerID}, in.Today)
		switch {
		case m != nil:
			r.Suppressed = append(r.Suppressed, SuppressedFinding{Finding: f, Suppression: *m})
			continue
		case expired != nil:
			r.warn("suppression_expired", f.Name, fmt.Sprintf("%s expired on %s, so it no longer accepts %s", expired.Source, expired.Expires, f.ReasonCode))
		}
		kept = append(kept, f)
	}
	r.Findings = kept
	if len(r.Suppressed) > 0 {
		// Never silent: a run with suppressed findings is never plain
		// no_finding.
		r.warn("findings_suppressed", "", fmt.Sprintf("suppressed: %d finding(s) accepted by the suppression file, each listed with its reason", len(r.Suppressed)))
		if r.Mode == "coarse" && r.Verdict == PendingReview && len(r.Findings) == 0 {
			r.Verdict = NoFindingCoverageWarning
		}
	}
}

func (r *Report) inconclusive(code, name, msg string) {
	e := catalog.Get(code)
	if !slices.Contains(r.Inconclusive, code) {
		r.Inconclusive = append(r.Inconclusive, code)
	}
	r.Details = append(r.Details, Detail{Code: code, Kind: string(e.Kind), Name: name, Message: msg})
}

func (r *Report) warn(code, name, msg string) {
	e := catalog.Get(code)
	if !slices.Contains(r.Warnings, code) {
		r.Warnings = append(r.Warnings, code)
	}
	r.Details = append(r.Details, Detail{Code: code, Kind: string(e.Kind), Name: name, Message: msg})
}

func coarse(r *Report, o *manifest.Observed, pol *manifest.PolicyManifest, prof *Profile) {
	b := &o.Observed
	switch {
	case o.Status == manifest.StatusNotObserved || !b.ToolsListObserved:
		r.Verdict = NotObserved
		r.inconclusive(NotObserved, "", "no tools/list was observed; absence of evidence is not \"no drift\"")
		return
	case o.Status == manifest.StatusAmbiguous || hasDuplicates(o.NameDigests()):
		r.Verdict = ObservationAmbiguous
		r.inconclusive(ObservationAmbiguous, "", "the observed tools/list has duplicate tool names")
		return
	}
	if b.ToolsListComplete == manifest.Partial {
		if pol.PartialObservation != "warn" {
			r.Verdict = PartialObservation
			r.inconclusive(PartialObservation, "", "the pagination chain was not completed; the policy does not allow warning-only")
			return
		}
		r.warn("manifest_partial_observation_allowed", "", "the observation is partial; the policy allows warning-only for this server")
	}
	if r.ObservedManifestDigest == nil || *r.ObservedManifestDigest != pol.ManifestDigest {
		r.Verdict = PendingReview
		r.Findings = append(r.Findings, Finding{
			ReasonCode:     "mcp_tool_manifest_drift",
			Severity:       string(prof.severity("mcp_tool_manifest_drift", false)),
			ObservedDigest: deref(r.ObservedManifestDigest),
			DeclaredDigest: pol.ManifestDigest,
		})
		return
	}
	switch b.ToolsListComplete {
	case manifest.Complete:
		if len(r.Warnings) > 0 {
			r.Verdict = NoFindingCoverageWarning
		} else {
			r.Verdict = NoFinding
		}
	default:
		if b.ToolsListComplete == manifest.Unknown {
			r.warn("manifest_coverage_unknown", "", "the digest matches, but nothing proves the observation was the whole list")
		}
		r.Verdict = NoFindingCoverageWarning
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func hasDuplicates(nd []manifest.NameDigest) bool {
	seen := make(map[string]struct{}, len(nd))
	for _, e := range nd {
		if _, ok := seen[e.Name]; ok {
			return true
		}
		seen[e.Name] = struct{}{}
	}
	return false
}

func granular(r *Report, o *manifest.Observed, d *manifest.Declared, pol *manifest.PolicyManifest, havePolicy bool, in Input) {
	if !granularValid(r, o, d, pol, havePolicy, in) {
		return
	}
	declared := make(map[string]*manifest.ToolEntry, len(d.Tools))
	for i := range d.Tools {
		declared[d.Tools[i].Name] = &d.Tools[i]
	}
	observed := make(map[string]*manifest.ToolEntry, len(o.Observed.ToolDigests))
	for i := range o.Observed.ToolDigests {
		observed[o.Observed.ToolDigests[i].Name] = &o.Observed.ToolDigests[i]
	}
	for i := range o.Observed.ToolDigests {
		granularTool(r, &o.Observed.ToolDigests[i], declared, in)
	}
	checkNames(r, o, func(n string) bool { return declared[n] != nil }, in)
	granularMissing(r, o, d, pol, observed, in)
}

// granularValid makes the validity checks of a granular gate, each
// inconclusive; false when any failed, which stops the diff.
func granularValid(r *Report, o *manifest.Observed, d *manifest.Declared, pol *manifest.PolicyManifest, havePolicy bool, in Input) bool {
	// The baseline's own validity check is the one the gateway and the
	// lock reader make.
	for _, p := range manifest.CheckBaseline(d, in.Definitions) {
		r.inconclusive(p.Code, "", p.Message)
	}
	if o.Server.ID != d.Server.ID {
		r.inconclusive("mcp_manifest_server_mismatch", "", "the observed and declared server ids differ")
	}
	if o.Observed.Canonicalization != d.Canonicalization {
		r.inconclusive("mcp_manifest_canonicalization_mismatch", "", "the observed and declared canonicalizations differ")
	}
	if o.Status == manifest.StatusNotObserved || !o.Observed.ToolsListObserved {
		r.inconclusive(NotObserved, "", "no tools/list was observed")
	} else if o.Status == manifest.StatusAmbiguous || hasDuplicates(o.NameDigests()) {
		r.inconclusive("mcp_manifest_observation_ambiguous", "", "the observed tools/list is ambiguous (duplicate tool names)")
	}
	if havePolicy {
		if pol == nil {
			r.warn("manifest_policy_entry_missing", "", "the policy does not pin this server; the coarse-consistency check was skipped")
		} else if pol.ManifestDigest != d.ManifestDigest {
			r.inconclusive("declared_manifest_baseline_conflict", "", "the policy's manifest_digest for this server is not the declared baseline's")
		}
	}
	return len(r.Inconclusive) == 0
}

// privilege is whether a tool is privileged (its entry says so, or the
// classifier does) and its action class (the entry's, else the
// classifier's); false and "" for no tool.
func (in Input) privilege(t *manifest.ToolEntry) (bool, string) {
	if t == nil {
		return false, ""
	}
	c := in.Classifier.Classify(t.Name)
	ac := ""
	if t.ActionClass != nil {
		ac = *t.ActionClass
	}
	if ac == "" {
		ac = c.ActionClass
	}
	return t.Privileged || c.Privileged, ac
}

// granularTool judges one observed tool against the declared tool of its
// name: added, unchanged, or changed in the fields whose digests differ.
func granularTool(r *Report, ot *manifest.ToolEntry, declared map[string]*manifest.ToolEntry, in Input) {
	dt := declared[ot.Name]
	op, oac := in.privilege(ot)
	if dt == nil {
		code := "mcp_tool_added"
		if op {
			code = "mcp_new_privileged_tool"
		}
		r.Findings = append(r.Findings, Finding{Name: ot.Name, ReasonCode: code,
			Severity: string(in.Profile.severity(code, op)), Privileged: op, ActionClass: oac, ObservedDigest: ot.ToolDigest})
		return
	}
	dp, dac := in.privilege(dt)
	p := op || dp
	ac := oac
	if ac == "" {
		ac = dac
	}
	changed := ot.ToolDigest != dt.ToolDigest
	attributable := ot.FieldDigests.Complete() && dt.FieldDigests.Complete()
	var differing []string
	if attributable {
		for _, f := range manifest.FieldNames {
			if ot.FieldDigests.Get(f) != dt.FieldDigests.Get(f) {
				differing = append(differing, f)
			}
		}
	}
	switch {
	case !changed && len(differing) > 0:
		// Reverse consistency guard: field digests never tell a
		// stronger story than the canonical tool digest.
		r.inconclusive("field_attribution_inconsistent", ot.Name, fmt.Sprintf("tool_digest is unchanged but %d field digest(s) differ; no field finding is made", len(differing)))
	case !changed:
	case len(differing) > 0:
		for _, f := range differing {
			code := "mcp_tool_" + f + "_changed"
			r.Findings = append(r.Findings, Finding{Name: ot.Name, ReasonCode: code, Field: f,
				Severity: string(in.Profile.severity(code, p)), Privileged: p, ActionClass: ac,
				ObservedDigest: ot.ToolDigest, DeclaredDigest: dt.ToolDigest})
		}
	default:
		code := "mcp_tool_changed"
		if p {
			code = "mcp_privileged_tool_changed"
		}
		note := "field_attribution_unavailable"
		if attributable {
			note = "field_attribution_inconsistent"
			r.inconclusive(note, ot.Name, "tool_digest changed but no field digest did")
		} else {
			r.warn(note, ot.Name, "field_digests are missing or incomplete on one side; the change cannot be attributed to a field")
		}
		r.Findings = append(r.Findings, Finding{Name: ot.Name, ReasonCode: code,
			Severity: string(in.Profile.severity(code, p)), Privileged: p, ActionClass: ac,
			ObservedDigest: ot.ToolDigest, DeclaredDigest: dt.ToolDigest, Notes: []string{note}})
	}
}

// granularMissing judges the declared tools not observed: removed when
// the observation is complete, else not evaluable (inconclusive, or a
// warning where the policy allows it); and a partial observation that
// missed no declared tool.
func granularMissing(r *Report, o *manifest.Observed, d *manifest.Declared, pol *manifest.PolicyManifest, observed map[string]*manifest.ToolEntry, in Input) {
	complete := o.Observed.ToolsListComplete == manifest.Complete
	var missing []*manifest.ToolEntry
	for i := range d.Tools {
		if observed[d.Tools[i].Name] == nil {
			missing = append(missing, &d.Tools[i])
		}
	}
	if len(missing) > 0 {
		if complete {
			for _, dt := range missing {
				p, ac := in.privilege(dt)
				code := "mcp_tool_removed"
				if p {
					code = "mcp_privileged_tool_removed"
				}
				r.Findings = append(r.Findings, Finding{Name: dt.Name, ReasonCode: code,
					Severity: string(in.Profile.severity(code, p)), Privileged: p, ActionClass: ac, DeclaredDigest: dt.ToolDigest})
			}
		} else if pol != nil && pol.PartialObservation == "warn" && o.Observed.ToolsListComplete == manifest.Partial {
			r.warn("manifest_partial_observation_allowed", "", fmt.Sprintf("%d declared tool(s) were not observed; removals are not evaluable and the policy allows warning-only", len(missing)))
		} else {
			r.inconclusive(PartialObservation, "", fmt.Sprintf("removals are not evaluable: the manifest observation was incomplete (%s) and %d declared tool(s) were not observed", o.Observed.ToolsListComplete, len(missing)))
		}
	} else if o.Observed.ToolsListComplete == manifest.Partial {
		// Partial means pages went unseen: what is on them (a privileged
		// tool past the page cap, say) cannot be judged, so the run is
		// inconclusive exactly as in the coarse gate, unless the policy
		// explicitly allows warning-only. Findings among the observed tools
		// are still asserted (and decide the verdict); the gap is then
		// said as a warning, so the per-tool output of the specification
		// stays as it is.
		msg := "every declared tool was observed, but the observation is partial: tools on the pages that were not seen cannot be judged"
		switch {
		case pol != nil && pol.PartialObservation == "warn":
			r.warn("manifest_partial_observation_allowed", "", msg+"; the policy allows warning-only")
		case len(r.Findings) > 0:
			r.warn("manifest_partial_observation_unjudged", "", msg)
		default:
			r.inconclusive(PartialObservation, "", msg+"; the policy does not allow warning-only")
		}
	} else if !complete {
		r.warn("manifest_coverage_unknown", "", fmt.Sprintf("every declared tool was observed, but the observation is %s: unobserved pages could hold more", o.Observed.ToolsListComplete))
	}
}

// finish sorts findings (most severe first, then name, then code), sets the
// granular verdict and the exit code.
func finish(r *Report) {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if ra, rb := catalog.Severity(a.Severity).Rank(), catalog.Severity(b.Severity).Rank(); ra != rb {
			return ra > rb
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.ReasonCode < b.ReasonCode
	})
	if r.Mode == "granular" {
		switch {
		case len(r.Findings) > 0:
			r.Verdict = PendingReview
		case len(r.Inconclusive) > 0:
			r.Verdict = Inconclusive
		case len(r.Warnings) > 0:
			r.Verdict = NoFindingCoverageWarning
		default:
			r.Verdict = NoFinding
		}
	}
	switch r.Verdict {
	case PendingReview:
		r.ExitCode = ExitFindings
	case NoFinding, NoFindingCoverageWarning:
		r.ExitCode = ExitOK
	default:
		r.ExitCode = ExitInconclusive
	}
}
