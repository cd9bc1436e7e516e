package redact_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/report"
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

// BenchmarkRedactEscapedSecrets: secrets with characters the report
// layers escape have dozens of written forms; text that holds none of
// them is passed after one scan for each secret's anchor (its longest run
// of letters and digits), not one per form, whose cost grows with the
// forms of every secret. Baseline: one strings.Contains of
// each raw secret, the least any redaction does.
func BenchmarkRedactEscapedSecrets(b *testing.B) {
	doc := strings.Repeat("Search the web for a thing; nothing secret here. ", 200000)
	for _, n := range []int{1, 10} {
		var s redact.Set
		for _, f := range report.Escapers() {
			s.AddEscaper(f)
		}
		var raw []string
		for i := range n {
			raw = append(raw, fmt.Sprintf(`tok"en\<%d>-Zq8Wm3Rt7Yp`, i))
			s.Add("a header", raw[i])
		}
		b.Run(fmt.Sprintf("secrets=%d/redact.Set", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				s.String(doc)
			}
		})
		b.Run(fmt.Sprintf("secrets=%d/baseline=strings.Contains-raw", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				for _, x := range raw {
					_ = strings.Contains(doc, x)
				}
			}
		})
	}
}

// BenchmarkRedactMessage: what the gateway pays on each message it sends
// downstream (proxy.Gateway.out): a 2 KB tools/call result and a 1 MB
// tools/list response that hold no secret, with the secrets of one
// --header "Authorization: Bearer …" and the report layers registered,
// as the CLI sets them up.
func BenchmarkRedactMessage(b *testing.B) {
	var s redact.Set
	for _, f := range report.Escapers() {
		s.AddEscaper(f)
	}
	s.AddHeader("Authorization", "Bearer tok_9f8e7d6c5b4a3Zq8Wm3Rt7Yp2Xk4Nb6Vc1")
	s.AddHeader("X-Api-Key", "ak-0123456789-SECRETKEY-qQ7rT2wX")
	text := strings.Repeat("The forecast for Paris: 14 °C, light rain, wind 12 km/h from the south-west. ", 26)
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false}})
	list := corpus.ToolsListResponse(1, 1)
	for n := 1; len(list) < 1<<20; n *= 2 {
		list = corpus.ToolsListResponse(n, 1)
	}
	list = list[:1<<20] // the bytes of a message, not necessarily whole JSON
	for _, m := range []struct {
		name string
		msg  []byte
	}{{"2KB", call[:min(len(call), 2048)]}, {"1MB", list}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(m.msg)))
			b.ReportAllocs()
			for b.Loop() {
				s.Bytes(m.msg)
			}
		})
	}
}

// BenchmarkForwardedFresh: what a request with a fresh downstream
// credential costs (AddForwarded, then the rebuild its first redaction
// makes) after 1 or 600 others were sent: the same, at most MaxForwarded
// being held (each was kept, and each cost more than the one before).
func BenchmarkForwardedFresh(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"The forecast for Paris: 14 °C."}]}}`)
	for _, before := range []int{1, 600} {
		b.Run(fmt.Sprintf("after=%d", before), func(b *testing.B) {
			var s redact.Set
			for _, f := range report.Escapers() {
				s.AddEscaper(f)
			}
			s.AddHeader("X-Api-Key", "ak-0123456789-SECRETKEY-qQ7rT2wX")
			n := 0
			fresh := func() string { n++; return fmt.Sprintf("Bearer k%011dxQ7vR2mZ9pL4wT8yB3nC6", n) }
			for range before {
				s.AddForwarded("Authorization", fresh())
			}
			s.Bytes(msg)
			for b.Loop() {
				s.AddForwarded("Authorization", fresh())
				s.Bytes(msg)
			}
		})
	}
}
