package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// mockSSE serves the mock's HTTP+SSE transport at /sse and its Streamable
// HTTP endpoint at /mcp; it returns the base URL.
func mockSSE(t *testing.T, cfg mockserver.Config, manifestPath string) (*mockserver.Server, string) {
	t.Helper()
	if manifestPath != "" {
		tools, err := mockserver.LoadToolsFile(manifestPath)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = tools
	}
	s := mockserver.MustNew(cfg)
	mux := http.NewServeMux()
	mux.Handle("/mcp", s)
	mux.Handle("/sse", s.LegacySSEHandler())
	ts := httptest.NewServer(mux)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL
}

type protocolJSON struct {
	Protocol struct {
		Era           string `json:"era"`
		Transport     string `json:"transport"`
		Revision      string `json:"protocol_revision"`
		LegacyVersion string `json:"legacy_session_version"`
	} `json:"protocol"`
	Client struct {
		Capabilities json.RawMessage `json:"capabilities"`
	} `json:"client"`
	Warnings []string `json:"warnings"`
}

func driftProtocol(t *testing.T, out string) protocolJSON {
	t.Helper()
	var p protocolJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var c bytes.Buffer
	if len(p.Client.Capabilities) > 0 && json.Compact(&c, p.Client.Capabilities) == nil {
		p.Client.Capabilities = c.Bytes()
	}
	return p
}

