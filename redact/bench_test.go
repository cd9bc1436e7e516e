package redact_test

import (
	"bytes"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Redacting a 10,000-tool report (about 9 MB) with three secrets sent:
// every form, the clipped-prefix pass included, against the named baseline
// of one bytes.ReplaceAll per raw secret (which misses every escaped and
// clipped form), in one run.
func BenchmarkRedact(b *testing.B) {
	doc := corpus.ToolsListResponse(10000, 1)
	secrets := []string{"tok_9f8e7d6c5b4a-SECRET.xyz", "ak-0123456789-SECRETKEY", "env-SECRET-value-42"}
	var s redact.Set
	s.AddHeader("Authorization", "Bearer "+secrets[0])
	s.Add("a query value", secrets[1])
	s.Add("an env value", secrets[2])
	s.AddEscaper(safetext.Escape)
	b.Run("redact.Set", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			s.Bytes(doc)
		}
	})
	b.Run("baseline=bytes.ReplaceAll-raw-only", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			out := doc
			for _, x := range secrets {
				out = bytes.ReplaceAll(out, []byte(x), []byte(redact.Placeholder))
			}
		}
	})
}
