package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/reffetch"
)

// issuedFor is the resource the token tok was issued for ("" none).
func (a *testAS) issuedFor(tok string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int
	if _, err := fmt.Sscanf(tok, "access-token-%d-", &n); err != nil || !a.tokens[tok] || n < 1 || n > len(a.tokenRequests) {
		return ""
	}
	return a.tokenRequests[n-1].Get("resource")
}

const docBody = `{"$defs":{"rec":{"type":"string"}}}`

// testDoc is a $ref's document behind OAuth: 401 unless the request
// carries a token issued for its resource, its protected resource
// metadata at its origin's well-known URL, and its own log of every
// Authorization header it received.
type testDoc struct {
	srv       *httptest.Server
	as        *testAS
	mu        sync.Mutex
	prm       map[string]any // nil: none (404)
	challenge string         // the WWW-Authenticate of a 401
	auths     []string
}

func newTestDoc(t *testing.T, a *testAS) *testDoc {
	d := &testDoc{as: a, challenge: "Bearer"}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *testDoc) url() string      { return d.srv.URL + "/schemas/rec.json" }
func (d *testDoc) resource() string { return d.srv.URL + "/schemas" }

func (d *testDoc) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	prm, challenge := d.prm, d.challenge
	if r.URL.Path == "/schemas/rec.json" {
		d.auths = append(d.auths, r.Header.Get("Authorization"))
	}
	d.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource":
		if prm == nil {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, 200, prm)
	case "/schemas/rec.json":
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if d.as.issuedFor(tok) != d.resource() {
			w.Header().Set("WWW-Authenticate", challenge)
			w.WriteHeader(401)
			return
		}
		_, _ = w.Write([]byte(docBody))
	default:
		http.NotFound(w, r)
	}
}

func (d *testDoc) set(prm map[string]any, challenge string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.prm, d.challenge, d.auths = prm, challenge, nil
}

func (d *testDoc) received() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.auths...)
}

func fetchDoc(s *Session, d *testDoc, servers ...string) (*reffetch.Document, error) {
	return reffetch.Fetch(context.Background(), d.url(), reffetch.Options{AllowPrivate: true, Timeout: 5 * time.Second, Auth: s.Documents(servers...)})
}

