package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

func memoTools(n int, tweak int) []json.RawMessage {
	var out []json.RawMessage
	for i := range n {
		d := fmt.Sprintf("tool %d", i)
		if i == tweak {
			d += " (this connection's)"
		}
		out = append(out, json.RawMessage(fmt.Sprintf(`{"name":"t%d","description":%q,"inputSchema":{"type":"object"}}`, i, d)))
	}
	return out
}

// varyingServer serves cfg, and to requests with an X-Vary header the
// same server serving other instead of cfg.Tools.
func varyingServer(t *testing.T, cfg mockserver.Config, other []json.RawMessage) string {
	t.Helper()
	a := mockserver.MustNew(cfg)
	cfg.Tools = other
	b := mockserver.MustNew(cfg)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vary") != "" {
			b.ServeHTTP(w, r)
			return
		}
		a.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.Close(); a.Close(); b.Close() })
	return ts.URL
}

// memoRun lists the server with the memo: recording (its payload is the
// page's number) or taking known pages; it returns the observation, the
// pages parsed and the payloads of the pages known.
func memoRun(t *testing.T, url string, memo *PageMemo, record bool, headers ...string) (*Observation, int, []any) {
	t.Helper()
	parsed, page := 0, 0
	var known []any
	cfg := Config{BaseURL: url + "/mcp", Pages: memo}
	for _, h := range headers {
		cfg.Headers = http.Header{h: []string{"1"}}
	}
	cfg.OnToolsPage = func([]byte, jcs.Value) error { parsed++; page++; return nil }
	if record {
		cfg.PagePayload = func() any { return page }
	} else {
		cfg.OnKnownToolsPage = func(p any) error { known = append(known, p); page++; return nil }
	}
	obs, err := ListTools(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return obs, parsed, known
}

// TestPageMemo: a listing takes the pages another listing of the run read
// byte for byte from the memo, in order, and reads the same observation;
// a page whose bytes differ on its connection is parsed.
func TestPageMemo(t *testing.T) {
	for _, resp := range []mockserver.ResponseMode{mockserver.JSONResponses, mockserver.SSEResponses} {
		t.Run(fmt.Sprint(resp), func(t *testing.T) {
			url := varyingServer(t, mockserver.Config{Tools: memoTools(10, -1), PageSize: 3, Response: resp}, memoTools(10, 4))
			memo := NewPageMemo()
			first, parsed, _ := memoRun(t, url, memo, true)
			if parsed != 4 || memo.Len() != 4 {
				t.Fatalf("first listing: %d pages parsed, %d recorded", parsed, memo.Len())
			}
			second, parsed, known := memoRun(t, url, memo, false)
			if parsed != 0 || fmt.Sprint(known) != "[1 2 3 4]" {
				t.Fatalf("second listing: %d pages parsed, known %v", parsed, known)
			}
			ttl := func(p *int64) string {
				if p == nil {
					return "none"
				}
				return fmt.Sprint(*p)
			}
			if o := second; o.Pages != first.Pages || o.Completeness != first.Completeness || o.ListBytes != first.ListBytes || o.MissingCacheFields != first.MissingCacheFields ||
				ttl(o.TTLMs) != ttl(first.TTLMs) || o.CacheScope != first.CacheScope ||
				fmt.Sprint(o.ServerInfo) != fmt.Sprint(first.ServerInfo) || fmt.Sprint(o.Warnings) != fmt.Sprint(first.Warnings) {
				t.Fatalf("known pages read as %+v, parsed ones %+v", o, first)
			}
			// A listing that is served tool 4 otherwise: its page (the
			// second) is parsed, the others are known.
			_, parsed, known = memoRun(t, url, memo, false, "X-Vary")
			if parsed != 1 || fmt.Sprint(known) != "[1 3 4]" {
				t.Fatalf("a varying page: %d parsed, known %v", parsed, known)
			}
			// Without OnKnownToolsPage nothing is taken from the memo.
			cfg := Config{BaseURL: url + "/mcp", Pages: memo}
			n := 0
			cfg.OnToolsPage = func([]byte, jcs.Value) error { n++; return nil }
			if _, err := ListTools(context.Background(), cfg); err != nil || n != 4 {
				t.Fatalf("a listing that takes no known page parsed %d: %v", n, err)
			}
		})
	}
}

// TestPageMemoSideBySide: listings run at once, as drift runs them. The
// one taking known pages waits for the recording one to read each page
// (it never parses a page the other is about to record), parses a page
// that differs on its connection, and is never stuck: not behind a
// recording listing that fails, nor when there is none.
func TestPageMemoSideBySide(t *testing.T) {
	url := varyingServer(t, mockserver.Config{Tools: memoTools(10, -1), PageSize: 3, Slow: 15 * time.Millisecond}, memoTools(10, 7))
	memo := NewPageMemo()
	var wg sync.WaitGroup
	var parsed int
	var known []any
	wg.Add(1)
	go func() {
		defer wg.Done()
		memoRun(t, url, memo, true)
	}()
	_, parsed, known = memoRun(t, url, memo, false, "X-Vary")
	wg.Wait()
	if parsed != 1 || fmt.Sprint(known) != "[1 2 4]" {
		t.Fatalf("side by side: %d parsed, known %v", parsed, known)
	}
	// A memo whose recording listing ended at once (it failed): nothing
	// waits.
	failed := NewPageMemo()
	failed.finish()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, parsed, _ = memoRun(t, url, failed, false)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a listing waited on a recording listing that had ended")
	}
	if parsed != 4 {
		t.Fatalf("%d pages parsed, want 4", parsed)
	}
	// The context ends the wait on a memo nobody records into.
	idle := NewPageMemo()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if p := idle.lookup(ctx, 1, []byte("q"), []byte("r")); p != nil {
		t.Fatal("an idle memo knew a page")
	}
}

