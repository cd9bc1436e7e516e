package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// compactTools builds a tools/list response of n tools of about 1 KB each
// (the size of a typical real tool), so 10,000 tools make about 10 MB.
func compactTools(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	verbs := []string{"get", "list", "create", "update", "delete", "search", "send", "run"}
	nouns := []string{"issue", "file", "message", "record", "branch", "invoice", "user", "job"}
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		fmt.Fprintf(&b, `{"name":"%s_%s_%d","title":"%s %s","description":"%s a %s in the workspace. Returns the %s as JSON, with its id, owner and timestamps. Use the cursor to page through long results; at most 100 items are returned per call.",`, v, o, i, v, o, v, o, o)
		fmt.Fprintf(&b, `"inputSchema":{"type":"object","properties":{"workspace":{"type":"string","description":"Workspace slug","pattern":"^[a-z0-9-]{1,64}$"},"id":{"type":"string","description":"The %s id"},"limit":{"type":"integer","minimum":1,"maximum":100,"default":20},"cursor":{"type":["string","null"]},"fields":{"type":"array","items":{"enum":["id","owner","created","updated","body"]},"uniqueItems":true},"dryRun":{"type":"boolean","default":false}},"required":["workspace"],"additionalProperties":false},`, o)
		fmt.Fprintf(&b, `"outputSchema":{"type":"object","properties":{"items":{"type":"array","items":{"type":"object"}},"nextCursor":{"type":"string"}}},"annotations":{"readOnlyHint":%t,"openWorldHint":false}}`, v == "get" || v == "list" || v == "search")
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// BenchmarkObserve10k: parse a ~10 MB, 10,000-tool tools/list response and
// build the observed record (every tool and field digest, classification).
// Compare with BenchmarkParseOnly10k (the strict parse alone) to see the
// digest cost.
func BenchmarkObserve10k(b *testing.B) {
	doc := compactTools(10000)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		tl, err := manifest.ParseToolList(doc)
		if err != nil {
			b.Fatal(err)
		}
		o := manifest.BuildObserved("bench", tl, tl.Completeness, nil)
		if o.Observed.ToolCount != 10000 {
			b.Fatal(o.Observed.ToolCount)
		}
	}
}

func BenchmarkParseOnly10k(b *testing.B) {
	doc := compactTools(10000)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.ParseToolList(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// Cost grows linearly: the per-byte figure stays flat from 1k to 10k tools.
func BenchmarkObserveScaling(b *testing.B) {
	for _, n := range []int{100, 1000} {
		doc := corpus.ToolsListResponse(n, 1)
		b.Run(itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				tl, _ := manifest.ParseToolList(doc)
				manifest.BuildObserved("bench", tl, tl.Completeness, nil)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// BenchmarkPrecisionWarnings1MB: on the ~1 MB corpus tool list (172 tools,
// 79 of whose numbers are int64/uint64 maxima beyond float64 precision),
// the observe path (parse + every digest) alone, with PrecisionWarnings
// after it (what mcpdrift observe and pin do), and PrecisionWarnings alone.
// BuildObserved never calls it, so the digest path is unchanged.
func BenchmarkPrecisionWarnings1MB(b *testing.B) {
	doc := corpus.Tools(172, 1)
	b.Run("observe", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			tl, _ := manifest.ParseToolList(doc)
			manifest.BuildObserved("bench", tl, tl.Completeness, nil)
		}
	})
	b.Run("observe+warnings", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			tl, _ := manifest.ParseToolList(doc)
			manifest.BuildObserved("bench", tl, tl.Completeness, nil)
			manifest.PrecisionWarnings("", tl.Tools)
		}
	})
	tl, _ := manifest.ParseToolList(doc)
	b.Run("warnings-only", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			manifest.PrecisionWarnings("", tl.Tools)
		}
	})
}

// pinnedLean pins corpus.LeanTools(n, 1) as pin --input would: the
// declared baseline and its snapshot.
func pinnedLean(b *testing.B, n int) (declared, snapshot []byte) {
	tl, err := manifest.ParseToolList(corpus.LeanTools(n, 1))
	if err != nil {
		b.Fatal(err)
	}
	o := manifest.BuildObserved("bench", tl, manifest.Complete, nil)
	d, err := manifest.Pin(o, manifest.PinOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if declared, err = manifest.MarshalArtifact(d); err != nil {
		b.Fatal(err)
	}
	if snapshot, err = manifest.MarshalSnapshot("bench", manifest.Identity{}, tl, manifest.Complete); err != nil {
		b.Fatal(err)
	}
	return declared, snapshot
}

// BenchmarkReadPinned10k: what drift reads before it lists — a declared
// baseline of 10,000 tools and the snapshot beside it (corpus.LeanTools,
// 17 MB), each parsed strictly and validated against its schema, the
// snapshot's manifest_digest recomputed.
func BenchmarkReadPinned10k(b *testing.B) {
	declared, snapshot := pinnedLean(b, 10000)
	b.Run("declared", func(b *testing.B) {
		b.SetBytes(int64(len(declared)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := manifest.ReadTools(declared, "d.json"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("snapshot", func(b *testing.B) {
		b.SetBytes(int64(len(snapshot)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := manifest.ReadTools(snapshot, "d.snapshot.json"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
