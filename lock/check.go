package lock

import (
	"slices"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
)

// CheckReportSchema identifies the report of mcpdrift lock check.
const CheckReportSchema = "mcpdrift.lock_check_report.v1"

// Statuses of a server in a check, from the best to the worst exit.
const (
	StatusClean        = "clean"        // exit 0
	StatusFindings     = "findings"     // exit 1
	StatusInconclusive = "inconclusive" // exit 3: observed, but not enough to judge
	StatusNotObserved  = "not_observed" // exit 3: nothing was observed
)

// Served is what a server serves now: its observed record (server id the
// lock's server name), the tools as served, and the identity tuple as the
// observation established it.
type Served struct {
	Observed *manifest.Observed
	Tools    []manifest.Tool
	Identity manifest.Identity
	// Surface is the model-facing surface the observation read (nil: not
	// observed).
	Surface *surface.Surface
}

// CheckOptions tune a check.
type CheckOptions struct {
	Classifier   *classify.Classifier // nil: built-in
	GateProfile  *gate.Profile        // nil: default
	Suppressions *manifest.Suppressions
	Today        string // YYYY-MM-DD (expiry of suppressions)
	// VerifiedRefs, when not nil, says the server's pinned refs were
	// fetched to verify them (--verify-refs): document URL → the digest
	// of what was fetched now ("" or absent: could not be fetched). See
	// decide.Options.VerifiedRefs.
	VerifiedRefs map[string]string
}

// RefPins is the server's trust record of external documents as the
// decision core reads it (decide.Options.PinnedRefs): document URL →
// pinned digest. Never nil, so that a server without pins still has its
// external $refs judged as unpinned.
func (s *Server) RefPins() map[string]string {
	m := make(map[string]string, len(s.Refs))
	for _, r := range s.Refs {
		m[r.URL] = r.SHA256
	}
	return m
}

// Baseline is the server's approved tools as the gateway's baseline,
// checked against its declared entries by manifest.CheckBaseline (as
// Parse checked them), with its pinned refs (and, when verification was
// asked, what was fetched; nil: not asked) carried along, so that a
// reload replaces both.
func (s *Server) Baseline(verified map[string]string) *decide.Baseline {
	b := decide.NewDeclaredBaseline(s.Name, s.Identity, s.Declared, &manifest.Definitions{Tools: s.ToolValues(), From: "the lock's definitions", ServerID: s.Name})
	b.PinnedRefs, b.VerifiedRefs, b.NameAcknowledged = s.RefPins(), verified, s.NameAcknowledged
	b.Surface = s.Surface
	return b
}

// DecideOptions are the options of every decision about this server: its
// profile, the classifier, its pinned refs and, when verification was
// asked, what was fetched (nil: not asked). The gateway with --lock
// decides with these.
func (s *Server) DecideOptions(c *classify.Classifier, verified map[string]string) (decide.Options, error) {
	dprof, err := schemadiff.DecisionProfileByName(s.Profile)
	if err != nil {
		return decide.Options{}, err
	}
	return decide.Options{Profile: dprof, Classifier: c, PinnedRefs: s.RefPins(), VerifiedRefs: verified}, nil
}

// ServerResult is one server's check: the gate against its lock entry,
// with the structural changes and the per-tool decisions of its profile,
// and what the gateway would do with the list (Withheld).
type ServerResult struct {
	Name     string `json:"name"`
	Target   string `json:"target,omitempty"`
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	// Error says why the server was not observed (escaped; never a
	// secret).
	Error   string `json:"error,omitempty"`
	Profile string `json:"profile"`
	// Withheld: the gateway would serve none of this server's tools
	// (identity mismatch, an incomplete or ambiguous list); Reason is the
	// decision code, Detail the sentence.
	Withheld       bool   `json:"withheld"`
	WithheldReason string `json:"withheld_reason,omitempty"`
	WithheldDetail string `json:"withheld_detail,omitempty"`
	// Pending are the tools a reviewer must approve (their decision is
	// review or deny, or they were added or removed), by name.
	Pending []string `json:"pending"`
	// AutoApprovable are the changes that validate the same (notation
	// included) this server's profile approves: they do not hold the check (the gate lists their findings
	// as suppressed, with the reason), and review or approve records them
	// in the lock as auto-approved.
	AutoApprovable []string     `json:"auto_approvable"`
	Gate           *gate.Report `json:"gate,omitempty"`
	// Decisions are the profile's decisions on every tool (the gate
	// report's Tools are their verdicts), for review and approve.
	Decisions []decide.Tool `json:"-"`
	// Surface is the comparison of the model-facing surface with the
	// approved one (nil: not made).
	Surface *SurfaceResult `json:"surface,omitempty"`
}

