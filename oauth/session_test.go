package oauth

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/redact"
)

func loginSession(t *testing.T, sec *redact.Set, mut func(*Options)) *Session {
	t.Helper()
	o := Options{Mode: ModeLogin, Open: openBrowser, Secrets: sec, Store: &Store{Dir: filepath.Join(t.TempDir(), "oauth")}}
	if mut != nil {
		mut(&o)
	}
	s, err := NewSession(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoginDynamicRegistration(t *testing.T) {
	a := newTestAS(t)
	a.scopeNeeded = "mcp:read"
	sec := &redact.Set{}
	s := loginSession(t, sec, nil)
	code, err := get(t, s, a.mcpURL())
	if err != nil || code != 200 {
		t.Fatalf("code %d, err %v", code, err)
	}
	if a.registrations != 1 || len(a.authRequests) != 1 || len(a.tokenRequests) != 1 {
		t.Fatalf("registrations %d, authorizations %d, token requests %d", a.registrations, len(a.authRequests), len(a.tokenRequests))
	}
	q := a.authRequests[0]
	for k, want := range map[string]string{"resource": a.mcpURL(), "scope": "mcp:read", "code_challenge_method": "S256", "response_type": "code", "client_id": "dyn-client-1"} {
		if q.Get(k) != want {
			t.Errorf("authorization request %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if !strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
		t.Errorf("redirect_uri %q is not loopback", q.Get("redirect_uri"))
	}
	tr := a.tokenRequests[0]
	if tr.Get("resource") != a.mcpURL() || tr.Get("code_verifier") == "" {
		t.Errorf("token request %v lacks resource or code_verifier", tr)
	}
	// Every secret of the flow is in the run's set.
	for _, v := range []string{tr.Get("code_verifier"), tr.Get("code"), "access-token-1-" + strings.Repeat("x", 16), "refresh-token-1-" + strings.Repeat("y", 16), "dyn-secret-abcdefghijklmnop"} {
		if got := sec.String("value " + v + " end"); strings.Contains(got, v) {
			t.Errorf("secret %q is not redacted: %q", v, got)
		}
	}
	// A second session reads the cache: no new grant.
	s2, _ := NewSession(Options{Mode: ModeCached, Store: s.o.Store})
	if code, err := get(t, s2, a.mcpURL()); err != nil || code != 200 || len(a.tokenRequests) != 1 {
		t.Fatalf("cached: code %d, err %v, token requests %d", code, err, len(a.tokenRequests))
	}
	// Never to another resource: the token is not put on another origin's
	// or another path's request.
	for _, other := range []string{a.as.URL + "/mcp", a.rs.URL + "/other", a.rs.URL + "/mcpx"} {
		req, _ := http.NewRequest(http.MethodGet, other, nil)
		if err := s2.Authorize(req); err != nil || req.Header.Get("Authorization") != "" {
			t.Errorf("%s got Authorization %q (err %v)", other, req.Header.Get("Authorization"), err)
		}
	}
}

func TestCachedModeNeverLogsIn(t *testing.T) {
	a := newTestAS(t)
	s, _ := NewSession(Options{Mode: ModeCached, Store: &Store{Dir: t.TempDir() + "/o"}})
	_, err := get(t, s, a.mcpURL())
	if err == nil || !strings.Contains(err.Error(), "auth login") || len(a.authRequests) != 0 {
		t.Fatalf("err %v, authorizations %d", err, len(a.authRequests))
	}
}

func TestPreRegisteredAuthMethods(t *testing.T) {
	for _, c := range []struct {
		supported []string
		secret    string
		want      string
	}{
		{[]string{"client_secret_basic"}, "pre-secret-abcdefghijkl", AuthBasic},
		{[]string{"client_secret_post"}, "pre-secret-abcdefghijkl", AuthPost},
		{[]string{"none"}, "", AuthNone},
	} {
		t.Run(c.want, func(t *testing.T) {
			a := newTestAS(t)
			a.meta = map[string]any{"token_endpoint_auth_methods_supported": c.supported, "registration_endpoint": nil}
			s := loginSession(t, nil, func(o *Options) { o.Client = ClientOptions{ID: "pre-client", Secret: c.secret} })
			if code, err := get(t, s, a.mcpURL()); err != nil || code != 200 {
				t.Fatalf("code %d err %v", code, err)
			}
			f, h := a.tokenRequests[0], a.tokenAuth[0]
			switch c.want {
			case AuthBasic:
				if !strings.HasPrefix(h, "Basic ") || f.Get("client_secret") != "" {
					t.Errorf("basic: header %q form %v", h, f)
				}
			case AuthPost:
				if h != "" || f.Get("client_secret") != c.secret {
					t.Errorf("post: header %q form %v", h, f)
				}
			case AuthNone:
				if h != "" || f.Get("client_secret") != "" || f.Get("client_id") != "pre-client" {
					t.Errorf("none: header %q form %v", h, f)
				}
			}
		})
	}
}

func TestClientCredentials(t *testing.T) {
	a := newTestAS(t)
	sec := &redact.Set{}
	s, err := NewSession(Options{Mode: ModeClientCredentials, Client: ClientOptions{ID: "ci-client", Secret: "ci-secret-abcdefghijkl"}, Secrets: sec})
	if err != nil {
		t.Fatal(err)
	}
	if code, err := get(t, s, a.mcpURL()); err != nil || code != 200 {
		t.Fatalf("code %d err %v", code, err)
	}
	f := a.tokenRequests[0]
	if f.Get("grant_type") != "client_credentials" || f.Get("resource") != a.mcpURL() || len(a.authRequests) != 0 {
		t.Fatalf("token request %v, authorizations %d", f, len(a.authRequests))
	}
	if strings.Contains(sec.String("ci-secret-abcdefghijkl"), "ci-secret") {
		t.Error("the client secret is not a secret of the run")
	}
}

// Hostile: the same step-up forever is asked once, then refused; a
// growing one is bounded.
func TestStepUpBounded(t *testing.T) {
	a := newTestAS(t)
	a.scopeNeeded = "mcp:admin"
	a.stepUp = "mcp:admin"
	s := loginSession(t, nil, nil)
	_, err := get(t, s, a.mcpURL())
	if err == nil || len(a.authRequests) != 1 {
		t.Fatalf("same scope forever: err %v, %d authorizations", err, len(a.authRequests))
	}
	b := newTestAS(t)
	b.scopeNeeded = "a"
	s2 := loginSession(t, nil, nil)
	for i := 0; i < 6; i++ {
		b.mu.Lock()
		b.stepUp = fmt.Sprintf("s%d", i)
		b.mu.Unlock()
		_, _ = get(t, s2, b.mcpURL())
	}
	if n := len(b.authRequests); n > 1+DefaultMaxStepUps {
		t.Fatalf("%d authorizations for an endless step-up", n)
	}
}

// Hostile: metadata pointing the token endpoint at another origin or at
// plain HTTP is refused.
func TestMetadataEndpointsRefused(t *testing.T) {
	iss := "https://as.example"
	for name, doc := range map[string]string{
		"other origin":   `{"issuer":"https://as.example","token_endpoint":"https://evil.example/token","authorization_endpoint":"https://as.example/a"}`,
		"plain http":     `{"issuer":"https://as.example","token_endpoint":"http://as.example/token"}`,
		"other port":     `{"issuer":"https://as.example","token_endpoint":"https://as.example:8443/token"}`,
		"other issuer":   `{"issuer":"https://evil.example","token_endpoint":"https://evil.example/token"}`,
		"no token":       `{"issuer":"https://as.example"}`,
		"registration":   `{"issuer":"https://as.example","token_endpoint":"https://as.example/t","registration_endpoint":"https://x.example/r"}`,
		"trailing":       `{"issuer":"https://as.example","token_endpoint":"https://as.example/t"} {}`,
		"issuer variant": `{"issuer":"https://as.example/","token_endpoint":"https://as.example/t"}`,
	} {
		if _, err := ParseServerMetadata([]byte(doc), iss); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := checkEndpointScheme("http://127.0.0.1:9/token", false); err != nil {
		t.Errorf("loopback http refused for a loopback resource: %v", err)
	}
	if err := checkEndpointScheme("http://127.0.0.1:9/token", true); err == nil {
		t.Error("loopback http accepted for an https resource")
	}
	if err := checkEndpointScheme("http://10.0.0.1/token", false); err == nil {
		t.Error("plain http to a routable host accepted")
	}
}

// Hostile: an authorization server whose metadata names another issuer,
// or whose redirect carries another iss (or none while it says it sends
// one, or the issuer with a trailing slash), gets no token request.
func TestIssuerChecked(t *testing.T) {
	for name, c := range map[string]struct {
		meta map[string]any
		iss  string
	}{
		"metadata issuer":   {meta: map[string]any{"issuer": "https://attacker.example"}},
		"wrong iss":         {iss: "https://evil.example"},
		"missing iss":       {iss: "-"},
		"normalized iss":    {iss: "SLASH"},
		"unadvertised evil": {meta: map[string]any{"authorization_response_iss_parameter_supported": nil}, iss: "https://evil.example"},
	} {
		t.Run(name, func(t *testing.T) {
			a := newTestAS(t)
			a.meta, a.redirectISS = c.meta, c.iss
			if c.iss == "SLASH" {
				a.redirectISS = a.as.URL + "/"
			}
			s := loginSession(t, nil, nil)
			if _, err := get(t, s, a.mcpURL()); err == nil || len(a.tokenRequests) != 0 {
				t.Fatalf("err %v, %d token requests", err, len(a.tokenRequests))
			}
		})
	}
	// Not advertised and not sent: accepted.
	a := newTestAS(t)
	a.meta, a.redirectISS = map[string]any{"authorization_response_iss_parameter_supported": nil}, "-"
	if code, err := get(t, loginSession(t, nil, nil), a.mcpURL()); err != nil || code != 200 {
		t.Fatalf("no iss, not advertised: code %d err %v", code, err)
	}
}

// Hostile: a redirect to a non-loopback redirect_uri is refused, whether
// configured or registered by the server.
func TestRedirectMustBeLoopback(t *testing.T) {
	for _, r := range []string{"https://evil.example/cb", "http://evil.example/cb", "http://10.1.2.3:80/cb", "http://127.0.0.1:9/cb#f"} {
		if _, err := NewSession(Options{Mode: ModeLogin, Open: openBrowser, RedirectURI: r}); err == nil {
			t.Errorf("redirect %s accepted", r)
		}
	}
	a := newTestAS(t)
	a.regAnswer = map[string]any{"redirect_uris": []string{"https://evil.example/cb"}}
	if _, err := get(t, loginSession(t, nil, nil), a.mcpURL()); err == nil || len(a.authRequests) != 0 {
		t.Fatalf("a registration for another redirect: err %v, %d authorizations", err, len(a.authRequests))
	}
}

// Hostile: a huge token response, and lifetimes of 0 or less.
func TestTokenResponseRefused(t *testing.T) {
	for name, body := range map[string]string{
		"huge":     `{"access_token":"` + strings.Repeat("a", 2<<20) + `","token_type":"Bearer","expires_in":3600}`,
		"zero":     `{"access_token":"access-token-abcdefghijkl","token_type":"Bearer","expires_in":0}`,
		"negative": `{"access_token":"access-token-abcdefghijkl","token_type":"Bearer","expires_in":-5}`,
		"dpop":     `{"access_token":"access-token-abcdefghijkl","token_type":"DPoP","expires_in":60}`,
		"crlf":     `{"access_token":"access\r\nX: y","token_type":"Bearer","expires_in":60}`,
		"none":     `{"token_type":"Bearer","expires_in":60}`,
	} {
		t.Run(name, func(t *testing.T) {
			a := newTestAS(t)
			a.tokenBody = func() string { return body }
			_, err := get(t, loginSession(t, nil, nil), a.mcpURL())
			if err == nil {
				t.Fatal("accepted")
			}
			if len(err.Error()) > 2000 {
				t.Fatalf("the message carries the body: %d bytes", len(err.Error()))
			}
		})
	}
}

// Hostile: a token file that is a symbolic link or readable by others,
// or a directory open to others, is refused.
func TestStoreRefusesUnsafeFiles(t *testing.T) {
	if os.Getuid() == 0 && false {
		t.Skip()
	}
	dir := filepath.Join(t.TempDir(), "oauth")
	st := &Store{Dir: dir}
	e := &Entry{Resource: "http://127.0.0.1:1/mcp", Issuer: "http://127.0.0.1:2", ClientID: "c", AccessToken: "t"}
	if err := st.Save(e); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, e.key())
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if _, err := st.List(); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	if _, err := st.List(); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("a world-readable file: %v", err)
	}
	os.Chmod(p, 0o600)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	os.Rename(p, target)
	os.Symlink(target, p)
	if _, err := st.List(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlinked file: %v", err)
	}
	if err := st.Save(e); err == nil {
		t.Error("Save replaced a symbolic link")
	}
	os.Remove(p)
	os.Chmod(dir, 0o755)
	if _, err := st.List(); err == nil {
		t.Error("a directory open to others was used")
	}
	os.Chmod(dir, 0o700)
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(dir, link)
	if _, err := (&Store{Dir: link}).List(); err == nil {
		t.Error("a symlinked directory was used")
	}
}

func TestResourceMismatchRefused(t *testing.T) {
	a := newTestAS(t)
	// The resource's metadata names another resource.
	srv := a.rs.Config.Handler
	a.rs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			writeJSON(w, 200, map[string]any{"resource": "https://evil.example/mcp", "authorization_servers": []string{a.as.URL}})
			return
		}
		srv.ServeHTTP(w, r)
	})
	if _, err := get(t, loginSession(t, nil, nil), a.mcpURL()); err == nil || len(a.authRequests) != 0 {
		t.Fatalf("err %v, authorizations %d", err, len(a.authRequests))
	}
	_ = context.Background
}
