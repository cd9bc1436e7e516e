package mockserver

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

func BenchmarkParseMessage(b *testing.B) {
	in := []byte(modernBody(1, "tools/call", `"name":"search_issues","arguments":{"q":"is:open label:bug","limit":20}`))
	b.ReportAllocs()
	for b.Loop() {
		if _, e := frame.FromClient(in); e != nil {
			b.Fatal(e)
		}
	}
}

// BenchmarkSSEEvent writes a tools/list response of 50 realistic tools as
// one event and flushes it: compact (with spaces in strings, so it is
// scanned) and pretty-printed (compacted).
func BenchmarkSSEEvent(b *testing.B) {
	compact := corpus.ToolsListResponse(50, 1)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, compact, "", "  "); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   []byte
	}{{"compact", compact}, {"pretty", pretty.Bytes()}} {
		b.Run(c.name, func(b *testing.B) {
			rec := httptest.NewRecorder()
			sw := newSSEWriter(rec)
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			for b.Loop() {
				sw.event(c.in)
				if !sw.flush() {
					b.Fatal("flush")
				}
				rec.Body.Reset()
			}
		})
	}
}
