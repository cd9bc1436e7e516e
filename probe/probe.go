package probe

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Levels of live-drift findings (the specification's scale), and how they
// map onto catalogue severities.
const (
	LevelError = "ERROR"
	LevelWarn  = "WARN"
	LevelInfo  = "INFO"
)

// LevelOf maps a catalogue severity to the specification's level.
func LevelOf(s catalog.Severity) string {
	switch s {
	case catalog.High:
		return LevelError
	case catalog.Medium:
		return LevelWarn
	}
	return LevelInfo
}

func severityOf(level string) string {
	switch level {
	case LevelError:
		return string(catalog.High)
	case LevelWarn:
		return string(catalog.Medium)
	}
	return string(catalog.Low)
}

// ReportSchemaID versions the JSON drift report.
const ReportSchemaID = "mcpdrift.drift_report.v1"

// Exit codes of drift (a contract; see docs/drift.md): as for gate, and 3 when
// the server could not be reached.
const (
	ExitOK          = 0
	ExitFindings    = 1
	ExitUnreachable = 3
)

// Finding is one live-drift, conformance or auth-posture finding. It never
// quotes a value the server returned beyond tool names and change records.
type Finding struct {
	RuleID      string              `json:"rule_id"`
	Level       string              `json:"level"`
	Severity    string              `json:"severity"`
	Tool        string              `json:"tool,omitempty"`
	Message     string              `json:"message"`
	TargetClass string              `json:"target_class,omitempty"`
	Changes     []schemadiff.Change `json:"changes,omitempty"`
	// TraceID and SpanID name the exported span of the request that
	// established the finding (see spanOf); both absent when the run
	// exported no spans, or no request established it.
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
}

// Observation is what one tools/list run established.
type Observation struct {
	Tools []manifest.Tool
	// Names are the tools' names, in served order, of a listing read for
	// its names and digests only (Tools is then nil): see Names.
	Names []string
	// Invalid describes tools entries that could not be read (no string
	// name, not an object), already escaped.
	Invalid            []string
	Completeness       manifest.Completeness
	CapReached         bool
	CursorCycle        bool
	Era                string // modern | legacy
	Revision           string // "" when not claimed
	RevisionReason     string
	MissingCacheFields bool
	ManifestDigest     string // "" when ambiguous
}

// AnonProbe is the result of the credential-stripped tools/list.
type AnonProbe struct {
	Completed bool   // the request got an HTTP answer
	Status    int    // HTTP status of the answer
	Challenge string // WWW-Authenticate, if any
	Listed    bool   // a tool list came back
	ToolCount int
	SameTools bool // the anonymous list has the same tool names as the authenticated one
	// Method is the request that was refused (server/discover,
	// initialize, tools/list); "" means tools/list.
	Method string
	Error  string // why it did not complete
}

// Input is everything a run observed.
type Input struct {
	Target      string // URL, or "stdio:" and the command line
	TargetClass string
	Declared    []manifest.Tool
	// Primary is nil when the server refused the protocol revision.
	Primary             *Observation
	ProtocolUnsupported *Unsupported
	// Refused is set when the (primary) tools/list was refused with 401/403.
	Refused *AnonProbe
	// Second is the observation on a second connection (nil: not made).
	Second                 *Observation
	AuthorizationPresented bool
	HeaderNames            []string
	// Anonymous is the credential-stripped probe (nil: skipped or not
	// applicable).
	Anonymous *AnonProbe
	SkipAuth  bool
	// Calls are the opt-in tools/call results (only with --execute).
	Calls []CallCheck
	// Reflected lists where the served list carries a credential this run
	// sent (a header value, a URL secret, an env value of the child).
	Reflected []Reflection
	// Cloak is the listing made a second time as another well-known
	// client (nil: not made).
	Cloak *Cloak
	// Profile decides each tool (nil: review); Classifier grades
	// privileged tools (nil: built-in).
	Profile    *schemadiff.DecisionProfile
	Classifier *classify.Classifier
	// Suppressions accept findings by rule, server and tool (nil: none);
	// ServerNames are the names a suppression's server may use for this
	// run (the target as recorded, the server id); Today (YYYY-MM-DD,
	// UTC) decides expiry.
	Suppressions *manifest.Suppressions
	ServerNames  []string
	Today        string
	// Spans name the requests the run made, for each finding's trace_id
	// and span_id (zero: none).
	Spans Spans
	// Surface is the model-facing surface pinned and observed (nil: not
	// compared).
	Surface *SurfaceCheck
	// Pinned is the identity the declared side recorded (nil: none, a
	// baseline without its snapshot) and Now the one this run
	// established; decide.CheckIdentity, the gateway's rule, compares
	// them (MCP-DRIFT-IDENTITY).
	Pinned, Now *manifest.Identity
}

// SuppressedFinding is a finding a suppression accepted.
type SuppressedFinding struct {
	Finding
	Suppression manifest.Suppression `json:"suppression"`
}

// Reflection is one place a served tool list (or the server's reported
// identity) carries a secret the run sent. It never holds the value.
type Reflection struct {
	Tool    string // "" for the server's reported identity
	Pointer string // JSON pointer inside the tool
	Source  string // where the secret came from ("the value of header Authorization")
	// Where, when set, says where it is outside the tools (the
	// instructions, a prompt: escaped text).
	Where string
}

// Cloak is a listing as another client: the clientInfo and User-Agent it
// presented, and what was served to it (Obs nil with Error set when that
// listing failed).
type Cloak struct {
	Client string // "name/version"
	Obs    *Observation
	Error  string // already escaped
}

// Unsupported describes a -32022 refusal.
type Unsupported struct {
	Requested string
	Supported []string
}

// AuthPosture is what the run established about who the server talks to,
// recorded whether or not anything is wrong.
type AuthPosture struct {
	Applicable             bool     `json:"applicable"`
	AuthorizationPresented bool     `json:"authorization_presented"`
	HeaderNames            []string `json:"header_names"`
	AnonymousProbe         string   `json:"anonymous_probe"` // not_needed | skipped | listed | refused | indeterminate | not_applicable
	AnonymousStatus        int      `json:"anonymous_status,omitempty"`
	Challenge              bool     `json:"www_authenticate_present"`
	PlaintextTransport     bool     `json:"plaintext_transport"`
	TargetClass            string   `json:"target_class"`
}

// Result is the evaluation of one run.
type Result struct {
	Findings    []Finding   `json:"findings"`
	AuthPosture AuthPosture `json:"auth_posture"`
	// Compared says whether the declared manifest was compared at all.
	Compared bool     `json:"compared"`
	Notes    []string `json:"notes"`
	// Warnings name the numbers the digests cannot pin (on either side)
	// and the served numbers that differ from the declared ones only
	// beyond float64 precision; they change no exit code.
	Warnings []string `json:"warnings"`
	// Suppressed are findings a suppression accepted.
	Suppressed []SuppressedFinding `json:"suppressed"`
	// Tools is the decision on every declared or served tool (a declared
	// tool not served on an incomplete list is left out): the entries diff
	// and the gate carry.
	Tools    []schemadiff.ToolVerdict `json:"tools"`
	ExitCode int                      `json:"exit_code"`
	// Surface is the model-facing surface's comparison (nil: not asked).
	Surface *SurfaceReport `json:"surface,omitempty"`
}

// add records a finding at the catalogue's level for rule.
func (r *Result) add(rule, tool, msg, class string, changes []schemadiff.Change) {
	r.addLevel(rule, LevelOf(catalog.Get(rule).Severity), tool, msg, class, changes)
}

func (r *Result) addLevel(rule, level, tool, msg, class string, changes []schemadiff.Change) {
	catalog.Get(rule) // every rule is catalogued
	r.Findings = append(r.Findings, Finding{RuleID: rule, Level: level, Severity: severityOf(level), Tool: tool, Message: msg, TargetClass: class, Changes: changes})
}

// Evaluate applies every MCP-DRIFT-*, MCP-CONF-* and MCP-AUTH-* rule.
func Evaluate(in Input) *Result {
	r := &Result{Findings: []Finding{}, Notes: []string{}, Suppressed: []SuppressedFinding{}, Tools: []schemadiff.ToolVerdict{}}
	class := in.TargetClass
	if class == "" {
		class = ClassUnknown
	}
	stdio := class == ClassStdio
	// Protocol.
	if in.ProtocolUnsupported != nil {
		r.add("MCP-DRIFT-PROTOCOL-UNSUPPORTED", "", fmt.Sprintf("the server refused protocol revision %s (it supports %s); no tools were compared", safetext.Quote(in.ProtocolUnsupported.Requested), quoteList(in.ProtocolUnsupported.Supported)), "", nil)
		r.Notes = append(r.Notes, "no tool list was obtained, so no declared tool is reported missing")
	}
	if in.Primary != nil && in.Primary.Era == "legacy" {
		reason := in.Primary.RevisionReason
		if reason == "" {
			reason = "no server/discover: the protocol revision is not claimed"
		}
		r.add("MCP-DRIFT-LEGACY-SERVER", "", reason+"; compared anyway, tools/list has the same shape in both eras", "", nil)
	}
	authPosture(r, in, class, stdio)
	if in.Primary == nil {
		finish(r, in)
		return r
	}
	p := in.Primary
	r.Compared = true
	// The per-tool decisions: the code diff and the gateway use
	// (decide.DecideTools → schemadiff's DecideTool), so a change gets
	// the same decision whichever command sees it. They are made beside
	// the conformance checks: both only read the tools.
	decided := par.Go(func() []decide.Tool {
		return decide.DecideTools(in.Declared, p.Tools, decide.Options{Profile: in.Profile, Classifier: in.Classifier})
	})
	conformance(r, in, stdio)
	r.Warnings = append(r.Warnings, manifest.PrecisionWarnings("declared", in.Declared)...)
	r.Warnings = append(r.Warnings, manifest.PrecisionWarnings("served", p.Tools)...)
	// Drift against the declared manifest.
	served := manifest.FirstByName(p.Tools)
	declared := manifest.FirstByName(in.Declared)
	complete := p.Completeness == manifest.Complete
	if p.CapReached {
		r.add("MCP-DRIFT-PAGINATION-CAPPED", "", fmt.Sprintf("the page cap was reached after %d tools; missing-tool findings are suppressed", len(p.Tools)), "", nil)
	}
	decisions := decided()
	changesOf := map[string][]schemadiff.Change{}
	r.Tools = slices.Grow(r.Tools, len(decisions))
	for i := range decisions {
		d := &decisions[i]
		if d.Removed && !complete {
			continue // a tool on an unobserved page is not a removed tool
		}
		r.Tools = append(r.Tools, d.Verdict())
		if d.Reason == decide.ReasonChanged || d.Reason == decide.ReasonDenied || d.Reason == decide.ReasonNotationOnly || d.Reason == decide.ReasonValidatesSame {
			changesOf[d.Name] = d.Changes
		}
	}
	for i := range in.Declared {
		d := &in.Declared[i]
		if declared[d.Name] != d {
			continue
		}
		s := served[d.Name]
		if s == nil {
			if complete {
				r.add("MCP-DRIFT-TOOL-MISSING", d.Name, "declared but not served: an agent generated from this manifest will call it and fail", "", nil)
			}
			continue
		}
		switch cs, ok := changesOf[d.Name]; {
		case ok:
			toolDrift(r, s, cs, in.classifier())
		case !d.Equivalent(s):
			// The same digest, but not equivalent: nothing to decide,
			// but what the digests cannot see (a member outside the
			// projection, a number beyond float64 precision) is said.
			toolDrift(r, s, schemadiff.DiffTool(d, s, schemadiff.ToolOptions{Classifier: in.classifier()}), in.classifier())
		}
	}
	if !complete {
		missing := 0
		for i := range in.Declared {
			if served[in.Declared[i].Name] == nil {
				missing++
			}
		}
		if missing > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%d declared tool(s) were not served, but the list was %s: a tool on an unobserved page is not a removed tool, so no missing-tool finding is made", missing, p.Completeness))
		}
	}
	for i := range p.Tools {
		s := &p.Tools[i]
		if served[s.Name] == s && declared[s.Name] == nil {
			// A departure from apiverity, which grades every undeclared
			// tool WARN: one the classifier calls privileged is ERROR, as
			// the gate's mcp_new_privileged_tool is high.
			if in.classifier().Classify(s.Name).Privileged {
				r.addLevel("MCP-DRIFT-TOOL-UNDECLARED", LevelError, s.Name, "served but not declared, and privileged by its name: agents discover it and may call a capability nobody agreed to support", "", nil)
			} else {
				r.add("MCP-DRIFT-TOOL-UNDECLARED", s.Name, "served but not declared: agents discover it and may call a capability nobody agreed to support", "", nil)
			}
		}
	}
	identity(r, in)
	for _, c := range in.Calls {
		checkCall(r, c)
	}
	if in.Surface != nil {
		r.Surface = surfaceRules(r, in.Surface)
	}
	reflected(r, in.Reflected)
	cloaking(r, in)
	finish(r, in)
	return r
}