// NotObserved is the result of a server that could not be observed: the
// gate of the not-observed record against its lock entry (inconclusive,
// with the gate's own codes), and why.
func (s *Server) NotObserved(target, why string, opt CheckOptions) *ServerResult {
	res := &ServerResult{Name: s.Name, Target: target, Status: StatusNotObserved, ExitCode: 3, Error: why, Profile: s.Profile, Pending: []string{}, AutoApprovable: []string{}}
	r, err := gate.Evaluate(gate.Input{Observed: manifest.NotObserved(s.Name), Declared: s.Declared, Profile: opt.GateProfile, Classifier: opt.Classifier, Today: opt.Today})
	if err == nil {
		r.ExitCode = 3 // never clean, whatever the gate made of no tools
		res.Gate = r
	}
	return res
}

// autoReason is the reason an auto-approved finding is listed with.
const autoReason = "a change that validates the same (notation, a neutral dialect, annotations validation never reads): the lock's profile auto-approves it (auto_approve: notation); review or approve records it"

// Check gates what s serves now against its lock entry. It is pure: the
// observation is the caller's.
func (s *Server) Check(sv *Served, opt CheckOptions) (*ServerResult, error) {
	c := opt.Classifier
	if c == nil {
		c = classify.Default()
	}
	dopt, err := s.DecideOptions(c, opt.VerifiedRefs)
	if err != nil {
		return nil, err
	}
	dprof := dopt.Profile
	pinned := s.ToolValues()
	res := &ServerResult{Name: s.Name, Profile: s.Profile, Pending: []string{}, AutoApprovable: []string{}}
	old := schemadiff.Input{Side: schemadiff.Side{Identity: &s.Identity, ServerID: s.Name}, Tools: pinned}
	nw := schemadiff.Input{Side: schemadiff.Side{Identity: &sv.Identity, ServerID: s.Name, Completeness: string(sv.Observed.Observed.ToolsListComplete)}, Tools: sv.Tools}
	decisions, structural := decide.DecideAndDiff(old, nw, dopt)
	refFindings := false
	for _, d := range decisions {
		switch {
		case d.Reason == decide.ReasonUnchanged:
		case !d.Removed && d.Digest == d.Pinned:
			// Unchanged bytes, but an external $ref's document is not
			// pinned or no longer what was pinned: a finding the digest
			// gate cannot see.
			refFindings = true
			res.Pending = append(res.Pending, d.Name)
		case (d.Reason == decide.ReasonNotationOnly || d.Reason == decide.ReasonValidatesSame) && s.AutoApproves(AutoNotation):
			// Notation, and what validates the same beside it (a dialect
			// no keyword reads differently, annotations validation never
			// reads): allowed under every profile, as notation is.
			res.AutoApprovable = append(res.AutoApprovable, d.Name)
		default:
			res.Pending = append(res.Pending, d.Name)
		}
	}
	slices.Sort(res.Pending)
	slices.Sort(res.AutoApprovable)

	in := gate.Input{Observed: sv.Observed, Declared: s.Declared, Profile: opt.GateProfile, Classifier: c, Suppressions: opt.Suppressions, Today: opt.Today}
	r, err := gate.Evaluate(in)
	if err != nil {
		return nil, err
	}
	if len(res.AutoApprovable) > 0 {
		// The digest findings of a notation-only change stay visible, as
		// suppressed findings with the profile's reason: no blind spot.
		auto := &manifest.Suppressions{Version: 1}
		if opt.Suppressions != nil {
			auto.Version = opt.Suppressions.Version
			auto.Items = slices.Clone(opt.Suppressions.Items)
		}
		for _, f := range r.Findings {
			if slices.Contains(res.AutoApprovable, f.Name) {
				auto.Items = append(auto.Items, manifest.Suppression{Rule: f.ReasonCode, Server: s.Name, Tool: f.Name, Reason: autoReason, Source: "the lock's profile of server " + s.Name})
			}
		}
		in.Suppressions = auto
		if r, err = gate.Evaluate(in); err != nil {
			return nil, err
		}
	}
	r.StructuralChanges = structural
	r.DecisionProfile = dprof.Name
	r.Tools = make([]schemadiff.ToolVerdict, 0, len(decisions))
	for _, d := range decisions {
		r.Tools = append(r.Tools, d.Verdict())
	}
	res.Gate, res.Decisions = r, decisions
	res.ExitCode = r.ExitCode
	if refFindings {
		res.ExitCode = 1
	}

	// The gateway's whole-server rule (its per-tool decisions are those
	// above).
	if reason, detail, ok := decide.Withheld(decide.NewBaseline(s.Name, s.Identity, pinned), &decide.Served{Tools: sv.Tools, Completeness: sv.Observed.Observed.ToolsListComplete, Identity: sv.Identity}, dopt); ok {
		res.Withheld, res.WithheldReason, res.WithheldDetail = true, reason, detail
		// An identity the lock did not approve is a finding even when
		// every tool digest matches: the gateway would serve nothing.
		if reason == decide.ReasonIdentityMismatch && res.ExitCode != 1 {
			res.ExitCode = 1
		}
	}
	s.checkSurface(res, sv, dprof, opt)
	res.Status = StatusFor(res.ExitCode)
	return res, nil
}

