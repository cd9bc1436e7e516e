package mcpclient

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

func listTools(t *testing.T, cfg Config) (*Observation, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ListTools(ctx, cfg)
}

func mustList(t *testing.T, cfg Config) *Observation {
	t.Helper()
	obs, err := listTools(t, cfg)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	return obs
}

// checkTranscript feeds the transcript to manifest.ParseToolList and
// compares tools, pages and completeness with the observation.
func checkTranscript(t *testing.T, obs *Observation, wantTools []string) *manifest.ToolList {
	t.Helper()
	tl, err := manifest.ParseToolList(obs.Transcript)
	if err != nil {
		t.Fatalf("manifest.ParseToolList(transcript): %v\n%s", err, obs.Transcript)
	}
	var names []string
	for _, tool := range tl.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, wantTools) {
		t.Errorf("transcript tools = %v, want %v", names, wantTools)
	}
	if tl.Pages != obs.Pages {
		t.Errorf("transcript pages = %d, observation %d", tl.Pages, obs.Pages)
	}
	if string(tl.Completeness) != obs.Completeness {
		t.Errorf("transcript completeness = %s (%s), observation %s", tl.Completeness, tl.Reason, obs.Completeness)
	}
	return tl
}

func names(prefix string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func threePages() []page {
	return []page{
		{tools: toolsJSON("a", 2), next: cur("p1")},
		{tools: toolsJSON("b", 2), next: cur("p2")},
		{tools: toolsJSON("c", 1)},
	}
}

func TestModernThreePages(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			srv := &modernServer{t: t, pages: threePages(), sse: sse}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			obs := mustList(t, Config{BaseURL: ts.URL, ClientName: "probe", ClientVersion: "9"})
			if obs.Era != EraModern || obs.ProtocolRevision != mcpwire.Rev20260728 || obs.RevisionReason == "" {
				t.Errorf("era %q revision %q reason %q", obs.Era, obs.ProtocolRevision, obs.RevisionReason)
			}
			if obs.ServerInfo == nil || *obs.ServerInfo != (ServerInfo{"fake-modern", "1.2.3"}) {
				t.Errorf("server info %+v", obs.ServerInfo)
			}
			if string(obs.DiscoverRaw) != discoverResult {
				t.Errorf("DiscoverRaw = %s", obs.DiscoverRaw)
			}
			if obs.Pages != 3 || obs.Completeness != "complete" || obs.CapReached || obs.CursorCycle {
				t.Errorf("pages %d completeness %s cap %v cycle %v", obs.Pages, obs.Completeness, obs.CapReached, obs.CursorCycle)
			}
			if obs.TTLMs == nil || *obs.TTLMs != 60000 || obs.CacheScope != "public" || obs.MissingCacheFields {
				t.Errorf("cache fields %v %q %v", obs.TTLMs, obs.CacheScope, obs.MissingCacheFields)
			}
			if obs.HTTPStatus != 200 || obs.WWWAuthenticate != "" {
				t.Errorf("status %d %q", obs.HTTPStatus, obs.WWWAuthenticate)
			}
			if !slices.Equal(srv.methodsSeen(), []string{"server/discover", "tools/list", "tools/list", "tools/list"}) {
				t.Errorf("methods %v", srv.methodsSeen())
			}
			_, versions := srv.seen()
			for i, v := range versions {
				if v != mcpwire.Rev20260728 {
					t.Errorf("request %d: Mcp-Protocol-Version %q", i, v)
				}
			}
			checkTranscript(t, obs, append(append(names("a", 2), names("b", 2)...), names("c", 1)...))
			// The raw bytes of each page are in the transcript verbatim.
			for _, p := range threePages() {
				if !bytes.Contains(obs.Transcript, []byte(pageResult(p, true))) {
					t.Errorf("transcript lacks the raw page %s", pageResult(p, true))
				}
			}
			if len(obs.Warnings) != 0 {
				t.Errorf("warnings %q", obs.Warnings)
			}
		})
	}
}

