package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// ssePages lists tools over SSE responses, one tool a page, keeping every
// page's result (as a listing that keeps its tools does) and the text of
// its bytes as they were handed over.
func ssePages(t *testing.T, tools []json.RawMessage) (kept []jcs.Value, was []string) {
	t.Helper()
	srv := mockserver.MustNew(mockserver.Config{Tools: tools, PageSize: 1, Response: mockserver.SSEResponses})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	url := ts.URL
	cfg := Config{BaseURL: url + "/mcp", MaxResponseBytes: 64 << 20, MaxListBytes: 1 << 30}
	cfg.OnToolsPage = func(_ []byte, res jcs.Value) error {
		kept = append(kept, res)
		was = append(was, string(res.Raw()))
		return nil
	}
	if _, err := ListTools(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(tools) {
		t.Fatalf("%d pages kept for %d tools", len(kept), len(tools))
	}
	return kept, was
}

// TestSSEPagesKeepTheirBytes: the pages of a listing over SSE, small ones
// (copied out of the stream's buffer) and large ones (given the buffer),
// keep their bytes after later pages are read: no page is written over
// by the next.
func TestSSEPagesKeepTheirBytes(t *testing.T) {
	var tools []json.RawMessage
	for i := range 12 {
		d := fmt.Sprintf("tool %d", i)
		if i%3 == 0 {
			d += " " + strings.Repeat(fmt.Sprint(i%10), 80<<10) // over 64 KiB: detached
		}
		tools = append(tools, json.RawMessage(fmt.Sprintf(`{"name":"t%d","description":%q,"inputSchema":{"type":"object"}}`, i, d)))
	}
	kept, was := ssePages(t, tools)
	for i := range kept {
		if got := string(kept[i].Raw()); got != was[i] {
			t.Errorf("page %d was written over: %.60q…, was %.60q…", i+1, got, was[i])
		}
	}
}

// TestSSEPagesAfterALargeOne: pages that follow a large one are not each
// held in a buffer as large as it (a hostile server's 4 MB page, then 40
// of 70 KB, kept: about 7 MB in all, not 40 times 4 MB).
func TestSSEPagesAfterALargeOne(t *testing.T) {
	tools := []json.RawMessage{json.RawMessage(`{"name":"big","description":"` + strings.Repeat("b", 4<<20) + `","inputSchema":{"type":"object"}}`)}
	for i := range 40 {
		tools = append(tools, json.RawMessage(fmt.Sprintf(`{"name":"t%d","description":%q,"inputSchema":{"type":"object"}}`, i, strings.Repeat("s", 70<<10))))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept, _ := ssePages(t, tools)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	// The server's own copies of its tools (two mocks) count too.
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 48<<20 {
		t.Errorf("the kept pages hold %d MB", grew>>20)
	}
}
