package lock

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// leanTools is n tools of corpus.LeanTools as manifest tools.
func leanTools(b testing.TB, n int) []manifest.Tool {
	b.Helper()
	tl, err := manifest.ParseToolList(corpus.LeanTools(n, 1))
	if err != nil {
		b.Fatal(err)
	}
	return tl.Tools
}

// BenchmarkApproveOne10k: approving one changed tool of a 10,000-tool
// server, as approve does it — read the lock (Parse: schema and every
// digest recomputed), Approve the one tool, write it (Marshal) — beside
// the named baseline "repin", pinning the whole server again (NewServer
// over all 10,000 tools, then Marshal), which is what a tool that cannot
// approve one tool at a time costs. Approve itself touches the one tool:
// the stored definitions of the others are written back as they are.
func BenchmarkApproveOne10k(b *testing.B) {
	tools := leanTools(b, 10000)
	c := classify.Default()
	s, err := NewServer("big", Source{URL: "http://127.0.0.1:1/mcp"}, ProfileReview, manifest.Identity{Endpoint: "http://127.0.0.1:1/mcp"}, nil, tools, c, alice)
	if err != nil {
		b.Fatal(err)
	}
	l := &Lock{}
	l.Add(s)
	src := l.Marshal()
	// The served list: tool 5,000 gains a parameter.
	served := leanTools(b, 10000)
	target := served[5000].Name
	raw := strings.Replace(string(served[5000].Raw()), `"properties":{`, `"properties":{"callback_url":{"type":"string"},`, 1)
	tl, err := manifest.ParseToolList([]byte(`[` + raw + `]`))
	if err != nil {
		b.Fatal(err)
	}
	served[5000] = tl.Tools[0]
	b.ReportMetric(float64(len(src))/1e6, "lock-MB")
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(src, "x"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("approve-one", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			l2, _ := Parse(src, "x")
			b.StartTimer()
			if _, err := l2.Servers[0].Approve(served, []string{target}, alice, c, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = l.Marshal()
		}
	})
	b.Run("approve-whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l2, err := Parse(src, "x")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l2.Servers[0].Approve(served, []string{target}, alice, c, ""); err != nil {
				b.Fatal(err)
			}
			_ = l2.Marshal()
		}
	})
	b.Run("baseline-repin", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := NewServer("big", Source{URL: "http://127.0.0.1:1/mcp"}, ProfileReview, manifest.Identity{}, nil, served, c, alice)
			if err != nil {
				b.Fatal(err)
			}
			l2 := &Lock{}
			l2.Add(s)
			_ = l2.Marshal()
		}
	})
}

// TestApproveOneChangesOnlyItsLines: in a 1,000-tool server, approving one
// tool changes the lines of that tool (its entry, approval, definition),
// the manifest digest and one history line — nothing else is rewritten.
func TestApproveOneChangesOnlyItsLines(t *testing.T) {
	tools := leanTools(t, 1000)
	c := classify.Default()
	s, err := NewServer("big", Source{URL: "http://127.0.0.1:1/mcp"}, ProfileReview, manifest.Identity{}, nil, tools, c, alice)
	if err != nil {
		t.Fatal(err)
	}
	l := &Lock{}
	l.Add(s)
	before := l.Marshal()
	served := leanTools(t, 1000)
	var m map[string]any
	json.Unmarshal(served[500].Raw(), &m)
	m["description"] = fmt.Sprint(m["description"], " Now also deletes.")
	rb, _ := json.Marshal(m)
	tl, _ := manifest.ParseToolList([]byte("[" + string(rb) + "]"))
	served[500] = tl.Tools[0]
	if _, err := l.Servers[0].Approve(served, []string{served[500].Name}, alice, c, ""); err != nil {
		t.Fatal(err)
	}
	if n := changedLines(string(before), string(l.Marshal())); n > 7 {
		t.Errorf("approving one tool of 1,000 changed %d lines", n)
	}
}

// BenchmarkCheck10k: lock check's pure part (Server.Check) for a 10,000-tool
// server of which 1,000 tools gained a parameter, beside the baseline it
// replaced, which decided every tool once more for the gateway's
// whole-server rule (DecideList after the per-tool decisions; the rule is
// decide.Withheld alone now).
func BenchmarkCheck10k(b *testing.B) {
	tools := leanTools(b, 10000)
	c := classify.Default()
	id := manifest.Identity{Endpoint: "http://127.0.0.1:1/mcp"}
	s, err := NewServer("big", Source{URL: "http://127.0.0.1:1/mcp"}, ProfileReview, id, nil, tools, c, alice)
	if err != nil {
		b.Fatal(err)
	}
	served := leanTools(b, 10000)
	var raws []string
	for i := range served {
		raw := string(served[i].Raw())
		if i%10 == 0 {
			raw = strings.Replace(raw, `"properties":{`, `"properties":{"zz_bench_added":{"type":"string"},`, 1)
		}
		raws = append(raws, raw)
	}
	tl, err := manifest.ParseToolList([]byte("[" + strings.Join(raws, ",") + "]"))
	if err != nil {
		b.Fatal(err)
	}
	sv := &Served{Observed: manifest.BuildObserved("big", tl, manifest.Complete, c), Tools: tl.Tools, Identity: id}
	check := func(b *testing.B) {
		r, err := s.Check(sv, CheckOptions{Classifier: c})
		if err != nil || len(r.Pending) < 1000 {
			b.Fatal(err, len(r.Pending))
		}
	}
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			check(b)
		}
	})
	b.Run("baseline=check+DecideList", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			check(b)
			dopt, _ := s.DecideOptions(c, nil)
			decide.DecideList(decide.NewBaseline(s.Name, s.Identity, s.ToolValues()), &decide.Served{Tools: sv.Tools, Completeness: manifest.Complete, Identity: sv.Identity}, dopt)
		}
	})
}
