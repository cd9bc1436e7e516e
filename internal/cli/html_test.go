package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// checkPage: one HTML page with the strict policy and no script; each
// card's description diff is a word diff read from the definitions (an
// <ins> run holding the rug pull's appended instruction), not the
// record's one-line detail.
func checkPage(t *testing.T, what, out string, withDefinitions bool) {
	t.Helper()
	if !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;none&#39;`) {
		t.Fatalf("%s: not the HTML page:\n%.500s", what, out)
	}
	if strings.Contains(strings.ToLower(out), "<script") {
		t.Errorf("%s: a script element", what)
	}
	for _, want := range []string{`add_deploy_key`, `search_issues`, `<details class="card`} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: no %q", what, want)
		}
	}
	ins := strings.Contains(out, "<ins>&lt;IMPORTANT&gt;Before calling any other tool")
	if ins != withDefinitions {
		t.Errorf("%s: the description's word diff from the definitions: %v, want %v", what, ins, withDefinitions)
	}
	// A new parameter's own declaration (only the definitions have it).
	decl := strings.Contains(out, "<dt>description</dt><dd>none</dd>")
	if decl != withDefinitions {
		t.Errorf("%s: the new parameter's declaration: %v, want %v", what, decl, withDefinitions)
	}
}

func TestHTMLDiff(t *testing.T) {
	code, out, stderr := run(t, "", "diff", exampleV1, exampleV2, "--format", "html", "--profile", "fail-closed")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkPage(t, "diff", out, true)
	if !strings.Contains(out, `<span class="badge dec-deny">DENY</span>`) {
		t.Error("diff: the denied tool's decision is not shown")
	}
}

// gate --format html: with the two snapshots the cards have the readable
// deltas; without them, what the report says.
func TestHTMLGate(t *testing.T) {
	dir := t.TempDir()
	decl := filepath.Join(dir, "declared.json")
	if code, _, stderr := run(t, "", "pin", "--input", exampleV1, "--server-id", "acme-github", "-o", decl); code != 0 {
		t.Fatal(stderr)
	}
	obs, osnap := filepath.Join(dir, "observed.json"), filepath.Join(dir, "observed.snapshot.json")
	if code, _, stderr := run(t, "", "observe", "--input", exampleV2, "--server-id", "acme-github", "-o", obs, "--snapshot", osnap, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	code, out, stderr := run(t, "", "gate", "--observed", obs, "--declared", decl, "--declared-snapshot", snapshotPathFor(decl), "--observed-snapshot", osnap, "--format", "html")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkPage(t, "gate with snapshots", out, true)
	if !strings.Contains(out, `<span class="badge dec-review">REVIEW</span>`) {
		t.Error("gate: the decisions are not shown")
	}
	code, out, stderr = run(t, "", "gate", "--observed", obs, "--declared", decl, "--format", "html")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "mcp_tool_description_changed") || strings.Contains(out, "<ins>") {
		t.Errorf("gate without snapshots: the digest findings, no word diff:\n%.2000s", out)
	}
}

// drift --format html against a live server: the served definitions give
// the readable deltas; hostile names are text.
func TestHTMLDrift(t *testing.T) {
	_, url := mock(t, mockserver.Config{}, exampleV2)
	code, out, stderr := run(t, "", "drift", exampleV1, "--url", url, "--format", "html", "--skip-second-connection", "--skip-auth-probe")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkPage(t, "drift", out, true)

	dir := t.TempDir()
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	mf := writeFile(t, dir, "hostile.json", []byte(`[{"name":"evil`+evil+`\u202e","description":"`+evil+`","inputSchema":{"type":"object","properties":{"p`+evil+`":{"type":"string","description":"`+evil+`"}}}}]`))
	declared := writeFile(t, dir, "declared.json", []byte(`[{"name":"ok","inputSchema":{"type":"object"}}]`))
	_, url = mock(t, mockserver.Config{}, mf)
	code, out, stderr = run(t, "", "drift", declared, "--url", url, "--format", "html", "--skip-second-connection", "--skip-auth-probe")
	if code != 1 {
		t.Fatalf("hostile: exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "<script>") || strings.Contains(out, "<img") || strings.Contains(out, "\u202e") {
		t.Errorf("hostile: raw markup or bidi on the page")
	}
	if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("hostile: the name is not shown as text")
	}
}

func TestHTMLDemo(t *testing.T) {
	code, out, stderr := run(t, "", "demo", "--format", "html")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkPage(t, "demo", out, true)
	if strings.Count(out, `<section class="report"`) != 2 || !strings.Contains(out, "mcpdrift drift") {
		t.Error("demo: not one page with the gate and the drift sections")
	}
}
