package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/mcpwire"

	"github.com/mcpdrift/mcpdrift/safetext"
)

func cursorParam(c *string) string {
	if c == nil {
		return ""
	}
	b, _ := json.Marshal(*c)
	return `"cursor":` + string(b)
}

// listAll follows nextCursor (at most max pages) in the modern era.
func listAll(t *testing.T, url string, max int) (tools []string, cursors []*string) {
	t.Helper()
	var c *string
	for range max {
		lr := listOf(t, wantOK(t, post(t, url, modernBody(1, "tools/list", cursorParam(c)), modernHeaders("tools/list", ""))))
		tools = append(tools, names(t, lr.Tools)...)
		cursors = append(cursors, lr.NextCursor)
		if lr.NextCursor == nil {
			return
		}
		c = lr.NextCursor
	}
	return
}

func TestPagination(t *testing.T) {
	_, ts := newHTTP(t, Config{Tools: simpleTools("t", 5), PageSize: 2})
	got, cursors := listAll(t, ts.URL, 10)
	if strings.Join(got, ",") != "t0,t1,t2,t3,t4" || len(cursors) != 3 || cursors[2] != nil {
		t.Fatalf("pages: %v %v", got, cursors)
	}
	wantErr(t, post(t, ts.URL, modernBody(1, "tools/list", `"cursor":"bogus"`), modernHeaders("tools/list", "")), 400, -32602)
	wantErr(t, post(t, ts.URL, modernBody(1, "tools/list", `"cursor":""`), modernHeaders("tools/list", "")), 400, -32602)
	wantErr(t, post(t, ts.URL, modernBody(1, "tools/list", `"cursor":7`), modernHeaders("tools/list", "")), 400, -32602)
	wantErr(t, post(t, ts.URL, modernBody(1, "tools/list", `"cursor":"`+encodeCursor(1)+`"`), modernHeaders("tools/list", "")), 400, -32602)
	wantErr(t, post(t, ts.URL, modernBody(1, "tools/list", `"cursor":"`+encodeCursor(6)+`"`), modernHeaders("tools/list", "")), 400, -32602)

	// Legacy pages the same way; an invalid cursor is a 200 JSON-RPC error.
	sid := legacyInit(t, ts.URL, "2025-11-25")
	h := legacyHeaders(sid, "2025-11-25")
	var all []string
	cur := ""
	for i := 0; i < 5; i++ {
		body := listBody
		if cur != "" {
			body = `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"` + cur + `"}}`
		}
		lr := listOf(t, wantOK(t, post(t, ts.URL, body, h)))
		all = append(all, names(t, lr.Tools)...)
		if lr.NextCursor == nil {
			break
		}
		cur = *lr.NextCursor
	}
	if strings.Join(all, ",") != "t0,t1,t2,t3,t4" {
		t.Fatalf("legacy pages %v", all)
	}
	wantErr(t, post(t, ts.URL, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"nope"}}`, h), 200, -32602)
}

func TestEmptyStringCursor(t *testing.T) {
	_, ts := newHTTP(t, Config{Tools: simpleTools("t", 5), PageSize: 2, EmptyStringCursor: true})
	got, cursors := listAll(t, ts.URL, 10)
	if strings.Join(got, ",") != "t0,t1,t2,t3,t4" || len(cursors) != 3 || cursors[0] == nil || *cursors[0] != "" {
		t.Fatalf("pages: %v, first cursor %v", got, cursors[0])
	}
	// Legacy: the empty-string cursor is a modern behaviour only.
	sid := legacyInit(t, ts.URL, "2025-11-25")
	lr := listOf(t, wantOK(t, post(t, ts.URL, listBody, legacyHeaders(sid, "2025-11-25"))))
	if lr.NextCursor == nil || *lr.NextCursor == "" {
		t.Fatal("legacy page 1 got an empty cursor")
	}
	wantErr(t, post(t, ts.URL, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":""}}`, legacyHeaders(sid, "2025-11-25")), 200, -32602)
}