// identity reports a server the gateway would withhold for its identity
// (MCP-DRIFT-IDENTITY), and notes what changed and does not decide.
func identity(r *Result, in Input) {
	if in.Pinned == nil || in.Now == nil {
		return
	}
	why, notes := decide.CheckIdentity(*in.Pinned, *in.Now, in.Profile)
	r.Notes = append(r.Notes, notes...)
	if why != "" {
		r.add("MCP-DRIFT-IDENTITY", "", why+": the gateway would withhold every tool of this server", "", nil)
	}
}

// reflected reports a served list that carries a credential the run sent:
// the server echoes what it was given into what agents read.
func reflected(r *Result, refl []Reflection) {
	for _, x := range refl {
		where := "its reported identity (serverInfo)"
		switch {
		case x.Where != "":
			where = x.Where
		case x.Tool != "":
			where = "the tool definition at JSON pointer " + quoteText(x.Pointer)
		}
		r.add("MCP-AUTH-CREDENTIAL-REFLECTED", x.Tool, "the server reflects a credential this run sent ("+x.Source+") into "+where+"; it is redacted from every output, and such a list is never pinned", "", nil)
	}
}

// cloaking compares the list served to another well-known client with
// the primary one (names and tool digests).
func cloaking(r *Result, in Input) {
	c := in.Cloak
	if c == nil {
		return
	}
	if c.Obs == nil {
		r.Notes = append(r.Notes, "the listing as "+quoteText(c.Client)+" failed, so cloaking by client identity was not checked: "+c.Error)
		return
	}
	p := in.Primary
	a, b := manifest.FirstByName(p.Tools), manifest.FirstByName(c.Obs.Tools)
	var only, onlyOther, differ []string
	for name, t := range a {
		o := b[name]
		switch {
		case o == nil:
			only = append(only, name)
		case toolDigest(t) != toolDigest(o):
			differ = append(differ, name)
		}
	}
	for name := range b {
		if a[name] == nil {
			onlyOther = append(onlyOther, name)
		}
	}
	if len(only)+len(onlyOther)+len(differ) == 0 {
		return
	}
	slices.Sort(only)
	slices.Sort(onlyOther)
	slices.Sort(differ)
	msg := fmt.Sprintf("listed again as %s, the server served a different tool set: %d tool(s) only for this run's client, %d only for %s, %d defined differently; an agent may be served what was never reviewed",
		quoteText(c.Client), len(only), len(onlyOther), quoteText(c.Client), len(differ))
	r.add("MCP-CONF-TOOLSET-VARIES-BY-CLIENT", "", msg, "", nil)
	for _, n := range onlyOther {
		r.add("MCP-CONF-TOOLSET-VARIES-BY-CLIENT", n, "served only to "+quoteText(c.Client), "", nil)
	}
	for _, n := range only {
		r.add("MCP-CONF-TOOLSET-VARIES-BY-CLIENT", n, "not served to "+quoteText(c.Client), "", nil)
	}
	for _, n := range differ {
		r.add("MCP-CONF-TOOLSET-VARIES-BY-CLIENT", n, "defined differently for "+quoteText(c.Client), "", nil)
	}
}

