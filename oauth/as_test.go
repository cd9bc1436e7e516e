package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// testAS is an authorization server and a protected resource on loopback,
// each configurable to misbehave.
type testAS struct {
	t  *testing.T
	as *httptest.Server
	rs *httptest.Server

	mu sync.Mutex
	// behaviour
	meta        map[string]any // overrides of the AS metadata
	tokenBody   func() string  // the token response (default: a fresh token)
	regAnswer   map[string]any // overrides of the registration answer
	redirectISS string         // "" correct, "-" none, else this
	scopeNeeded string         // what the resource asks for in 401s
	stepUp      string         // tools/call... every request with a token gets 403 asking this
	// observed
	authRequests  []url.Values
	tokenRequests []url.Values
	tokenAuth     []string
	registrations int
	challenge     string
	tokens        map[string]bool
	n             int
}

func newTestAS(t *testing.T) *testAS {
	a := &testAS{t: t, tokens: map[string]bool{}}
	a.as = httptest.NewServer(http.HandlerFunc(a.serveAS))
	a.rs = httptest.NewServer(http.HandlerFunc(a.serveRS))
	t.Cleanup(a.as.Close)
	t.Cleanup(a.rs.Close)
	return a
}

func (a *testAS) mcpURL() string { return a.rs.URL + "/mcp" }

func (a *testAS) metadata() map[string]any {
	m := map[string]any{
		"issuer":                                         a.as.URL,
		"authorization_endpoint":                         a.as.URL + "/authorize",
		"token_endpoint":                                 a.as.URL + "/token",
		"registration_endpoint":                          a.as.URL + "/register",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic", "client_secret_post"},
		"authorization_response_iss_parameter_supported": true,
	}
	for k, v := range a.meta {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (a *testAS) serveAS(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, 200, a.metadata())
	case "/authorize":
		q := r.URL.Query()
		a.authRequests = append(a.authRequests, q)
		a.challenge = q.Get("code_challenge")
		red, _ := url.Parse(q.Get("redirect_uri"))
		v := red.Query()
		v.Set("code", "code-"+fmt.Sprint(len(a.authRequests))+"-abcdefghijkl")
		v.Set("state", q.Get("state"))
		switch a.redirectISS {
		case "":
			v.Set("iss", a.as.URL)
		case "-":
		default:
			v.Set("iss", a.redirectISS)
		}
		red.RawQuery = v.Encode()
		http.Redirect(w, r, red.String(), http.StatusFound)
	case "/token":
		_ = r.ParseForm()
		a.tokenRequests = append(a.tokenRequests, r.PostForm)
		a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
		if r.PostForm.Get("grant_type") == "authorization_code" {
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if base64.RawURLEncoding.EncodeToString(sum[:]) != a.challenge {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
		}
		if a.tokenBody != nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(a.tokenBody()))
			return
		}
		a.n++
		tok := fmt.Sprintf("access-token-%d-%s", a.n, strings.Repeat("x", 16))
		a.tokens[tok] = true
		scope := r.PostForm.Get("scope")
		if scope == "" && len(a.authRequests) > 0 {
			scope = a.authRequests[len(a.authRequests)-1].Get("scope")
		}
		writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "refresh_token": fmt.Sprintf("refresh-token-%d-%s", a.n, strings.Repeat("y", 16)), "scope": scope})
	case "/register":
		a.registrations++
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		ans := map[string]any{"client_id": "dyn-client-1", "client_secret": "dyn-secret-abcdefghijklmnop", "redirect_uris": req["redirect_uris"], "token_endpoint_auth_method": req["token_endpoint_auth_method"]}
		for k, v := range a.regAnswer {
			ans[k] = v
		}
		writeJSON(w, 201, ans)
	default:
		http.NotFound(w, r)
	}
}

func (a *testAS) serveRS(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	prm := a.rs.URL + "/.well-known/oauth-protected-resource/mcp"
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		writeJSON(w, 200, map[string]any{"resource": a.mcpURL(), "authorization_servers": []string{a.as.URL}})
	case "/mcp":
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !a.tokens[tok] {
			ch := `Bearer resource_metadata="` + prm + `"`
			if a.scopeNeeded != "" {
				ch += `, scope="` + a.scopeNeeded + `"`
			}
			w.Header().Set("WWW-Authenticate", ch)
			w.WriteHeader(401)
			return
		}
		if a.stepUp != "" {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+a.stepUp+`", resource_metadata="`+prm+`"`)
			w.WriteHeader(403)
			return
		}
		_, _ = w.Write([]byte("ok"))
	default:
		http.NotFound(w, r)
	}
}

// openBrowser follows the authorization URL as a browser would: the
// authorization endpoint's redirect leads to the loopback listener.
func openBrowser(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// get sends a GET to url through s as mcpclient's authTransport does.
func get(t *testing.T, s *Session, target string) (int, error) {
	t.Helper()
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err := s.Authorize(req); err != nil {
			return 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		if resp.StatusCode != 401 && resp.StatusCode != 403 || attempt == 2 {
			return resp.StatusCode, nil
		}
		retry, err := s.Challenged(ctx, req, resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
		if err != nil {
			return resp.StatusCode, err
		}
		if !retry {
			return resp.StatusCode, nil
		}
	}
}
