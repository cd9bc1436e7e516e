package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// invalidBaselines writes, beside a valid pin of the example in dir, one
// directory per baseline gate calls inconclusive: the declared baseline
// (d.json) and its snapshot (d.snapshot.json) with one edit. It returns
// the valid pin and the variants by name, with the validity code gate
// reports when given the snapshot.
func invalidBaselines(t *testing.T, up, dir string) (valid string, variants map[string]string, codes map[string]string) {
	t.Helper()
	valid = filepath.Join(dir, "valid", "d.json")
	os.MkdirAll(filepath.Dir(valid), 0o755)
	if code, _, stderr := run(t, "", "pin", "--url", up, "--server-id", "acme", "-o", valid); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	snap, _ := os.ReadFile(filepath.Join(dir, "valid", "d.snapshot.json"))
	src, _ := os.ReadFile(valid)
	edit := func(name string, f func(d *manifest.Declared)) {
		d, err := manifest.ParseDeclared(src, valid)
		if err != nil {
			t.Fatal(err)
		}
		f(d)
		b, _ := json.MarshalIndent(d, "", "  ")
		p := filepath.Join(dir, name, "d.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, b, 0o644)
		os.WriteFile(filepath.Join(dir, name, "d.snapshot.json"), snap, 0o644)
		variants[name] = p
	}
	variants, codes = map[string]string{}, map[string]string{}
	zero := "sha256:" + strings.Repeat("0", 64)
	edit("duplicate", func(d *manifest.Declared) {
		d.Tools = append(d.Tools, d.Tools[0])
		d.ManifestDigest = manifest.ManifestDigest(d.NameDigests())
	})
	codes["duplicate"] = manifest.BaselineAmbiguous
	edit("edited-digest", func(d *manifest.Declared) { d.Tools[1].ToolDigest = zero })
	codes["edited-digest"] = manifest.BaselineDigestMismatch
	edit("snapshot-disagrees", func(d *manifest.Declared) {
		d.Tools[1].ToolDigest = zero
		d.ManifestDigest = manifest.ManifestDigest(d.NameDigests())
	})
	codes["snapshot-disagrees"] = manifest.BaselineDefinitionsMismatch
	return valid, variants, codes
}

// gatewayWithheld checks, through a running gateway, that nothing is
// served, a call is refused as withheld before it reaches the upstream
// (whose log is read from before on), and /healthz is 503 saying why.
func gatewayWithheld(t *testing.T, mock *mockserver.Server, before int, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Calls: []mcpclient.ToolCall{{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"a/b","query":"x"}`)}}})
	if err != nil {
		t.Fatalf("through the gateway: %v", err)
	}
	if tl, _ := manifest.ParseToolList(obs.Transcript); tl == nil || len(tl.Tools) != 0 {
		t.Errorf("served tools from an invalid baseline: %s", obs.Transcript)
	}
	if len(obs.Calls) != 1 || !strings.Contains(obs.Calls[0].Message, "the server is withheld") {
		t.Errorf("the call: %+v", obs.Calls)
	}
	for _, e := range mock.Log()[before:] {
		if e.Method == "tools/call" {
			t.Error("the upstream saw a call")
		}
	}
	if code, body := healthz(t, url); code != http.StatusServiceUnavailable || !strings.Contains(body, "the baseline is not valid") {
		t.Errorf("/healthz: %d %s", code, body)
	}
}

func healthz(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestProxyInvalidBaseline: a declared baseline that gate calls
// inconclusive (a tool listed twice, a tool_digest edited so the entries
// no longer add up, a snapshot beside it that is not its tools) withholds
// the server in `mcpdrift proxy`, at start and when the file is replaced
// while it runs: nothing served, a call refused before it reaches the
// upstream, /healthz 503, stderr and the decision log saying why. Before,
// the gateway served the first two at start, refused to start on the
// third, and a reload to any of them kept the old baseline in force.
func TestProxyInvalidBaseline(t *testing.T) {
	mock, up := mock(t, mockserver.Config{}, exampleV1)
	dir := t.TempDir()
	obs := filepath.Join(dir, "o.json")
	obsSnap := filepath.Join(dir, "o.snapshot.json")
	if code, _, stderr := run(t, "", "observe", "--input", exampleV1, "--server-id", "acme", "--snapshot", obsSnap, "-o", obs); code != 0 {
		t.Fatalf("observe: %d %s", code, stderr)
	}
	valid, variants, codes := invalidBaselines(t, up, dir)
	for name, decl := range variants {
		t.Run(name+"/gate", func(t *testing.T) {
			code, out, stderr := run(t, "", "gate", "--format", "json", "--observed", obs, "--declared", decl, "--declared-snapshot", filepath.Join(filepath.Dir(decl), "d.snapshot.json"),
				"--observed-snapshot", obsSnap, "--format", "json")
			if code != 3 || !strings.Contains(out, codes[name]) {
				t.Errorf("gate: exit %d, want 3 with %s: %s %s", code, codes[name], out, stderr)
			}
		})
		t.Run(name+"/start", func(t *testing.T) {
			logf := filepath.Join(t.TempDir(), "log.ndjson")
			url, _, stop := runProxy(t, "--declared", decl, "--upstream-url", up, "--listen", "127.0.0.1:0", "--decision-log", logf)
			gatewayWithheld(t, mock, mock.LogTotal(), url)
			code, stderr := stop()
			log, _ := os.ReadFile(logf)
			if code != 0 || !strings.Contains(stderr, "NOT VALID") || !strings.Contains(string(log), `"baseline_invalid"`) || !strings.Contains(string(log), codes[name]) {
				t.Errorf("exit %d, stderr %s, log %s", code, stderr, log)
			}
		})
		t.Run(name+"/reload", func(t *testing.T) {
			t.Parallel()
			live := filepath.Join(t.TempDir(), "d.json")
			cp := func(from string) {
				for _, f := range []string{"d.json", "d.snapshot.json"} {
					b, _ := os.ReadFile(filepath.Join(filepath.Dir(from), f))
					os.WriteFile(filepath.Join(filepath.Dir(live), f), b, 0o644)
				}
			}
			cp(valid)
			url, _, stop := runProxy(t, "--declared", live, "--upstream-url", up, "--listen", "127.0.0.1:0")
			waitHealth(t, url, http.StatusOK)
			cp(decl)
			waitHealth(t, url, http.StatusServiceUnavailable)
			gatewayWithheld(t, mock, mock.LogTotal(), url)
			cp(valid)
			waitHealth(t, url, http.StatusOK)
			if code, stderr := stop(); code != 0 || !strings.Contains(stderr, "the baseline file changed: the baseline is NOT VALID") {
				t.Errorf("exit %d: %s", code, stderr)
			}
		})
	}
}

// waitHealth waits until the gateway's /healthz answers want.
func waitHealth(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, body := healthz(t, url)
		if code == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz: %d %s, want %d", code, body, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestProxyLockInvalidReload: a lock whose entry fails the baseline's
// validity (a tool_digest edited) is refused at start — the upstream
// itself comes from the lock — and, replacing a good one while the
// gateway runs, withholds the server until a good lock is back. Before,
// the reload kept the old baseline in force.
func TestProxyLockInvalidReload(t *testing.T) {
	mock, up := mock(t, mockserver.Config{}, exampleV1)
	lp := filepath.Join(t.TempDir(), "mcpdrift.lock")
	if code, _, stderr := run(t, "", "lock", "add", "acme", "--lock", lp, "--url", up, "--by", "alice@example.com"); code != 0 {
		t.Fatalf("lock add: %d %s", code, stderr)
	}
	good, _ := os.ReadFile(lp)
	i := strings.Index(string(good), `"tool_digest":"sha256:`) + len(`"tool_digest":"sha256:`)
	bad := []byte(string(good))
	bad[i] = "01"[map[bool]int{true: 1}[bad[i] == '0']]
	badPath := filepath.Join(t.TempDir(), "bad.lock")
	os.WriteFile(badPath, bad, 0o644)
	if code, _, stderr := run(t, "", "proxy", "--lock", badPath, "--server", "acme", "--listen", "127.0.0.1:0"); code != 2 || !strings.Contains(stderr, manifest.BaselineDigestMismatch) {
		t.Errorf("an invalid lock at start: exit %d: %s", code, stderr)
	}
	url, _, stop := runProxy(t, "--lock", lp, "--server", "acme", "--listen", "127.0.0.1:0")
	waitHealth(t, url, http.StatusOK)
	os.WriteFile(lp, bad, 0o644)
	waitHealth(t, url, http.StatusServiceUnavailable)
	gatewayWithheld(t, mock, mock.LogTotal(), url)
	os.WriteFile(lp, good, 0o644)
	waitHealth(t, url, http.StatusOK)
	if code, stderr := stop(); code != 0 || !strings.Contains(stderr, "NOT VALID") || !strings.Contains(stderr, manifest.BaselineDigestMismatch) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
