package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// oauthServer is an authorization server and an MCP server behind it
// (the mock server, 401 without the token), recording every secret of
// the flow so that the test can look for each in every byte written.
type oauthServer struct {
	as, rs  *httptest.Server
	mu      sync.Mutex
	secrets []string
	tokens  map[string]bool
	n       int
}

func (o *oauthServer) keep(v string) {
	if v != "" {
		o.secrets = append(o.secrets, v)
	}
}

func newOAuthServer(t *testing.T) *oauthServer {
	o := &oauthServer{tokens: map[string]bool{}}
	tools, err := mockserver.LoadToolsFile(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := mockserver.New(mockserver.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	o.as = httptest.NewServer(http.HandlerFunc(o.serveAS))
	o.rs = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": o.rs.URL, "authorization_servers": []string{o.as.URL}, "scopes_supported": []string{"mcp:read"}})
			return
		}
		o.mu.Lock()
		ok := o.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer scope="mcp:read"`)
			w.WriteHeader(401)
			return
		}
		ms.ServeHTTP(w, r)
	}))
	o.rs.Config.ConnContext = ms.ConnContext
	o.rs.Start()
	t.Cleanup(o.as.Close)
	t.Cleanup(o.rs.Close)
	return o
}

func (o *oauthServer) serveAS(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": o.as.URL, "authorization_endpoint": o.as.URL + "/authorize", "token_endpoint": o.as.URL + "/token",
			"registration_endpoint": o.as.URL + "/register", "code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"client_secret_post"},
			"authorization_response_iss_parameter_supported": true})
	case "/register":
		secret := "registered-client-secret-0123456789"
		o.keep(secret)
		w.WriteHeader(201)
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "registered-client", "client_secret": secret, "token_endpoint_auth_method": "client_secret_post"})
	case "/authorize":
		red, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
		q := red.Query()
		code := fmt.Sprintf("authorization-code-%d-0123456789", o.n)
		o.keep(code)
		q.Set("code", code)
		q.Set("state", r.URL.Query().Get("state"))
		q.Set("iss", o.as.URL)
		red.RawQuery = q.Encode()
		w.Header().Set("Location", red.String())
		w.WriteHeader(http.StatusFound)
	case "/token":
		_ = r.ParseForm()
		o.keep(r.PostForm.Get("code_verifier"))
		o.n++
		at, rt := fmt.Sprintf("access-token-%d-abcdefghijklmnop", o.n), fmt.Sprintf("refresh-token-%d-abcdefghijklmnop", o.n)
		o.keep(at)
		o.keep(rt)
		o.tokens[at] = true
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt, "scope": "mcp:read"})
	}
}

// followRedirects is the browser of the tests: it follows the
// authorization URL to the loopback listener.
func followRedirects(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// The whole flow through the commands: auth login, then pin, drift and
// lock add with the cached token, auth status and logout. No token,
// secret, code or verifier is in any byte written but the token cache.
func TestOAuthCommands(t *testing.T) {
	openForTest = followRedirects
	t.Cleanup(func() { openForTest = nil })
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	o := newOAuthServer(t)
	work := t.TempDir()
	var written []string
	check := func(what string, code int, want int, stdout, stderr string) {
		t.Helper()
		written = append(written, stdout, stderr)
		if code != want {
			t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, code, want, stdout, stderr)
		}
	}
	// Without a token the run is refused as before (401, inconclusive).
	code, out, errs := run(t, "", "pin", "--server-id", "svc", "--url", o.rs.URL, "-o", filepath.Join(work, "none.json"))
	check("pin without a token", code, ExitInconclusive, out, errs)

	code, out, errs = run(t, "", "auth", "login", o.rs.URL, "--url", o.rs.URL)
	check("auth login with the URL twice", code, ExitUsage, out, errs)
	code, out, errs = run(t, "", "auth", "login", "--url", o.rs.URL)
	check("auth login", code, 0, out, errs)
	if !strings.Contains(out, "registered-client") || !strings.Contains(out, "refreshable") {
		t.Fatalf("auth login says %q", out)
	}
	declared := filepath.Join(work, "declared.json")
	code, out, errs = run(t, "", "pin", "--server-id", "svc", "--url", o.rs.URL, "-o", declared, "--snapshot", filepath.Join(work, "declared.snapshot.json"))
	check("pin", code, 0, out, errs)
	code, out, errs = run(t, "", "drift", declared, "--url", o.rs.URL, "--format", "json", "--observed-out", filepath.Join(work, "observed.json"))
	check("drift", code, 0, out, errs)
	if !strings.Contains(out, `"authorization_presented": true`) {
		t.Errorf("drift does not count the OAuth token as a credential presented: %s", out)
	}
	lp := filepath.Join(work, "mcpdrift.lock")
	code, out, errs = run(t, "", "lock", "add", "svc", "--lock", lp, "--url", o.rs.URL, "--by", "alice@example.com")
	check("lock add", code, 0, out, errs)
	lb, _ := os.ReadFile(lp)
	if !strings.Contains(string(lb), `"auth":"oauth"`) {
		t.Errorf("the lock does not name the auth method: %s", lb)
	}
	code, out, errs = run(t, "", "lock", "check", "--lock", lp, "--format", "json")
	check("lock check", code, 0, out, errs)
	code, out, errs = run(t, "", "auth", "status")
	check("auth status", code, 0, out, errs)
	if !strings.Contains(out, o.rs.URL) {
		t.Errorf("auth status: %s", out)
	}
	code, out, errs = run(t, "", "auth", "status", "--url", o.rs.URL)
	check("auth status --url", code, 0, out, errs)
	if !strings.Contains(out, o.rs.URL) {
		t.Errorf("auth status --url: %s", out)
	}
	code, out, errs = run(t, "", "auth", "logout", "--url", o.rs.URL, "--all")
	check("auth logout of a URL and --all", code, ExitUsage, out, errs)
	code, out, errs = run(t, "", "auth", "logout", o.rs.URL)
	check("auth logout", code, 0, out, errs)
	if len(o.secrets) < 5 {
		t.Fatalf("the flow recorded %d secrets", len(o.secrets))
	}
	for _, s := range o.secrets {
		for i, w := range written {
			if strings.Contains(w, s) {
				t.Errorf("output %d holds the secret %q", i, s)
			}
		}
		for p, b := range everyFile(t, work) {
			noSecretIn(t, p, b, s)
		}
	}
	// The cache holds them, 0600, and nothing after logout.
	left := everyFile(t, state)
	for p := range left {
		if !strings.HasSuffix(p, ".json") {
			continue
		}
		t.Errorf("logout left %s", p)
	}
}
