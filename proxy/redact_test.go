package proxy_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/redact"
)

// upstreamToken is the --header credential of the tests below: its
// letters and digits look random, as an issued key's do.
const upstreamToken = "tok_9f8e7d6c5b4a3Zq8Wm3Rt7Yp2Xk4Nb6Vc1"

// echoingUpstream serves exampleV1 and a tool named get_{{TAIL}}, and
// echoes the Authorization header it was sent: {{TAIL}} is its last 20
// characters, and every tools/call result's text ("ok") is its base64, two
// bytes into a blob.
func echoingUpstream(t *testing.T) string {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	tools = append(tools, json.RawMessage(`{"name":"get_{{TAIL}}","description":"Gets.","inputSchema":{"type":"object"}}`))
	m, err := mockserver.New(mockserver.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		if len(cred) >= 20 {
			out = bytes.ReplaceAll(out, []byte("{{TAIL}}"), []byte(cred[len(cred)-20:]))
			blob := base64.StdEncoding.EncodeToString([]byte("\x00\x01" + cred + "\x02"))
			out = bytes.ReplaceAll(out, []byte(`"text":"ok"`), []byte(`"text":"`+blob+`","_meta":{"echo":"`+escapeAll(cred)+`"}`))
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(rec.Code)
		w.Write(out)
	}))
	t.Cleanup(func() { ts.Close(); m.Close() })
	return ts.URL + "/mcp"
}

// escapeAll spells every character of s as a JSON \u escape: the bytes
// hold none of s, a reader decodes all of it.
func escapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(`\u` + strconv.FormatInt(int64(0x10000+r), 16)[1:])
	}
	return b.String()
}

// tee keeps a copy of every byte a handler writes.
type tee struct {
	http.ResponseWriter
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w tee) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w tee) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w tee) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return w.ResponseWriter.(http.Hijacker).Hijack()
}

// tokenPieces are MinRun characters of the token's run of letters and
// digits and of its base64 at each alignment (the characters that hold
// only its bits), in either alphabet.
func tokenPieces() []string {
	forms := []string{upstreamToken[4:]}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for a := range 3 {
			e := enc.EncodeToString(append(make([]byte, a), upstreamToken...))
			forms = append(forms, e[(8*a+5)/6:8*(a+len(upstreamToken))/6])
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

// Issue 29, item 6: an upstream that echoes the --header token
// base64-encoded into a tools/call result (enforce, audit) and names a
// tool with its last 20 characters (audit, observe) hands none of it to
// the agent, the decision log or the observed record as the CLI writes it.
func TestEncodedAndPartialEchoesRedacted(t *testing.T) {
	up := echoingUpstream(t)
	for _, mode := range []proxy.Mode{proxy.Enforce, proxy.Audit, proxy.Observe} {
		t.Run(string(mode), func(t *testing.T) {
			secrets := &redact.Set{}
			secrets.AddHeader("Authorization", "Bearer "+upstreamToken)
			var log logBuf
			var omu sync.Mutex
			var observed []byte
			cfg := proxy.Config{Upstream: proxy.Upstream{URL: up, Headers: http.Header{"Authorization": {"Bearer " + upstreamToken}}},
				Mode: mode, Target: up, ServerID: "acme", Log: proxy.NewDecisionLog(&log), Secrets: secrets,
				OnObserved: func(o *manifest.Observed) {
					b, err := manifest.MarshalArtifact(o)
					if err != nil {
						t.Error(err)
					}
					omu.Lock()
					observed = secrets.Bytes(b) // as the CLI writes --observed-out
					omu.Unlock()
				}}
			if mode != proxy.Observe {
				cfg.Baseline = baselineOf(t, exampleV1, manifest.Identity{})
			}
			g, err := proxy.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var down bytes.Buffer
			h := g.Handler(proxy.HTTPOptions{})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(tee{w, &mu, &down}, r)
			}))
			t.Cleanup(func() { ts.Close(); g.Close() })
			obs, tl := listThrough(t, ts.URL+"/mcp", false, mcpclient.ToolCall{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"acme/x","query":"x"}`)})

			mu.Lock()
			got := down.String()
			mu.Unlock()
			omu.Lock()
			rec := string(observed)
			omu.Unlock()
			for what, text := range map[string]string{"the downstream bytes": got, "the decision log": log.b.String(), "the observed record": rec} {
				for _, p := range tokenPieces() {
					if strings.Contains(text, p) {
						t.Errorf("%s holds %q: %s", what, p, text)
						break
					}
				}
			}
			if !strings.Contains(got, redact.Placeholder) || mode != proxy.Observe && !strings.Contains(log.b.String(), "tools/call") {
				t.Errorf("the test saw nothing: downstream %q, log %q", got, log.b.String())
			}
			wantTool := mode != proxy.Enforce // enforce hides the undeclared tool
			if names := strings.Join(names(tl), " "); strings.Contains(names, "get_[REDACTED]") != wantTool {
				t.Errorf("served %s", names)
			}
			if mode != proxy.Observe {
				if len(obs.Calls) != 1 || !strings.Contains(string(obs.Calls[0].Result), `"text":"AAF`+redact.Placeholder) {
					t.Errorf("the call's result: %+v", obs.Calls)
				}
				// What the agent decodes: the JSON-escaped echo too.
				var decoded any
				_ = json.Unmarshal(obs.Calls[0].Result, &decoded)
				text, _ := json.Marshal(decoded)
				for _, p := range tokenPieces() {
					if strings.Contains(string(text), p) {
						t.Errorf("the agent decodes %q from the result: %s", p, obs.Calls[0].Result)
						break
					}
				}
				if !strings.Contains(string(text), `"echo":"[REDACTED]"`) {
					t.Errorf("the escaped echo: %s", text)
				}
			}
			if mode != proxy.Enforce && !strings.Contains(rec, `"get_[REDACTED]"`) {
				t.Errorf("the observed record: %s", rec)
			}
		})
	}
}
