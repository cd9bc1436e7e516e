package proxy_test

import (
	"bytes"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/redact"
)

// postAs sends one message to the gateway at url (a session's when sid is
// not "", with auth as its Authorization when not "") and returns the
// response's headers and body.
func postAs(t *testing.T, url, body, sid, auth string) (http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header, string(b)
}

// On loopback without a listen token the gateway forwards a downstream's
// Authorization and redacts its credential from everything it writes. A
// client that sends one chosen to be ordinary text (a tool's name, the
// JSON every message holds) rewrites nothing: not another session's list
// and results, not the decision log's record of its own call (which it
// could otherwise erase from the audit trail).
func TestDownstreamAuthorizationRewritesNoOneElse(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	log := &logBuf{}
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up, ForwardAuthorization: true}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Secrets: &redact.Set{}, Log: proxy.NewDecisionLog(log)})
	const init = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	h, _ := postAs(t, url, init, "", "")
	victim := h.Get("Mcp-Session-Id")
	postAs(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, victim, "")
	if _, before := postAs(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, victim, ""); !strings.Contains(before, `"search_issues"`) {
		t.Fatalf("list: %s", before)
	}
	h, _ = postAs(t, url, init, "", `Bearer search_issues`)
	other := h.Get("Mcp-Session-Id")
	postAs(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, other, `Bearer search_issues`)
	postAs(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_issues","arguments":{"repo":"a/b","query":"x"}}}`, other, `Bearer search_issues`)
	postAs(t, url, init, "", `Bearer "jsonrpc":"2.0"`)
	_, list := postAs(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, victim, "")
	_, call := postAs(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_issues","arguments":{"repo":"a/b","query":"x"}}}`, victim, "")
	if strings.Contains(list, redact.Placeholder) || strings.Contains(call, redact.Placeholder) {
		t.Errorf("another session's Authorization rewrote the victim's answers:\nlist: %.300s\ncall: %.300s", list, call)
	}
	calls := 0
	for _, r := range log.records(t) {
		if r.Method == "tools/call" {
			calls++
			if r.Tool != "search_issues" {
				t.Errorf("the decision log lost the called tool's name: %+v", r)
			}
		}
	}
	if calls != 2 {
		t.Errorf("%d calls logged", calls)
	}
}

// A client that sends a fresh Authorization with each request leaves the
// gateway holding at most redact.MaxForwarded of them: each was kept for
// good and rebuilt the process's one set, a cost that grew with every
// value, for every session.
func TestDownstreamCredentialsBounded(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	secrets := &redact.Set{}
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up, ForwardAuthorization: true}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Secrets: secrets})
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`
	for i := range 3 * redact.MaxForwarded {
		req, _ := http.NewRequest("POST", url, strings.NewReader(list))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		req.Header.Set("Authorization", fmt.Sprintf("Bearer k%011dxQ7vR2mZ9pL4wT8yB3nC6", i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"search_issues"`) {
			t.Fatalf("list %d: %.200s", i, b)
		}
	}
	if n := secrets.ForwardedHeld(); n != redact.MaxForwarded {
		t.Errorf("%d downstream credentials held after %d, want %d", n, 3*redact.MaxForwarded, redact.MaxForwarded)
	}
}

// Issue 29, item 6: an upstream that hands the --header token back in a
// call result in a spelling that loses nothing of it (a hex token
// upper-cased, every byte percent-encoded, base32, reversed) hands none of
// it to the agent. One character per dash is not covered (README).
func TestLosslessSpellingsRedacted(t *testing.T) {
	const hexToken = "3f9a2b7c4d1e8f06a5b4c3d2e1f0a9b8"
	pct, rev := "", []byte(hexToken)
	for _, c := range []byte(hexToken) {
		pct += fmt.Sprintf("%%%02x", c)
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	forms := map[string]string{
		"upper": strings.ToUpper(hexToken), "percent": pct, "percent upper": strings.ToUpper(pct),
		"base32": base32.StdEncoding.EncodeToString([]byte(hexToken)), "reversed": string(rev),
	}
	tools, err := mockserver.LoadToolsFile(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mockserver.New(mockserver.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	fb, _ := json.Marshal(forms)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		out := bytes.ReplaceAll(rec.Body.Bytes(), []byte(`"text":"ok"`), []byte(`"text":"ok","_meta":`+string(fb)))
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(rec.Code)
		w.Write(out)
	}))
	t.Cleanup(func() { ts.Close(); m.Close() })
	up := ts.URL + "/mcp"
	secrets := &redact.Set{}
	secrets.AddHeader("Authorization", "Bearer "+hexToken)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up, Headers: http.Header{"Authorization": {"Bearer " + hexToken}}},
		Mode: proxy.Enforce, Target: up, Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Secrets: secrets})
	obs, _ := listThrough(t, url, false, mcpclient.ToolCall{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"acme/x","query":"x"}`)})
	if len(obs.Calls) != 1 {
		t.Fatalf("calls: %+v", obs.Calls)
	}
	res := string(obs.Calls[0].Result)
	for name, f := range forms {
		if strings.Contains(res, f) {
			t.Errorf("the agent receives the secret spelled %s", name)
		}
	}
	if strings.Count(res, redact.Placeholder) != len(forms) {
		t.Errorf("%d placeholders in the result, want %d", strings.Count(res, redact.Placeholder), len(forms))
	}
}
