package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// An upstream URL with userinfo gets it as Basic credentials on every
// request, as http.Client sends them (the gateway's requests otherwise go
// to the transport itself), and a failure to reach the upstream reads as
// Client.Do's, the URL's password never in it.
func TestUpstreamURLUserinfo(t *testing.T) {
	tools, err := mockserver.LoadToolsFile(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	mock := mockserver.MustNew(mockserver.Config{Tools: tools})
	t.Cleanup(mock.Close)
	var seen, basic atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if u, p, ok := r.BasicAuth(); ok && u == "bench" && p == "s3cret" {
			basic.Add(1)
		}
		mock.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	withUser := strings.Replace(up.URL, "http://", "http://bench:s3cret@", 1) + "/mcp"
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: withUser}, Mode: proxy.Audit,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	if _, tl := listThrough(t, url, true); len(tl.Tools) == 0 {
		t.Fatal("no tools listed through the gateway")
	}
	if n, b := seen.Load(), basic.Load(); n == 0 || b != n {
		t.Errorf("%d of %d upstream requests carried the URL's credentials", b, n)
	}

	// An upstream that cannot be reached: the error names the request as
	// http.Client does, the password redacted.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := strings.Replace(dead.URL, "http://", "http://bench:s3cret@", 1) + "/mcp"
	dead.Close()
	for _, u := range []string{deadURL, strings.Replace(deadURL, "bench:s3cret@", "", 1)} {
		_, gurl := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: u}, Mode: proxy.Audit,
			Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
		resp, err := http.Post(gurl, "application/json", strings.NewReader(benchInitialize))
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		_, _ = io.Copy(&body, resp.Body)
		resp.Body.Close()
		if strings.Contains(body.String(), "s3cret") || !strings.Contains(body.String(), `Post \"http://`) {
			t.Errorf("%s: the answer %q should name the request as http.Client does, without the password", u, body.String())
		}
	}
}
