package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// BenchmarkDrift10kTools100Pages: a whole drift run (both connections,
// every rule) against the strict mock serving 10,000 tools in 100 pages on
// loopback.
func BenchmarkDrift10kTools100Pages(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 10000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"tool_%05d","description":"Tool %d reads a record and returns it as JSON with its owner and timestamps.","inputSchema":{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z0-9-]{1,64}$"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["id"],"additionalProperties":false},"annotations":{"readOnlyHint":true}}`, i, i)
	}
	sb.WriteString("]")
	dir := b.TempDir()
	manifestPath := filepath.Join(dir, "m.json")
	if err := os.WriteFile(manifestPath, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	tools, err := mockserver.LoadTools([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	s := mockserver.MustNew(mockserver.Config{Tools: tools, PageSize: 100})
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	defer ts.Close()
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		var out strings.Builder
		code := Main([]string{"drift", manifestPath, "--url", ts.URL + "/mcp", "--format", "json", "--max-list-pages", "100"}, strings.NewReader(""), &out, io.Discard)
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
		var r struct {
			Served struct {
				ToolCount int `json:"tool_count"`
			} `json:"served"`
		}
		if err := json.Unmarshal([]byte(out.String()), &r); err != nil || r.Served.ToolCount != 10000 {
			b.Fatalf("served %d: %v", r.Served.ToolCount, err)
		}
	}
}