func TestTranscriptShape(t *testing.T) {
	srv := &modernServer{t: t, pages: threePages()}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(obs.Transcript, &items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 6 {
		t.Fatalf("%d transcript items", len(items))
	}
	for i, it := range items {
		_, isReq := it["method"]
		if isReq != (i%2 == 0) {
			t.Errorf("item %d: request=%v", i, isReq)
		}
	}
	var p struct {
		Cursor *string        `json:"cursor"`
		Meta   map[string]any `json:"_meta"`
	}
	json.Unmarshal(items[2]["params"], &p)
	if p.Cursor == nil || *p.Cursor != "p1" || p.Meta[mcpwire.MetaProtocolVersion] != mcpwire.Rev20260728 {
		t.Errorf("second request params %s", items[2]["params"])
	}
}

func TestRequestHeaders(t *testing.T) {
	meta := requestMeta("2026-07-28", implementation{"c", "1"}, []byte("{}"))
	cases := []struct {
		body    []byte
		session string
		want    map[string]string
	}{
		{newRequest(1, "tools/list", map[string]any{"_meta": meta}).Body, "2025-11-25",
			map[string]string{"Mcp-Method": "tools/list", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Name": ""}},
		{newRequest(2, "tools/call", map[string]any{"_meta": meta, "name": "get_weather"}).Body, "",
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "get_weather", "Mcp-Protocol-Version": "2026-07-28"}},
		{newRequest(3, "prompts/get", map[string]any{"_meta": meta, "name": "Hello, 世界"}).Body, "",
			map[string]string{"Mcp-Name": "=?base64?SGVsbG8sIOS4lueVjA==?="}},
		{newRequest(4, "resources/read", map[string]any{"_meta": meta, "uri": "=?base64?literal?="}).Body, "",
			map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="}},
		{newRequest(5, "tools/list", map[string]string{"cursor": "x"}).Body, "2025-06-18",
			map[string]string{"Mcp-Protocol-Version": "2025-06-18", "Mcp-Name": ""}},
		{newRequest(6, "initialize", nil).Body, "",
			map[string]string{"Mcp-Method": "initialize", "Mcp-Protocol-Version": ""}},
		{newRequest(0, "notifications/initialized", nil).Body, "2025-11-25",
			map[string]string{"Mcp-Method": "notifications/initialized", "Mcp-Protocol-Version": "2025-11-25"}},
	}
	for _, c := range cases {
		h, err := requestHeaders(c.body, c.session)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range c.want {
			if got := h.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", c.body, k, got, v)
			}
		}
	}
}

func TestLegacyFallback(t *testing.T) {
	cases := []struct {
		name     string
		discover func(w http.ResponseWriter, q *rpcIn)
		reason   string
	}{
		{"400 empty body", func(w http.ResponseWriter, q *rpcIn) { w.WriteHeader(400) }, "HTTP 400"},
		{"200 -32601", func(w http.ResponseWriter, q *rpcIn) { respondErr(w, 200, q.ID, -32601, "Method not found") }, "-32601"},
		{"400 -32601", func(w http.ResponseWriter, q *rpcIn) { respondErr(w, 400, q.ID, -32601, "Method not found") }, "-32601"},
		{"400 -32000 not initialized", nil, "-32000"}, // the legacy server's own answer
		{"404 html", func(w http.ResponseWriter, q *rpcIn) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(404)
			io.WriteString(w, "<h1>Not Found</h1>")
		}, "HTTP 404"},
		{"200 invalid JSON", func(w http.ResponseWriter, q *rpcIn) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{oops")
		}, "not strict JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := &legacyServer{t: t, discover: c.discover, deleteAllow: true,
				pages: []page{{tools: toolsJSON("l", 2), next: cur("p1")}, {tools: toolsJSON("m", 1)}}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			obs := mustList(t, Config{BaseURL: ts.URL})
			if obs.Era != EraLegacy || obs.ProtocolRevision != "" || obs.LegacyVersion != mcpwire.Rev20251125 {
				t.Errorf("era %q revision %q legacy %q", obs.Era, obs.ProtocolRevision, obs.LegacyVersion)
			}
			if !strings.Contains(obs.RevisionReason, "not claimed") || !strings.Contains(obs.RevisionReason, c.reason) {
				t.Errorf("reason %q", obs.RevisionReason)
			}
			if obs.ServerInfo == nil || obs.ServerInfo.Name != "fake-legacy" {
				t.Errorf("server info %+v", obs.ServerInfo)
			}
			methods, deleted := srv.snapshot()
			want := []string{"server/discover", "initialize", "notifications/initialized", "tools/list", "tools/list"}
			if !slices.Equal(methods, want) {
				t.Errorf("methods %v", methods)
			}
			if !deleted {
				t.Error("the session was not ended with DELETE")
			}
			if !obs.MissingCacheFields || obs.TTLMs != nil {
				t.Errorf("legacy pages carry no cache fields: %v %v", obs.MissingCacheFields, obs.TTLMs)
			}
			checkTranscript(t, obs, append(names("l", 2), names("m", 1)...))
		})
	}
}