// A 2024-11-05 server over the HTTP+SSE transport: pinned and drifted
// read-only, the era and transport recorded in the report.
func TestDriftHTTPSSE(t *testing.T) {
	s, base := mockSSE(t, mockserver.Config{Era: mockserver.LegacyOnly, SupportedVersions: []string{mcpwire.Rev20241105}, PageSize: 2}, exampleV1)
	dir := t.TempDir()
	decl := filepath.Join(dir, "d.json")
	if code, _, stderr := run(t, "", "pin", "--url", base+"/sse", "--transport", "sse", "--server-id", "old", "-o", decl); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	code, out, stderr := run(t, "", "drift", decl, "--url", base+"/sse", "--transport", "sse", "--format", "json")
	var d driftJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("exit %d %s: %v", code, stderr, err)
	}
	p := driftProtocol(t, out)
	if p.Protocol.Era != "legacy" || p.Protocol.Transport != "sse" || p.Protocol.Revision != "unknown" || p.Protocol.LegacyVersion != "2024-11-05" || string(p.Client.Capabilities) != "{}" {
		t.Fatalf("protocol %+v client %s", p.Protocol, p.Client.Capabilities)
	}
	if d.Served == nil || d.Served.ToolCount != 5 || !d.Served.SecondCompared {
		t.Fatalf("served %+v", d.Served)
	}
	for _, r := range d.rules() {
		if r != "MCP-AUTH-ANONYMOUS-LIST" && r != "MCP-DRIFT-LEGACY-SERVER" {
			t.Errorf("finding %s on an unchanged server", r)
		}
	}
	if _, open := s.SSEStreams(); open != 0 {
		// The streams end when the run does (the handler sees the close
		// shortly after).
		t.Logf("%d stream(s) still closing", open)
	}
	// The text report says which transport and session version.
	_, text, _ := run(t, "", "drift", decl, "--url", base+"/sse", "--transport", "sse", "--skip-second-connection", "--color", "never")
	if !strings.Contains(text, "legacy era over HTTP+SSE (deprecated)") || !strings.Contains(text, "session at 2024-11-05") {
		t.Errorf("text report:\n%s", text)
	}
	// Auto: the same URL, found to be HTTP+SSE after initialize is refused.
	_, out, _ = run(t, "", "drift", decl, "--url", base+"/sse", "--format", "json", "--skip-second-connection")
	if p := driftProtocol(t, out); p.Protocol.Transport != "sse" {
		t.Errorf("auto: transport %q, warnings %q", p.Protocol.Transport, p.Warnings)
	}
	// A Streamable HTTP server at 2024-11-05 is recorded as such.
	_, out, _ = run(t, "", "drift", decl, "--url", base+"/mcp", "--format", "json", "--skip-second-connection")
	if p := driftProtocol(t, out); p.Protocol.Transport != "streamable-http" || p.Protocol.LegacyVersion != "2024-11-05" {
		t.Errorf("streamable http: %+v", p.Protocol)
	}
	// Usage errors.
	for _, args := range [][]string{
		{"drift", decl, "--url", base + "/sse", "--transport", "websocket"},
		{"drift", decl, "--transport", "sse", "--stdio", "--", "true"},
		{"drift", decl, "--url", base + "/mcp", "--client-capabilities", "sampeling"},
		{"drift", decl, "--url", base + "/mcp", "--client-capabilities", `{"sampling":true}`},
	} {
		if code, _, stderr := run(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
}

// "type": "sse" in --mcp-config selects the HTTP+SSE transport; a type
// that contradicts --transport, or that mcpdrift does not know, is a
// usage error.
func TestMCPConfigTypeSSE(t *testing.T) {
	_, base := mockSSE(t, mockserver.Config{Era: mockserver.LegacyOnly}, exampleV1)
	dir := t.TempDir()
	write := func(name, entry string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"mcpServers":{"old":`+entry+`}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sse := write("sse.json", `{"type":"sse","url":"`+base+`/sse"}`)
	code, out, stderr := run(t, "", "drift", exampleV1, "--mcp-config", sse, "--server", "old", "--format", "json", "--skip-second-connection")
	// exampleV1 is pretty-printed; the mock sends each event compacted, and
	// the digests of what it sent are the file's: no finding but INFO.
	if p := driftProtocol(t, out); code != 0 || p.Protocol.Transport != "sse" || strings.Contains(strings.Join(p.Warnings, " "), "trying the deprecated") {
		t.Fatalf("exit %d %s: %+v %q", code, stderr, p.Protocol, p.Warnings)
	}
	if code, _, stderr := run(t, "", "drift", exampleV1, "--mcp-config", sse, "--server", "old", "--transport", "streamable-http"); code != 2 || !strings.Contains(stderr, "contradicts") {
		t.Errorf("contradicting --transport: %d %s", code, stderr)
	}
	http := write("http.json", `{"type":"http","url":"`+base+`/sse"}`)
	code, _, stderr = run(t, "", "drift", exampleV1, "--mcp-config", http, "--server", "old", "--format", "json", "--skip-second-connection")
	if code != 3 {
		t.Errorf(`"type": "http" must not fall back to HTTP+SSE: exit %d %s`, code, stderr)
	}
	for _, entry := range []string{`{"type":"websocket","url":"` + base + `/sse"}`, `{"type":"sse","command":"x"}`, `{"type":1,"url":"` + base + `/sse"}`} {
		p := write("bad.json", entry)
		if code, _, stderr := run(t, "", "drift", exampleV1, "--mcp-config", p, "--server", "old"); code != 2 {
			t.Errorf("%s: exit %d %s", entry, code, stderr)
		}
	}
}

// A tool offered only to clients that declare sampling: pinned with
// --client-capabilities, the snapshot records them, and drift observes
// with them again; drifting without them would report the tool missing.
func TestClientCapabilitiesPinAndDrift(t *testing.T) {
	extra := json.RawMessage(`{"name":"trigger-sampling-request","description":"asks the client's model","inputSchema":{"type":"object"}}`)
	for _, era := range []mockserver.Era{mockserver.DualEra, mockserver.LegacyOnly} {
		t.Run(era.String(), func(t *testing.T) {
			_, base := mockSSE(t, mockserver.Config{Era: era, CapabilityTools: map[string][]json.RawMessage{"sampling": {extra}}}, exampleV1)
			url := base + "/mcp"
			dir := t.TempDir()
			// Without the capability: five tools, recorded as {}.
			plain := filepath.Join(dir, "plain.json")
			if code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "s", "-o", plain); code != 0 {
				t.Fatalf("pin: %d %s", code, stderr)
			}
			snap := readSnapshot(t, snapshotPathFor(plain))
			if len(snap.Tools) != 5 || string(snap.ClientCapabilities) != "{}" {
				t.Fatalf("plain snapshot: %d tools, capabilities %s", len(snap.Tools), snap.ClientCapabilities)
			}
			// With it: six, recorded canonically.
			decl := filepath.Join(dir, "sampling.json")
			if code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "s", "-o", decl, "--client-capabilities", `{ "sampling": {} }`); code != 0 {
				t.Fatalf("pin: %d %s", code, stderr)
			}
			snap = readSnapshot(t, snapshotPathFor(decl))
			if len(snap.Tools) != 6 || string(snap.ClientCapabilities) != `{"sampling":{}}` {
				t.Fatalf("sampling snapshot: %d tools, capabilities %s", len(snap.Tools), snap.ClientCapabilities)
			}
			// drift adopts the pinned capabilities and says so.
			code, d, stderr := runDrift(t, decl, "--url", url)
			if code != 0 || slices.Contains(d.rules(), "MCP-DRIFT-TOOL-MISSING trigger-sampling-request") || !strings.Contains(stderr, "pinned declaring client capabilities") {
				t.Fatalf("drift with the pinned capabilities: exit %d %v %s", code, d.rules(), stderr)
			}
			// A snapshot with its capabilities after its tools (a member
			// order mcpdrift does not write): the head read before listing
			// (manifest.PeekHead) does not see them, the whole reading
			// does, and the server is listed again declaring them.
			reorderSnapshot(t, snapshotPathFor(decl), filepath.Join(dir, "late.snapshot.json"))
			if err := os.WriteFile(filepath.Join(dir, "late.json"), mustRead(t, decl), 0o644); err != nil {
				t.Fatal(err)
			}
			code, d, stderr = runDrift(t, filepath.Join(dir, "late.json"), "--url", url)
			if code != 0 || slices.Contains(d.rules(), "MCP-DRIFT-TOOL-MISSING trigger-sampling-request") || !strings.Contains(stderr, "pinned declaring client capabilities") {
				t.Fatalf("drift with the capabilities after the tools: exit %d %v %s", code, d.rules(), stderr)
			}
			// Explicitly without them, the tool is missing, and the report
			// says why it may be.
			code, out, _ := run(t, "", "drift", decl, "--url", url, "--client-capabilities", "{}", "--format", "json")
			var dj driftJSON
			_ = json.Unmarshal([]byte(out), &dj)
			p := driftProtocol(t, out)
			if code != 1 || !slices.Contains(dj.rules(), "MCP-DRIFT-TOOL-MISSING trigger-sampling-request") || !strings.Contains(strings.Join(p.Warnings, "\n"), "were pinned declaring client capabilities") || string(p.Client.Capabilities) != "{}" {
				t.Fatalf("drift without: exit %d %v %q", code, dj.rules(), p.Warnings)
			}
			// Names work too, and the report records what was declared.
			_, out, _ = run(t, "", "drift", decl, "--url", url, "--client-capabilities", "sampling,roots", "--format", "json")
			if p := driftProtocol(t, out); string(p.Client.Capabilities) != `{"roots":{},"sampling":{}}` {
				t.Fatalf("declared %s", p.Client.Capabilities)
			}
		})
	}
}