// StatusFor is the status of an exit code.
func StatusFor(code int) string {
	switch code {
	case 0:
		return StatusClean
	case 1:
		return StatusFindings
	}
	return StatusInconclusive
}

// Aggregate is the exit code of many servers: 1 when any has findings,
// else 3 when any is inconclusive or was not observed, else 0. An
// inconclusive server is never hidden by a clean neighbour.
func Aggregate(results []*ServerResult) int {
	code := 0
	for _, r := range results {
		switch {
		case r.ExitCode == 1:
			return 1
		case r.ExitCode != 0:
			code = 3
		}
	}
	return code
}

// CheckReport is the report of mcpdrift lock check.
type CheckReport struct {
	Schema   string          `json:"schema"`
	Lock     string          `json:"lock"`
	Signed   string          `json:"signed_by,omitempty"`
	ExitCode int             `json:"exit_code"`
	Counts   map[string]int  `json:"counts"`
	Servers  []*ServerResult `json:"servers"`
}

// NewCheckReport orders the results worst first (then by name) and
// aggregates them.
func NewCheckReport(lockFile string, results []*ServerResult) *CheckReport {
	rank := map[string]int{StatusFindings: 0, StatusNotObserved: 1, StatusInconclusive: 2, StatusClean: 3}
	rs := slices.Clone(results)
	slices.SortStableFunc(rs, func(a, b *ServerResult) int {
		if d := rank[a.Status] - rank[b.Status]; d != 0 {
			return d
		}
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	counts := map[string]int{StatusClean: 0, StatusFindings: 0, StatusInconclusive: 0, StatusNotObserved: 0}
	for _, r := range rs {
		counts[r.Status]++
	}
	return &CheckReport{Schema: CheckReportSchema, Lock: lockFile, ExitCode: Aggregate(rs), Counts: counts, Servers: rs}
}