func TestLegacyDeleteNotAllowed(t *testing.T) {
	srv := &legacyServer{t: t, pages: []page{{tools: toolsJSON("l", 1)}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	if _, deleted := srv.snapshot(); !deleted || len(obs.Warnings) != 0 {
		t.Errorf("deleted %v warnings %q", deleted, obs.Warnings)
	}
}

func TestLegacyPreferred(t *testing.T) {
	srv := &legacyServer{t: t, pages: []page{{tools: toolsJSON("l", 1)}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL, PreferredRevision: mcpwire.Rev20251125})
	if methods, _ := srv.snapshot(); methods[0] != "initialize" || obs.Era != EraLegacy {
		t.Errorf("methods %v era %s", methods, obs.Era)
	}
}

func TestLegacySSE(t *testing.T) {
	for _, crlf := range []bool{false, true} {
		t.Run(fmt.Sprintf("crlf=%v", crlf), func(t *testing.T) {
			srv := &legacyServer{t: t, sse: true, crlf: crlf, pages: []page{{tools: toolsJSON("s", 3), next: cur("p1")}, {tools: toolsJSON("t", 1)}}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			obs := mustList(t, Config{BaseURL: ts.URL})
			if obs.Era != EraLegacy || obs.Pages != 2 || obs.Completeness != "complete" {
				t.Errorf("era %s pages %d %s", obs.Era, obs.Pages, obs.Completeness)
			}
			checkTranscript(t, obs, append(names("s", 3), names("t", 1)...))
			if !slices.ContainsFunc(obs.Warnings, func(w string) bool { return strings.Contains(w, "roots/list") }) {
				t.Errorf("no warning about the unanswered server request: %q", obs.Warnings)
			}
			if bytes.Contains(obs.Transcript, []byte("notifications/message")) || bytes.Contains(obs.Transcript, []byte("roots/list")) {
				t.Error("the transcript carries interleaved messages")
			}
		})
	}
}

func TestUnsupportedVersion(t *testing.T) {
	srv := &modernServer{t: t, pages: threePages(), accept: []string{"2027-01-01"}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs, err := listTools(t, Config{BaseURL: ts.URL})
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != mcpwire.CodeUnsupportedProtocolVersion || pe.HTTPStatus != 400 || !IsProtocolUnsupported(err) {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(pe.Supported, []string{"2027-01-01"}) || pe.Requested != mcpwire.Rev20260728 {
		t.Errorf("supported %v requested %q", pe.Supported, pe.Requested)
	}
	if slices.Contains(srv.methodsSeen(), "tools/list") || slices.Contains(srv.methodsSeen(), "initialize") {
		t.Errorf("methods after -32022: %v", srv.methodsSeen())
	}
	if obs == nil || obs.Era != EraModern || obs.Transcript != nil || obs.Pages != 0 {
		t.Errorf("observation %+v", obs)
	}
}

func TestUnsupportedVersionRetry(t *testing.T) {
	defer func(old []string) { modernSpoken = old }(modernSpoken)
	modernSpoken = []string{mcpwire.Rev20260728, "2027-01-01"}
	srv := &modernServer{t: t, pages: threePages()[2:], accept: []string{"2027-01-01"}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	if obs.ProtocolRevision != "2027-01-01" {
		t.Errorf("revision %q", obs.ProtocolRevision)
	}
	if _, versions := srv.seen(); !slices.Equal(versions, []string{mcpwire.Rev20260728, "2027-01-01", "2027-01-01"}) {
		t.Errorf("header versions %v", versions)
	}
}

// A -32022 that lists the revision it refused (the conformance suite's
// request-metadata scenario refuses the first request so): the client
// retries once with that revision, the one supported, and goes on.
func TestUnsupportedVersionListedRetry(t *testing.T) {
	refused := 0
	srv := &modernServer{t: t, pages: threePages()[2:], discover: func(w http.ResponseWriter, q *rpcIn) bool {
		if refused++; refused > 1 {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`, q.ID)
		return true
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	if obs.ProtocolRevision != mcpwire.Rev20260728 || refused != 2 || len(obs.Warnings) != 1 {
		t.Errorf("revision %q after %d discovers, warnings %q", obs.ProtocolRevision, refused, obs.Warnings)
	}
}

func TestModernWithoutDiscover(t *testing.T) {
	srv := &modernServer{t: t, pages: threePages()[2:], discover: func(w http.ResponseWriter, q *rpcIn) bool {
		respondErr(w, 404, q.ID, mcpwire.CodeMethodNotFound, "Method not found")
		return true
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	if obs.Era != EraModern || obs.ProtocolRevision != mcpwire.Rev20260728 || len(obs.Warnings) != 1 {
		t.Errorf("era %s revision %q warnings %q", obs.Era, obs.ProtocolRevision, obs.Warnings)
	}
}

func TestModernErrorOnDiscover(t *testing.T) {
	srv := &modernServer{t: t, pages: threePages(), discover: func(w http.ResponseWriter, q *rpcIn) bool {
		respondErr(w, 400, q.ID, mcpwire.CodeMissingClientCapability, "needs elicitation")
		return true
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	_, err := listTools(t, Config{BaseURL: ts.URL})
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != mcpwire.CodeMissingClientCapability || IsProtocolUnsupported(err) {
		t.Fatalf("err = %v", err)
	}
	if len(srv.methodsSeen()) != 1 {
		t.Errorf("fell back after a modern error: %v", srv.methodsSeen())
	}
}

func TestDiscoverListsOnlyLegacy(t *testing.T) {
	srv := &legacyServer{t: t, pages: []page{{tools: toolsJSON("l", 1)}}, discover: func(w http.ResponseWriter, q *rpcIn) {
		respond(w, 200, q.ID, `{"resultType":"complete","supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}`)
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	if obs.Era != EraLegacy || obs.DiscoverRaw == nil || !strings.Contains(obs.RevisionReason, "only legacy") {
		t.Errorf("era %s reason %q", obs.Era, obs.RevisionReason)
	}
}

func TestEmptyStringCursor(t *testing.T) {
	srv := &modernServer{t: t, pages: []page{{tools: toolsJSON("e", 1), next: cur("")}, {tools: toolsJSON("f", 1)}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	if obs.Pages != 2 || obs.Completeness != "complete" {
		t.Errorf("pages %d %s", obs.Pages, obs.Completeness)
	}
	checkTranscript(t, obs, []string{"e0", "f0"})
}

func TestLegacyEmptyStringCursor(t *testing.T) {
	srv := &legacyServer{t: t, pages: []page{{tools: toolsJSON("e", 1), next: cur("")}, {tools: toolsJSON("f", 1)}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	if obs.Pages != 1 || obs.Completeness != "partial" || len(obs.Warnings) != 1 {
		t.Errorf("pages %d %s %q", obs.Pages, obs.Completeness, obs.Warnings)
	}
	checkTranscript(t, obs, []string{"e0"})
}

func TestCursorCycle(t *testing.T) {
	srv := &modernServer{t: t, pages: []page{
		{tools: toolsJSON("a", 1), next: cur("p1")},
		{tools: toolsJSON("b", 1), next: cur("p2")},
		{tools: toolsJSON("c", 1), next: cur("p1")},
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL})
	if !obs.CursorCycle || obs.CapReached || obs.Pages != 3 || obs.Completeness != "partial" {
		t.Errorf("cycle %v cap %v pages %d %s", obs.CursorCycle, obs.CapReached, obs.Pages, obs.Completeness)
	}
	tl := checkTranscript(t, obs, []string{"a0", "b0", "c0"})
	if !strings.Contains(tl.Reason, "repeated") {
		t.Errorf("manifest reason %q", tl.Reason)
	}
}

func TestPageCap(t *testing.T) {
	var pages []page
	for i := 0; i < 100; i++ {
		pages = append(pages, page{tools: toolsJSON(fmt.Sprintf("p%d_", i), 1), next: cur(fmt.Sprintf("p%d", i+1))})
	}
	srv := &modernServer{t: t, pages: pages}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL, MaxListPages: 4})
	if !obs.CapReached || obs.CursorCycle || obs.Pages != 4 || obs.Completeness != "partial" {
		t.Errorf("cap %v cycle %v pages %d %s", obs.CapReached, obs.CursorCycle, obs.Pages, obs.Completeness)
	}
	checkTranscript(t, obs, []string{"p0_0", "p1_0", "p2_0", "p3_0"})
	if n := strings.Count(strings.Join(srv.methodsSeen(), ","), "tools/list"); n != 4 {
		t.Errorf("%d tools/list requests", n)
	}
}

// oneShot serves discover normally and answers tools/list with h.
func oneShot(t *testing.T, h func(w http.ResponseWriter, q *rpcIn)) *httptest.Server {
	srv := &modernServer{t: t, pages: threePages()}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" {
			h(w, readRPC(t, r))
			return
		}
		srv.ServeHTTP(w, r)
	}))
}

func TestWrongResponseID(t *testing.T) {
	for _, sse := range []bool{false, true} {
		ts := oneShot(t, func(w http.ResponseWriter, q *rpcIn) {
			body := `{"jsonrpc":"2.0","id":999,"result":{"tools":[]}}`
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", body)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		})
		obs, err := listTools(t, Config{BaseURL: ts.URL})
		ts.Close()
		var re *ResponseError
		if !errors.As(err, &re) || !strings.Contains(re.Reason, "999") {
			t.Errorf("sse=%v: err = %v", sse, err)
		}
		if obs == nil || obs.Transcript != nil || obs.Completeness != "" {
			t.Errorf("sse=%v: observation after an error: %+v", sse, obs)
		}
	}
}

func TestInvalidResponses(t *testing.T) {
	cases := map[string]string{
		"not JSON":         `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}`,
		"duplicate keys":   `{"jsonrpc":"2.0","id":2,"id":2,"result":{"tools":[]}}`,
		"batch":            `[{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]`,
		"no jsonrpc":       `{"id":2,"result":{"tools":[]}}`,
		"tools not array":  `{"jsonrpc":"2.0","id":2,"result":{"tools":{}}}`,
		"no tools":         `{"jsonrpc":"2.0","id":2,"result":{}}`,
		"numeric cursor":   `{"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":3}}`,
		"input_required":   `{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","tools":[]}}`,
		"unknown resType":  `{"jsonrpc":"2.0","id":2,"result":{"resultType":"later","tools":[]}}`,
		"result and error": `{"jsonrpc":"2.0","id":2,"result":{"tools":[]},"error":{"code":1,"message":"x"}}`,
		"empty":            ``,
		"request":          `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		// A member a case-insensitive decoder reads as the list or its
		// cursor: such a client lists what the observation did not.
		"Tools beside tools":      `{"jsonrpc":"2.0","id":2,"result":{"tools":[],"Tools":[{"name":"exec_shell","inputSchema":{"type":"object"}}]}}`,
		"TOOLS alone":             `{"jsonrpc":"2.0","id":2,"result":{"TOOLS":[]}}`,
		"toolſ folded":            `{"jsonrpc":"2.0","id":2,"result":{"tools":[],"toolſ":[]}}`,
		"NextCursor beside tools": `{"jsonrpc":"2.0","id":2,"result":{"tools":[],"NextCursor":"p2"}}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			ts := oneShot(t, func(w http.ResponseWriter, q *rpcIn) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, body)
			})
			defer ts.Close()
			_, err := listTools(t, Config{BaseURL: ts.URL})
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error(), "tools/list") {
				t.Errorf("error does not name the method: %v", err)
			}
		})
	}
}

func TestJSONRPCErrorInsteadOfResult(t *testing.T) {
	long := "\x1b[31mred\u202e" + strings.Repeat("A", 5000)
	ts := oneShot(t, func(w http.ResponseWriter, q *rpcIn) {
		respondErr(w, 200, q.ID, mcpwire.CodeInternalError, long)
	})
	defer ts.Close()
	_, err := listTools(t, Config{BaseURL: ts.URL})
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != mcpwire.CodeInternalError || pe.HTTPStatus != 200 || pe.Method != "tools/list" {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\u202e") || !strings.Contains(msg, `\u001b[31mred\u202e`) {
		t.Errorf("message not escaped: %q", msg)
	}
	if strings.Count(msg, "A") > 220 || len(msg) > 400 {
		t.Errorf("message quotes too much (%d bytes)", len(msg))
	}
	if IsProtocolUnsupported(err) {
		t.Error("a -32603 is not a protocol refusal")
	}
}

func TestSSEStreamNeverEnds(t *testing.T) {
	done := make(chan struct{})
	ts := oneShot(t, func(w http.ResponseWriter, q *rpcIn) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for {
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	defer ts.Close()
	defer close(done)
	start := time.Now()
	_, err := listTools(t, Config{BaseURL: ts.URL, RequestTimeout: 300 * time.Millisecond})
	var le *LimitError
	if !errors.As(err, &le) || le.Kind != LimitRequestTime || le.Method != "tools/list" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestHugeBody(t *testing.T) {
	const gig = 1 << 30
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	stream := func(w http.ResponseWriter, prefix string) {
		io.WriteString(w, prefix)
		for n := 0; n < gig; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	cases := map[string]func(w http.ResponseWriter, q *rpcIn){
		"json chunked": func(w http.ResponseWriter, q *rpcIn) {
			w.Header().Set("Content-Type", "application/json")
			stream(w, `{"jsonrpc":"2.0","id":2,"result":{"tools":[`)
		},
		"json content-length": func(w http.ResponseWriter, q *rpcIn) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(gig))
			stream(w, "")
		},
		"sse one line": func(w http.ResponseWriter, q *rpcIn) {
			w.Header().Set("Content-Type", "text/event-stream")
			stream(w, `data: {"jsonrpc":"2.0","id":2,"result":{"tools":[`)
		},
		"sse many events": func(w http.ResponseWriter, q *rpcIn) {
			w.Header().Set("Content-Type", "text/event-stream")
			ev := bytes.Repeat([]byte(`data: {"jsonrpc":"2.0","method":"notifications/progress"}`+"\n\n"), 1<<14)
			for n := 0; n < gig; n += len(ev) {
				if _, err := w.Write(ev); err != nil {
					return
				}
			}
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			ts := oneShot(t, h)
			defer ts.Close()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := listTools(t, Config{BaseURL: ts.URL})
			runtime.ReadMemStats(&after)
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v", err)
			}
			wantKind := LimitResponseBytes
			if name == "sse many events" {
				wantKind = LimitSSEEvents
			}
			if le.Kind != wantKind {
				t.Errorf("kind %s, want %s", le.Kind, wantKind)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestRedirects(t *testing.T) {
	srv := &modernServer{t: t, pages: threePages()[2:]}
	other := httptest.NewServer(srv)
	defer other.Close()
	var hits atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/found", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/mcp", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	t.Run("same origin followed", func(t *testing.T) {
		obs := mustList(t, Config{BaseURL: ts.URL + "/same"})
		if obs.Pages != 1 || obs.Era != EraModern {
			t.Errorf("pages %d era %s", obs.Pages, obs.Era)
		}
	})
	t.Run("other origin refused", func(t *testing.T) {
		before := len(srv.methodsSeen())
		_, err := listTools(t, Config{BaseURL: ts.URL + "/away"})
		var re *RedirectError
		if !errors.As(err, &re) || re.Status != 307 || !strings.Contains(re.Location, other.URL) {
			t.Fatalf("err = %v", err)
		}
		if len(srv.methodsSeen()) != before {
			t.Error("the other origin received a request")
		}
	})
	t.Run("method change refused", func(t *testing.T) {
		_, err := listTools(t, Config{BaseURL: ts.URL + "/found"})
		var re *RedirectError
		if !errors.As(err, &re) || !strings.Contains(re.Reason, "GET") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("too many", func(t *testing.T) {
		_, err := listTools(t, Config{BaseURL: ts.URL + "/loop"})
		var re *RedirectError
		if !errors.As(err, &re) || hits.Load() != maxRedirects+1 {
			t.Fatalf("err = %v after %d hits", err, hits.Load())
		}
	})
}

func TestUnauthorized(t *testing.T) {
	challenge := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`
	for _, c := range []struct {
		status    int
		challenge string
		onDisc    bool
	}{{401, "", false}, {401, challenge, false}, {403, `Bearer error="insufficient_scope"`, false}, {401, challenge, true}} {
		t.Run(fmt.Sprintf("%d %v discover=%v", c.status, c.challenge != "", c.onDisc), func(t *testing.T) {
			srv := &modernServer{t: t, pages: threePages()}
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.onDisc || r.Header.Get("Mcp-Method") == "tools/list" {
					if c.challenge != "" {
						w.Header().Set("WWW-Authenticate", c.challenge)
					}
					w.WriteHeader(c.status)
					io.WriteString(w, `{"error":"unauthorized"}`)
					return
				}
				srv.ServeHTTP(w, r)
			}))
			defer ts.Close()
			obs, err := listTools(t, Config{BaseURL: ts.URL})
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != c.status || he.WWWAuthenticate != c.challenge {
				t.Fatalf("err = %v", err)
			}
			if obs.HTTPStatus != c.status || obs.WWWAuthenticate != c.challenge {
				t.Errorf("observation status %d challenge %q", obs.HTTPStatus, obs.WWWAuthenticate)
			}
			if c.challenge == "" && !strings.Contains(err.Error(), "without WWW-Authenticate") {
				t.Errorf("message %q", err)
			}
			if slices.Contains(srv.methodsSeen(), "initialize") {
				t.Error("an auth failure caused a legacy fallback")
			}
		})
	}
}

func TestHeaderNamesNotValues(t *testing.T) {
	const secret = "Bearer s3cr3t-token"
	want := http.Header{"Authorization": {secret}, "X-Api-Key": {"k-777"}}
	srv := &modernServer{t: t, pages: threePages(), wantHeaders: want}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	obs := mustList(t, Config{BaseURL: ts.URL, Headers: http.Header{"authorization": {secret}, "X-Api-Key": {"k-777"}}})
	if !slices.Equal(obs.HeaderNames, []string{"Authorization", "X-Api-Key"}) {
		t.Errorf("header names %v", obs.HeaderNames)
	}
	b, _ := json.Marshal(obs)
	if bytes.Contains(b, []byte("s3cr3t")) || bytes.Contains(b, []byte("k-777")) {
		t.Error("a header value reached the observation")
	}
	if len(srv.methodsSeen()) != 4 {
		t.Errorf("methods %v", srv.methodsSeen())
	}
}

func TestLegacyHeadersOnEveryRequest(t *testing.T) {
	srv := &legacyServer{t: t, deleteAllow: true, pages: []page{{tools: toolsJSON("l", 1)}}}
	var mu sync.Mutex
	var missing []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") != "t" {
			mu.Lock()
			missing = append(missing, r.Method+" "+r.Header.Get("Mcp-Method"))
			mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	mustList(t, Config{BaseURL: ts.URL, Headers: http.Header{"X-Token": {"t"}}})
	mu.Lock()
	defer mu.Unlock()
	if len(missing) != 0 {
		t.Errorf("requests without the configured header: %v", missing)
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = listTools(t, Config{BaseURL: "http://" + addr + "/mcp"})
	if !IsUnreachable(err) {
		t.Errorf("closed port: %v", err)
	}
}

func TestTLS(t *testing.T) {
	srv := &modernServer{t: t, pages: threePages()[2:]}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	ts.StartTLS()
	defer ts.Close()
	_, err := listTools(t, Config{BaseURL: ts.URL})
	if !IsUnreachable(err) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("unknown CA: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	obs, err := listTools(t, Config{BaseURL: ts.URL, RootCAs: pool})
	if err != nil || obs.Pages != 1 {
		t.Errorf("with RootCAs: %v", err)
	}
	// A caller's client keeps its transport, gains the redirect policy and
	// the roots.
	obs, err = listTools(t, Config{BaseURL: ts.URL, RootCAs: pool, HTTPClient: &http.Client{}})
	if err != nil || obs.Pages != 1 {
		t.Errorf("with HTTPClient and RootCAs: %v", err)
	}
	_, err = listTools(t, Config{BaseURL: ts.URL, HTTPClient: ts.Client()})
	if err != nil {
		t.Errorf("with the server's client: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []Config{
		{},
		{BaseURL: "http://x", Command: []string{"x"}},
		{BaseURL: "ftp://x"},
		{BaseURL: "http://user:pw@x/"},
		{BaseURL: "http://x", Headers: http.Header{"Mcp-Session-Id": {"x"}}},
		{BaseURL: "http://x", Headers: http.Header{"Accept": {"x"}}},
		{BaseURL: "http://x", Headers: http.Header{"X-Bad": {"a\r\nb"}}},
		{BaseURL: "http://x", Headers: http.Header{"bad name": {"a"}}},
		{BaseURL: "http://x", PreferredRevision: "2024-10-07"},
		{BaseURL: "http://x", Transport: "websocket"},
		{Command: []string{"x"}, Transport: TransportSSE},
		{BaseURL: "http://x", ClientCapabilities: []byte(`{"sampeling":{}}`)},
		{BaseURL: "http://x", ClientCapabilities: []byte(`{"sampling":true}`)},
		{BaseURL: "http://x", ClientCapabilities: []byte(`[]`)},
		{BaseURL: "http://x", PassEnv: []string{"A"}},
		{BaseURL: "http://x", MaxListPages: -1},
		{Command: []string{""}},
		{Command: []string{"x"}, Headers: http.Header{"A": {"b"}}},
		{Command: []string{"x"}, PassEnv: []string{"A=B"}},
	}
	for i, c := range cases {
		obs, err := ListTools(context.Background(), c)
		var ce *ConfigError
		if !errors.As(err, &ce) || obs != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

func TestParseMessage(t *testing.T) {
	good := map[string]msgKind{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                     kindResponse,
		` {"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"x"}}` + "\n": kindResponse,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`:                      kindResponse,
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"p"}}`:                  kindResponse,
		`{"jsonrpc":"2.0","method":"notifications/x"}`:                             kindNotification,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`:                                 kindRequest,
	}
	for in, kind := range good {
		m, err := parseMessage([]byte(in))
		if err != nil || m.kind != kind {
			t.Errorf("%s: %v %v", in, m, err)
			continue
		}
		if string(m.raw) != strings.TrimSpace(in) {
			t.Errorf("raw %q", m.raw)
		}
	}
	bad := []string{
		``, `null`, `[]`, `"x"`, `{"jsonrpc":"1.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","result":{}}`, `{"jsonrpc":"2.0","id":{},"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":1.5}}`,
		`{"jsonrpc":"2.0","id":1,"error":"x"}`, `{"jsonrpc":"2.0","method":1}`, "\ufeff{}", `{"jsonrpc":"2.0","id":1,"result":"\ud800"}`,
	}
	for _, in := range bad {
		if m, err := parseMessage([]byte(in)); err == nil {
			t.Errorf("%s: accepted as %+v", in, m)
		}
	}
	m, _ := parseMessage([]byte(`{"jsonrpc":"2.0","id":1.0,"result":{}}`))
	if !m.answers(1) || m.answers(2) {
		t.Error("numeric id comparison")
	}
	m, _ = parseMessage([]byte(`{"jsonrpc":"2.0","id":"1","result":{}}`))
	if m.answers(1) {
		t.Error(`"1" answered 1`)
	}
}