// A document behind the authorization server of the MCP server is fetched
// with a token for its own resource; behind another one, with no resource
// metadata, or with metadata that names a resource not its own (the MCP
// server's, at another origin), it gets no token and the error says why.
// The MCP server's token is never sent to the document.
func TestDocumentAuth(t *testing.T) {
	a := newTestAS(t)
	other := newTestAS(t)
	sec := &redact.Set{}
	s, err := NewSession(Options{Mode: ModeClientCredentials, Client: ClientOptions{ID: "ci-client", Secret: "ci-secret-abcdefghijkl"}, Secrets: sec})
	if err != nil {
		t.Fatal(err)
	}
	if code, err := get(t, s, a.mcpURL()); err != nil || code != 200 {
		t.Fatalf("the MCP server: code %d err %v", code, err)
	}
	mcpToken := "access-token-1-" + strings.Repeat("x", 16)
	if a.issuedFor(mcpToken) != a.mcpURL() {
		t.Fatalf("the MCP server's token is not %q", mcpToken)
	}
	d := newTestDoc(t, a)
	mcpPRM := a.rs.URL + "/.well-known/oauth-protected-resource/mcp"
	for _, c := range []struct {
		name      string
		prm       map[string]any
		challenge string
		want      []string
	}{
		{"another authorization server", map[string]any{"resource": d.resource(), "authorization_servers": []string{other.as.URL}}, "Bearer",
			[]string{"behind the authorization server", other.as.URL, "not the one the MCP server is authorized by", a.as.URL}},
		{"no resource metadata", nil, "Bearer", []string{"no protected resource metadata"}},
		{"the same authorization server, another origin's resource", map[string]any{"resource": a.mcpURL(), "authorization_servers": []string{a.as.URL}}, "Bearer",
			[]string{"names the resource", a.mcpURL(), "does not cover the document"}},
		{"the MCP server's own metadata", nil, `Bearer resource_metadata="` + mcpPRM + `"`,
			[]string{"names the resource", a.mcpURL(), "does not cover the document"}},
		{"a malformed challenge", nil, `Bearer resource_metadata="x`, []string{"malformed"}},
	} {
		d.set(c.prm, c.challenge)
		tokens := len(a.tokenRequests)
		_, err := fetchDoc(s, d, a.mcpURL())
		if !errors.Is(err, reffetch.ErrUnauthorized) {
			t.Errorf("%s: %v, want ErrUnauthorized", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
		if got := d.received(); len(got) != 1 || got[0] != "" {
			t.Errorf("%s: the document received Authorization %q", c.name, got)
		}
		if len(a.tokenRequests) != tokens || len(other.tokenRequests) != 0 {
			t.Errorf("%s: %d token requests to the MCP server's AS, %d to the other", c.name, len(a.tokenRequests)-tokens, len(other.tokenRequests))
		}
	}

	// The same authorization server (listed after another one): a token
	// for the document's resource, from that server, found by the
	// well-known fallback (the challenge names no metadata).
	d.set(map[string]any{"resource": d.resource(), "authorization_servers": []string{other.as.URL, a.as.URL}}, `Bearer scope="docs:read"`)
	doc, err := fetchDoc(s, d, a.mcpURL())
	if err != nil {
		t.Fatal(err)
	}
	if doc.SHA256 != reffetch.Digest([]byte(docBody)) {
		t.Errorf("digest %s", doc.SHA256)
	}
	got := d.received()
	if len(got) != 2 || got[0] != "" || !strings.HasPrefix(got[1], "Bearer ") {
		t.Fatalf("the document received %q", got)
	}
	docToken := strings.TrimPrefix(got[1], "Bearer ")
	if docToken == mcpToken || a.issuedFor(docToken) != d.resource() {
		t.Errorf("the document got %q, issued for %q", docToken, a.issuedFor(docToken))
	}
	last := a.tokenRequests[len(a.tokenRequests)-1]
	if last.Get("grant_type") != "client_credentials" || last.Get("resource") != d.resource() || last.Get("scope") != "docs:read" || len(other.tokenRequests) != 0 {
		t.Errorf("token request %v; %d to the other AS", last, len(other.tokenRequests))
	}
	if out := sec.String("x " + docToken + " y"); strings.Contains(out, docToken) {
		t.Error("the document's token is not a secret of the run")
	}
	// Again: the token held is used, no new grant; the MCP server's
	// request still carries the MCP server's token.
	n := len(a.tokenRequests)
	d.set(map[string]any{"resource": d.resource(), "authorization_servers": []string{a.as.URL}}, "Bearer")
	if _, err := fetchDoc(s, d, a.mcpURL()); err != nil || len(a.tokenRequests) != n {
		t.Errorf("again: %v, %d new token requests", err, len(a.tokenRequests)-n)
	}
	req, _ := http.NewRequest(http.MethodGet, a.mcpURL(), nil)
	if err := s.Authorize(req); err != nil || req.Header.Get("Authorization") != "Bearer "+mcpToken {
		t.Errorf("the MCP server's request carries %q (%v)", req.Header.Get("Authorization"), err)
	}
	// With no MCP server it belongs to, nothing is asked.
	if _, err := fetchDoc(s, d); !errors.Is(err, reffetch.ErrUnauthorized) || !strings.Contains(err.Error(), "no MCP server") {
		t.Errorf("no server: %v", err)
	}
}

// The grant a ref fetch may start is the run's: in the cached mode none
// (the error names the command that gets one), a cached one used; in the
// login mode the browser flow, for the document's resource; and without a
// token for the MCP server the cached mode does not know its
// authorization server, so nothing is asked.
func TestDocumentAuthModes(t *testing.T) {
	a := newTestAS(t)
	d := newTestDoc(t, a)
	d.set(map[string]any{"resource": d.resource(), "authorization_servers": []string{a.as.URL}}, "Bearer")
	store := &Store{Dir: filepath.Join(t.TempDir(), "oauth")}
	cc, _ := NewSession(Options{Mode: ModeClientCredentials, Client: ClientOptions{ID: "ci-client", Secret: "ci-secret-abcdefghijkl"}, Store: store})
	if code, err := get(t, cc, a.mcpURL()); err != nil || code != 200 {
		t.Fatalf("the MCP server: code %d err %v", code, err)
	}

	empty, _ := NewSession(Options{Mode: ModeCached, Store: &Store{Dir: filepath.Join(t.TempDir(), "none")}})
	if _, err := fetchDoc(empty, d, a.mcpURL()); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Errorf("cached, nothing cached: %v", err)
	}
	n := len(a.tokenRequests)
	cached, _ := NewSession(Options{Mode: ModeCached, Store: store})
	if _, err := fetchDoc(cached, d, a.mcpURL()); err == nil || !strings.Contains(err.Error(), "auth login") || !strings.Contains(err.Error(), d.url()) || len(a.tokenRequests) != n {
		t.Errorf("cached, no token for the document: %v (%d token requests)", err, len(a.tokenRequests)-n)
	}
	if _, err := fetchDoc(cc, d, a.mcpURL()); err != nil {
		t.Fatalf("client credentials: %v", err)
	}
	n = len(a.tokenRequests)
	cached, _ = NewSession(Options{Mode: ModeCached, Store: store})
	if _, err := fetchDoc(cached, d, a.mcpURL()); err != nil || len(a.tokenRequests) != n {
		t.Errorf("cached, the document's token cached: %v (%d token requests)", err, len(a.tokenRequests)-n)
	}

	login := loginSession(t, nil, nil)
	if code, err := get(t, login, a.mcpURL()); err != nil || code != 200 {
		t.Fatalf("login: code %d err %v", code, err)
	}
	if _, err := fetchDoc(login, d, a.mcpURL()); err != nil {
		t.Fatalf("login, the document: %v", err)
	}
	if q := a.authRequests[len(a.authRequests)-1]; len(a.authRequests) != 2 || q.Get("resource") != d.resource() {
		t.Errorf("%d authorizations, the last for %q", len(a.authRequests), q.Get("resource"))
	}
}
