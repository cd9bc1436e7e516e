package mockserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire"

	"github.com/mcpdrift/mcpdrift/safetext"
)

const modern = mcpwire.Rev20260728

func v1Tools(t testing.TB) []json.RawMessage {
	t.Helper()
	tools, err := LoadTools(examples.V1)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func v2Tools(t testing.TB) []json.RawMessage {
	t.Helper()
	tools, err := LoadTools(examples.V2RugPull)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// simpleTools makes n tools named t0..t(n-1).
func simpleTools(prefix string, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"name":"%s%d","inputSchema":{"type":"object"}}`, prefix, i))
	}
	return out
}

func newHTTP(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s := MustNew(cfg)
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { s.Close(); ts.Close() })
	return s, ts
}

const metaFmt = `{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}}`

// modernBody builds a modern request; extra is more params members
// ("" for none).
func modernBody(id int, method, extra string) string {
	return modernBodyV(id, method, extra, modern)
}

func modernBodyV(id int, method, extra, version string) string {
	p := `{"_meta":` + fmt.Sprintf(metaFmt, version)
	if extra != "" {
		p += "," + extra
	}
	p += "}"
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p)
}

func baseHeaders() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	return h
}

func modernHeaders(method, name string) http.Header {
	h := baseHeaders()
	h.Set(mcpwire.HeaderProtocolVersion, modern)
	h.Set(mcpwire.HeaderMethod, method)
	if name != "" {
		h.Set(mcpwire.HeaderName, mcpwire.EncodeHeaderValue(name))
	}
	return h
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

func do(t testing.TB, c *http.Client, method, url, body string, h http.Header) resp {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[k] = append([]string(nil), vs...)
	}
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp{res.StatusCode, res.Header, b}
}

func post(t testing.TB, url, body string, h http.Header) resp {
	t.Helper()
	return do(t, nil, http.MethodPost, url, body, h)
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Params json.RawMessage `json:"params"`
}

func decode(t testing.TB, b []byte) rpcMsg {
	t.Helper()
	var m rpcMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("response is not JSON: %v: %q", err, safetext.Clip(string(b), 300))
	}
	return m
}

func errCode(t testing.TB, b []byte) int {
	t.Helper()
	m := decode(t, b)
	if m.Error == nil {
		t.Fatalf("not an error response: %s", safetext.Clip(string(b), 300))
	}
	return m.Error.Code
}

// wantErr checks a refusal's status and JSON-RPC code.
func wantErr(t testing.TB, r resp, status, code int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, safetext.Clip(string(r.body), 400))
	}
	if got := errCode(t, r.body); got != code {
		t.Fatalf("code %d, want %d: %s", got, code, safetext.Clip(string(r.body), 400))
	}
}

func wantOK(t testing.TB, r resp) rpcMsg {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, safetext.Clip(string(r.body), 400))
	}
	m := decode(t, r.body)
	if m.Error != nil || m.Result == nil {
		t.Fatalf("not a result: %s", safetext.Clip(string(r.body), 400))
	}
	return m
}

type listResult struct {
	Tools       []json.RawMessage `json:"tools"`
	NextCursor  *string           `json:"nextCursor"`
	ResultType  *string           `json:"resultType"`
	TTLMs       *int64            `json:"ttlMs"`
	CacheScope  *string           `json:"cacheScope"`
	Meta        json.RawMessage   `json:"_meta"`
	Unsupported json.RawMessage   `json:"supportedVersions"`
}

func listOf(t testing.TB, m rpcMsg) listResult {
	t.Helper()
	var lr listResult
	if err := json.Unmarshal(m.Result, &lr); err != nil {
		t.Fatal(err)
	}
	return lr
}

func names(t testing.TB, tools []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(tools))
	for i, tl := range tools {
		var n struct{ Name string }
		if err := json.Unmarshal(tl, &n); err != nil {
			t.Fatal(err)
		}
		out[i] = n.Name
	}
	return out
}

// sameRaw checks that served tools are byte-identical to the source's
// (manifest.ParseToolList of both).
func sameRaw(t testing.TB, served, source []byte) {
	t.Helper()
	a, err := manifest.ParseToolList(served)
	if err != nil {
		t.Fatalf("served list does not parse: %v", err)
	}
	b, err := manifest.ParseToolList(source)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Tools) != len(b.Tools) {
		t.Fatalf("%d tools served, source has %d", len(a.Tools), len(b.Tools))
	}
	for i := range a.Tools {
		if !bytes.Equal(a.Tools[i].Raw(), b.Tools[i].Raw()) {
			t.Fatalf("tool %d bytes differ:\n%s\n---\n%s", i, a.Tools[i].Raw(), b.Tools[i].Raw())
		}
	}
}

// sameCompacted checks that an SSE-served list holds the source's tools
// with only insignificant whitespace dropped: each tool's bytes are the
// compacted source bytes, and each tool's digest is the source's.
func sameCompacted(t testing.TB, served, source []byte) {
	t.Helper()
	a, err := manifest.ParseToolList(served)
	if err != nil {
		t.Fatalf("served list does not parse: %v", err)
	}
	b, err := manifest.ParseToolList(source)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Tools) != len(b.Tools) {
		t.Fatalf("%d tools served, source has %d", len(a.Tools), len(b.Tools))
	}
	for i := range a.Tools {
		var want bytes.Buffer
		if err := json.Compact(&want, b.Tools[i].Raw()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Tools[i].Raw(), want.Bytes()) {
			t.Fatalf("tool %d is not the compacted source:\n%s\n---\n%s", i, a.Tools[i].Raw(), want.Bytes())
		}
		if !bytes.Equal(a.Tools[i].Value().Canonical(), b.Tools[i].Value().Canonical()) {
			t.Fatalf("tool %d: canonical forms differ", i)
		}
	}
	da, _ := manifest.ManifestDigestOf(a.Tools)
	db, _ := manifest.ManifestDigestOf(b.Tools)
	if da != db {
		t.Fatalf("manifest digest %s, source %s", da, db)
	}
}

// oneDataLine checks that every event of a stream has at most one data: line.
func oneDataLine(t testing.TB, stream []byte) {
	t.Helper()
	s := strings.ReplaceAll(strings.ReplaceAll(string(stream), "\r\n", "\n"), "\r", "\n")
	for _, block := range strings.Split(s, "\n\n") {
		if n := strings.Count("\n"+block, "\ndata:"); n > 1 {
			t.Fatalf("an event with %d data: lines: %q", n, safetext.Clip(block, 200))
		}
	}
}

type sseEvent struct {
	event, id, data string
	hasID, hasData  bool
}

// parseSSE parses an event stream (WHATWG rules: CRLF/CR/LF, "field:
// value", one optional space stripped, data lines joined with LF, comments
// ignored). An event is emitted for every block with an id or data line.
func parseSSE(t testing.TB, b []byte) []sseEvent {
	t.Helper()
	s := strings.ReplaceAll(strings.ReplaceAll(string(b), "\r\n", "\n"), "\r", "\n")
	var out []sseEvent
	var cur sseEvent
	var data []string
	flush := func() {
		if cur.hasID || cur.hasData {
			cur.data = strings.Join(data, "\n")
			out = append(out, cur)
		}
		cur, data = sseEvent{}, nil
	}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			flush()
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.event = value
		case "id":
			cur.id, cur.hasID = value, true
		case "data":
			data = append(data, value)
			cur.hasData = true
		case "retry":
		default:
			t.Fatalf("unknown SSE field %q", field)
		}
	}
	flush()
	return out
}

// legacySession initializes a legacy session at version and sends
// notifications/initialized; it returns the session id.
func legacyInit(t testing.TB, url, version string) string {
	t.Helper()
	r := post(t, url, legacyInitBody(version), baseHeaders())
	m := wantOK(t, r)
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(m.Result, &ir)
	sid := r.header.Get(mcpwire.HeaderSessionID)
	if sid == "" {
		t.Fatal("no Mcp-Session-Id")
	}
	h := legacyHeaders(sid, ir.ProtocolVersion)
	if r := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); r.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %v", r)
	}
	return sid
}

func legacyInitBody(version string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
}

func legacyHeaders(sid, version string) http.Header {
	h := baseHeaders()
	if sid != "" {
		h.Set(mcpwire.HeaderSessionID, sid)
	}
	if version != "" {
		h.Set(mcpwire.HeaderProtocolVersion, version)
	}
	return h
}
