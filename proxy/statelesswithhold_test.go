package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// The stateless 2026-07-28 traffic of every downstream shares one
// session (Gateway.shared), whose own listing carries the params._meta of
// the downstream request that came last. A tools/list asking for a
// revision the gateway does not speak is answered -32022 (400) by the
// gateway, as a server would, and never becomes that _meta: another,
// well-formed client is served. (Before, the upstream refused the
// gateway's listing, and the withheld list was served to every stateless
// client for good.)
func TestOneStatelessClientWithholdsTheServerForAll(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	v2099 := strings.Replace(modernMeta, "2026-07-28", "2099-01-01", 1)
	if status, _, body := postModern(t, url, "tools/list", v2099, map[string]string{"MCP-Protocol-Version": "2099-01-01"}); status != http.StatusBadRequest || !strings.Contains(body, "-32022") {
		t.Errorf("a revision the gateway does not speak: %d %.300s", status, body)
	}
	// Another client, well-formed in every way, a few seconds later.
	time.Sleep(3 * time.Second)
	status, _, body := postModern(t, url, "tools/list", modernMeta, nil)
	if status != http.StatusOK || !strings.Contains(body, `"search_issues"`) {
		t.Fatalf("a well-formed stateless client is withheld the server after another client's one request: %d %.300s", status, body)
	}
}

// TestFailedListingIsTriedAgain: a listing that failed (here, the
// upstream's one 503) withholds the server, and the upstream is listed
// again at the next list after listRetry — not left withheld until a
// --relist-interval nobody set.
func TestFailedListingIsTriedAgain(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	var failed atomic.Bool
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" && failed.CompareAndSwap(false, true) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		target, _ := url.Parse(up)
		httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host}).ServeHTTP(w, r)
	}))
	defer flaky.Close()
	upURL := flaky.URL + "/mcp"
	_, gw := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: upURL}, Mode: proxy.Enforce, Target: upURL,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	_, _, body := postModern(t, gw, "tools/list", modernMeta, nil)
	if strings.Contains(body, `"search_issues"`) || !failed.Load() {
		t.Fatalf("the first listing did not fail as the test needs: %.300s", body)
	}
	time.Sleep(2500 * time.Millisecond)
	if status, _, body := postModern(t, gw, "tools/list", modernMeta, nil); status != http.StatusOK || !strings.Contains(body, `"search_issues"`) {
		t.Fatalf("the server stays withheld after one failed listing: %d %.300s", status, body)
	}
}
