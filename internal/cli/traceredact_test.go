package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// TestProxySpansRedacted: an agent calls nope_<secret> through `mcpdrift
// proxy` in each mode, the secret being a --header value the gateway
// sends upstream or the agent's own Authorization credential. The reply,
// the decision log and stderr say [REDACTED], and so does every span the
// collector got: no byte of either secret in any export, request line or
// header it received.
func TestProxySpansRedacted(t *testing.T) {
	const upSecret = "tok_9f8e7d6c5b4aCLIUPSTREAM"
	const downSecret = "tok_1a2b3c4d5e6fCLIDOWNSTREAM"
	_, up := mock(t, mockserver.Config{PageSize: 2}, exampleV1)
	dir := t.TempDir()
	decl := filepath.Join(dir, "d.json")
	if code, _, stderr := run(t, "", "pin", "--url", up, "--server-id", "acme", "-o", decl); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	for _, mode := range []string{"observe", "audit", "enforce"} {
		t.Run(mode, func(t *testing.T) {
			col := collector(t, otlptest.Accept)
			logPath := filepath.Join(t.TempDir(), "log.ndjson")
			url, _, stop := runProxy(t, "--declared", decl, "--mode", mode, "--upstream-url", up, "--header", "X-Api-Key="+upSecret,
				"--listen", "127.0.0.1:0", "--otlp-endpoint", col.URL(), "--decision-log", logPath)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Headers: http.Header{"Authorization": {"Bearer " + downSecret}},
				Calls: []mcpclient.ToolCall{
					{Name: "nope_" + upSecret, Arguments: json.RawMessage(`{}`)},
					{Name: "nope_" + downSecret, Arguments: json.RawMessage(`{}`)},
				}})
			if err != nil {
				t.Fatalf("through the gateway: %v", err)
			}
			code, stderr := stop()
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			n := 0
			for _, sp := range col.Spans() {
				if sp.Kind == "SERVER" && sp.Name == "tools/call nope_"+redact.Placeholder {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%d SERVER spans named tools/call nope_%s, want 2", n, redact.Placeholder)
			}
			var got bytes.Buffer
			for _, r := range col.Requests() {
				got.WriteString(r.URL.String())
				_ = r.Header.Write(&got)
			}
			for _, b := range col.Bodies() {
				got.Write(b)
			}
			noSecretIn(t, "what the collector got", got.Bytes(), upSecret, downSecret)
			noSecretIn(t, "stderr", []byte(stderr), upSecret, downSecret)
			for p, b := range everyFile(t, filepath.Dir(logPath)) {
				noSecretIn(t, p, b, upSecret, downSecret)
			}
			for _, c := range obs.Calls {
				noSecretIn(t, "a reply", []byte(c.Err), upSecret, downSecret)
			}
		})
	}
}
