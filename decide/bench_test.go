package decide_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// BenchmarkDecideCall: the gateway's per-call decision on an approved
// tool — exact-name lookup, the pinned inputSchema (compiled once)
// validating the arguments, and the strict walk for undeclared members.
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
