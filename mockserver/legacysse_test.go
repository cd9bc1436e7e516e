package mockserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// sseStream is an open HTTP+SSE stream read event by event.
type sseStream struct {
	t   *testing.T
	res *http.Response
	br  *bufio.Reader
}

func openStream(t *testing.T, url string, h http.Header) *sseStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, vs := range h {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return &sseStream{t: t, res: res, br: bufio.NewReader(res.Body)}
}

// next returns the next event (type and raw block), skipping comments.
func (s *sseStream) next() (typ, data, raw string) {
	s.t.Helper()
	var lines []string
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			s.t.Fatalf("stream: %v after %q", err, lines)
		}
		line = strings.TrimRight(line, "\n")
		if line == "" {
			if len(lines) == 0 {
				continue
			}
			break
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		lines = append(lines, line)
	}
	var ds []string
	for _, l := range lines {
		f, v, _ := strings.Cut(l, ":")
		v = strings.TrimPrefix(v, " ")
		switch f {
		case "event":
			typ = v
		case "data":
			ds = append(ds, v)
		}
	}
	if len(ds) > 1 {
		s.t.Fatalf("an event with %d data lines: %q", len(ds), lines)
	}
	return typ, strings.Join(ds, "\n"), strings.Join(lines, "\n")
}

func sseHeaders() http.Header {
	h := http.Header{}
	h.Set("Accept", "text/event-stream")
	return h
}

func jsonHeaders() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return h
}

func newSSE(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s := MustNew(cfg)
	ts := httptest.NewServer(s.LegacySSEHandler())
	t.Cleanup(func() { s.Close(); ts.Close() })
	return s, ts.URL + "/sse"
}

