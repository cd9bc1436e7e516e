package mcpclient

import (
	"bytes"
	"io"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

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
		sr := newSSEStream(bytes.NewReader(in), "m", 1<<30, 100, false)
		n := 0
		for {
			_, err := sr.next()
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

func BenchmarkParseMessage(b *testing.B) {
	in := corpus.ToolsListResponse(50, 1)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseMessage(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseMessageSmall(b *testing.B) {
	in := []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseMessage(in); err != nil {
			b.Fatal(err)
		}
	}
}
