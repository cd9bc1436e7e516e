package reffetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// fakeAuth is an Authorizer that answers every challenge with one token
// for one resource (or an error), recording what it was asked.
type fakeAuth struct {
	resource, token string
	err             error
	mu              sync.Mutex
	asked           []string // the URLs challenged
	www             [][]string
	rt              []http.RoundTripper
}

func (f *fakeAuth) Challenged(_ context.Context, u string, www []string, rt http.RoundTripper) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, u)
	f.www = append(f.www, www)
	f.rt = append(f.rt, rt)
	if f.err != nil {
		return "", "", f.err
	}
	return f.resource, "Bearer " + f.token, nil
}

func (f *fakeAuth) Covers(resource, u string) bool {
	return u == resource || strings.HasPrefix(u, strings.TrimSuffix(resource, "/")+"/")
}

// protected serves /schemas/* only with the token, 401 otherwise, and logs
// every Authorization header it receives, by path.
type protected struct {
	token string
	mu    sync.Mutex
	log   []string // "path auth"
}

func (p *protected) handler(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.log = append(p.log, r.URL.Path+" "+r.Header.Get("Authorization"))
	p.mu.Unlock()
	switch {
	case r.URL.Path == "/schemas/moved.json":
		http.Redirect(w, r, "/schemas/rec.json", http.StatusFound)
	case r.URL.Path == "/schemas/away.json":
		http.Redirect(w, r, "/other/rec.json", http.StatusFound)
	case r.URL.Path == "/schemas/tricky.json" && r.Header.Get("Authorization") != "":
		// With a token, off to where the token's resource does not reach.
		http.Redirect(w, r, "/other/rec.json", http.StatusFound)
	case r.Header.Get("Authorization") != "Bearer "+p.token:
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	default:
		fmt.Fprint(w, `{"$defs":{}}`)
	}
}

func (p *protected) logged() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// Without an Authorizer a 401 is what it was: not fetched, no credential
// sent, and the error says the document asks for authorization.
func TestFetchUnauthorizedWithoutAuth(t *testing.T) {
	p := &protected{token: "doc-token-0123456789abcdef"}
	s := serve(t, p.handler)
	_, err := Fetch(context.Background(), s.URL+"/schemas/rec.json", loopback)
	if !errors.Is(err, ErrUnauthorized) || !errors.Is(err, ErrStatus) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("got %v, want ErrUnauthorized", err)
	}
	if l := p.logged(); len(l) != 1 || l[0] != "/schemas/rec.json " {
		t.Errorf("requests %q", l)
	}
}

// With one: the document is asked first without a credential, the 401 is
// handed over (the URL that answered it, after a same-origin redirect;
// its WWW-Authenticate; the fetch's own transport), and that URL is asked
// again with the token.
func TestFetchAuthorizer(t *testing.T) {
	p := &protected{token: "doc-token-0123456789abcdef"}
	s := serve(t, p.handler)
	a := &fakeAuth{resource: s.URL + "/schemas", token: p.token}
	opt := loopback
	opt.Auth = a
	d, err := Fetch(context.Background(), s.URL+"/schemas/moved.json", opt)
	if err != nil {
		t.Fatal(err)
	}
	if d.SHA256 != Digest([]byte(`{"$defs":{}}`)) || d.URL != s.URL+"/schemas/moved.json" || d.Final != s.URL+"/schemas/rec.json" {
		t.Errorf("got %+v", d)
	}
	if len(a.asked) != 1 || a.asked[0] != s.URL+"/schemas/rec.json" || len(a.www[0]) != 1 || !strings.Contains(a.www[0][0], "resource_metadata") || a.rt[0] == nil {
		t.Errorf("challenged with %q %q %v", a.asked, a.www, a.rt)
	}
	want := []string{"/schemas/moved.json ", "/schemas/rec.json ", "/schemas/rec.json Bearer " + p.token}
	if l := p.logged(); strings.Join(l, "|") != strings.Join(want, "|") {
		t.Errorf("requests %q, want %q", l, want)
	}
}

// The token goes only where its resource covers: not to a URL the
// Authorizer's resource does not cover (nothing is sent again), not on a
// redirect that leaves the resource (refused before it is followed); an
// Authorizer's refusal and a token refused again are ErrUnauthorized,
// with one challenge each.
func TestFetchAuthorizerBounds(t *testing.T) {
	p := &protected{token: "doc-token-0123456789abcdef"}
	s := serve(t, p.handler)
	for _, c := range []struct {
		name, path string
		auth       *fakeAuth
		want       error
		text       string
		requests   []string
	}{
		{"resource elsewhere", "/schemas/rec.json", &fakeAuth{resource: s.URL + "/other", token: p.token}, ErrUnauthorized, "does not cover",
			[]string{"/schemas/rec.json "}},
		{"refused", "/schemas/rec.json", &fakeAuth{err: errors.New("behind another authorization server")}, ErrUnauthorized, "behind another authorization server",
			[]string{"/schemas/rec.json "}},
		{"wrong token", "/schemas/rec.json", &fakeAuth{resource: s.URL + "/schemas", token: "not-the-token-0123456789"}, ErrUnauthorized, "401 again",
			[]string{"/schemas/rec.json ", "/schemas/rec.json Bearer not-the-token-0123456789"}},
		{"redirect out of the resource", "/schemas/away.json", &fakeAuth{resource: s.URL + "/schemas", token: p.token}, ErrUnauthorized, "",
			[]string{"/schemas/away.json ", "/other/rec.json "}},
	} {
		p.mu.Lock()
		p.log = nil
		p.mu.Unlock()
		opt := loopback
		opt.Auth = c.auth
		_, err := Fetch(context.Background(), s.URL+c.path, opt)
		if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.text) || len(c.auth.asked) > 1 {
			t.Errorf("%s: %v (challenged %d times), want %v with %q", c.name, err, len(c.auth.asked), c.want, c.text)
		}
		if l := p.logged(); strings.Join(l, "|") != strings.Join(c.requests, "|") {
			t.Errorf("%s: requests %q, want %q", c.name, l, c.requests)
		}
	}
	// A redirect of the request that carries the token, to a URL its
	// resource does not cover, is refused before it is followed.
	p.mu.Lock()
	p.log = nil
	p.mu.Unlock()
	opt := loopback
	opt.Auth = &fakeAuth{resource: s.URL + "/schemas", token: p.token}
	_, err := Fetch(context.Background(), s.URL+"/schemas/tricky.json", opt)
	if !errors.Is(err, ErrRedirect) || !strings.Contains(err.Error(), "does not cover") {
		t.Errorf("a redirect off the resource with the token: %v", err)
	}
	want := []string{"/schemas/tricky.json ", "/schemas/tricky.json Bearer " + p.token}
	if l := p.logged(); strings.Join(l, "|") != strings.Join(want, "|") {
		t.Errorf("requests %q, want %q", l, want)
	}
}
