package proxy_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

func healthz(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A replica becomes ready without any downstream traffic (a readiness
// probe keeps an unready replica out of its Service, so no agent could
// make it ready): /healthz, while not ready, has the gateway observe the
// upstream itself — 2026-07-28 or a legacy session, which it ends — and
// a replica whose upstream fails the gate stays unready, its
// observations rate-limited.
func TestReadyWithoutTraffic(t *testing.T) {
	for _, c := range []struct {
		name  string
		era   mockserver.Era
		id    manifest.Identity
		ready bool
	}{
		{"modern", mockserver.ModernOnly, manifest.Identity{}, true},
		{"legacy", mockserver.LegacyOnly, manifest.Identity{}, true},
		{"identity mismatch", mockserver.DualEra, manifest.Identity{Endpoint: "https://elsewhere.example/mcp"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mock, up := upstreamMock(t, mockserver.Config{Era: c.era, PageSize: 2}, exampleV1)
			g := enforcingGateway(t, up, func(cfg *proxy.Config) { cfg.Baseline = baselineOf(t, exampleV1, c.id) })
			addr := serveGateway(t, g, proxy.HTTPOptions{})
			if st := healthz(t, addr); st != 503 {
				t.Fatalf("healthz before any observation: %d", st)
			}
			st := 503
			for deadline := time.Now().Add(5 * time.Second); st != 200 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				st = healthz(t, addr)
			}
			if (st == 200) != c.ready {
				t.Fatalf("healthz after 5 s without traffic: %d", st)
			}
			lists, deletes, inits := 0, 0, 0
			for _, e := range mock.Log() {
				switch {
				case e.Method == "tools/list":
					lists++
				case e.Method == "initialize":
					inits++
				case e.HTTPMethod == http.MethodDelete:
					deletes++
				}
			}
			if lists == 0 {
				t.Error("the gateway did not list the upstream")
			}
			if inits != deletes {
				t.Errorf("%d legacy sessions opened to observe, %d ended", inits, deletes)
			}
			if !c.ready && lists > 2*(5/2+2)*3 { // two eras x 3 pages per observation, one per 2 s
				t.Errorf("%d listings in 5 s of probes: not rate-limited", lists)
			}
			if got := g.Observe(context.Background()); got != c.ready {
				t.Errorf("Observe: %v", got)
			}
		})
	}
}