func TestLegacySSEHandler(t *testing.T) {
	s, url := newSSE(t, Config{Tools: v1Tools(t), SupportedVersions: []string{mcpwire.Rev20241105}, Era: LegacyOnly})
	base := strings.TrimSuffix(url, "/sse")

	// Refusals before a stream exists.
	r := do(t, nil, http.MethodGet, url, "", nil)
	wantErr(t, r, http.StatusNotAcceptable, mcpwire.CodeInvalidRequest)
	wantErr(t, post(t, url, legacyInitBody("2024-11-05"), jsonHeaders()), http.StatusMethodNotAllowed, mcpwire.CodeInvalidRequest)
	wantErr(t, post(t, url+"?sessionId=nope", legacyInitBody("2024-11-05"), jsonHeaders()), http.StatusNotFound, codeSessionNotFound)

	st := openStream(t, url, sseHeaders())
	if st.res.StatusCode != 200 || st.res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %d %v", st.res.StatusCode, st.res.Header)
	}
	typ, ep, _ := st.next()
	if typ != "endpoint" || !strings.HasPrefix(ep, "/sse?sessionId=sse-") {
		t.Fatalf("first event %q %q", typ, ep)
	}
	endpoint := base + ep
	postOK := func(body string) {
		t.Helper()
		r := post(t, endpoint, body, jsonHeaders())
		if r.status != http.StatusAccepted {
			t.Fatalf("POST %s: %v", body, r)
		}
	}
	wantErr(t, post(t, endpoint, "{", jsonHeaders()), http.StatusBadRequest, mcpwire.CodeParseError)
	if r := post(t, endpoint, legacyInitBody("2024-11-05"), http.Header{"Content-Type": {"text/plain"}}); r.status != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %v", r)
	}

	// tools/list before initialize: an error event.
	postOK(listBody)
	_, data, _ := st.next()
	if code := errCode(t, []byte(data)); code != codeBadRequest {
		t.Fatalf("before initialize: %s", data)
	}
	// initialize asking for 2025-11-25 gets 2024-11-05, the one version.
	postOK(legacyInitBody("2025-11-25"))
	typ, data, _ = st.next()
	if typ != "message" || !strings.Contains(data, `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize: %q %s", typ, data)
	}
	postOK(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	postOK(listBody)
	_, data, raw := st.next()
	if strings.Count(raw, "data:") != 1 {
		t.Fatalf("tools/list event %q", raw)
	}
	sameCompacted(t, []byte(data), examples.V1)
	postOK(`{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{}}`)
	_, data, _ = st.next()
	if errCode(t, []byte(data)) != mcpwire.CodeMethodNotFound {
		t.Fatalf("server/discover: %s", data)
	}
	if opened, open := s.SSEStreams(); opened != 1 || open != 1 {
		t.Fatalf("streams %d %d", opened, open)
	}
	st.res.Body.Close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if _, open := s.SSEStreams(); open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream is still open after the client closed it")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The ended session is gone.
	wantErr(t, post(t, endpoint, listBody, jsonHeaders()), http.StatusNotFound, codeSessionNotFound)

	// A modern-only server has no HTTP+SSE transport.
	_, murl := newSSE(t, Config{Era: ModernOnly})
	wantErr(t, do(t, nil, http.MethodGet, murl, "", sseHeaders()), http.StatusMethodNotAllowed, mcpwire.CodeInvalidRequest)
}

func TestLegacySSEHostileKnobs(t *testing.T) {
	// SSEEndpoint replaces the endpoint event's URI.
	_, url := newSSE(t, Config{SSEEndpoint: "http://elsewhere.example/m?s={session}"})
	typ, data, _ := openStream(t, url, sseHeaders()).next()
	if typ != "endpoint" || !strings.HasPrefix(data, "http://elsewhere.example/m?s=sse-") {
		t.Fatalf("%q %q", typ, data)
	}
	// SSEOmitEndpoint + SSEFlood: message events from the start.
	_, url = newSSE(t, Config{SSEOmitEndpoint: true, SSEFlood: true})
	st := openStream(t, url, sseHeaders())
	for range 200 {
		if typ, _, _ := st.next(); typ != "message" {
			t.Fatalf("flood event %q", typ)
		}
	}
}

// A server request goes before the response on the stream, and the
// client's answer is logged.
func TestLegacySSEServerRequest(t *testing.T) {
	s, url := newSSE(t, Config{Era: LegacyOnly, ServerRequest: "sampling/createMessage", Tools: simpleTools("t", 1)})
	base := strings.TrimSuffix(url, "/sse")
	st := openStream(t, url, sseHeaders())
	_, ep, _ := st.next()
	endpoint := base + ep
	post(t, endpoint, legacyInitBody("2025-11-25"), jsonHeaders())
	st.next()
	post(t, endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, jsonHeaders())
	post(t, endpoint, listBody, jsonHeaders())
	_, data, _ := st.next()
	m := decode(t, []byte(data))
	if m.Method != "sampling/createMessage" || string(m.ID) != `"mock-srv-1"` || !strings.Contains(string(m.Params), `"maxTokens"`) {
		t.Fatalf("server request %s", data)
	}
	if _, data, _ = st.next(); len(listOf(t, decode(t, []byte(data))).Tools) != 1 {
		t.Fatalf("response %s", data)
	}
	if r := post(t, endpoint, `{"jsonrpc":"2.0","id":"mock-srv-1","error":{"code":-32601,"message":"no"}}`, jsonHeaders()); r.status != http.StatusAccepted {
		t.Fatalf("answer: %v", r)
	}
	found := false
	for _, e := range s.Log() {
		found = found || e.Reason == "response: error -32601"
	}
	if !found {
		t.Fatalf("answer not logged: %+v", s.Log())
	}
}

// CapabilityTools are listed only to clients declaring the capability, in
// both eras and on stdio.
func TestCapabilityTools(t *testing.T) {
	cfg := Config{Tools: simpleTools("t", 1), CapabilityTools: map[string][]json.RawMessage{
		"sampling": {json.RawMessage(`{"name":"needs-sampling","inputSchema":{"type":"object"}}`)},
		"roots":    {json.RawMessage(`{"name":"needs-roots","inputSchema":{"type":"object"}}`)},
	}}
	s, ts := newHTTP(t, cfg)
	// Modern: per request.
	list := func(caps string) []string {
		meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + meta + `}}`
		return names(t, listOf(t, wantOK(t, post(t, ts.URL, body, modernHeaders("tools/list", "")))).Tools)
	}
	if got := strings.Join(list(`{}`), ","); got != "t0" {
		t.Fatalf("no capabilities: %s", got)
	}
	if got := strings.Join(list(`{"sampling":{},"roots":{}}`), ","); got != "t0,needs-roots,needs-sampling" {
		t.Fatalf("sampling+roots: %s", got)
	}
	if e := s.Log()[len(s.Log())-1]; e.ClientCapabilities != `{"sampling":{},"roots":{}}` {
		t.Fatalf("logged capabilities %q", e.ClientCapabilities)
	}
	// Legacy: from initialize, for the session.
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"test","version":"1"}}}`
	sid := post(t, ts.URL, body, baseHeaders()).header.Get(mcpwire.HeaderSessionID)
	h := legacyHeaders(sid, "2025-11-25")
	post(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	if got := strings.Join(names(t, listOf(t, wantOK(t, post(t, ts.URL, listBody, h))).Tools), ","); got != "t0,needs-sampling" {
		t.Fatalf("legacy sampling: %s", got)
	}
}

