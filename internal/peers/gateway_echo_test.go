package peers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/telemetry"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// echoToken is the credential the gateway sends the upstream: its letters
// and digits look random, as an issued key's do.
const echoToken = "tok_Zq8Wm3Rt7Yp2Xk4Nb6Vc1Hs9Lf5Dg"

// TestGatewayEchoesAndSpans: an mcp-go server that echoes the gateway's
// credential — base64 inside a blob, split in two halves across two
// strings, a tool named with its last 20 characters — and an agent that
// calls a tool named after it, with every span exported over OTLP. In
// enforce and audit the agent's bytes, the decision log and every byte the
// collector got hold none of the token's pieces; the upstream's own log
// shows the echoing tool ran (the echo was made) and the token-named call
// never reached it.
func TestGatewayEchoesAndSpans(t *testing.T) {
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	s := mcpgoserver.NewMCPServer("echo-peer", "1.0.0", mcpgoserver.WithToolCapabilities(true))
	s.AddTool(mcpgo.NewTool("whoami", mcpgo.WithDescription("Says who called.")), func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		_, cred, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		log.record("whoami", map[string]bool{"credential": cred != ""})
		blob := base64.StdEncoding.EncodeToString([]byte("\x00" + cred + "\x01\x02"))
		half := len(cred) / 2
		return &mcpgo.CallToolResult{Content: []mcpgo.Content{
			mcpgo.NewTextContent(blob), mcpgo.NewTextContent(cred[:half]), mcpgo.NewTextContent(cred[half:]),
		}}, nil
	})
	s.AddTool(mcpgo.NewTool("get_"+echoToken[len(echoToken)-20:], mcpgo.WithDescription("Gets.")), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("ok"), nil
	})
	up := serveHTTP(t, mcpgoserver.NewStreamableHTTPServer(s))
	pin := withoutTools(t, pinServer(t, &pinned{label: "echo", url: up}), "get_"+echoToken[len(echoToken)-20:])
	pieces := echoPieces()
	for _, mode := range []proxy.Mode{proxy.Enforce, proxy.Audit} {
		t.Run(string(mode), func(t *testing.T) {
			col := otlptest.New(otlptest.Accept)
			defer col.Close()
			secrets := &redact.Set{}
			secrets.AddHeader("Authorization", "Bearer "+echoToken)
			p, err := telemetry.New(&telemetry.Settings{URL: col.URL() + "/v1/traces", ServiceName: "gateway"},
				telemetry.Options{Mode: telemetry.ModeService, Secrets: secrets})
			if err != nil {
				t.Fatal(err)
			}
			var dlog bytes.Buffer
			var dmu atomicWriter
			dmu.w = &dlog
			g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up, Headers: http.Header{"Authorization": {"Bearer " + echoToken}}},
				Mode: mode, Target: up, ServerID: "echo", Baseline: decide.NewBaseline("echo", pin.snap.Identity, pin.snap.Tools),
				Secrets: secrets, Tracer: p.Tracer(), Log: proxy.NewDecisionLog(&dmu)})
			if err != nil {
				t.Fatal(err)
			}
			var down bytes.Buffer
			var downMu atomicWriter
			downMu.w = &down
			h := g.Handler(proxy.HTTPOptions{})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(teeResponse{w, &downMu}, r)
			}))
			defer func() { ts.Close(); g.Close() }()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: ts.URL + "/mcp", Calls: []mcpclient.ToolCall{
				{Name: "whoami", Arguments: json.RawMessage(`{}`)},
				{Name: "nope_" + echoToken, Arguments: json.RawMessage(`{}`)},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if !p.Flush() {
				t.Fatal("the OTLP export failed")
			}
			var all bytes.Buffer
			for _, b := range col.Bodies() {
				all.Write(b)
			}
			if !bytes.Contains(all.Bytes(), []byte("tools/call nope_"+redact.Placeholder)) {
				t.Fatalf("no span of the token-named call was exported (the check would prove nothing)")
			}
			for what, text := range map[string][]byte{"the agent's bytes": down.Bytes(), "the transcript": obs.Transcript,
				"the decision log": dlog.Bytes(), "the OTLP export": all.Bytes()} {
				for _, piece := range pieces {
					if bytes.Contains(text, []byte(piece)) {
						t.Errorf("%s holds %q", what, piece)
						break
					}
				}
			}
			ran := readExecLog(t, log.path)
			if len(ran) == 0 || ran[len(ran)-1].Tool != "whoami" || !strings.Contains(string(ran[len(ran)-1].Args), `"credential":true`) {
				t.Fatalf("the upstream did not echo a credential (the check would prove nothing): %+v", ran)
			}
			if len(obs.Calls) != 2 || !strings.Contains(string(obs.Calls[0].Result), redact.Placeholder) {
				t.Errorf("calls: %+v", obs.Calls)
			}
		})
	}
}

// echoPieces are 12 characters of the token's run of letters and digits,
// and of its base64 at each alignment, in either alphabet.
func echoPieces() []string {
	run := echoToken[4:]
	forms := []string{run}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for a := range 3 {
			e := enc.EncodeToString(append(make([]byte, a), echoToken...))
			forms = append(forms, e[(8*a+5)/6:8*(a+len(echoToken))/6])
		}
	}
	var out []string
	for _, f := range forms {
		for i := 0; i+12 <= len(f); i++ {
			out = append(out, f[i:i+12])
		}
	}
	return out
}

// atomicWriter serializes writes to w.
type atomicWriter struct {
	busy atomic.Bool
	w    *bytes.Buffer
}

func (a *atomicWriter) Write(p []byte) (int, error) {
	for !a.busy.CompareAndSwap(false, true) {
		time.Sleep(time.Microsecond)
	}
	defer a.busy.Store(false)
	return a.w.Write(p)
}

// teeResponse keeps a copy of every byte a handler writes.
type teeResponse struct {
	http.ResponseWriter
	copy *atomicWriter
}

func (w teeResponse) Write(p []byte) (int, error) {
	_, _ = w.copy.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w teeResponse) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
