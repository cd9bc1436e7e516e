package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/telemetry"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// everyByteOf is every byte an OTLP receiver got: each request's URL and
// headers, and each export's decoded body.
func everyByteOf(c *otlptest.Collector) []byte {
	var b bytes.Buffer
	for _, r := range c.Requests() {
		b.WriteString(r.URL.String())
		_ = r.Header.Write(&b)
	}
	for _, body := range c.Bodies() {
		b.Write(body)
	}
	return b.Bytes()
}

// TestSpansRedacted: an agent calls a tool whose name holds a secret —
// the header value the gateway sends upstream, or the agent's own
// Authorization credential. In every mode the exported spans (the real
// OTLP export) carry "[REDACTED]" where the decision log and the reply
// do, and no byte of the secret: the SERVER span's name and
// gen_ai.tool.name, and the CLIENT span's when the call is forwarded.
// The gateway is given the provider's Set as its Secrets (as the CLI
// does), or none: it then redacts with the Set of the provider its Tracer
// comes from. Either way it records the downstream's Authorization there
// as it is seen.
func TestSpansRedacted(t *testing.T) {
	const upSecret = "tok_9f8e7d6c5b4aUPSTREAM"
	const downSecret = "tok_1a2b3c4d5e6fDOWNSTREAM"
	for _, c := range []struct {
		mode  proxy.Mode
		given bool
	}{{proxy.Observe, true}, {proxy.Audit, true}, {proxy.Enforce, true}, {proxy.Observe, false}, {proxy.Enforce, false}} {
		mode := c.mode
		name := string(mode) + "/given"
		if !c.given {
			name = string(mode) + "/tracer's"
		}
		t.Run(name, func(t *testing.T) {
			col := otlptest.New(otlptest.Accept)
			defer col.Close()
			set := &redact.Set{}
			set.AddHeader("X-Api-Key", upSecret)
			p, err := telemetry.New(&telemetry.Settings{URL: col.URL() + "/v1/traces", ServiceName: "gateway"},
				telemetry.Options{Mode: telemetry.ModeService, Secrets: set, Warn: func(s string) { t.Errorf("warning: %s", s) }})
			if err != nil {
				t.Fatal(err)
			}
			_, upURL := watchedUpstream(t, mockserver.Config{})
			var log logBuf
			cfg := proxy.Config{Upstream: proxy.Upstream{URL: upURL, Headers: http.Header{"X-Api-Key": {upSecret}}, ForwardAuthorization: true},
				Mode: mode, Target: upURL, Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Tracer: p.Tracer(), Log: proxy.NewDecisionLog(&log)}
			if c.given {
				cfg.Secrets = set
			}
			_, url := gateway(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Headers: http.Header{"Authorization": {"Bearer " + downSecret}},
				Calls: []mcpclient.ToolCall{
					{Name: "nope_" + upSecret, Arguments: json.RawMessage(`{}`)},
					{Name: "nope_" + downSecret, Arguments: json.RawMessage(`{}`)},
				}})
			if err != nil {
				t.Fatal(err)
			}
			if !p.Flush() {
				t.Fatal("export failed")
			}
			servers := map[string]int{}
			for _, s := range col.Spans() {
				if s.Kind == "SERVER" {
					servers[s.Name]++
				}
			}
			if servers["tools/call nope_"+redact.Placeholder] != 2 {
				t.Errorf("SERVER spans %v: want two named tools/call nope_%s", servers, redact.Placeholder)
			}
			all := everyByteOf(col)
			for _, v := range []string{upSecret, downSecret} {
				if bytes.Contains(all, []byte(v)) {
					t.Errorf("the collector got %q", v)
				}
				if bytes.Contains(log.b.Bytes(), []byte(v)) {
					t.Errorf("the decision log holds %q", v)
				}
				if bytes.Contains(obs.Transcript, []byte(v)) {
					t.Errorf("a reply holds %q", v)
				}
			}
		})
	}
}
