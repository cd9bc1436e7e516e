package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// TestMessagesEscapeOnce: a message mcpdrift composes (a client
// configuration's refusal, a schema's, the gate's, a drift report's notes
// and why a server was not observed) carries a hostile value escaped once,
// on stderr and in every report format (found by the review of the
// escape-once change: each was escaped again where it was shown).
func TestMessagesEscapeOnce(t *testing.T) {
	dir := t.TempDir()
	h := "x\x1by\u202ez"
	obs := filepath.Join(dir, "obs.json")
	if code, _, stderr := run(t, "", "observe", "--server-id", h, "--input", acmeV1, "-o", obs); code != 0 {
		t.Fatalf("observe: %d %s", code, stderr)
	}
	policy := writeFile(t, dir, "policy.yaml", []byte("declared_mcp_manifests:\n  other:\n    manifest_digest: sha256:"+strings.Repeat("0", 64)+"\n"))
	key, _ := json.Marshal(h)
	hostileKey := writeFile(t, dir, "bad.json", []byte(`{"declared_mcp_manifests":{},`+string(key)+`:1}`))
	declared := filepath.Join(dir, "d.json")
	if code, _, stderr := run(t, "", "pin", "--input", acmeV1, "--server-id", "s", "-o", declared); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	missing := filepath.Join(dir, "no", h)
	for _, c := range []struct {
		name string
		args []string
		out  bool // the message is on stdout (a report), not stderr
	}{
		{"pass-env", []string{"drift", declared, "--stdio", "--pass-env", "A=" + h, "--", "true"}, false},
		{"gate server id", []string{"gate", "--observed", obs, "--policy", policy}, false},
		{"schema", []string{"gate", "--observed", obs, "--policy", hostileKey}, false},
		{"not observed, text", []string{"drift", declared, "--format", "text", "--color", "never", "--stdio", "--", missing}, true},
		{"not observed, markdown", []string{"drift", declared, "--format", "markdown", "--stdio", "--", missing}, true},
		{"not observed, sarif", []string{"drift", declared, "--format", "sarif", "--stdio", "--", missing}, true},
		{"not observed, html", []string{"drift", declared, "--format", "html", "--stdio", "--", missing}, true},
	} {
		_, stdout, stderr := run(t, "", c.args...)
		text := stderr
		if c.out {
			text = stdout
		}
		switch {
		case strings.Contains(c.name, "markdown"):
			// Markdown escapes safetext's backslash once more: one
			// escape is \\u001b, two would be \\\\u001b.
			text = strings.ReplaceAll(text, `\\`, `\`)
		case strings.Contains(c.name, "sarif"):
			var v any
			if err := json.Unmarshal([]byte(stdout), &v); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			text = strings.Join(jsonStrings(v), "\n")
		case strings.Contains(c.name, "html"):
			// The escape's backslash is highlighted as one span.
			text = strings.NewReplacer(`<span class="esc">`, "", "</span>", "").Replace(text)
		}
		if strings.Contains(text, `\\`) {
			t.Errorf("%s: escaped twice:\n%s", c.name, text)
		}
		if !safetext.Shows(text, h) && !strings.Contains(text, safetext.Escape(h)) {
			t.Errorf("%s: the value is not shown escaped:\n%s", c.name, text)
		}
	}
}

func jsonStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, jsonStrings(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range x {
			out = append(out, jsonStrings(e)...)
		}
		return out
	}
	return nil
}

// TestLockCheckMarkdownInert: what a server sends (a tool's name, the
// message of its error) is never Markdown or HTML in lock check's
// Markdown report: not a link, an image or emphasis (found by the review:
// the not-observed, withheld and to-review lines were written as they
// came).
func TestLockCheckMarkdownInert(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	s1, u1 := mock(t, mockserver.Config{}, acmeV1)
	_, u2 := mock(t, mockserver.Config{}, acmeV1)
	lockAddOneTwo(t, lp, u1, u2)
	evil := "[Approve all](https://evil.example/x)"
	tools := loadMockTools(t, acmeV1)
	tools = append(tools, json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"<img src=x onerror=alert(1)>","inputSchema":{"type":"object"}}`, evil)))
	if err := s1.SetTools(tools); err != nil {
		t.Fatal(err)
	}
	// Server two now answers every request with a JSON-RPC error whose
	// message is Markdown and HTML.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req) != nil || len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%q}}`, req.ID, "<img src=x onerror=alert(1)> "+evil+" **trusted**")
	}))
	defer bad.Close()
	b, err := os.ReadFile(lp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lp, []byte(strings.ReplaceAll(string(b), u2, bad.URL+"/mcp")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, stderr := run(t, "", "lock", "check", "--lock", lp, "--format", "markdown")
	if !strings.Contains(out, "evil") || !strings.Contains(out, "trusted") {
		t.Fatalf("the report does not show the server's text at all:\n%s\n%s", out, stderr)
	}
	for _, active := range []string{"[Approve all](", "<img", "**trusted**"} {
		if strings.Contains(out, active) {
			t.Errorf("the Markdown report holds %q as the server sent it:\n%s", active, out)
		}
	}
}
