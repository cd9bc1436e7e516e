package jcs_test

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	gowebpki "github.com/gowebpki/jcs"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/jcs"
)

// The three canonicalizers compared, each returning canonical bytes.

func canonMcpdrift(doc []byte) ([]byte, error) { return jcs.Canonicalize(doc) }

func canonJSONText(doc []byte) ([]byte, error) {
	v := jsontext.Value(bytes.Clone(doc))
	err := v.Canonicalize()
	return v, err
}

func canonGowebpki(doc []byte) ([]byte, error) { return gowebpki.Transform(doc) }

func TestCorpusAgreesWithBaselines(t *testing.T) {
	docs := map[string][]byte{"Tools(172,1)": corpus.Tools(172, 1)}
	for _, s := range []uint64{0, 2, 3, 5, 8, 13, 21, 34, 1 << 33} {
		docs["Tools(50,"+strconv.FormatUint(s, 10)+")"] = corpus.Tools(50, s)
	}
	docs["ToolsListResponse(20,4)"] = corpus.ToolsListResponse(20, 4)
	docs["Pages(30,7,6)"] = corpus.Pages(30, 7, 6)
	for name, doc := range docs {
		want, err := canonMcpdrift(doc)
		if err != nil {
			t.Fatalf("%s: jcs.Canonicalize: %v", name, err)
		}
		if bytes.Equal(want, doc) {
			t.Errorf("%s: input is already canonical", name)
		}
		for _, b := range []struct {
			name string
			f    func([]byte) ([]byte, error)
		}{{"jsontext", canonJSONText}, {"gowebpki", canonGowebpki}} {
			got, err := b.f(doc)
			if err != nil {
				t.Errorf("%s: %s: %v", name, b.name, err)
				continue
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				lo := max(i-80, 0)
				t.Errorf("%s: %s differs from jcs at byte %d:\n jcs: %q\n %s: %q", name, b.name, i,
					want[lo:min(i+80, len(want))], b.name, got[lo:min(i+80, len(got))])
			}
		}
		// Canonical output is a fixed point.
		again, err := canonMcpdrift(want)
		if err != nil || !bytes.Equal(again, want) {
			t.Errorf("%s: canonical form is not a fixed point (err %v)", name, err)
		}
	}
}

var sink [sha256.Size]byte

// benchCases runs each canonicalizer, each iteration canonicalizing doc and
// hashing the result.
func benchCases(b *testing.B, doc []byte) {
	b.Run("mcpdrift", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			out, err := jcs.Canonicalize(doc)
			if err != nil {
				b.Fatal(err)
			}
			sink = sha256.Sum256(out)
		}
	})
	b.Run("mcpdrift-reuse", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		buf := make([]byte, 0, len(doc))
		for b.Loop() {
			d, err := jcs.Parse(doc)
			if err != nil {
				b.Fatal(err)
			}
			buf = d.Root().AppendCanonical(buf[:0])
			sink = sha256.Sum256(buf)
		}
	})
	b.Run("jsontext", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			v := jsontext.Value(bytes.Clone(doc))
			if err := v.Canonicalize(); err != nil {
				b.Fatal(err)
			}
			sink = sha256.Sum256(v)
		}
	})
	b.Run("gowebpki", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			out, err := gowebpki.Transform(doc)
			if err != nil {
				b.Fatal(err)
			}
			sink = sha256.Sum256(out)
		}
	})
}

// BenchmarkCanonicalSHA256 canonicalizes and hashes the ~1 MB corpus
// document (172 MCP tools), the work of pinning one server's manifest.
func BenchmarkCanonicalSHA256(b *testing.B) {
	benchCases(b, corpus.Tools(172, 1))
}

// BenchmarkCanonicalSHA256Scaling shows cost is linear in input size: MB/s
// should stay flat from 100 to 10000 tools (~0.6 MB to ~59 MB).
func BenchmarkCanonicalSHA256Scaling(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		doc := corpus.Tools(n, 1)
		b.Run("tools="+strconv.Itoa(n), func(b *testing.B) { benchCases(b, doc) })
	}
}

// BenchmarkDigestVsJSONText is the digest-throughput goal measured side by
// side: each iteration canonicalizes and hashes the ~1 MB corpus document
// with jcs.Canonicalize and with the named baseline,
// jsontext.Value.Canonicalize, in turns (which goes first alternates), so
// that a shared machine's load falls on both alike. It reports each one's
// MB/s over the whole run, and ratio: the median over the iterations of
// the baseline's time over mcpdrift's (the goal is at least 2), which a
// burst of load on the machine moves less than the ratio of the totals.
func BenchmarkDigestVsJSONText(b *testing.B) {
	doc := corpus.Tools(172, 1)
	var ours, theirs time.Duration
	var ratios []float64
	one := func(f func() []byte) time.Duration {
		start := time.Now()
		sink = sha256.Sum256(f())
		return time.Since(start)
	}
	mcpdrift := func() []byte {
		out, err := jcs.Canonicalize(doc)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	jsontextC := func() []byte {
		v := jsontext.Value(bytes.Clone(doc))
		if err := v.Canonicalize(); err != nil {
			b.Fatal(err)
		}
		return v
	}
	b.SetBytes(int64(2 * len(doc)))
	for b.Loop() {
		var o, t time.Duration
		if len(ratios)%2 == 0 {
			o = one(mcpdrift)
			t = one(jsontextC)
		} else {
			t = one(jsontextC)
			o = one(mcpdrift)
		}
		ours, theirs = ours+o, theirs+t
		ratios = append(ratios, t.Seconds()/o.Seconds())
	}
	slices.Sort(ratios)
	mb := float64(len(ratios)) * float64(len(doc)) / 1e6
	b.ReportMetric(mb/ours.Seconds(), "mcpdrift-MB/s")
	b.ReportMetric(mb/theirs.Seconds(), "jsontext-MB/s")
	b.ReportMetric(ratios[len(ratios)/2], "ratio")
}