func toolDigest(t *manifest.Tool) string { return t.ToolDigest() }

// quoteText quotes text composed from untrusted parts for a message.
func quoteText(s string) string { return safetext.Quote(s) }

// quoteList quotes each of a server's strings (at most 20 of them).
func quoteList(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	q := make([]string, 0, min(len(xs), 21))
	for i, x := range xs {
		if i == 20 {
			q = append(q, fmt.Sprintf("and %d more", len(xs)-20))
			break
		}
		q = append(q, safetext.Quote(safetext.Clip(x, 100)))
	}
	return strings.Join(q, ", ")
}

// conformance checks the server against the specification; it needs no
// manifest.
func conformance(r *Result, in Input, stdio bool) {
	p := in.Primary
	if p.Era == "modern" && p.MissingCacheFields {
		r.add("MCP-CONF-LIST-CACHE-FIELDS", "", "a 2026-07-28 tools/list result lacks ttlMs or cacheScope, which the revision requires", "", nil)
	}
	if p.CursorCycle {
		r.add("MCP-CONF-CURSOR-CYCLE", "", "a nextCursor repeated: following the server's cursors never ends", "", nil)
	}
	for _, inv := range p.Invalid {
		r.add("MCP-CONF-TOOL-SHAPE", "", "a served tools entry is not a readable tool ("+inv+"); it was not compared, so removals are not evaluated", "", nil)
	}
	toolNames(r, p)
	seen := make(map[string]int, len(p.Tools))
	for i := range p.Tools {
		t := &p.Tools[i]
		seen[t.Name]++
		if seen[t.Name] == 2 {
			r.add("MCP-CONF-DUPLICATE-TOOL-NAME", t.Name, "two served tools share this name: which one a client calls is undefined", "", nil)
		}
		if msg := ShapeProblem(t); msg != "" {
			r.add("MCP-CONF-TOOL-SHAPE", t.Name, msg, "", nil)
		}
		// What a 2026-07-28 HTTP client excludes (the gateway too):
		// stdio and the legacy revisions mirror no argument.
		if p.Era == "modern" && !stdio {
			if msg := t.ParamHeaderProblem(); msg != "" {
				r.add("MCP-CONF-PARAM-HEADER", t.Name, msg, "", nil)
			}
		}
	}
	if in.Second != nil {
		a, b := p.ToolNames(), in.Second.ToolNames()
		sa, sb := slices.Clone(a), slices.Clone(b)
		slices.Sort(sa)
		slices.Sort(sb)
		switch {
		case !slices.Equal(sa, sb) || (p.ManifestDigest != "" && in.Second.ManifestDigest != "" && p.ManifestDigest != in.Second.ManifestDigest):
			r.add("MCP-CONF-TOOLSET-VARIES", "", "a second connection was served a different tool set; the specification says list results MUST NOT vary per connection", "", nil)
		case !slices.Equal(a, b):
			r.add("MCP-CONF-ORDER-VARIES", "", "a second connection was served the same tools in another order (deterministic ordering is a SHOULD)", "", nil)
		}
	}
}

