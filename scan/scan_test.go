package scan

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// TestRunIsolation: a check that ignores its context is abandoned Grace
// past its deadline while the others finish in theirs; a panic is one
// server's failure; concurrency is bounded.
func TestRunIsolation(t *testing.T) {
	var inFlight, peak atomic.Int32
	block := make(chan struct{})
	defer close(block)
	start := time.Now()
	rs := Run(context.Background(), 20, Options{Concurrency: 4, Timeout: 200 * time.Millisecond, Grace: 100 * time.Millisecond}, func(ctx context.Context, i int) Result {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		switch i {
		case 3:
			<-block // ignores ctx
		case 5:
			panic("boom\x1b[2J")
		case 7:
			<-ctx.Done()
			return Result{Server: "s7", Status: StatusNotObserved, Error: ctx.Err().Error()}
		}
		time.Sleep(10 * time.Millisecond)
		return Result{Server: "ok", Status: StatusClean}
	})
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("the run took %v", el)
	}
	if peak.Load() > 4 {
		t.Fatalf("%d checks in flight", peak.Load())
	}
	if rs[3].Status != StatusNotObserved || !strings.Contains(rs[3].Error, "abandoned") {
		t.Fatalf("hung check: %+v", rs[3])
	}
	if rs[5].Status != StatusNotObserved || strings.Contains(rs[5].Error, "\x1b") {
		t.Fatalf("panicking check: %+v", rs[5])
	}
	if rs[7].DurationMs < 200 || rs[7].DurationMs > 1000 {
		t.Fatalf("deadline: %d ms", rs[7].DurationMs)
	}
	for i, r := range rs {
		if i != 3 && i != 5 && i != 7 && r.Status != StatusClean {
			t.Fatalf("%d: %+v", i, r)
		}
	}
	if ExitCode(rs) != ExitInconclusive {
		t.Fatal(ExitCode(rs))
	}
}

// TestSortAndExit: worst first; findings win over inconclusive over
// clean.
func TestSortAndExit(t *testing.T) {
	rs := []Result{{Server: "b", Status: StatusClean}, {Server: "a", Status: StatusRecorded}, {Server: "c", Status: StatusNotObserved},
		{Server: "d", Status: StatusFindings, Findings: []Finding{{}}}, {Server: "e", Status: StatusFindings, Findings: []Finding{{}, {}}}, {Server: "f", Status: StatusInconclusive}}
	if ExitCode(rs) != ExitFindings {
		t.Fatal("findings")
	}
	Sort(rs)
	var order []string
	for _, r := range rs {
		order = append(order, r.Server)
	}
	if got := strings.Join(order, ""); got != "edfcab" {
		t.Fatal(got)
	}
	if ExitCode(rs[2:]) != ExitInconclusive || ExitCode(rs[4:]) != ExitOK || ExitCode(nil) != ExitOK {
		t.Fatal("aggregation")
	}
}

func toolsOf(t *testing.T, s string) []manifest.Tool {
	tl, err := manifest.ParseToolList([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return tl.Tools
}

// TestAgainst: a served list against the last complete observation: the
// unchanged tool is no finding; changed, added and removed ones are, with
// the decision core's reason codes and digests; names escaped.
func TestAgainst(t *testing.T) {
	last := toolsOf(t, `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","description":"x","inputSchema":{"type":"object"}},{"name":"gone","inputSchema":{"type":"object"}}]}`)
	now := toolsOf(t, `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","description":"y","inputSchema":{"type":"object"}},{"name":"new\u202e","inputSchema":{"type":"object"}}]}`)
	fs := Against(last, now, decide.Options{})
	rules := map[string]Finding{}
	for _, f := range fs {
		rules[f.Rule] = f
		if strings.ContainsRune(f.Tool, '\u202e') {
			t.Fatalf("raw bidi in %q", f.Tool)
		}
	}
	if len(fs) != 3 || rules[decide.ReasonChanged].Tool != "b" || rules[decide.ReasonRemoved].Tool != "gone" || rules[decide.ReasonAdded].Observed == "" || rules[decide.ReasonChanged].Declared == "" {
		t.Fatalf("%+v", fs)
	}
	if len(Against(last, last, decide.Options{})) != 0 {
		t.Fatal("unchanged list has findings")
	}
}
