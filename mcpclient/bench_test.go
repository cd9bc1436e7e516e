package mcpclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The two benchmarks below run the same four exchanges (server/discover and
// three tools/list pages of 20 tools) against the same handler over the
// same keep-alive transport: one through ListTools, one as bare net/http
// POSTs that only read the bodies. Their ratio is the client's overhead
// (header derivation, strict parsing, transcript building, era logic).

func benchServer(b *testing.B) (*httptest.Server, *http.Client) {
	srv := &modernServer{t: b, pages: []page{
		{tools: toolsJSON("a", 20), next: cur("p1")},
		{tools: toolsJSON("b", 20), next: cur("p2")},
		{tools: toolsJSON("c", 20)},
	}}
	// The handler records every request; the benchmarks do not need that.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r)
		srv.mu.Lock()
		srv.methods, srv.versions = srv.methods[:0], srv.versions[:0]
		srv.mu.Unlock()
	}))
	b.Cleanup(ts.Close)
	return ts, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
}

const benchRequests = 4

func BenchmarkListToolsPages(b *testing.B) {
	ts, client := benchServer(b)
	cfg := Config{BaseURL: ts.URL, HTTPClient: client}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		obs, err := ListTools(ctx, cfg)
		if err != nil || obs.Pages != 3 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRequests), "ns/request")
}

func BenchmarkBareHTTPPost(b *testing.B) {
	ts, client := benchServer(b)
	r := &run{client: implementation{Name: DefaultClientName, Version: DefaultClientVersion}, rev: "2026-07-28"}
	meta := requestMeta(r.rev, r.client, []byte("{}"))
	bodies := [][]byte{
		newRequest(1, methodDiscover, map[string]any{"_meta": meta}).Body,
		newRequest(2, methodToolsList, map[string]any{"_meta": meta}).Body,
		newRequest(3, methodToolsList, map[string]any{"_meta": meta, "cursor": "p1"}).Body,
		newRequest(4, methodToolsList, map[string]any{"_meta": meta, "cursor": "p2"}).Body,
	}
	methods := []string{methodDiscover, methodToolsList, methodToolsList, methodToolsList}
	b.ReportAllocs()
	for b.Loop() {
		for i, body := range bodies {
			req, err := http.NewRequest(http.MethodPost, ts.URL, bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Method", methods[i])
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatal(resp.Status)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRequests), "ns/request")
}
