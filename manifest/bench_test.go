package manifest_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// BenchmarkObserve10k: parse a ~10 MB, 10,000-tool tools/list response and
// build the observed record (every tool and field digest). Compare with
// BenchmarkParseOnly10k (the strict parse alone) to see the digest cost.
func BenchmarkObserve10k(b *testing.B) {
	doc := corpus.ToolsListResponse(10000, 1)
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
	doc := corpus.ToolsListResponse(10000, 1)
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
	for _, n := range []int{1000, 10000} {
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
