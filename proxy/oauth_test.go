package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/oauth"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// A gateway fronting a protected upstream serves its own protected
// resource metadata (the gateway as the resource, the upstream's
// authorization servers), and the upstream's challenges it relays name
// that metadata, never the upstream's.
func TestGatewayResourceMetadata(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://upstream.example/.well-known/oauth-protected-resource/mcp", scope="files:read", error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(up.Close)
	g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up.URL, ForwardAuthorization: true}, Mode: proxy.Observe, Target: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(proxy.HTTPOptions{ResourceMetadata: &proxy.ResourceMetadata{AuthorizationServers: []string{"https://as.example"}, ScopesSupported: []string{"files:read"}}}))
	t.Cleanup(func() { ts.Close(); g.Close() })

	resp, err := http.Get(ts.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m, err := oauth.ParseResourceMetadata(b)
	if err != nil || m.Resource != ts.URL+"/mcp" || m.AuthorizationServers[0] != "https://as.example" {
		t.Fatalf("metadata %s: %+v %v", b, m, err)
	}
	if !oauth.Covers(m.Resource, ts.URL+"/mcp") {
		t.Fatal("the gateway's metadata does not cover the gateway")
	}

	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer downstream-token-abcdefgh")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs, err := oauth.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	b2, _ := oauth.BearerOf(cs)
	if resp.StatusCode != 401 || err != nil || b2.ResourceMetadata != ts.URL+"/.well-known/oauth-protected-resource/mcp" || b2.Scope != "files:read" {
		t.Fatalf("status %d, challenge %q (%v)", resp.StatusCode, resp.Header.Values("WWW-Authenticate"), err)
	}
	_ = json.Valid
}

// --upstream-oauth: the gateway's upstream client holds its own token
// (client_credentials) and the downstream's Authorization is not
// forwarded.
func TestGatewayUpstreamOAuth(t *testing.T) {
	var as *httptest.Server
	as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": as.URL, "token_endpoint": as.URL + "/token", "grant_types_supported": []string{"client_credentials"}, "token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
		case "/token":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"gateway-token-abcdefghijkl","token_type":"Bearer","expires_in":600}`))
		}
	}))
	t.Cleanup(as.Close)
	var seen []string
	var up *httptest.Server
	up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": up.URL + "/mcp", "authorization_servers": []string{as.URL}})
			return
		}
		seen = append(seen, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer gateway-token-abcdefghijkl" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+up.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"u","version":"1"}}}`))
	}))
	t.Cleanup(up.Close)
	s, err := oauth.NewSession(oauth.Options{Mode: oauth.ModeClientCredentials, Client: oauth.ClientOptions{ID: "gw", Secret: "gw-secret-abcdefghijkl"}})
	if err != nil {
		t.Fatal(err)
	}
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up.URL + "/mcp", HTTPClient: &http.Client{Transport: mcpclientAuth(s)}}, Mode: proxy.Observe, Target: up.URL})
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer downstream-token-abcdefgh")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"serverInfo"`) {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	for _, a := range seen {
		if strings.Contains(a, "downstream-token") {
			t.Fatalf("the downstream's Authorization reached the upstream: %q", seen)
		}
	}
}

func mcpclientAuth(s *oauth.Session) http.RoundTripper { return mcpclient.NewAuthTransport(nil, s) }
