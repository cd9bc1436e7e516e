package proxy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The gateway's refusal of a call to a tool whose pinned inputSchema does
// not compile holds no active character (the regexp package's message
// quotes the pattern raw) and is never clipped inside an escape sequence.
func TestSchemaUnusableRefusal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tools.json")
	long := strings.Repeat("\x1b", 200)
	tools := []map[string]any{
		{"name": "p", "description": "d", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string", "pattern": "\x1b\\[2J("}}}},
		{"name": "q", "description": "d", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string", "pattern": long + "("}}}},
	}
	b, _ := json.Marshal(map[string]any{"tools": tools})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, up := upstreamMock(t, mockserver.Config{}, path)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, path, manifest.Identity{}), Profile: schemadiff.FailClosedProfile})
	obs, _ := listThrough(t, url, false,
		mcpclient.ToolCall{Name: "p", Arguments: json.RawMessage(`{"a":"x"}`)},
		mcpclient.ToolCall{Name: "q", Arguments: json.RawMessage(`{"a":"x"}`)})
	half := regexp.MustCompile(`\\(u[0-9a-f]{0,3}|x[0-9a-f]?|U[0-9a-f]{0,7})…$`)
	for _, c := range obs.Calls {
		if c.Message == "" {
			t.Fatalf("%+v", c)
		}
		if safetext.Inert(c.Message) != c.Message {
			t.Errorf("%s: the refusal holds active characters: %q", c.Name, c.Message)
		}
		trail := strings.TrimSuffix(c.Message, "…")
		n := len(trail) - len(strings.TrimRight(trail, `\`))
		if half.MatchString(c.Message) || trail != c.Message && n%2 == 1 {
			t.Errorf("%s: the refusal ends in half an escape: …%s", c.Name, c.Message[len(c.Message)-20:])
		}
	}
}