func TestCursorCycle(t *testing.T) {
	_, ts := newHTTP(t, Config{Tools: simpleTools("t", 3), PageSize: 2, CursorCycle: true})
	got, cursors := listAll(t, ts.URL, 6)
	if len(got) != 9 || cursors[len(cursors)-1] == nil {
		t.Fatalf("cycle ended: %v", got)
	}
	if *cursors[1] != *cursors[3] || *cursors[0] != *cursors[2] {
		t.Fatalf("cursors do not repeat: %v", cursors)
	}
	// One page: nextCursor points at itself.
	_, ts = newHTTP(t, Config{Tools: simpleTools("t", 1), CursorCycle: true})
	got, _ = listAll(t, ts.URL, 3)
	if strings.Join(got, ",") != "t0,t0,t0" {
		t.Fatalf("single-page cycle %v", got)
	}
}

func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{}}
}

func TestPerConnectionTools(t *testing.T) {
	s, ts := newHTTP(t, Config{Tools: simpleTools("a", 2), ConnectionTools: map[int][]json.RawMessage{2: simpleTools("b", 3)}})
	list := func(c *http.Client) string {
		r := do(t, c, http.MethodPost, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", ""))
		return strings.Join(names(t, listOf(t, wantOK(t, r)).Tools), ",")
	}
	c1, c2, c3 := newClient(), newClient(), newClient()
	if got := list(c1); got != "a0,a1" {
		t.Fatalf("connection 1: %s", got)
	}
	if got := list(c1); got != "a0,a1" {
		t.Fatalf("connection 1 again (same TCP connection): %s", got)
	}
	if got := list(c2); got != "b0,b1,b2" {
		t.Fatalf("connection 2: %s", got)
	}
	if got := list(c3); got != "a0,a1" {
		t.Fatalf("connection 3: %s", got)
	}
	if s.Connections() != 3 {
		t.Fatalf("connections %d", s.Connections())
	}
	for _, c := range []*http.Client{c1, c2, c3} {
		c.CloseIdleConnections()
	}

	// Legacy: the Nth session.
	s, ts = newHTTP(t, Config{Tools: simpleTools("a", 1), ConnectionTools: map[int][]json.RawMessage{2: simpleTools("b", 1)}})
	var got []string
	for range 3 {
		sid := legacyInit(t, ts.URL, "2025-11-25")
		got = append(got, names(t, listOf(t, wantOK(t, post(t, ts.URL, listBody, legacyHeaders(sid, "2025-11-25")))).Tools)...)
	}
	if strings.Join(got, ",") != "a0,b0,a0" || s.Sessions() != 3 {
		t.Fatalf("per-session lists %v", got)
	}
}

// TestPerConnectionWithoutConnContext: without ConnContext connections are
// told apart by RemoteAddr.
func TestPerConnectionWithoutConnContext(t *testing.T) {
	s := MustNew(Config{Tools: simpleTools("a", 1), ConnectionTools: map[int][]json.RawMessage{2: simpleTools("b", 1)}})
	ts := httptest.NewServer(s)
	defer ts.Close()
	c1, c2 := newClient(), newClient()
	defer c1.CloseIdleConnections()
	defer c2.CloseIdleConnections()
	var got []string
	for _, c := range []*http.Client{c1, c1, c2} {
		r := do(t, c, http.MethodPost, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", ""))
		got = append(got, names(t, listOf(t, wantOK(t, r)).Tools)...)
	}
	if strings.Join(got, ",") != "a0,a0,b0" {
		t.Fatalf("%v", got)
	}
}

func TestSetToolsAndAdmin(t *testing.T) {
	s, ts := newHTTP(t, Config{Tools: v1Tools(t)})
	mux := http.NewServeMux()
	mux.Handle("/mcp", s)
	mux.Handle("/admin/tools", s.AdminHandler())
	as := httptest.NewServer(mux)
	defer as.Close()

	sid := legacyInit(t, ts.URL, "2025-11-25")
	list := func() []byte {
		return post(t, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", "")).body
	}
	sameRaw(t, list(), examples.V1)

	// SetTools: the next tools/list (modern and an existing legacy session) sees it.
	if err := s.SetTools(v2Tools(t)); err != nil {
		t.Fatal(err)
	}
	sameRaw(t, list(), examples.V2RugPull)
	sameRaw(t, post(t, ts.URL, listBody, legacyHeaders(sid, "2025-11-25")).body, examples.V2RugPull)
	if err := s.SetTools([]json.RawMessage{json.RawMessage(`{"name":`)}); err == nil {
		t.Fatal("SetTools accepted invalid JSON")
	}

	// The admin endpoint.
	admin := as.URL + "/admin/tools"
	ah := http.Header{"Content-Type": {"application/json"}}
	r := do(t, nil, http.MethodPost, admin, string(examples.V1), ah)
	if r.status != 200 || string(r.body) != `{"tools":`+itoa(len(v1Tools(t)))+`}` {
		t.Fatalf("admin: %v", r)
	}
	sameRaw(t, list(), examples.V1)
	for _, c := range []struct {
		method, body string
		h            http.Header
		status       int
	}{
		{http.MethodGet, "", ah, 405},
		{http.MethodPost, string(examples.V2RugPull), http.Header{"Content-Type": {"text/plain"}}, 415},
		{http.MethodPost, `{"tools":[{"nope":1}]}`, ah, 400},
		{http.MethodPost, `{`, ah, 400},
		{http.MethodPost, string(examples.V2RugPull), http.Header{"Content-Type": {"application/json"}, "Origin": {"https://evil.example"}}, 403},
	} {
		if r := do(t, nil, c.method, admin, c.body, c.h); r.status != c.status {
			t.Fatalf("admin %s %s: %v, want %d", c.method, safetext.Clip(c.body, 30), r, c.status)
		}
	}
	sameRaw(t, list(), examples.V1) // refused manifests changed nothing
	// Non-loopback callers and DNS-rebinding Host headers.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/admin/tools", strings.NewReader(string(examples.V2RugPull)))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "192.0.2.7:4444"
	s.AdminHandler().ServeHTTP(rec, req)
	if rec.Code != 403 {
		t.Fatalf("non-loopback admin: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	req = httptest.NewRequest(http.MethodPost, "http://evil.example/admin/tools", strings.NewReader(string(examples.V2RugPull)))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "127.0.0.1:4444"
	s.AdminHandler().ServeHTTP(rec, req)
	if rec.Code != 403 {
		t.Fatalf("rebinding Host admin: %d", rec.Code)
	}
	sameRaw(t, list(), examples.V1)
	// The MCP endpoint on the mux is the same server.
	sameRaw(t, post(t, as.URL+"/mcp", modernBody(1, "tools/list", ""), modernHeaders("tools/list", "")).body, examples.V1)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestAuth(t *testing.T) {
	const tok = "s3cret"
	body := modernBody(1, "tools/list", "")
	authed := func(v string) http.Header {
		h := modernHeaders("tools/list", "")
		if v != "" {
			h.Set("Authorization", v)
		}
		return h
	}
	s, ts := newHTTP(t, Config{Tools: simpleTools("t", 2), RequireAuth: tok})
	r := post(t, ts.URL, body, authed(""))
	wantErr(t, r, 401, -32000)
	if c := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(c, `Bearer resource_metadata="http://`) || !strings.Contains(c, "/.well-known/oauth-protected-resource") {
		t.Fatalf("challenge %q", c)
	}
	r = post(t, ts.URL, body, authed("Bearer wrong"))
	wantErr(t, r, 401, -32000)
	if c := r.header.Get("WWW-Authenticate"); !strings.Contains(c, `error="invalid_token"`) {
		t.Fatalf("challenge %q", c)
	}
	wantErr(t, post(t, ts.URL, body, authed("Basic czNjcmV0")), 401, -32000)
	lr := listOf(t, wantOK(t, post(t, ts.URL, body, authed("bearer "+tok))))
	if len(lr.Tools) != 2 || *lr.CacheScope != "private" {
		t.Fatalf("authenticated list %+v", lr)
	}
	if l := s.Log(); l[len(l)-1].Headers.Get("Authorization") != "bearer [redacted]" {
		t.Fatalf("Authorization logged as %q", l[len(l)-1].Headers.Get("Authorization"))
	}

	_, ts = newHTTP(t, Config{RequireAuth: tok, NoChallenge: true})
	r = post(t, ts.URL, body, authed(""))
	if r.status != 401 || r.header.Get("WWW-Authenticate") != "" {
		t.Fatalf("no-challenge 401: %v %v", r, r.header)
	}

	// Anonymous tool list instead of 401.
	s, ts = newHTTP(t, Config{Tools: simpleTools("t", 3), AnonymousTools: simpleTools("anon", 1), RequireAuth: tok})
	if got := names(t, listOf(t, wantOK(t, post(t, ts.URL, body, authed("")))).Tools); strings.Join(got, ",") != "anon0" {
		t.Fatalf("anonymous list %v", got)
	}
	if got := names(t, listOf(t, wantOK(t, post(t, ts.URL, body, authed("Bearer "+tok)))).Tools); len(got) != 3 {
		t.Fatalf("authenticated list %v", got)
	}
	wantErr(t, post(t, ts.URL, body, authed("Bearer nope")), 401, -32000)
	if l := s.Log(); !l[0].Anonymous || l[1].Anonymous {
		t.Fatal("anonymous not logged")
	}
	// Legacy too: an anonymous session sees the anonymous list.
	sid := legacyInit(t, ts.URL, "2025-11-25")
	if got := names(t, listOf(t, wantOK(t, post(t, ts.URL, listBody, legacyHeaders(sid, "2025-11-25")))).Tools); strings.Join(got, ",") != "anon0" {
		t.Fatalf("anonymous legacy list %v", got)
	}
}

func TestSSEModern(t *testing.T) {
	_, ts := newHTTP(t, Config{Tools: v1Tools(t), Response: SSEResponses})
	r := post(t, ts.URL, modernBody(4, "tools/list", ""), modernHeaders("tools/list", ""))
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" || r.header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("%v %v", r.status, r.header)
	}
	ev := parseSSE(t, r.body)
	if len(ev) != 1 || ev[0].event != "message" || ev[0].hasID {
		t.Fatalf("events %+v", ev)
	}
	// examples.V1 is pretty-printed: each event is one compacted data: line.
	oneDataLine(t, r.body)
	sameCompacted(t, []byte(ev[0].data), examples.V1)

	// A progressToken gets a progress notification first.
	body := `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"progressToken":"pt-1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	ev = parseSSE(t, post(t, ts.URL, body, modernHeaders("tools/list", "")).body)
	if len(ev) != 2 {
		t.Fatalf("events %+v", ev)
	}
	n := decode(t, []byte(ev[0].data))
	if n.Method != "notifications/progress" || !bytes.Contains(n.Params, []byte(`"progressToken":"pt-1"`)) || n.ID != nil {
		t.Fatalf("progress %s", ev[0].data)
	}
	sameCompacted(t, []byte(ev[1].data), examples.V1)

	// Errors stay JSON with their status.
	r = post(t, ts.URL, modernBody(4, "nope", ""), modernHeaders("nope", ""))
	if r.status != 404 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("SSE-mode error %v", r)
	}
	_, ts = newHTTP(t, Config{Response: SSEResponses, SSEProgress: true})
	ev = parseSSE(t, post(t, ts.URL, modernBody(4, "tools/list", ""), modernHeaders("tools/list", "")).body)
	if len(ev) != 2 || !strings.Contains(ev[0].data, `"progressToken":"mock-progress"`) {
		t.Fatalf("SSEProgress events %+v", ev)
	}
}

func TestSSELegacy(t *testing.T) {
	_, ts := newHTTP(t, Config{Tools: v1Tools(t), Response: SSEResponses})
	// 2025-11-25: priming event (id, empty data), then a log notification,
	// then the response, each with an id.
	r := post(t, ts.URL, legacyInitBody("2025-11-25"), baseHeaders())
	sid := r.header.Get(mcpwire.HeaderSessionID)
	ev := parseSSE(t, r.body)
	if len(ev) != 2 || !ev[0].hasID || ev[0].data != "" || !strings.Contains(ev[1].data, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize events %+v", ev)
	}
	if !bytes.HasPrefix(r.body, []byte("id: ")) || !bytes.Contains(r.body, []byte("\ndata: \n\n")) {
		t.Fatalf("priming event not first: %q", safetext.Clip(string(r.body), 100))
	}
	h := legacyHeaders(sid, "2025-11-25")
	post(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	r = post(t, ts.URL, listBody, h)
	oneDataLine(t, r.body)
	ev = parseSSE(t, r.body)
	if len(ev) != 3 || ev[0].data != "" || !ev[0].hasID {
		t.Fatalf("tools/list events %+v", ev)
	}
	if n := decode(t, []byte(ev[1].data)); n.Method != "notifications/message" {
		t.Fatalf("second event %s", ev[1].data)
	}
	ids := map[string]bool{}
	for _, e := range ev {
		if !e.hasID || ids[e.id] {
			t.Fatalf("event ids %+v", ev)
		}
		ids[e.id] = true
	}
	sameCompacted(t, []byte(ev[2].data), examples.V1)

	// 2025-06-18: no priming event, no ids.
	r = post(t, ts.URL, legacyInitBody("2025-06-18"), baseHeaders())
	sid = r.header.Get(mcpwire.HeaderSessionID)
	h = legacyHeaders(sid, "2025-06-18")
	post(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	ev = parseSSE(t, post(t, ts.URL, listBody, h).body)
	if len(ev) != 2 || ev[0].hasID || ev[0].data == "" {
		t.Fatalf("2025-06-18 events %+v", ev)
	}
	sameCompacted(t, []byte(ev[1].data), examples.V1)
}

func TestHostileKnobs(t *testing.T) {
	body := modernBody(41, "tools/list", "")
	h := modernHeaders("tools/list", "")
	t.Run("WrongID", func(t *testing.T) {
		_, ts := newHTTP(t, Config{WrongID: true, Tools: simpleTools("t", 1)})
		if m := wantOK(t, post(t, ts.URL, body, h)); string(m.ID) != "1041" {
			t.Fatalf("id %s", m.ID)
		}
		// Other methods are unaffected.
		if m := wantOK(t, post(t, ts.URL, modernBody(41, "server/discover", ""), modernHeaders("server/discover", ""))); string(m.ID) != "41" {
			t.Fatalf("discover id %s", m.ID)
		}
	})
	t.Run("InvalidJSON", func(t *testing.T) {
		_, ts := newHTTP(t, Config{InvalidJSON: true})
		if r := post(t, ts.URL, body, h); r.status != 200 || json.Valid(r.body) {
			t.Fatalf("%v", r)
		}
	})
	t.Run("ErrorInsteadOfResult", func(t *testing.T) {
		_, ts := newHTTP(t, Config{ErrorInsteadOfResult: true})
		wantErr(t, post(t, ts.URL, body, h), 200, -32603)
	})
	t.Run("RedirectTo", func(t *testing.T) {
		_, ts := newHTTP(t, Config{RedirectTo: "http://127.0.0.1:1/elsewhere"})
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		r := do(t, c, http.MethodPost, ts.URL, body, h)
		if r.status != 307 || r.header.Get("Location") != "http://127.0.0.1:1/elsewhere" {
			t.Fatalf("%v", r)
		}
	})
	t.Run("Slow", func(t *testing.T) {
		_, ts := newHTTP(t, Config{Slow: 80 * time.Millisecond})
		start := time.Now()
		wantOK(t, post(t, ts.URL, body, h))
		if d := time.Since(start); d < 80*time.Millisecond {
			t.Fatalf("answered in %v", d)
		}
	})
	t.Run("Oversized", func(t *testing.T) {
		for _, mode := range []ResponseMode{JSONResponses, SSEResponses} {
			_, ts := newHTTP(t, Config{Oversized: 200_000, Response: mode})
			r := post(t, ts.URL, body, h)
			data := r.body
			if mode == SSEResponses {
				ev := parseSSE(t, r.body)
				if len(ev) != 1 {
					t.Fatalf("events %d", len(ev))
				}
				data = []byte(ev[0].data)
			}
			if len(data) < 200_000 || !json.Valid(data) {
				t.Fatalf("mode %d: %d bytes, valid %v", mode, len(data), json.Valid(data))
			}
			lr := listOf(t, wantOK(t, resp{200, nil, data}))
			if len(lr.Tools) < 100 || lr.TTLMs == nil {
				t.Fatalf("oversized list: %d tools", len(lr.Tools))
			}
		}
	})
	t.Run("OversizedForever", func(t *testing.T) {
		_, ts := newHTTP(t, Config{Oversized: -1})
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header = h.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.CopyN(io.Discard, res.Body, 2<<20)
		res.Body.Close()
		if n != 2<<20 {
			t.Fatalf("stream ended after %d bytes", n)
		}
	})
	t.Run("NeverEndingSSE", func(t *testing.T) {
		_, ts := newHTTP(t, Config{NeverEndingSSE: true})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header = h.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil || res.Header.Get("Content-Type") != "text/event-stream" || !bytes.HasPrefix(b, []byte(": keep-alive\n\n")) || bytes.Contains(b, []byte("data:")) {
			t.Fatalf("err %v, body %q", err, safetext.Clip(string(b), 100))
		}
	})
	t.Run("HostileMethods", func(t *testing.T) {
		_, ts := newHTTP(t, Config{ErrorInsteadOfResult: true, HostileMethods: []string{"server/discover"}})
		wantOK(t, post(t, ts.URL, body, h))
		wantErr(t, post(t, ts.URL, modernBody(1, "server/discover", ""), modernHeaders("server/discover", "")), 200, -32603)
	})
}

func TestDuplicateToolNamesAreData(t *testing.T) {
	dup := []json.RawMessage{
		json.RawMessage(`{"name":"x","description":"first","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"x","description":"second","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"description":"no name at all"}`),
	}
	_, ts := newHTTP(t, Config{Tools: dup})
	r := post(t, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", ""))
	lr := listOf(t, wantOK(t, r))
	if len(lr.Tools) != 3 || !bytes.Equal(lr.Tools[1], dup[1]) || !bytes.Equal(lr.Tools[2], dup[2]) {
		t.Fatalf("%s", r.body)
	}
}

func TestLogBounded(t *testing.T) {
	s, ts := newHTTP(t, Config{LogLimit: 3})
	for i := range 5 {
		post(t, ts.URL, modernBody(i, "tools/list", ""), modernHeaders("tools/list", ""))
	}
	l := s.Log()
	if len(l) != 3 || s.LogTotal() != 5 || l[0].ID != "2" || l[2].ID != "4" {
		t.Fatalf("log %d entries, total %d, first id %q", len(l), s.LogTotal(), l[0].ID)
	}
	s.ResetLog()
	if len(s.Log()) != 0 || s.LogTotal() != 0 {
		t.Fatal("ResetLog")
	}
	// Refusals are logged as not passed, with status and code.
	post(t, ts.URL, modernBody(9, "tools/list", ""), baseHeaders())
	if e := s.Log()[0]; e.Passed || e.Status != 400 || e.Code != -32020 || e.Reason == "" {
		t.Fatalf("refusal entry %+v", e)
	}
}

func TestNewValidation(t *testing.T) {
	for _, cfg := range []Config{
		{SupportedVersions: []string{"v1"}},
		{Era: ModernOnly, SupportedVersions: []string{"2025-11-25"}},
		{Era: LegacyOnly, SupportedVersions: []string{modern}},
		{PageSize: -1},
		{CacheScope: "shared"},
		{Tools: []json.RawMessage{json.RawMessage(`{`)}},
		{AnonymousTools: []json.RawMessage{json.RawMessage(`x`)}},
	} {
		if _, err := New(cfg); err == nil {
			t.Fatalf("New(%+v) accepted", cfg)
		}
	}
	if _, err := LoadTools([]byte(`{"tools":[{"description":"nameless"}]}`)); err == nil {
		t.Fatal("LoadTools accepted a nameless tool")
	}
	tools, err := LoadTools([]byte(`[]`))
	if err != nil || tools == nil || len(tools) != 0 {
		t.Fatalf("empty manifest: %v %v", tools, err)
	}
}