func TestDiscoverWithoutVersionsKnob(t *testing.T) {
	_, ts := newHTTP(t, Config{DiscoverWithoutVersions: true})
	m := wantOK(t, post(t, ts.URL, modernBody(1, "server/discover", ""), modernHeaders("server/discover", "")))
	if strings.Contains(string(m.Result), "supportedVersions") || !strings.Contains(string(m.Result), `"capabilities"`) {
		t.Fatalf("%s", m.Result)
	}
}

// Compacting an SSE event drops whitespace between tokens only: inside
// strings nothing changes, numbers keep their spelling.
func TestSSECompactKeepsValues(t *testing.T) {
	tool := "{\n  \"name\" : \"a b\",\n\t\"description\": \"line\\n  two \\u2028 \u00e9\",\r\n  \"inputSchema\": { \"type\": \"object\", \"maximum\" : 1.0E2 } }"
	_, ts := newHTTP(t, Config{Tools: []json.RawMessage{json.RawMessage(tool)}, Response: SSEResponses})
	r := post(t, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", ""))
	oneDataLine(t, r.body)
	want := `{"name":"a b","description":"line\n  two \u2028 ` + "\u00e9" + `","inputSchema":{"type":"object","maximum":1.0E2}}`
	if !strings.Contains(string(r.body), want) {
		t.Fatalf("served %s\nwant the tool as %s", r.body, want)
	}
}

// A stream outlives the http.Server's ReadTimeout (mcpdrift mock-server
// sets 30s): net/http does not end a handler whose request was read.
func TestLegacySSEOutlivesReadTimeout(t *testing.T) {
	s := MustNew(Config{Era: LegacyOnly})
	ts := httptest.NewUnstartedServer(s.LegacySSEHandler())
	ts.Config.ReadTimeout = 200 * time.Millisecond
	ts.Start()
	t.Cleanup(func() { s.Close(); ts.Close() })
	st := openStream(t, ts.URL+"/sse", sseHeaders())
	_, ep, _ := st.next()
	time.Sleep(500 * time.Millisecond)
	if r := post(t, ts.URL+ep, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, jsonHeaders()); r.status != http.StatusAccepted {
		t.Fatalf("POST after the read timeout: %v", r)
	}
	if _, data, _ := st.next(); !strings.Contains(data, `"result":{}`) {
		t.Fatalf("ping: %s", data)
	}
}
