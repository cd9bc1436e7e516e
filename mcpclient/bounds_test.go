package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// manyPages serves n pages of per tools each.
func manyPages(t *testing.T, n, per int) (*modernServer, *httptest.Server) {
	return manyPagesSlow(t, n, per, 0)
}

// manyPagesSlow is manyPages with each tools/list answered after delay.
func manyPagesSlow(t *testing.T, n, per int, delay time.Duration) (*modernServer, *httptest.Server) {
	var pages []page
	for i := range n {
		p := page{tools: toolsJSON(fmt.Sprintf("p%d_", i), per)}
		if i+1 < n {
			p.next = cur(fmt.Sprintf("p%d", i+1))
		}
		pages = append(pages, p)
	}
	srv := &modernServer{t: t, pages: pages}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" {
			time.Sleep(delay)
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return srv, ts
}

// TestNoDefaultPageBound: a list of more pages than the old default cap of
// 50 is read whole; the bounds are bytes, tools and the deadline.
func TestNoDefaultPageBound(t *testing.T) {
	_, ts := manyPages(t, 120, 2)
	obs := mustList(t, Config{BaseURL: ts.URL})
	if obs.CapReached || obs.Pages != 120 || obs.Completeness != "complete" || obs.ListBytes == 0 {
		t.Fatalf("cap %v pages %d %s, %d bytes", obs.CapReached, obs.Pages, obs.Completeness, obs.ListBytes)
	}
}

// TestListBounds: the listing's bytes and tools are bounded in all; a
// listing beyond either is a LimitError, not a partial list.
func TestListBounds(t *testing.T) {
	_, ts := manyPages(t, 10, 10) // 100 tools
	full := mustList(t, Config{BaseURL: ts.URL})
	for _, c := range []struct {
		name string
		cfg  Config
		kind LimitKind
	}{
		{"bytes", Config{BaseURL: ts.URL, MaxListBytes: full.ListBytes - 1}, LimitListBytes},
		{"tools", Config{BaseURL: ts.URL, MaxListTools: 99}, LimitListTools},
	} {
		_, err := ListTools(context.Background(), c.cfg)
		var le *LimitError
		if !errors.As(err, &le) || le.Kind != c.kind || le.Method != "tools/list" {
			t.Errorf("%s: %v, want a %s LimitError", c.name, err, c.kind)
		}
	}
	// At the bounds exactly, the list is read.
	for _, cfg := range []Config{{BaseURL: ts.URL, MaxListBytes: full.ListBytes}, {BaseURL: ts.URL, MaxListTools: 100}} {
		if obs := mustList(t, cfg); obs.Completeness != "complete" {
			t.Errorf("%+v: %s", cfg, obs.Completeness)
		}
	}
	if _, err := ListTools(context.Background(), Config{BaseURL: ts.URL, MaxListBytes: -1}); err == nil {
		t.Error("a negative MaxListBytes was accepted")
	}
}

// TestListDeadline: a server that stalls between pages is bounded by the
// run's one deadline.
func TestListDeadline(t *testing.T) {
	_, ts := manyPagesSlow(t, 1000, 1, 20*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := ListTools(ctx, Config{BaseURL: ts.URL})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v, want the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the listing ran %v past a 300ms deadline", d)
	}
}

// TestOnToolsPage: the pages are handed over as read, parsed, with their
// requests; no transcript is built; an error ends the run with it.
func TestOnToolsPage(t *testing.T) {
	_, ts := manyPages(t, 3, 2)
	var names []string
	var reqs int
	obs := mustList(t, Config{BaseURL: ts.URL, OnToolsPage: func(req []byte, res jcs.Value) error {
		if !strings.Contains(string(req), `"tools/list"`) {
			t.Errorf("request %s", req)
		}
		reqs++
		tools, _ := res.Get("tools")
		for i := range tools.Len() {
			n, _ := tools.Index(i).Get("name")
			names = append(names, n.Str())
		}
		return nil
	}})
	if obs.Transcript != nil || reqs != 3 || obs.Pages != 3 || strings.Join(names, ",") != "p0_0,p0_1,p1_0,p1_1,p2_0,p2_1" {
		t.Fatalf("transcript %d bytes, %d requests, %d pages, names %v", len(obs.Transcript), reqs, obs.Pages, names)
	}
	stop := errors.New("stop")
	calls := 0
	_, err := ListTools(context.Background(), Config{BaseURL: ts.URL, OnToolsPage: func([]byte, jcs.Value) error {
		calls++
		return stop
	}})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("%v after %d calls", err, calls)
	}
}