// ShapeProblem says how a tool breaks the specification's tool shape (an
// inputSchema that is an object with "type": "object"), or "" when it does
// not. pin warns with it, so a list that every later drift reports as
// MCP-CONF-TOOL-SHAPE is not pinned silently.
func ShapeProblem(t *manifest.Tool) string { return t.ShapeProblem() }

// ToolNames lists the tools' names in served order.
// ToolNames are the names of the observation's tools, in served order.
func (o *Observation) ToolNames() []string {
	if o.Tools == nil && o.Names != nil {
		return slices.Clone(o.Names)
	}
	return ToolNames(o.Tools)
}

// ToolNames are the tools' names, in order.
func ToolNames(ts []manifest.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func anonymousLevel(class string) string {
	switch class {
	case ClassLocal:
		return LevelInfo
	case ClassProduction:
		return LevelError
	}
	return LevelWarn
}

func authPosture(r *Result, in Input, class string, stdio bool) {
	ap := AuthPosture{AuthorizationPresented: in.AuthorizationPresented, HeaderNames: in.HeaderNames, TargetClass: class}
	if ap.HeaderNames == nil {
		ap.HeaderNames = []string{}
	}
	if stdio {
		ap.AnonymousProbe = "not_applicable"
		r.AuthPosture = ap
		return
	}
	ap.Applicable = true
	if IsPlaintext(in.Target) && class != ClassLocal {
		ap.PlaintextTransport = true
		r.add("MCP-AUTH-PLAINTEXT-TRANSPORT", "", fmt.Sprintf("plain HTTP to a target classified %s", class), class, nil)
	} else if IsPlaintext(in.Target) {
		ap.PlaintextTransport = true
	}
	refusal := func(a *AnonProbe, what string) {
		ap.AnonymousStatus = a.Status
		ap.Challenge = a.Challenge != ""
		ap.AnonymousProbe = "refused"
		r.add("MCP-AUTH-ENFORCED", "", fmt.Sprintf("%s was refused with HTTP %d", what, a.Status), class, nil)
		if a.Challenge == "" {
			r.add("MCP-AUTH-NO-CHALLENGE", "", fmt.Sprintf("HTTP %d without WWW-Authenticate: a client has no way to discover where to authenticate", a.Status), class, nil)
		}
	}
	switch {
	case in.Refused != nil:
		method := in.Refused.Method
		if method == "" {
			method = "tools/list"
		}
		refusal(in.Refused, "the "+method+" request")
		r.Notes = append(r.Notes, "the "+method+" request was refused, so no tool list was obtained and the declared manifest was not compared")
	case !in.AuthorizationPresented && in.Primary != nil:
		ap.AnonymousProbe = "not_needed"
		r.addLevel("MCP-AUTH-ANONYMOUS-LIST", anonymousLevel(class), "", fmt.Sprintf("the tool inventory (%d tools) came back to a request carrying no credential; target classified %s", len(in.Primary.Tools), class), class, nil)
	case in.SkipAuth || in.Anonymous == nil:
		ap.AnonymousProbe = "skipped"
	case !in.Anonymous.Completed:
		ap.AnonymousProbe = "indeterminate"
		r.add("MCP-AUTH-INDETERMINATE", "", "the unauthenticated probe did not complete ("+in.Anonymous.Error+"); a failed connection is not evidence of enforcement", class, nil)
	case in.Anonymous.Listed:
		ap.AnonymousProbe = "listed"
		ap.AnonymousStatus = in.Anonymous.Status
		same := "a different tool list"
		if in.Anonymous.SameTools {
			same = "the same tools"
		}
		r.addLevel("MCP-AUTH-ANONYMOUS-LIST", anonymousLevel(class), "", fmt.Sprintf("with the credentials stripped, tools/list still returned %d tools (%s); target classified %s", in.Anonymous.ToolCount, same, class), class, nil)
	case in.Anonymous.Status == 401 || in.Anonymous.Status == 403:
		refusal(in.Anonymous, "the credential-stripped tools/list")
	default:
		ap.AnonymousProbe = "indeterminate"
		ap.AnonymousStatus = in.Anonymous.Status
		r.add("MCP-AUTH-INDETERMINATE", "", fmt.Sprintf("the unauthenticated probe got HTTP %d without a tool list", in.Anonymous.Status), class, nil)
	}
	r.AuthPosture = ap
}

var levelRank = map[string]int{LevelError: 3, LevelWarn: 2, LevelInfo: 1}

func finish(r *Result, in Input) {
	attribute(r, in)
	if in.Suppressions != nil {
		kept := r.Findings[:0]
		for _, f := range r.Findings {
			m, expired := in.Suppressions.Match(f.RuleID, f.Tool, in.ServerNames, in.Today)
			switch {
			case m != nil:
				r.Suppressed = append(r.Suppressed, SuppressedFinding{Finding: f, Suppression: *m})
				continue
			case expired != nil:
				r.Notes = append(r.Notes, fmt.Sprintf("%s expired on %s, so it no longer accepts %s", expired.Source, expired.Expires, f.RuleID))
			}
			kept = append(kept, f)
		}
		r.Findings = kept
		if len(r.Suppressed) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("suppressed: %d finding(s) accepted by the suppression file, each listed with its reason", len(r.Suppressed)))
		}
	}
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if levelRank[a.Level] != levelRank[b.Level] {
			return levelRank[a.Level] > levelRank[b.Level]
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		return a.Tool < b.Tool
	})
	r.ExitCode = ExitOK
	for _, f := range r.Findings {
		if f.Level != LevelInfo {
			r.ExitCode = ExitFindings
		}
	}
}

func (in Input) classifier() *classify.Classifier {
	if in.Classifier != nil {
		return in.Classifier
	}
	return classify.Default()
}
