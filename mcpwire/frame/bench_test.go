package frame

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// The inputs are those of mcpclient's and mockserver's benchmarks of the
// code this package replaced (frame_bench_test.go there), so the figures
// compare.

// sseBenchStream is a 2025-11-25 tools/list answer as an event stream: a
// priming event, a progress notification and the response (50 realistic
// tools, about 300 KB, on one data: line).
func sseBenchStream() []byte {
	var b bytes.Buffer
	b.WriteString("id: s-0\ndata: \n\n")
	b.WriteString("event: message\nid: s-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
	b.WriteString("event: message\nid: s-2\ndata: ")
	b.Write(corpus.ToolsListResponse(50, 1))
	b.WriteString("\n\n")
	return b.Bytes()
}

func BenchmarkSSEReader(b *testing.B) {
	in := sseBenchStream()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		sr := NewSSEReader(bytes.NewReader(in), SSELimits{MaxBytes: 1 << 30, MaxLine: 1 << 30, MaxEvents: 100})
		n := 0
		for {
			_, err := sr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 3 {
			b.Fatal(n)
		}
	}
}

func BenchmarkFromServer(b *testing.B) {
	in := corpus.ToolsListResponse(50, 1)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromServer(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFromServerSmall(b *testing.B) {
	in := []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromServer(in); err != nil {
			b.Fatal(err)
		}
	}
}

const benchCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}},"name":"search_issues","arguments":{"q":"is:open label:bug","limit":20}}}`

func BenchmarkFromClient(b *testing.B) {
	in := []byte(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		if _, e := FromClient(in); e != nil {
			b.Fatal(e)
		}
	}
}

func BenchmarkDeriveHeaders(b *testing.B) {
	m, err := Parse([]byte(benchCall))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DeriveHeaders(m, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSSEWriter writes a tools/list response of 50 realistic tools as
// one event and flushes it: compact (with spaces in strings, so it is
// scanned) and pretty-printed (compacted).
func BenchmarkSSEWriter(b *testing.B) {
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
			var out bytes.Buffer
			sw := NewSSEWriter(&out)
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			for b.Loop() {
				sw.Event(Event{Type: "message", Data: c.in})
				if err := sw.Flush(); err != nil {
					b.Fatal(err)
				}
				out.Reset()
			}
		})
	}
}

// BenchmarkLineReader reads 50 tools/list responses of 20 tools, one per
// line.
func BenchmarkLineReader(b *testing.B) {
	line := append(corpus.ToolsListResponse(20, 1), '\n')
	in := bytes.Repeat(line, 50)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		lr := NewLineReader(bytes.NewReader(in), 1<<20)
		for {
			if _, err := lr.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}
