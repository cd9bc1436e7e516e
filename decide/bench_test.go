package decide_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// BenchmarkDecideCall: the gateway's per-call decision on an approved
// tool — exact-name lookup, the pinned inputSchema (compiled once)
// validating the arguments, and the one walk of the arguments against
// the schemas that apply where each member stands (case variants; under
// strict, undeclared members).
func BenchmarkDecideCall(b *testing.B) {
	tl, err := manifest.ParseToolList([]byte(`[{"name":"search_issues","description":"Search issues and pull requests in a repository.","inputSchema":{"type":"object","properties":{"repo":{"type":"string","description":"owner/name"},"query":{"type":"string","maxLength":256},"limit":{"type":"integer","minimum":1,"maximum":100,"default":20}},"required":["repo","query"],"additionalProperties":false}}]`))
	if err != nil {
		b.Fatal(err)
	}
	bl := decide.NewBaseline("bench", manifest.Identity{}, tl.Tools)
	l := decide.DecideList(bl, &decide.Served{Tools: tl.Tools, Completeness: manifest.Complete}, decide.Options{})
	d, err := jcs.Parse([]byte(`{"repo":"acme/widgets","query":"is:open label:bug","limit":20}`))
	if err != nil {
		b.Fatal(err)
	}
	args := d.Root()
	for _, strict := range []bool{false, true} {
		name := "review"
		if strict {
			name = "strict"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if c := l.DecideCall("search_issues", args, decide.CallOptions{Strict: strict}); !c.Allowed {
					b.Fatal(c)
				}
			}
		})
	}
}

// BenchmarkDecideListRefs: the decision on 1,000 unchanged tools
// (internal/corpus) without a trust record (the baseline: digests
// compared, nothing walked) and against one (the lock's refs: each
// unchanged tool's schemas walked for external $refs — once per baseline
// for a list, the gateway's case; every call for DecideTools, lock
// check's), empty, and with 100 of the tools referring to a pinned,
// verified document.
func BenchmarkDecideListRefs(b *testing.B) {
	tl, err := manifest.ParseToolList(corpus.Tools(1000, 1))
	if err != nil {
		b.Fatal(err)
	}
	withRefs := make([]manifest.Tool, len(tl.Tools))
	for i, t := range tl.Tools {
		if i%10 == 0 {
			src := fmt.Sprintf(`{"name":%q,"description":"Refers out.","inputSchema":{"type":"object","properties":{"rec":{"$ref":"https://schemas.example.com/rec%d.json#/$defs/rec"}}}}`, t.Name, i)
			x, err := manifest.ParseToolList([]byte("[" + src + "]"))
			if err != nil {
				b.Fatal(err)
			}
			t = x.Tools[0]
		}
		withRefs[i] = t
	}
	pins, verified := map[string]string{}, map[string]string{}
	for i := 0; i < len(withRefs); i += 10 {
		u := fmt.Sprintf("https://schemas.example.com/rec%d.json", i)
		pins[u] = "sha256:" + strings.Repeat("a", 64)
		verified[u] = pins[u]
	}
	for _, c := range []struct {
		name  string
		tools []manifest.Tool
		opt   decide.Options
	}{
		{"no-record", tl.Tools, decide.Options{}},
		{"record-empty", tl.Tools, decide.Options{PinnedRefs: map[string]string{}}},
		{"no-record-100-refs", withRefs, decide.Options{}},
		{"record-100-refs-verified", withRefs, decide.Options{PinnedRefs: pins, VerifiedRefs: verified}},
	} {
		bl := decide.NewBaseline("bench", manifest.Identity{}, c.tools)
		served := &decide.Served{Tools: c.tools, Completeness: manifest.Complete}
		b.Run("list/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if l := decide.DecideList(bl, served, c.opt); len(l.ServedTools()) != len(c.tools) {
					b.Fatalf("%d of %d served", len(l.ServedTools()), len(c.tools))
				}
			}
		})
		// DecideTools builds its baseline each call (lock check's one
		// decision per server): the walk is not kept.
		b.Run("tools/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ds := decide.DecideTools(c.tools, c.tools, c.opt); len(ds) != len(c.tools) || ds[0].Decision != decide.Allow {
					b.Fatalf("%d decisions", len(ds))
				}
			}
		})
	}
}
