// Package scan observes and gates a fleet of MCP servers concurrently,
// each within a deadline of its own, so one server that hangs, crashes or
// floods cannot hold the others past theirs; and it aggregates the
// results the way gate does: findings (1) before inconclusive (3) before
// clean (0).
//
// The package runs the caller's per-server check; it does no I/O of its
// own. Against no other baseline than the history, Against decides a
// served list against the last complete observation with the decision
// core (package decide).
package scan

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// SchemaID identifies the JSON summary of a scan
// (schemas/scan.v1.schema.json).
const SchemaID = "mcpdrift.scan.v1"

// Statuses of a server's result, worst first.
const (
	StatusFindings     = "findings"     // the served list needs review or is denied
	StatusInconclusive = "inconclusive" // observed, but nothing could be decided (a partial list)
	StatusNotObserved  = "not_observed" // the server could not be observed
	StatusObserved     = "observed"     // observed with no baseline and no store: nothing was gated, nothing recorded
	StatusRecorded     = "recorded"     // observed with no baseline: the first record of its history
	StatusClean        = "clean"        // observed and allowed against its baseline
)

// Exit codes (the CLI's table).
const (
	ExitOK           = 0
	ExitFindings     = 1
	ExitInconclusive = 3
)

// Finding is one finding of a server: a catalogue code, its severity, the
// tool (escaped; "" for the server) and a message (escaped).
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Tool     string `json:"tool,omitempty"`
	Message  string `json:"message"`
	// Observed and Declared are the tool digests compared ("" when
	// absent).
	Observed string `json:"observed_digest,omitempty"`
	Declared string `json:"declared_digest,omitempty"`
}

// Result is one server's outcome.
type Result struct {
	Server string `json:"server"` // escaped
	Target string `json:"target"` // escaped; never a credential
	Status string `json:"status"`
	// Baseline is what the server was gated against: "lock", "history"
	// or "" (none: the first record).
	Baseline       string    `json:"baseline,omitempty"`
	ManifestDigest string    `json:"manifest_digest,omitempty"`
	ToolCount      int       `json:"tool_count"`
	Findings       []Finding `json:"findings"`
	// Error says why the server was not observed or is inconclusive
	// (escaped).
	Error      string `json:"error,omitempty"`
	DurationMs int64  `json:"duration_ms"`
}

// rank orders statuses worst first.
func rank(s string) int {
	switch s {
	case StatusFindings:
		return 0
	case StatusInconclusive:
		return 1
	case StatusNotObserved:
		return 2
	case StatusObserved:
		return 3
	case StatusRecorded:
		return 4
	}
	return 5
}

// Check observes and gates server i within ctx, which carries the
// server's own deadline.
type Check func(ctx context.Context, i int) Result

// Options bound a run.
type Options struct {
	// Concurrency bounds the checks in flight (default 8).
	Concurrency int
	// Timeout is each server's deadline (default 30 s).
	Timeout time.Duration
	// Grace is how long past its deadline a check may take to return
	// before it is abandoned and reported not observed (default 2 s): a
	// check that ignores its context still cannot hold the run.
	Grace time.Duration
	// Done, when set, is called as each server's result is known (from
	// any goroutine, one call at a time).
	Done func(i int, r Result)
}

// Run checks n servers, at most Concurrency at a time, each within
// Timeout, and returns their results in input order. It returns early
// only when ctx ends; the servers not started are then not observed.
func Run(ctx context.Context, n int, opt Options, check Check) []Result {
	if opt.Concurrency <= 0 {
		opt.Concurrency = 8
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 30 * time.Second
	}
	if opt.Grace <= 0 {
		opt.Grace = 2 * time.Second
	}
	out := make([]Result, n)
	var mu sync.Mutex
	done := func(i int, r Result) {
		mu.Lock()
		defer mu.Unlock()
		out[i] = r
		if opt.Done != nil {
			opt.Done(i, r)
		}
	}
	sem := make(chan struct{}, opt.Concurrency)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for j := i; j < n; j++ {
				done(j, Result{Status: StatusNotObserved, Error: "the scan was stopped before this server was observed", Findings: []Finding{}})
			}
			wg.Wait()
			return out
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			done(i, runOne(ctx, i, opt, check))
		}()
	}
	wg.Wait()
	return out
}

// runOne runs one check within its deadline, abandoning it Grace past it.
func runOne(ctx context.Context, i int, opt Options, check Check) Result {
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	ch := make(chan Result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- Result{Status: StatusNotObserved, Error: "the check failed: " + safetext.Escape(fmt.Sprint(p))}
			}
		}()
		ch <- check(cctx, i)
	}()
	var r Result
	select {
	case r = <-ch:
	case <-time.After(opt.Timeout + opt.Grace):
		r = Result{Status: StatusNotObserved, Error: fmt.Sprintf("the check did not end within its deadline (%v) and was abandoned", opt.Timeout)}
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	r.DurationMs = time.Since(start).Milliseconds()
	return r
}

// Sort orders results worst first: by status, then by the number of
// findings (more first), then by server name.
func Sort(rs []Result) {
	slices.SortStableFunc(rs, func(a, b Result) int {
		return cmp.Or(cmp.Compare(rank(a.Status), rank(b.Status)), cmp.Compare(len(b.Findings), len(a.Findings)), cmp.Compare(a.Server, b.Server))
	})
}

// ExitCode aggregates as gate does: 1 when any server has findings, else 3
// when any is inconclusive or not observed, else 0.
func ExitCode(rs []Result) int {
	code := ExitOK
	for _, r := range rs {
		switch r.Status {
		case StatusFindings:
			return ExitFindings
		case StatusInconclusive, StatusNotObserved:
			code = ExitInconclusive
		}
	}
	return code
}

// Counts are the results per status.
func Counts(rs []Result) map[string]int {
	c := map[string]int{StatusFindings: 0, StatusInconclusive: 0, StatusNotObserved: 0, StatusObserved: 0, StatusRecorded: 0, StatusClean: 0}
	for _, r := range rs {
		c[r.Status]++
	}
	return c
}

// severity is a finding's severity for a tool decision.
func severity(d string) string {
	if d == decide.Deny {
		return "high"
	}
	return "medium"
}

// Against decides served against the tools of the last complete
// observation (the decision core's per-tool decisions); every tool not
// allowed is a finding whose rule is the decision's reason code.
func Against(last, served []manifest.Tool, opt decide.Options) []Finding {
	var out []Finding
	for _, d := range decide.DecideTools(last, served, opt) {
		if d.Decision == decide.Allow {
			continue
		}
		msg := "changed since the last complete observation: " + d.Decision
		switch {
		case d.Removed:
			msg = "no longer served (it was in the last complete observation)"
		case d.Pinned == "":
			msg = "not in the last complete observation"
		case len(d.Fields) > 0:
			msg = fmt.Sprintf("changed since the last complete observation (%s): %s", safetext.Escape(joinFields(d.Fields)), d.Decision)
		}
		out = append(out, Finding{Rule: d.Reason, Severity: severity(d.Decision), Tool: safetext.EscapeASCII(safetext.Clip(d.Name, 256)), Message: msg, Observed: d.Digest, Declared: d.Pinned})
	}
	return out
}

func joinFields(fs []string) string {
	s := ""
	for i, f := range fs {
		if i > 0 {
			s += ", "
		}
		s += f
	}
	return s
}
