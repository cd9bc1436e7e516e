package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/reffetch"
)

// oauthDoc is a $ref's document behind OAuth: 401 without a token of its
// authorization server, its protected resource metadata (resource and
// authorization server settable), and its own log of the Authorization
// headers it received.
type oauthDoc struct {
	*httptest.Server
	as       *oauthServer
	mu       sync.Mutex
	resource string
	issuer   string
	auths    []string
}

func newOAuthDoc(t *testing.T, as *oauthServer, body string) *oauthDoc {
	d := &oauthDoc{as: as}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		resource, issuer := d.resource, d.issuer
		if r.URL.Path == "/schemas/rec.json" {
			d.auths = append(d.auths, r.Header.Get("Authorization"))
		}
		d.mu.Unlock()
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": resource, "authorization_servers": []string{issuer}})
		case "/schemas/rec.json":
			as.mu.Lock()
			ok := as.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
			as.mu.Unlock()
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+d.URL+`/.well-known/oauth-protected-resource"`)
				w.WriteHeader(401)
				return
			}
			_, _ = w.Write([]byte(body))
		default:
			http.NotFound(w, r)
		}
	}))
	d.resource, d.issuer = d.URL+"/schemas", as.as.URL
	t.Cleanup(d.Close)
	return d
}

func (d *oauthDoc) set(resource, issuer string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.resource, d.issuer = resource, issuer
}

// oauthRefServer is an MCP server behind o's authorization server whose
// tool "lookup" refers to docURL; it records every token it received.
func oauthRefServer(t *testing.T, o *oauthServer, docURL string, received *sync.Map) *httptest.Server {
	tools := []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"name":"lookup","description":"Look up a record.","inputSchema":{"type":"object","properties":{"rec":{"$ref":%q}}}}`, docURL+"#/$defs/rec"))}
	ms, err := mockserver.New(mockserver.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	var rs *httptest.Server
	rs = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": rs.URL, "authorization_servers": []string{o.as.URL}})
			return
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		ok := o.tokens[tok]
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rs.URL+`/.well-known/oauth-protected-resource"`)
			w.WriteHeader(401)
			return
		}
		received.Store(tok, true)
		ms.ServeHTTP(w, r)
	}))
	rs.Config.ConnContext = ms.ConnContext
	rs.Start()
	t.Cleanup(rs.Close)
	return rs
}

// A pinned document behind the authorization server of the MCP server
// that refers to it is verified and pinned with a token for its own
// resource (client credentials, as the lock's server); behind another
// authorization server, or with metadata naming the MCP server's resource
// (another origin), it is unverified and the warning says why. The
// document never receives a token the MCP server received; no token or
// secret is in any byte written.
func TestVerifyRefsBehindOAuth(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	const clientSecret = "ci-client-secret-0123456789abcdef"
	t.Setenv("MCP_CLIENT_SECRET", clientSecret)
	o := &oauthServer{tokens: map[string]bool{}}
	o.as = httptest.NewServer(http.HandlerFunc(o.serveAS))
	t.Cleanup(o.as.Close)
	other := &oauthServer{tokens: map[string]bool{}}
	other.as = httptest.NewServer(http.HandlerFunc(other.serveAS))
	t.Cleanup(other.as.Close)
	body := `{"$defs":{"rec":{"type":"string"}}}`
	doc := newOAuthDoc(t, o, body)
	docURL := doc.URL + "/schemas/rec.json"
	var mcpTokens sync.Map
	rs := oauthRefServer(t, o, docURL, &mcpTokens)

	work := t.TempDir()
	lp := filepath.Join(work, "mcpdrift.lock")
	creds := []string{"--oauth", "client-credentials", "--oauth-client-id", "ci-drift", "--oauth-client-secret-env", "MCP_CLIENT_SECRET"}
	var written []string
	runW := func(args ...string) (int, string, string) {
		code, out, errs := run(t, "", args...)
		written = append(written, out, errs)
		return code, out, errs
	}
	if code, _, errs := runW(append([]string{"lock", "add", "refs", "--lock", lp, "--url", rs.URL, "--profile", "fail-closed", "--by", "alice@example.com"}, creds...)...); code != 0 {
		t.Fatalf("lock add: exit %d: %s", code, errs)
	}
	// Pinned from a copy held: the first fetch is the check's.
	held := writeFile(t, t.TempDir(), "rec.json", []byte(body))
	if code, _, errs := runW("lock", "pin-ref", "refs", docURL, "--from-file", held, "--lock", lp, "--by", "bob@example.com"); code != 0 {
		t.Fatalf("pin-ref --from-file: exit %d: %s", code, errs)
	}
	check := func() (int, string, string) {
		return runW(append([]string{"lock", "check", "--lock", lp, "--format", "json", "--verify-refs", "--allow-private-refs"}, creds...)...)
	}
	if code, out, errs := check(); code != 0 || strings.Contains(errs, "could not fetch") || strings.Contains(out, "external_ref_unverified") {
		t.Fatalf("verified: exit %d\n%s\n%s", code, out, errs)
	}
	// pin-ref fetches it the same way (the token cached by the check).
	code, _, errs := runW(append([]string{"lock", "pin-ref", "refs", docURL, "--lock", lp, "--allow-private-refs", "--by", "bob@example.com"}, creds...)...)
	if code != 0 || !strings.Contains(errs, reffetch.Digest([]byte(body))) || !strings.Contains(errs, "unchanged") {
		t.Fatalf("pin-ref: exit %d: %s", code, errs)
	}

	doc.set(doc.URL+"/schemas", other.as.URL)
	code, out, errs := check()
	if code != 1 || !strings.Contains(out, "external_ref_unverified") || !strings.Contains(errs, "could not fetch") || !strings.Contains(errs, other.as.URL) || !strings.Contains(errs, "not the one the MCP server is authorized by") {
		t.Errorf("another authorization server: exit %d\n%s\n%s", code, out, errs)
	}
	if other.n != 0 {
		t.Errorf("the other authorization server issued %d tokens", other.n)
	}

	doc.set(rs.URL, o.as.URL)
	code, out, errs = check()
	if code != 1 || !strings.Contains(out, "external_ref_unverified") || !strings.Contains(errs, "does not cover the document") {
		t.Errorf("the MCP server's resource: exit %d\n%s\n%s", code, out, errs)
	}

	doc.mu.Lock()
	auths := append([]string(nil), doc.auths...)
	doc.mu.Unlock()
	sent := 0
	for _, a := range auths {
		tok := strings.TrimPrefix(a, "Bearer ")
		if a == "" {
			continue
		}
		sent++
		if _, ok := mcpTokens.Load(tok); ok {
			t.Errorf("the document received the MCP server's token %q", tok)
		}
	}
	if sent != 2 {
		t.Errorf("the document received %d tokens, want 2 (the first check, pin-ref): %q", sent, auths)
	}
	secrets := append(append([]string{clientSecret}, o.secrets...), other.secrets...)
	for _, s := range secrets {
		for i, w := range written {
			if strings.Contains(w, s) {
				t.Errorf("output %d holds the secret %q", i, s)
			}
		}
		for p, b := range everyFile(t, work) {
			noSecretIn(t, p, b, s)
		}
	}
}