// TestPageMemoRecorder: the recorder records pages in the order they were
// read, under the key of their request and response; a page with nothing
// to replay is only counted; a lookup of a page not yet recorded waits
// for it; finish returns once every page is recorded and the listing's
// end is noted.
func TestPageMemoRecorder(t *testing.T) {
	m := NewPageMemo()
	rec := m.recorder()
	req := func(i int) []byte { return []byte(fmt.Sprintf(`{"id":%d}`, i)) }
	res := func(i int) []byte { return []byte(fmt.Sprintf(`{"id":%d,"result":{}}`, i)) }
	pages := []*knownPage{{tools: 1}, nil, {tools: 3}}
	got := make(chan *knownPage, 1)
	go func() { got <- m.lookup(context.Background(), 3, req(3), res(3)) }()
	select {
	case p := <-got:
		t.Fatalf("a lookup of page 3 returned %v before it was read", p)
	case <-time.After(20 * time.Millisecond):
	}
	for i, p := range pages {
		rec.record(req(i+1), res(i+1), p)
	}
	if p := <-got; p != pages[2] {
		t.Fatalf("page 3: %v, want %v", p, pages[2])
	}
	rec.finish()
	m.mu.Lock()
	read, done, n := m.read, m.done, len(m.pages)
	m.mu.Unlock()
	if read != 3 || !done || n != 2 {
		t.Fatalf("read %d, done %v, %d pages kept; want 3, true, 2", read, done, n)
	}
	if p := m.lookup(context.Background(), 1, req(1), res(1)); p != pages[0] {
		t.Errorf("page 1: %v", p)
	}
	if p := m.lookup(context.Background(), 2, req(2), res(2)); p != nil {
		t.Errorf("page 2, with nothing to replay: %v", p)
	}
	if p := m.lookup(context.Background(), 1, req(1), res(2)); p != nil {
		t.Errorf("another response: %v", p)
	}
}