// reorderSnapshot writes the snapshot at src to dst with its
// client_capabilities member moved after its tools (every member's bytes
// kept, so every digest still recomputes).
func reorderSnapshot(t *testing.T, src, dst string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(mustRead(t, src), &m); err != nil {
		t.Fatal(err)
	}
	if m["client_capabilities"] == nil || m["tools"] == nil {
		t.Fatalf("%s has no client_capabilities or tools", src)
	}
	var b bytes.Buffer
	b.WriteString("{")
	keys := []string{}
	for k := range m {
		if k != "client_capabilities" && k != "tools" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range append(keys, "tools", "client_capabilities") {
		if b.Len() > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%s", k, m[k])
	}
	b.WriteString("}")
	if h := manifest.PeekHead(b.Bytes()); h.Schema != manifest.SnapshotSchemaID || h.ClientCapabilities != nil {
		t.Fatalf("the reordered snapshot's head: %+v", h)
	}
	if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readSnapshot(t *testing.T, path string) *manifest.Snapshot {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.ParseSnapshot(b, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mock-server --legacy-sse is refused with --stdio (it is an HTTP transport).
func TestMockServerLegacySSEFlag(t *testing.T) {
	if code, _, stderr := run(t, "", "mock-server", "--stdio", "--legacy-sse"); code != 2 || !strings.Contains(stderr, "legacy-sse") {
		t.Errorf("exit %d %s", code, stderr)
	}
}
