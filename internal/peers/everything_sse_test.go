package peers

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpclient"
)

// TestEverythingHTTPSSE: `PORT=n node dist/index.js sse`, the deprecated
// HTTP+SSE transport (GET /sse, POST /message?sessionId=...), bound to
// loopback. Observed with the transport named ("type": "sse"), and found
// by the Streamable HTTP fallback (POST /sse is Express's 404).
func TestEverythingHTTPSSE(t *testing.T) {
	node, entry := everythingPeer(t)
	start := time.Now()
	defer func() { recordTiming("server-everything sse: whole test", time.Since(start)) }()
	label := "server-everything sse"
	url := startEverything(t, node, entry, "sse", "/sse")
	obs, tl := observe(t, label, mcpclient.Config{BaseURL: url, Transport: mcpclient.TransportSSE})
	checkEverythingTools(t, label, toolNames(tl))
	checkEra(t, label, obs, mcpclient.EraLegacy, "", everythingLegacyVersion)
	if obs.Transport != mcpclient.TransportSSE {
		t.Errorf("%s: transport %q", label, obs.Transport)
	}
	auto, atl := observe(t, label+" (auto)", mcpclient.Config{BaseURL: url})
	if auto.Transport != mcpclient.TransportSSE || len(atl.Tools) != len(tl.Tools) {
		t.Errorf("%s: auto found transport %q, %d tools; warnings %q", label, auto.Transport, len(atl.Tools), auto.Warnings)
	}
	pinned := saveManifest(t, "server-everything-sse", obs)
	d := drift(t, label, pinned, "--url", url, "--transport", "sse")
	checkClean(t, label, d, len(tl.Tools), ruleAnonymousList, ruleLegacyServer)
	if d.rep.Protocol.Transport != "sse" || d.rep.Protocol.LegacyVersion != everythingLegacyVersion {
		t.Errorf("%s: report protocol %+v", label, d.rep.Protocol)
	}
}

// TestEverythingClientCapabilities: the reference server registers
// get-roots-list, trigger-elicitation-request and trigger-sampling-request
// only for clients that declare roots, elicitation and sampling, and then
// asks for the roots (roots/list), which mcpdrift refuses.
func TestEverythingClientCapabilities(t *testing.T) {
	node, entry := everythingPeer(t)
	label := "server-everything stdio + capabilities"
	caps, err := mcpclient.ParseClientCapabilities("sampling,elicitation,roots")
	if err != nil {
		t.Fatal(err)
	}
	obs, tl := observe(t, label, mcpclient.Config{Command: []string{node, entry, "stdio"}, ClientCapabilities: caps})
	names := toolNames(tl)
	for _, n := range []string{"get-roots-list", "trigger-elicitation-request", "trigger-sampling-request"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s: %q not listed to a client declaring %s: %v", label, n, caps, names)
		}
	}
	if everything.version == everythingPinned && len(names) != len(everythingTools)+3 {
		t.Errorf("%s: %d tools, want %d: %v", label, len(names), len(everythingTools)+3, names)
	}
	t.Logf("%s: warnings %q", label, obs.Warnings)
	// Over HTTP+SSE the roots/list request arrives on the stream and is
	// refused by POST.
	url := startEverything(t, node, entry, "sse", "/sse")
	sobs, stl := observe(t, label+" (sse)", mcpclient.Config{BaseURL: url, Transport: mcpclient.TransportSSE, ClientCapabilities: caps})
	if len(stl.Tools) != len(tl.Tools) {
		t.Errorf("%s (sse): %d tools, stdio %d", label, len(stl.Tools), len(tl.Tools))
	}
	if !strings.Contains(strings.Join(sobs.Warnings, "\n"), `"roots/list" request`) {
		t.Logf("%s (sse): no roots/list request seen before the run ended: %q", label, sobs.Warnings)
	}
}
