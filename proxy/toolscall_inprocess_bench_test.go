package proxy_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// BenchmarkToolsCallInProcess is the work of one tools/call through each
// hop without sockets: the downstream request is handed to the hop's
// handler, and the hop's upstream transport hands its requests to the
// mock's handler on the same goroutine. What the network and the
// scheduler add is gone, so ns/op, the process's CPU time per call
// (cpu-ns/op: steadier than ns/op on a busy machine) and allocs/op are
// the hop's own code and the mock's (direct is the mock alone; a hop's
// cost is its figure minus direct's):
//
//	go test ./proxy -run '^$' -bench ToolsCallInProcess -benchmem
//
// The hops are those of BenchmarkToolsCall: a bare httputil.ReverseProxy
// (revproxy), and the gateway in audit and in enforce mode, each over a
// legacy session, the upstream answering in JSON or on an event stream.
func BenchmarkToolsCallInProcess(b *testing.B) {
	for _, framing := range []string{"json", "sse"} {
		b.Run(framing, func(b *testing.B) {
			tools, err := mockserver.LoadToolsFile(exampleV1)
			if err != nil {
				b.Fatal(err)
			}
			cfg := mockserver.Config{Tools: tools, LogLimit: 1, MaxSessions: 1 << 20}
			if framing == "sse" {
				cfg.Response = mockserver.SSEResponses
			}
			mock := mockserver.MustNew(cfg)
			b.Cleanup(mock.Close)
			up := inProcess{mock}
			u, _ := url.Parse("http://upstream.test")
			hops := []inProcessHop{{"direct", mock}, {"revproxy", bareProxy(u, http.Header{"Authorization": {benchCredential}}, up)}}
			for _, mode := range benchModes {
				g := deployedGateway(b, proxy.Upstream{URL: u.String() + "/mcp", Headers: http.Header{"Authorization": {benchCredential}},
					HTTPClient: &http.Client{Transport: up}}, mode)
				hops = append(hops, inProcessHop{string(mode), g.Handler(proxy.HTTPOptions{})})
			}
			for _, hop := range hops {
				b.Run(hop.name, func(b *testing.B) {
					call := inProcessSession(b, hop.h)
					b.ReportAllocs()
					id := int64(100)
					cpu0 := cpuTime()
					for b.Loop() {
						id++
						call(id)
					}
					if cpu := cpuTime() - cpu0; cpu > 0 {
						b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
					}
				})
			}
		})
	}
}

type inProcessHop struct {
	name string
	h    http.Handler
}

// inProcess is an http.RoundTripper that serves each request with h on
// the caller's goroutine. A GET (a legacy session's stream, which would
// never end) is answered 405, as by a server that offers none.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	if r.Method == http.MethodGet {
		rec.WriteHeader(http.StatusMethodNotAllowed)
	} else {
		sr := r.Clone(r.Context())
		sr.RequestURI, sr.RemoteAddr = r.URL.RequestURI(), "127.0.0.1:1"
		t.h.ServeHTTP(rec, sr)
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// inProcessSession opens a legacy session on h and returns its caller of
// tools/call, which fails b on an answer that is not a result.
func inProcessSession(b *testing.B, h http.Handler) func(id int64) {
	post := func(sid string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", benchRevision)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := post("", []byte(benchInitialize))
	sid := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || sid == "" {
		b.Fatalf("initialize: %d %.300s", rec.Code, rec.Body.Bytes())
	}
	if rec = post(sid, []byte(benchInitialized)); rec.Code != http.StatusAccepted {
		b.Fatalf("notifications/initialized: %d %.300s", rec.Code, rec.Body.Bytes())
	}
	if rec = post(sid, []byte(benchList)); rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"search_issues"`)) {
		b.Fatalf("tools/list: %d %.300s", rec.Code, rec.Body.Bytes())
	}
	return func(id int64) {
		rec := post(sid, legacyCallBody(id))
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"result":{`)) {
			b.Fatalf("call %s: %d %.300s", strconv.FormatInt(id, 10), rec.Code, rec.Body.Bytes())
		}
	}
}
