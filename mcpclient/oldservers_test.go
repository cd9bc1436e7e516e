package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// Old servers, the HTTP+SSE transport and client capabilities, against
// the strict mock server on loopback.

func mockTools(prefix string, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"name":"%s%d", "description":"tool %d", "inputSchema":{"type":"object"}}`, prefix, i, i))
	}
	return out
}

// mockHTTP serves the mock's Streamable HTTP endpoint at /mcp and its
// HTTP+SSE transport at /sse.
func mockHTTP(t *testing.T, cfg mockserver.Config) (*mockserver.Server, string) {
	t.Helper()
	s := mockserver.MustNew(cfg)
	mux := http.NewServeMux()
	mux.Handle("/mcp", s)
	mux.Handle("/sse", s.LegacySSEHandler())
	ts := httptest.NewUnstartedServer(mux)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { s.Close(); ts.Close() })
	return s, ts.URL
}

func servedNames(t *testing.T, obs *Observation) []string {
	t.Helper()
	tl, err := manifest.ParseToolList(obs.Transcript)
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	var out []string
	for _, tool := range tl.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// streamsClosed waits until the mock has no HTTP+SSE stream open.
func streamsClosed(t *testing.T, s *mockserver.Server) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		opened, open := s.SSEStreams()
		if open == 0 {
			if opened == 0 {
				t.Errorf("no HTTP+SSE stream was opened")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d HTTP+SSE stream(s) still open after the run", open)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var legacy20241105 = mockserver.Config{Era: mockserver.LegacyOnly, SupportedVersions: []string{mcpwire.Rev20241105}}

// A 2024-11-05 server over Streamable HTTP: initialize is answered with
// 2024-11-05, which the client accepts; no MCP-Protocol-Version is sent
// (the header exists from 2025-06-18).
func TestOldServer20241105StreamableHTTP(t *testing.T) {
	cfg := legacy20241105
	cfg.Tools, cfg.PageSize = mockTools("t", 5), 2
	s, base := mockHTTP(t, cfg)
	obs, err := ListTools(context.Background(), Config{BaseURL: base + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if obs.Era != EraLegacy || obs.LegacyVersion != mcpwire.Rev20241105 || obs.ProtocolRevision != "" || obs.Transport != TransportStreamableHTTP {
		t.Fatalf("era %q legacy %q revision %q transport %q", obs.Era, obs.LegacyVersion, obs.ProtocolRevision, obs.Transport)
	}
	if got := servedNames(t, obs); len(got) != 5 || obs.Pages != 3 || obs.Completeness != "complete" {
		t.Fatalf("tools %v pages %d %s", got, obs.Pages, obs.Completeness)
	}
	for _, e := range s.Log() {
		if e.Method != "server/discover" && len(e.Headers.Values(mcpwire.HeaderProtocolVersion)) > 0 {
			t.Errorf("%s sent MCP-Protocol-Version in a 2024-11-05 session", e.Method)
		}
	}
}

// The HTTP+SSE transport, chosen explicitly ("type": "sse"): GET, the
// endpoint event, POSTs there, responses as message events; the stream is
// closed at the end.
func TestHTTPSSETransport(t *testing.T) {
	cfg := legacy20241105
	cfg.Tools, cfg.PageSize = mockTools("t", 5), 2
	s, base := mockHTTP(t, cfg)
	obs, err := ListTools(context.Background(), Config{BaseURL: base + "/sse", Transport: TransportSSE, Headers: http.Header{"Authorization": {"Bearer abcdef-123"}}})
	if err != nil {
		t.Fatal(err)
	}
	if obs.Transport != TransportSSE || obs.Era != EraLegacy || obs.LegacyVersion != mcpwire.Rev20241105 || !strings.Contains(obs.RevisionReason, "HTTP+SSE") {
		t.Fatalf("transport %q era %q legacy %q reason %q", obs.Transport, obs.Era, obs.LegacyVersion, obs.RevisionReason)
	}
	if got := servedNames(t, obs); len(got) != 5 || obs.Pages != 3 || obs.Completeness != "complete" {
		t.Fatalf("tools %v pages %d %s", got, obs.Pages, obs.Completeness)
	}
	var methods []string
	for _, e := range s.Log() {
		if e.Transport != "sse" {
			t.Errorf("a request on the %s transport: %+v", e.Transport, e)
		}
		if e.HTTPMethod == http.MethodPost {
			methods = append(methods, e.Method)
			if e.Status != http.StatusAccepted {
				t.Errorf("%s: HTTP %d %s", e.Method, e.Status, e.Reason)
			}
		}
		if e.Headers.Get("Authorization") == "" && e.HTTPMethod != "" && e.Reason != "stream closed by the client" {
			t.Errorf("%s %s without the configured header", e.HTTPMethod, e.Method)
		}
	}
	if want := "initialize notifications/initialized tools/list tools/list tools/list"; strings.Join(methods, " ") != want {
		t.Errorf("methods %v, want %s", methods, want)
	}
	streamsClosed(t, s)
}

// With Transport auto, a URL that refuses POST (405) but opens an event
// stream on GET is spoken to over HTTP+SSE.
func TestHTTPSSEFallback(t *testing.T) {
	cfg := mockserver.Config{Era: mockserver.LegacyOnly, Tools: mockTools("t", 3)}
	s, base := mockHTTP(t, cfg)
	obs, err := ListTools(context.Background(), Config{BaseURL: base + "/sse"})
	if err != nil {
		t.Fatal(err)
	}
	if obs.Transport != TransportSSE || obs.Era != EraLegacy || obs.LegacyVersion != mcpwire.Rev20251125 {
		t.Fatalf("transport %q era %q legacy %q", obs.Transport, obs.Era, obs.LegacyVersion)
	}
	if len(servedNames(t, obs)) != 3 || !strings.Contains(strings.Join(obs.Warnings, "\n"), "trying the deprecated HTTP+SSE transport") {
		t.Fatalf("warnings %q", obs.Warnings)
	}
	streamsClosed(t, s)

	// Transport streamable-http never falls back.
	_, err = ListTools(context.Background(), Config{BaseURL: base + "/sse", Transport: TransportStreamableHTTP})
	if pe, ok := errors.AsType[*ProtocolError](err); !ok || pe.HTTPStatus != 405 {
		t.Fatalf("streamable-http only: %v", err)
	}
	// A Streamable HTTP endpoint whose GET is 405 keeps the initialize
	// error (a modern-only server refuses initialize with 404).
	_, base2 := mockHTTP(t, mockserver.Config{Era: mockserver.ModernOnly})
	_, err = ListTools(context.Background(), Config{BaseURL: base2 + "/mcp", PreferredRevision: mcpwire.Rev20251125})
	if pe, ok := errors.AsType[*ProtocolError](err); !ok || pe.Method != methodInitialize || pe.HTTPStatus != 404 {
		t.Fatalf("modern-only: %v", err)
	}
}

// Hostile HTTP+SSE servers: each is refused within its bound, nothing is
// sent anywhere but the configured origin, and the stream is closed.
func TestHTTPSSEHostile(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer other.Close()
	otherURL, _ := url.Parse(other.URL)

	cases := []struct {
		name  string
		cfg   mockserver.Config
		check func(t *testing.T, err error)
	}{
		{"endpoint at another origin", mockserver.Config{SSEEndpoint: other.URL + "/message?sessionId={session}"}, func(t *testing.T, err error) {
			if re, ok := errors.AsType[*ResponseError](err); !ok || !strings.Contains(re.Reason, "another origin") {
				t.Fatalf("%v", err)
			}
		}},
		{"endpoint at another origin, scheme-relative", mockserver.Config{SSEEndpoint: "//" + otherURL.Host + "/message?sessionId={session}"}, func(t *testing.T, err error) {
			if re, ok := errors.AsType[*ResponseError](err); !ok || !strings.Contains(re.Reason, "another origin") {
				t.Fatalf("%v", err)
			}
		}},
		{"endpoint with user info", mockserver.Config{SSEEndpoint: "http://evil@127.0.0.1/x"}, func(t *testing.T, err error) {
			if _, ok := errors.AsType[*ResponseError](err); !ok {
				t.Fatalf("%v", err)
			}
		}},
		{"no endpoint event", mockserver.Config{SSEOmitEndpoint: true}, func(t *testing.T, err error) {
			if le, ok := errors.AsType[*LimitError](err); !ok || le.Kind != LimitRequestTime || le.Method != methodSSEStream {
				t.Fatalf("%v", err)
			}
		}},
		{"flood instead of the endpoint event", mockserver.Config{SSEOmitEndpoint: true, SSEFlood: true}, func(t *testing.T, err error) {
			if le, ok := errors.AsType[*LimitError](err); !ok || le.Kind != LimitSSEEvents || le.Method != methodSSEStream {
				t.Fatalf("%v", err)
			}
		}},
		{"flood instead of the tools/list response", mockserver.Config{SSEFlood: true}, func(t *testing.T, err error) {
			if le, ok := errors.AsType[*LimitError](err); !ok || le.Kind != LimitSSEEvents || le.Method != methodToolsList {
				t.Fatalf("%v", err)
			}
		}},
		{"tools/list never answered", mockserver.Config{NeverEndingSSE: true}, func(t *testing.T, err error) {
			if le, ok := errors.AsType[*LimitError](err); !ok || le.Kind != LimitRequestTime || le.Method != methodToolsList {
				t.Fatalf("%v", err)
			}
		}},
		{"oversized tools/list", mockserver.Config{Oversized: 200 << 10}, func(t *testing.T, err error) {
			if le, ok := errors.AsType[*LimitError](err); !ok || le.Kind != LimitResponseBytes {
				t.Fatalf("%v", err)
			}
		}},
		{"wrong response id", mockserver.Config{WrongID: true}, func(t *testing.T, err error) {
			if re, ok := errors.AsType[*ResponseError](err); !ok || !strings.Contains(re.Reason, "id") {
				t.Fatalf("%v", err)
			}
		}},
		{"redirect to another origin", mockserver.Config{RedirectTo: other.URL + "/sse"}, func(t *testing.T, err error) {
			if _, ok := errors.AsType[*RedirectError](err); !ok {
				t.Fatalf("%v", err)
			}
		}},
		{"invalid JSON", mockserver.Config{InvalidJSON: true}, func(t *testing.T, err error) {
			if _, ok := errors.AsType[*ResponseError](err); !ok {
				t.Fatalf("%v", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Era, cfg.Tools = mockserver.LegacyOnly, mockTools("t", 3)
			s, base := mockHTTP(t, cfg)
			start := time.Now()
			obs, err := ListTools(context.Background(), Config{BaseURL: base + "/sse", Transport: TransportSSE,
				RequestTimeout: 400 * time.Millisecond, MaxSSEEvents: 50, MaxResponseBytes: 64 << 10})
			if err == nil {
				t.Fatalf("no error; tools %v", servedNames(t, obs))
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			c.check(t, err)
			if obs == nil || obs.Transcript != nil {
				t.Errorf("observation %+v", obs)
			}
			if n := elsewhere.Load(); n != 0 {
				t.Fatalf("%d request(s) reached the other origin", n)
			}
			if c.cfg.RedirectTo == "" {
				streamsClosed(t, s)
			}
		})
	}
}

// A client that declares sampling is offered one more tool; without the
// capability it is not. In every era and transport, and the declared
// object is what the server received.
func TestClientCapabilitiesChangeTheList(t *testing.T) {
	extra := []json.RawMessage{json.RawMessage(`{"name":"trigger-sampling-request","inputSchema":{"type":"object"}}`)}
	cases := []struct {
		name string
		cfg  mockserver.Config
		conf Config
	}{
		{"modern", mockserver.Config{}, Config{}},
		{"legacy streamable http", mockserver.Config{Era: mockserver.LegacyOnly}, Config{}},
		{"legacy 2024-11-05 over HTTP+SSE", legacy20241105, Config{Transport: TransportSSE}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Tools, cfg.CapabilityTools = mockTools("t", 2), map[string][]json.RawMessage{"sampling": extra}
			s, base := mockHTTP(t, cfg)
			path := "/mcp"
			if c.conf.Transport == TransportSSE {
				path = "/sse"
			}
			conf := c.conf
			conf.BaseURL = base + path
			obs, err := ListTools(context.Background(), conf)
			if err != nil {
				t.Fatal(err)
			}
			if got := servedNames(t, obs); len(got) != 2 || string(obs.ClientCapabilities) != "{}" {
				t.Fatalf("without capabilities: %v, %s", got, obs.ClientCapabilities)
			}
			s.ResetLog()
			conf.ClientCapabilities = []byte(` { "sampling" : {}, "roots":{"listChanged":true} } `)
			obs, err = ListTools(context.Background(), conf)
			if err != nil {
				t.Fatal(err)
			}
			const canon = `{"roots":{"listChanged":true},"sampling":{}}`
			if got := servedNames(t, obs); len(got) != 3 || got[2] != "trigger-sampling-request" || string(obs.ClientCapabilities) != canon {
				t.Fatalf("with sampling: %v, %s", got, obs.ClientCapabilities)
			}
			sent := 0
			for _, e := range s.Log() {
				if e.ClientCapabilities != "" {
					sent++
					if e.ClientCapabilities != canon {
						t.Errorf("%s declared %s", e.Method, e.ClientCapabilities)
					}
				}
			}
			if sent == 0 {
				t.Errorf("no request declared the capabilities")
			}
		})
	}
}

// Declaring a capability is not answering for it: a server request
// (sampling/createMessage, elicitation/create, roots/list) on any stream
// is refused with a JSON-RPC error; ping gets {}.
func TestServerRequestsRefused(t *testing.T) {
	for _, method := range []string{"sampling/createMessage", "elicitation/create", "roots/list", "ping"} {
		for _, sse := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s sse=%t", method, sse), func(t *testing.T) {
				cfg := mockserver.Config{Era: mockserver.LegacyOnly, Tools: mockTools("t", 2), ServerRequest: method, Response: mockserver.SSEResponses}
				s, base := mockHTTP(t, cfg)
				conf := Config{BaseURL: base + "/mcp", ClientCapabilities: []byte("sampling,elicitation,roots")}
				if sse {
					conf.BaseURL, conf.Transport = base+"/sse", TransportSSE
				}
				obs, err := ListTools(context.Background(), conf)
				if err != nil {
					t.Fatal(err)
				}
				if len(servedNames(t, obs)) != 2 {
					t.Fatalf("tools %v", servedNames(t, obs))
				}
				want := "response: error -32601"
				if method == "ping" {
					want = "response: result"
				}
				deadline := time.Now().Add(2 * time.Second)
				for {
					var answers []string
					for _, e := range s.Log() {
						if strings.HasPrefix(e.Reason, "response:") {
							answers = append(answers, e.Reason)
						}
					}
					if len(answers) == 1 && answers[0] == want {
						break
					}
					if len(answers) > 1 || time.Now().After(deadline) {
						t.Fatalf("answers %q, want one %q", answers, want)
					}
					time.Sleep(10 * time.Millisecond)
				}
				refused := strings.Contains(strings.Join(obs.Warnings, "\n"), "refused")
				if refused != (method != "ping") {
					t.Errorf("warnings %q", obs.Warnings)
				}
			})
		}
	}
}

// A server/discover result without supportedVersions is not taken as
// 2026-07-28: the client falls back to initialize.
func TestDiscoverWithoutVersions(t *testing.T) {
	s, base := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 2), DiscoverWithoutVersions: true})
	obs, err := ListTools(context.Background(), Config{BaseURL: base + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if obs.Era != EraLegacy || obs.ProtocolRevision != "" || obs.LegacyVersion != mcpwire.Rev20251125 || !strings.Contains(obs.RevisionReason, "without supportedVersions") {
		t.Fatalf("era %q revision %q legacy %q reason %q", obs.Era, obs.ProtocolRevision, obs.LegacyVersion, obs.RevisionReason)
	}
	var methods []string
	for _, e := range s.Log() {
		methods = append(methods, e.Method)
	}
	if !strings.HasPrefix(strings.Join(methods, " "), "server/discover initialize notifications/initialized tools/list") {
		t.Fatalf("methods %v", methods)
	}
	// The same for an empty array.
	var sawInit atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := readRPC(t, r)
		switch {
		case q == nil:
		case q.Method == "server/discover":
			respond(w, 200, q.ID, `{"resultType":"complete","supportedVersions":[],"capabilities":{},"ttlMs":0,"cacheScope":"public"}`)
		case q.Method == "initialize":
			sawInit.Store(true)
			respondErr(w, 500, q.ID, -32603, "no")
		}
	}))
	defer ts.Close()
	if _, err = ListTools(context.Background(), Config{BaseURL: ts.URL}); err == nil || !sawInit.Load() {
		t.Fatalf("empty supportedVersions: %v, initialize sent %t", err, sawInit.Load())
	}
}

// envMockStdio makes the test binary a stdio mock server (legacy only)
// that sends the named server request before each tools/list response
// and lists one more tool to clients declaring sampling; at the end it
// writes the client's answers to stderr.
const envMockStdio = "MCPCLIENT_MOCK_STDIO"

func init() {
	method := os.Getenv(envMockStdio)
	if method == "" {
		return
	}
	s := mockserver.MustNew(mockserver.Config{Era: mockserver.LegacyOnly, Tools: mockTools("t", 2), ServerRequest: method,
		CapabilityTools: map[string][]json.RawMessage{"sampling": {json.RawMessage(`{"name":"needs-sampling","inputSchema":{"type":"object"}}`)}}})
	_ = s.ServeStdio(context.Background(), os.Stdin, os.Stdout)
	for _, e := range s.Log() {
		if strings.HasPrefix(e.Reason, "response:") {
			fmt.Fprintln(os.Stderr, "answer:", e.Reason)
		}
	}
	os.Exit(0)
}

// On stdio too, a server request is refused, whatever was declared.
func TestServerRequestsRefusedStdio(t *testing.T) {
	for _, method := range []string{"sampling/createMessage", "elicitation/create", "roots/list"} {
		t.Setenv(envMockStdio, method)
		obs, err := ListTools(context.Background(), Config{Command: []string{os.Args[0], "-test.run=^$"}, PassEnv: []string{envMockStdio},
			ClientCapabilities: []byte("sampling,elicitation,roots")})
		if err != nil {
			t.Fatal(err)
		}
		if got := servedNames(t, obs); len(got) != 3 || got[2] != "needs-sampling" {
			t.Errorf("%s: tools %v", method, got)
		}
		if !strings.Contains(obs.Stderr, "answer: response: error -32601") || strings.Contains(obs.Stderr, "response: result") {
			t.Errorf("%s: the child saw %q", method, obs.Stderr)
		}
	}
}

// A 2026-07-28 response stream must carry no server request: one that
// does is not answered (clients must not POST responses in that era).
func TestServerRequestModernNotAnswered(t *testing.T) {
	s, base := mockHTTP(t, mockserver.Config{Era: mockserver.ModernOnly, Tools: mockTools("t", 2), ServerRequest: "sampling/createMessage", Response: mockserver.SSEResponses})
	obs, err := ListTools(context.Background(), Config{BaseURL: base + "/mcp", ClientCapabilities: []byte("sampling")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(obs.Warnings, "\n"), "must not do; it was not answered") {
		t.Errorf("warnings %q", obs.Warnings)
	}
	for _, e := range s.Log() {
		if strings.HasPrefix(e.Reason, "response:") || e.HTTPMethod == http.MethodPost && e.Method == "" {
			t.Errorf("the client answered: %+v", e)
		}
	}
}

// The same legacy listing (initialize, notifications/initialized, three
// pages of 20 tools) from the mock over Streamable HTTP and over HTTP+SSE:
// what the HTTP+SSE transport costs (one stream, a POST and an event per
// message, the stream opened and closed per run).
func BenchmarkLegacyListing(b *testing.B) {
	for _, tr := range []string{TransportStreamableHTTP, TransportSSE} {
		b.Run(tr, func(b *testing.B) {
			s := mockserver.MustNew(mockserver.Config{Era: mockserver.LegacyOnly, Tools: mockTools("t", 60), PageSize: 20, LogLimit: 16})
			mux := http.NewServeMux()
			mux.Handle("/mcp", s)
			mux.Handle("/sse", s.LegacySSEHandler())
			ts := httptest.NewServer(mux)
			b.Cleanup(func() { s.Close(); ts.Close() })
			cfg := Config{BaseURL: ts.URL + "/mcp", Transport: tr, PreferredRevision: mcpwire.Rev20251125}
			if tr == TransportSSE {
				cfg.BaseURL = ts.URL + "/sse"
			}
			b.ReportAllocs()
			for b.Loop() {
				obs, err := ListTools(context.Background(), cfg)
				if err != nil || obs.Pages != 3 {
					b.Fatal(err)
				}
			}
		})
	}
}
