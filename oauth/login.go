package oauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
)

// tokenResult is a checked token response.
type tokenResult struct {
	access, refresh, scope string
	expiry                 time.Time
}

// result checks a token response and records its secrets.
func (s *Session) result(t *oauth2.Token) (tokenResult, error) {
	exp, err := checkToken(t, s.o.Now())
	if err != nil {
		return tokenResult{}, fmt.Errorf("oauth: %s", err)
	}
	s.o.Secrets.AddHeader("Authorization", "Bearer "+t.AccessToken)
	s.o.Secrets.Add("an OAuth refresh token", t.RefreshToken)
	sc, _ := t.Extra("scope").(string)
	return tokenResult{access: t.AccessToken, refresh: t.RefreshToken, scope: sc, expiry: exp}, nil
}

// loopbackRedirect parses a redirect URI that must be http on a loopback
// host (RFC 8252 §7.3): a redirect anywhere else is refused.
func loopbackRedirect(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || !IsLoopback(u.Hostname()) || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("oauth: the redirect URI %s is not an http URL on a loopback host: refused", quote(raw))
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// listen opens the loopback listener of the redirect: the configured
// redirect URI's, else the port a cached client was registered with when
// it is free, else any free port on 127.0.0.1.
func (s *Session) listen(reuse string) (net.Listener, *url.URL, error) {
	fixed := s.o.RedirectURI
	if fixed == "" && reuse != "" {
		if u, err := loopbackRedirect(reuse); err == nil {
			if ln, err := net.Listen("tcp", net.JoinHostPort(u.Hostname(), u.Port())); err == nil {
				return ln, u, nil
			}
		}
	}
	if fixed == "" {
		fixed = "http://127.0.0.1:0/callback"
	}
	u, err := loopbackRedirect(fixed)
	if err != nil {
		return nil, nil, err
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, nil, fmt.Errorf("oauth: cannot listen for the redirect on %s: %s", quote(net.JoinHostPort(host, port)), quote(err.Error()))
	}
	if u.Port() == "0" {
		u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	return ln, u, nil
}

// chooseClient picks the client identity for d's server, in the order of
// preference: pre-registered, a metadata document, a registration cached
// for this issuer, a new dynamic registration.
func (s *Session) chooseClient(ctx context.Context, d *Discovery, redirect string) (*Client, error) {
	m := d.Server
	switch {
	case s.o.Client.ID != "":
		method, err := authMethod(m.TokenEndpointAuthMethodsSupported, s.o.Client.Secret != "")
		if err != nil {
			return nil, fmt.Errorf("oauth: %s", err)
		}
		return &Client{Kind: ClientPreRegistered, ID: s.o.Client.ID, Secret: s.o.Client.Secret, AuthMethod: method}, nil
	case s.o.Client.MetadataURL != "" && m.ClientIDMetadataDocumentSupported:
		return &Client{Kind: ClientMetadataDocument, ID: s.o.Client.MetadataURL, AuthMethod: AuthNone}, nil
	}
	if e := s.cachedRegistration(d.Issuer, redirect); e != nil {
		return &Client{Kind: ClientDynamic, ID: e.ClientID, Secret: e.ClientSecret, AuthMethod: e.AuthMethod}, nil
	}
	if m.RegistrationEndpoint == "" {
		return nil, fmt.Errorf("oauth: the authorization server %s offers no dynamic client registration and no client metadata documents: give a pre-registered client (--oauth-client-id)", quote(d.Issuer))
	}
	return register(ctx, s.hc, m, s.o.Client.Name, redirect, s.o.Secrets)
}

// cachedRegistration is a dynamically registered client of issuer the
// cache holds for the same redirect (credentials are never taken to
// another authorization server).
func (s *Session) cachedRegistration(issuer, redirect string) *Entry {
	if s.o.Store == nil {
		return nil
	}
	es, err := s.o.Store.List()
	if err != nil {
		return nil
	}
	for _, e := range es {
		if e.Issuer == issuer && e.ClientKind == ClientDynamic && e.RedirectURI == redirect {
			s.o.Secrets.Add("the client secret of a registered OAuth client", e.ClientSecret)
			return e
		}
	}
	return nil
}

// reusePort is the redirect of the newest dynamic registration cached for
// issuer, whose port is tried first.
func (s *Session) reusePort(issuer string) string {
	if s.o.Store == nil || s.o.RedirectURI != "" {
		return ""
	}
	es, _ := s.o.Store.List()
	for _, e := range es {
		if e.Issuer == issuer && e.ClientKind == ClientDynamic && e.RedirectURI != "" {
			return e.RedirectURI
		}
	}
	return ""
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// callback is what the redirect brought.
type callback struct {
	code string
	err  error
}

// login runs the authorization code flow with PKCE (S256) and a loopback
// redirect: the authorization URL is shown (Options.Open), the redirect
// checked (state; iss as RFC 9207 says, when the server supports it or
// sends one), the code exchanged with the verifier and the resource.
func (s *Session) login(ctx context.Context, d *Discovery, scopes []string) (*Entry, error) {
	m := d.Server
	if m.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("oauth: the authorization server %s has no authorization_endpoint", quote(d.Issuer))
	}
	if !d.Legacy && !supports(m.CodeChallengeMethodsSupported, "S256", false) {
		return nil, fmt.Errorf("oauth: the authorization server %s does not list S256 in code_challenge_methods_supported: without PKCE the authorization code flow is not run", quote(d.Issuer))
	}
	if !supports(m.ResponseTypesSupported, "code", true) {
		return nil, fmt.Errorf("oauth: the authorization server %s does not offer response_type code", quote(d.Issuer))
	}
	ln, redirect, err := s.listen(s.reusePort(d.Issuer))
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	c, err := s.chooseClient(ctx, d, redirect.String())
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()
	s.o.Secrets.Add("a PKCE code verifier", verifier)
	state := randomString(24)
	cfg := oauthConfig(m, c, redirect.String(), scopes)
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.Resource))
	got := make(chan callback, 1)
	srv := &http.Server{Handler: s.callbackHandler(redirect.Path, state, d, got), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	wctx, cancel := context.WithTimeout(ctx, s.o.LoginTimeout)
	defer cancel()
	if err := s.o.Open(wctx, authURL); err != nil {
		return nil, fmt.Errorf("oauth: showing the authorization URL: %w", err)
	}
	var cb callback
	select {
	case cb = <-got:
	case <-wctx.Done():
		return nil, fmt.Errorf("oauth: no authorization arrived at the loopback redirect within %s", s.o.LoginTimeout)
	}
	if cb.err != nil {
		return nil, cb.err
	}
	t, err := exchange(ctx, s.hc, cfg, cb.code, verifier, d.Resource)
	if err != nil {
		return nil, err
	}
	tr, err := s.result(t)
	if err != nil {
		return nil, err
	}
	return s.entry(d, c, tr, scopes, redirect.String()), nil
}

// callbackHandler serves the loopback redirect. A request without the
// state (or with another) is answered 400 and ignored: it cannot end the
// login. The first request with the state ends it, with the code, or with
// the server's error, or refused for its iss.
func (s *Session) callbackHandler(path, state string, d *Discovery, got chan<- callback) http.Handler {
	var done atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != path || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			http.Error(w, "mcpdrift: not the authorization response this login waits for", http.StatusBadRequest)
			return
		}
		if !done.CompareAndSwap(false, true) {
			http.Error(w, "mcpdrift: this login already ended", http.StatusBadRequest)
			return
		}
		cb := checkCallback(q, d, s.o.Secrets)
		if cb.err != nil {
			http.Error(w, "mcpdrift: the authorization failed; see the terminal", http.StatusBadRequest)
		} else {
			_, _ = w.Write([]byte("mcpdrift: authorization received. You can close this window.\n"))
		}
		got <- cb
	})
}

// checkCallback reads an authorization response with the right state.
func checkCallback(q url.Values, d *Discovery, sec Secrets) callback {
	iss, hasISS := q.Get("iss"), q.Has("iss")
	switch {
	case hasISS && iss != d.Issuer:
		return callback{err: fmt.Errorf("oauth: the authorization response comes from the issuer %s, not %s (RFC 9207): refused", quote(iss), quote(d.Issuer))}
	case !hasISS && d.Server.ISSParameterSupported:
		return callback{err: fmt.Errorf("oauth: the authorization server %s supports the iss parameter but its authorization response has none (RFC 9207): refused", quote(d.Issuer))}
	case q.Get("error") != "":
		msg := "oauth: the authorization server refused: error " + quote(q.Get("error"))
		if ed := q.Get("error_description"); ed != "" {
			msg += ": " + quote(ed)
		}
		return callback{err: errors.New(msg)}
	case q.Get("code") == "":
		return callback{err: errors.New("oauth: the authorization response has no code")}
	}
	sec.Add("an OAuth authorization code", q.Get("code"))
	return callback{code: q.Get("code")}
}
