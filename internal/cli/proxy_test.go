package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// runProxy starts `mcpdrift proxy ARGS` and returns the downstream URL (and
// the metrics URL when asked for), a stop function that ends it and
// returns its exit code and stderr.
func runProxy(t *testing.T, args ...string) (url, metrics string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var mu sync.Mutex
	var stderr bytes.Buffer
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			stderr.WriteString(sc.Text() + "\n")
			mu.Unlock()
			lines <- sc.Text()
		}
		close(lines)
	}()
	done := make(chan int, 1)
	go func() {
		done <- MainContext(ctx, append([]string{"proxy"}, args...), strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	listen := regexp.MustCompile(`^mcpdrift proxy: listening on (http://\S+/mcp)$`)
	met := regexp.MustCompile(`^mcpdrift proxy: metrics on (http://\S+/metrics)$`)
	wantMetrics := false
	for _, a := range args {
		if a == "--metrics-listen" {
			wantMetrics = true
		}
	}
	deadline := time.After(10 * time.Second)
	for url == "" || (wantMetrics && metrics == "") {
		select {
		case l, ok := <-lines:
			if !ok {
				code := <-done
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("proxy exited %d before listening: %s", code, stderr.String())
			}
			if m := listen.FindStringSubmatch(l); m != nil {
				url = m[1]
			}
			if m := met.FindStringSubmatch(l); m != nil {
				metrics = m[1]
			}
		case <-deadline:
			t.Fatal("proxy did not say where it listens")
		}
	}
	go func() {
		for range lines {
		}
	}()
	stopped := false
	stop = func() (int, string) {
		if stopped {
			return 0, ""
		}
		stopped = true
		cancel()
		code := <-done
		mu.Lock()
		defer mu.Unlock()
		return code, stderr.String()
	}
	t.Cleanup(func() { stop() })
	return url, metrics, stop
}

// The command end to end: pin a live server, run the gateway in front of
// it, list and call through it as a client would, scrape its metrics and
// health, and find the decision log and the observed record.
func TestProxyCommand(t *testing.T) {
	mock, up := mock(t, mockserver.Config{PageSize: 2, ServerName: "acme-github", ServerVersion: "1.0.0"}, exampleV1)
	dir := t.TempDir()
	decl := filepath.Join(dir, "d.json")
	if code, _, stderr := run(t, "", "pin", "--url", up, "--server-id", "acme", "-o", decl); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	logf := filepath.Join(dir, "decisions.ndjson")
	obsf := filepath.Join(dir, "observed.json")
	url, metrics, stop := runProxy(t, "--declared", decl, "--upstream-url", up, "--listen", "127.0.0.1:0",
		"--decision-log", logf, "--observed-out", obsf, "--metrics-listen", "127.0.0.1:0", "--relist-interval", "1ns")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Calls: []mcpclient.ToolCall{
		{Name: "list_branches", Arguments: json.RawMessage(`{"repo":"a/b"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tl, _ := manifest.ParseToolList(obs.Transcript)
	if len(tl.Tools) != 5 || len(obs.Calls) != 1 || obs.Calls[0].Result == nil {
		t.Fatalf("through the gateway: %d tools, calls %+v", len(tl.Tools), obs.Calls)
	}
	// A rug pull: the next listing hides the changed tools.
	v2, _ := mockserver.LoadToolsFile(exampleV2)
	mock.SetTools(v2)
	obs, err = mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Calls: []mcpclient.ToolCall{
		{Name: "run_workflow_command", Arguments: json.RawMessage(`{"command":"id"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tl, _ = manifest.ParseToolList(obs.Transcript)
	if len(tl.Tools) != 1 || obs.Calls[0].Code != -32602 {
		t.Errorf("after the rug pull: %d tools, call %+v", len(tl.Tools), obs.Calls)
	}
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz: %v %v", err, resp)
	}
	resp, err = http.Get(metrics)
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range []string{"mcpdrift_proxy_requests_total", "mcpdrift_proxy_refused_calls_total", "mcpdrift_proxy_upstream_latency_seconds", "mcpdrift_proxy_tools_served", "mcpdrift_proxy_tools_hidden"} {
		if !bytes.Contains(mb, []byte(name)) {
			t.Errorf("metrics lack %s", name)
		}
	}
	code, stderr := stop()
	if code != 0 {
		t.Errorf("exit %d: %s", code, stderr)
	}
	// The operator sees, without the decision log, what is served and why
	// the rest is hidden: one line each time that changes.
	if !strings.Contains(stderr, `"acme": serving 5 of 5 tools`) || !strings.Contains(stderr, `"acme": serving 1 of 5 tools; hidden: 3 tool_changed_needs_review ("add_deploy_key", "create_or_update_file", "search_issues"), 1 tool_not_in_baseline ("run_workflow_command")`) {
		t.Errorf("stderr does not say what is served:\n%s", stderr)
	}
	lb, _ := os.ReadFile(logf)
	if !bytes.Contains(lb, []byte(`"decision":"deny"`)) || !bytes.Contains(lb, []byte(`"tool":"run_workflow_command"`)) {
		t.Errorf("decision log:\n%s", lb)
	}
	ob, _ := os.ReadFile(obsf)
	if !bytes.Contains(ob, []byte(`"assay.mcp_manifest_observed.v0"`)) {
		t.Errorf("observed record: %s", ob)
	}
}

func TestProxyUsage(t *testing.T) {
	dir := t.TempDir()
	short := writeFile(t, dir, "token", []byte("short"))
	bare := writeFile(t, dir, "bare.json", []byte(plainTools))
	for _, args := range [][]string{
		{"--upstream-url", "http://127.0.0.1:1/mcp", "--listen", "0.0.0.0:0"},
		{"--upstream-url", "http://127.0.0.1:1/mcp", "--mode", "audit"},
		{"--upstream-url", "http://127.0.0.1:1/mcp", "--mode", "sideways"},
		{"--upstream-url", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0", "--listen-token-file", short},
		{"--upstream-url", "http://127.0.0.1:1/mcp", "--declared", bare},
		{"--upstream-url", "http://user:pw-secret@127.0.0.1:1/mcp"},
		{"--upstream-url", "http://127.0.0.1:1/mcp", "--strict-arguments", "--no-strict-arguments"},
		{"--upstream-url", "http://127.0.0.1:1/mcp", "stray"},
	} {
		code, _, stderr := run(t, "", append([]string{"proxy"}, args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
}

// Secrets the gateway holds never reach the downstream, the decision log,
// the observed record or stderr, even from an upstream that reflects
// them into its tool list.
func TestProxySecrets(t *testing.T) {
	up := echoingServer(t, echoTools, "echo")
	dir := t.TempDir()
	logf := filepath.Join(dir, "decisions.ndjson")
	obsf := filepath.Join(dir, "observed.json")
	url, _, stop := runProxy(t, "--upstream-url", up+"?api_key="+apiKey, "--header", "Authorization=Bearer "+bearerToken,
		"--listen", "127.0.0.1:0", "--decision-log", logf, "--observed-out", obsf)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, "what the downstream got", obs.Transcript)
	if !bytes.Contains(obs.Transcript, []byte("[REDACTED]")) {
		t.Errorf("the reflected credential should be redacted, not absent: %s", obs.Transcript)
	}
	_, stderr := stop()
	assertNoSecret(t, "stderr", []byte(stderr))
	assertDirClean(t, dir)
}
