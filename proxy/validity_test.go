package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// baselineVariants are baselines gate calls inconclusive, each made from
// the example's declared baseline and its definitions by one edit, with
// the validity code that says so.
func baselineVariants(t *testing.T) []struct {
	name, code string
	b          *decide.Baseline
} {
	t.Helper()
	src, err := os.ReadFile(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := manifest.ParseToolList(src)
	if err != nil {
		t.Fatal(err)
	}
	declared := func() *manifest.Declared {
		d, err := manifest.Pin(manifest.BuildObserved("acme", tl, manifest.Complete, nil), manifest.PinOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	defs := &manifest.Definitions{Tools: tl.Tools, From: "the snapshot", ServerID: "acme"}
	mk := func(d *manifest.Declared, defs *manifest.Definitions) *decide.Baseline {
		return decide.NewDeclaredBaseline("acme", manifest.Identity{}, d, defs)
	}
	dup := declared()
	dup.Tools = append(dup.Tools, dup.Tools[0])
	dupRecomputed := declared()
	dupRecomputed.Tools = append(dupRecomputed.Tools, dupRecomputed.Tools[0])
	dupRecomputed.ManifestDigest = manifest.ManifestDigest(dupRecomputed.NameDigests())
	edited := declared()
	edited.Tools[1].ToolDigest = "sha256:" + strings.Repeat("0", 64)
	disagrees := declared()
	disagrees.Tools[1].ToolDigest = "sha256:" + strings.Repeat("0", 64)
	disagrees.ManifestDigest = manifest.ManifestDigest(disagrees.NameDigests())
	other := &manifest.Definitions{Tools: tl.Tools, From: "the snapshot", ServerID: "other"}
	return []struct {
		name, code string
		b          *decide.Baseline
	}{
		{"duplicate entry", manifest.BaselineAmbiguous, mk(dupRecomputed, defs)},
		{"duplicate entry, digest not recomputed", manifest.BaselineDigestMismatch, mk(dup, defs)},
		{"edited tool_digest", manifest.BaselineDigestMismatch, mk(edited, defs)},
		{"snapshot disagrees", manifest.BaselineDefinitionsMismatch, mk(disagrees, defs)},
		{"snapshot of another server", manifest.BaselineDefinitionsMismatch, mk(declared(), other)},
		{"definitions name a tool twice", manifest.BaselineAmbiguous, decide.NewBaseline("acme", manifest.Identity{}, append(slices.Clone(tl.Tools), tl.Tools[0]))},
		{"unreadable on reload", decide.ReasonBaselineInvalid, decide.InvalidBaseline("acme", "it cannot be read")},
	}
}

// withheldNow checks that the gateway serves nothing, refuses a call
// with call_server_withheld without it reaching the upstream, and
// answers /healthz 503 with the reason.
func withheldNow(t *testing.T, mock *mockserver.Server, url, health string) {
	t.Helper()
	before := mock.LogTotal()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Calls: []mcpclient.ToolCall{{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"a/b","query":"x"}`)}}})
	if err != nil {
		t.Fatalf("through the gateway: %v", err)
	}
	if tl, _ := manifest.ParseToolList(obs.Transcript); tl == nil || len(tl.Tools) != 0 {
		t.Errorf("a withheld server served tools: %s", obs.Transcript)
	}
	if len(obs.Calls) != 1 || obs.Calls[0].Code != -32602 || !strings.Contains(obs.Calls[0].Message, "the server is withheld") {
		t.Errorf("the call was not refused as withheld: %+v", obs.Calls)
	}
	for _, e := range mock.Log()[before:] {
		if e.Method == "tools/call" {
			t.Error("the upstream saw a call")
		}
	}
	resp, err := http.Get(health)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "the baseline is not valid") {
		t.Errorf("/healthz: %d %s", resp.StatusCode, body)
	}
}

// TestInvalidBaselineWithheld: a baseline that fails the validity check
// gate makes (manifest.CheckBaseline) withholds the server, at start and
// on reload — an empty list, every call refused with call_server_withheld
// before it reaches the upstream, /healthz 503 saying why, the decision
// log's baseline_invalid event with the code — and a valid reload serves
// again. Before, the gateway served from such a baseline given at start,
// and a reload to one kept the old baseline in force.
func TestInvalidBaselineWithheld(t *testing.T) {
	for _, v := range baselineVariants(t) {
		for _, when := range []string{"start", "reload"} {
			t.Run(v.name+"/"+when, func(t *testing.T) {
				if v.b.Invalid() == "" {
					t.Fatal("the variant is valid")
				}
				mock, up := upstreamMock(t, mockserver.Config{}, exampleV1)
				var log logBuf
				cfg := proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up, Log: proxy.NewDecisionLog(&log), Baseline: v.b}
				if when == "reload" {
					cfg.Baseline = baselineOf(t, exampleV1, manifest.Identity{})
				}
				g, err := proxy.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				ts := httptest.NewServer(g.Handler(proxy.HTTPOptions{}))
				defer func() { ts.Close(); g.Close() }()
				url, health := ts.URL+"/mcp", ts.URL+"/healthz"
				if when == "reload" {
					if _, tl := listThrough(t, url, false); len(tl.Tools) != 5 {
						t.Fatalf("before the reload: %v", names(tl))
					}
					if err := g.Reload(v.b); err == nil || !strings.Contains(err.Error(), "withheld") {
						t.Errorf("Reload: %v", err)
					}
				}
				withheldNow(t, mock, url, health)
				event, refused := false, false
				for _, r := range log.records(t) {
					event = event || r.Event == "baseline_invalid" && slices.Contains(r.Reasons, v.code) && r.Note != ""
					refused = refused || r.Method == "tools/call" && slices.Contains(r.Reasons, decide.ReasonWithheld)
				}
				if !event || !refused {
					t.Errorf("decision log: a baseline_invalid record with %s: %v; a call refused with %s: %v", v.code, event, decide.ReasonWithheld, refused)
				}
				if err := g.Reload(baselineOf(t, exampleV1, manifest.Identity{})); err != nil {
					t.Fatal(err)
				}
				if _, tl := listThrough(t, url, false); len(tl.Tools) != 5 {
					t.Errorf("after a valid reload: %v", names(tl))
				}
			})
		}
	}
}
