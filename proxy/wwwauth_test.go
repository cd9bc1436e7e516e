package proxy_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/redact"
)

// An upstream that answers 401/403 with a WWW-Authenticate challenge
// echoing the --header credential (in error_description, as sent or in
// base64) does not hand it to the agent: the challenge is relayed, its
// secrets redacted.
func TestWWWAuthenticateEchoesTheHeaderSecret(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="token `+cred+` expired (`+base64.StdEncoding.EncodeToString([]byte(cred))+`)"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(up.Close)
	secrets := &redact.Set{}
	secrets.AddHeader("Authorization", "Bearer "+upstreamToken)
	for _, mode := range []proxy.Mode{proxy.Enforce, proxy.Audit, proxy.Observe} {
		t.Run(string(mode), func(t *testing.T) {
			cfg := proxy.Config{Upstream: proxy.Upstream{URL: up.URL, Headers: http.Header{"Authorization": {"Bearer " + upstreamToken}}},
				Mode: mode, Target: up.URL, Secrets: secrets}
			if mode != proxy.Observe {
				cfg.Baseline = baselineOf(t, exampleV1, manifest.Identity{})
			}
			_, url := gateway(t, cfg)
			req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			all := resp.Header.Get("WWW-Authenticate") + "\n" + string(body)
			if resp.StatusCode != 401 {
				t.Fatalf("status %d: %s", resp.StatusCode, all)
			}
			for _, p := range append(tokenPieces(), upstreamToken) {
				if strings.Contains(all, p) {
					t.Fatalf("the agent receives the --header secret (%q) in: %s", p, all)
				}
			}
		})
	}
}
