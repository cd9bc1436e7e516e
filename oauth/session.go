package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Secrets records the secrets of a run (a *redact.Set): every access and
// refresh token, client secret, authorization code and PKCE verifier this
// package handles is added before anything could write it.
type Secrets interface {
	Add(label, value string) bool
	AddHeader(name, value string) (short []string)
}

type noSecrets struct{}

func (noSecrets) Add(string, string) bool               { return true }
func (noSecrets) AddHeader(string, string) (s []string) { return nil }

// Mode says how a Session may get a token.
type Mode string

// The modes.
const (
	// ModeCached uses cached tokens (refreshing them) and never starts a
	// grant: a server that needs a new one is refused, with the command
	// that gets it.
	ModeCached Mode = "cached"
	// ModeLogin may also run the authorization code flow (PKCE, a
	// loopback redirect), showing the authorization URL to a person.
	ModeLogin Mode = "login"
	// ModeClientCredentials runs the client_credentials grant with a
	// pre-registered client (CI, the gateway).
	ModeClientCredentials Mode = "client-credentials"
)

// Defaults of Options.
const (
	DefaultMaxStepUps   = 2
	DefaultLoginTimeout = 5 * time.Minute
	// maxGrants bounds the grants one Session makes for one resource.
	maxGrants = 3
	// refreshMargin: a token this close to its expiry is refreshed first.
	refreshMargin = time.Minute
)

// Options configure a Session.
type Options struct {
	Mode   Mode
	Client ClientOptions
	// Scopes, when set, are asked for in place of those the challenge or
	// the metadata name (a step-up still adds what a 403 asks for).
	Scopes []string
	// Store caches grants across runs (nil: none).
	Store *Store
	// Secrets receives every secret (nil: none; the caller then keeps
	// the secrets out of its outputs some other way).
	Secrets Secrets
	// Transport is the base of the requests to authorization servers and
	// for metadata (nil: a clone of http.DefaultTransport). Their bodies,
	// redirects and time are bounded here either way.
	Transport      http.RoundTripper
	RequestTimeout time.Duration
	// Open shows the authorization URL to a person (a browser, or a
	// line on the terminal): required in ModeLogin.
	Open func(ctx context.Context, authURL string) error
	// RedirectURI is the loopback redirect of a pre-registered client
	// (http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH); "" picks
	// a free port on 127.0.0.1.
	RedirectURI  string
	LoginTimeout time.Duration
	// MaxStepUps bounds the step-ups (403 insufficient_scope answered by
	// a new grant) per resource (default DefaultMaxStepUps).
	MaxStepUps int
	// ProtocolVersion is sent as MCP-Protocol-Version on metadata requests.
	ProtocolVersion string
	// ForceLogin ignores cached tokens: the first challenge gets a new
	// grant (mcpdrift auth login).
	ForceLogin bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Session answers the authorization challenges of one run's servers: it
// puts a token on each request to a resource it holds one for, and on a
// 401 or 403 finds, refreshes or gets the token the server asks for. It
// is safe for concurrent use.
type Session struct {
	o      Options
	hc     *http.Client
	mu     sync.Mutex
	grants map[string]*grant // by resource
}

type grant struct {
	e        *Entry
	attempts int      // grants made for this resource in this session
	stepUps  int      // of which step-ups
	asked    []string // the scopes of the last grant's request
}

// NewSession checks o and returns its Session.
func NewSession(o Options) (*Session, error) {
	switch o.Mode {
	case ModeCached, ModeLogin, ModeClientCredentials:
	case "":
		o.Mode = ModeCached
	default:
		return nil, fmt.Errorf("oauth: unknown mode %s", quote(string(o.Mode)))
	}
	if o.Mode == ModeLogin && o.Open == nil {
		return nil, errors.New("oauth: the login mode needs a way to show the authorization URL (Options.Open)")
	}
	if o.Mode == ModeClientCredentials && (o.Client.ID == "" || o.Client.Secret == "") {
		return nil, errors.New("oauth: the client_credentials grant needs a pre-registered client: its id and its secret")
	}
	if o.Client.MetadataURL != "" {
		if err := checkMetadataURL(o.Client.MetadataURL); err != nil {
			return nil, fmt.Errorf("oauth: %s", err)
		}
	}
	if o.RedirectURI != "" {
		if _, err := loopbackRedirect(o.RedirectURI); err != nil {
			return nil, err
		}
	}
	if o.Secrets == nil {
		o.Secrets = noSecrets{}
	}
	o.Secrets.Add("the OAuth client secret", o.Client.Secret)
	if o.MaxStepUps <= 0 {
		o.MaxStepUps = DefaultMaxStepUps
	}
	if o.LoginTimeout <= 0 {
		o.LoginTimeout = DefaultLoginTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Session{o: o, hc: newHTTPClient(o.Transport, o.RequestTimeout), grants: map[string]*grant{}}, nil
}

// clientFilter is the client id cached entries must have ("" any).
func (s *Session) clientFilter() string {
	if s.o.Client.ID != "" {
		return s.o.Client.ID
	}
	return ""
}

// grantFor is the grant whose resource covers target.
func (s *Session) grantFor(target string) *grant {
	var best *grant
	for _, g := range s.grants {
		if g.e != nil && Covers(g.e.Resource, target) && (best == nil || len(g.e.Resource) > len(best.e.Resource)) {
			best = g
		}
	}
	return best
}

// adopt makes a cached entry this session's grant for its resource.
func (s *Session) adopt(e *Entry) *grant {
	s.o.Secrets.AddHeader("Authorization", "Bearer "+e.AccessToken)
	s.o.Secrets.Add("an OAuth refresh token", e.RefreshToken)
	s.o.Secrets.Add("the client secret of a registered OAuth client", e.ClientSecret)
	g := s.grants[e.Resource]
	if g == nil {
		g = &grant{}
		s.grants[e.Resource] = g
	}
	g.e = e
	return g
}

// Authorize puts the token of the resource that covers req's URL on req
// (refreshing it first when it is about to expire). A request to a URL no
// grant covers is left as it is: a token goes only to the resource it was
// issued for.
func (s *Session) Authorize(req *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := req.URL.String()
	g := s.grantFor(target)
	if g == nil && !s.o.ForceLogin && s.o.Store != nil {
		e, err := s.o.Store.Find(target, s.clientFilter())
		if err != nil {
			return err
		}
		if e != nil {
			g = s.adopt(e)
		}
	}
	if g == nil || g.e.AccessToken == "" {
		return nil
	}
	if !g.e.Expiry.IsZero() && s.o.Now().Add(refreshMargin).After(g.e.Expiry) {
		if g.e.RefreshToken == "" || s.refresh(req.Context(), g) != nil {
			g.e.AccessToken = "" // expired: the server's challenge will say what to do
			return nil
		}
	}
	req.Header.Set("Authorization", "Bearer "+g.e.AccessToken)
	return nil
}

// refresh renews g's token with its refresh token.
func (s *Session) refresh(ctx context.Context, g *grant) error {
	t, err := refresh(ctx, s.hc, g.e)
	if err != nil {
		return err
	}
	exp, err := checkToken(t, s.o.Now())
	if err != nil {
		return fmt.Errorf("oauth: refreshing the token: %s", err)
	}
	s.o.Secrets.AddHeader("Authorization", "Bearer "+t.AccessToken)
	s.o.Secrets.Add("an OAuth refresh token", t.RefreshToken)
	e := *g.e
	e.AccessToken, e.Expiry, e.Saved = t.AccessToken, exp, s.o.Now()
	if t.RefreshToken != "" {
		e.RefreshToken = t.RefreshToken
	}
	if sc, ok := t.Extra("scope").(string); ok && sc != "" {
		e.Scope = sc
	}
	g.e = &e
	return s.save(&e)
}

func (s *Session) save(e *Entry) error {
	if s.o.Store == nil {
		return nil
	}
	return s.o.Store.Save(e)
}

// Challenged answers a 401 or 403 to req whose WWW-Authenticate values
// are given: it reports whether req should be sent again (a token that
// answers the challenge is now held), or why not. A 403 that is not
// insufficient_scope is not an authorization matter (false, nil).
func (s *Session) Challenged(ctx context.Context, req *http.Request, status int, wwwAuthenticate []string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := req.URL.String()
	var b Bearer
	if len(wwwAuthenticate) > 0 {
		cs, err := ParseWWWAuthenticate(wwwAuthenticate)
		if err != nil {
			return false, errors.New("oauth: the server's WWW-Authenticate header is malformed, so it is not followed")
		}
		b, _ = BearerOf(cs)
	}
	if status == http.StatusForbidden && b.Error != "insufficient_scope" {
		return false, nil
	}
	if s.o.Mode == ModeCached && s.grantFor(target) == nil {
		// Nothing to refresh or reuse: no request is sent to find out more.
		var e *Entry
		if s.o.Store != nil {
			var err error
			if e, err = s.o.Store.Find(target, s.clientFilter()); err != nil {
				return false, err
			}
		}
		if e == nil {
			return false, fmt.Errorf("oauth: the server asks for authorization and no token is cached for it: run mcpdrift auth login %s (or give --oauth login, or --oauth client-credentials)", quote(target))
		}
		s.adopt(e)
	}
	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	d, err := Discover(ctx, DiscoverOptions{ServerURL: target, Challenge: b, HTTPClient: s.hc, ProtocolVersion: s.o.ProtocolVersion})
	if err != nil {
		return false, err
	}
	g := s.grants[d.Resource]
	if g != nil && g.e != nil && g.e.Issuer != d.Issuer {
		// The resource moved to another authorization server: nothing of
		// the old one (token, client) is used there.
		g.e = nil
	}
	if g == nil {
		g = &grant{}
		s.grants[d.Resource] = g
	}
	if status == http.StatusUnauthorized && g.e != nil && g.e.AccessToken != "" && sent != g.e.AccessToken {
		return true, nil // a token is held now that the request did not carry
	}
	if status == http.StatusUnauthorized && g.e != nil && g.e.RefreshToken != "" && sent != "" {
		if s.refresh(ctx, g) == nil {
			return true, nil
		}
	}
	scopes, err := s.scopesFor(status, b, d, g)
	if err != nil {
		return false, err
	}
	return true, s.obtain(ctx, d, g, scopes, status == http.StatusForbidden)
}

// scopesFor is what the next grant asks for: the configured scopes, else
// the challenge's, else the metadata's scopes_supported, else none; on a
// step-up, what was asked before with what the 403 adds (never the same
// set again: that would loop).
func (s *Session) scopesFor(status int, b Bearer, d *Discovery, g *grant) ([]string, error) {
	challenged := strings.Fields(b.Scope)
	if status == http.StatusForbidden {
		had := slices.Clone(g.asked)
		if g.e != nil {
			had = union(had, strings.Fields(g.e.Scope))
		}
		if len(challenged) == 0 || subset(challenged, had) {
			return nil, fmt.Errorf("oauth: the server refuses the token for insufficient scope, asking for %s, which the token was already granted: not asked again", quote(b.Scope))
		}
		if g.stepUps >= s.o.MaxStepUps {
			return nil, fmt.Errorf("oauth: the server asked for more scope %d times: no further step-up", g.stepUps+1)
		}
		g.stepUps++
		return union(had, challenged), nil
	}
	var scopes []string
	switch {
	case len(s.o.Scopes) > 0:
		scopes = slices.Clone(s.o.Scopes)
	case len(challenged) > 0:
		scopes = challenged
	case d.Metadata != nil && len(d.Metadata.ScopesSupported) > 0:
		scopes = slices.Clone(d.Metadata.ScopesSupported)
	}
	if s.o.Mode == ModeLogin && len(scopes) > 0 && slices.Contains(d.Server.ScopesSupported, "offline_access") && supports(d.Server.GrantTypesSupported, "refresh_token", true) {
		scopes = union(scopes, []string{"offline_access"})
	}
	return scopes, nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// obtain gets a new grant for d's resource as the mode allows.
func (s *Session) obtain(ctx context.Context, d *Discovery, g *grant, scopes []string, stepUp bool) error {
	if g.attempts >= maxGrants {
		return fmt.Errorf("oauth: %d grants for %s in this run were not accepted: no further attempt", g.attempts, quote(d.Resource))
	}
	g.attempts++
	g.asked = scopes
	var e *Entry
	var err error
	switch s.o.Mode {
	case ModeClientCredentials:
		e, err = s.clientCredentials(ctx, d, scopes)
	case ModeLogin:
		e, err = s.login(ctx, d, scopes)
	default:
		what := "needs authorization"
		if stepUp {
			what = "asks for more scope (" + quote(strings.Join(scopes, " ")) + ")"
		}
		return fmt.Errorf("oauth: %s %s and no usable token is cached: run mcpdrift auth login %s (or give --oauth login)", quote(d.Resource), what, quote(d.ServerURL))
	}
	if err != nil {
		return err
	}
	g.e = e
	return s.save(e)
}

// entry makes the cache entry of a new token.
func (s *Session) entry(d *Discovery, c *Client, t tokenResult, scopes []string, redirect string) *Entry {
	s.o.Secrets.AddHeader("Authorization", "Bearer "+t.access)
	s.o.Secrets.Add("an OAuth refresh token", t.refresh)
	scope := t.scope
	if scope == "" {
		scope = strings.Join(scopes, " ")
	}
	return &Entry{
		Resource: d.Resource, Issuer: d.Issuer, TokenEndpoint: d.Server.TokenEndpoint,
		ClientKind: c.Kind, ClientID: c.ID, ClientSecret: c.Secret, AuthMethod: c.AuthMethod, RedirectURI: redirect,
		AccessToken: t.access, RefreshToken: t.refresh, Expiry: t.expiry, Scope: scope, Saved: s.o.Now(),
	}
}

// clientCredentials runs the client_credentials grant.
func (s *Session) clientCredentials(ctx context.Context, d *Discovery, scopes []string) (*Entry, error) {
	if !supports(d.Server.GrantTypesSupported, "client_credentials", true) {
		return nil, fmt.Errorf("oauth: the authorization server %s does not offer the client_credentials grant", quote(d.Issuer))
	}
	method, err := authMethod(d.Server.TokenEndpointAuthMethodsSupported, true)
	if err != nil {
		return nil, fmt.Errorf("oauth: %s", err)
	}
	c := &Client{Kind: ClientPreRegistered, ID: s.o.Client.ID, Secret: s.o.Client.Secret, AuthMethod: method}
	t, err := clientCredentials(ctx, s.hc, d.Server, c, d.Resource, scopes)
	if err != nil {
		return nil, err
	}
	tr, err := s.result(t)
	if err != nil {
		return nil, err
	}
	return s.entry(d, c, tr, scopes, ""), nil
}

// Grants are what this session holds, by resource, without secrets.
func (s *Session) Grants() []GrantInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []GrantInfo
	for _, g := range s.grants {
		if g.e != nil && g.e.AccessToken != "" {
			out = append(out, InfoOf(g.e))
		}
	}
	slices.SortFunc(out, func(a, b GrantInfo) int { return strings.Compare(a.Resource, b.Resource) })
	return out
}

// GrantInfo is what may be shown of a grant: never a token or a secret.
// Its values are server-controlled: quote them.
type GrantInfo struct {
	Resource, Issuer, ClientID, ClientKind, Scope string
	Expiry                                        time.Time
	Refreshable                                   bool
}

// InfoOf is what may be shown of e.
func InfoOf(e *Entry) GrantInfo {
	return GrantInfo{Resource: e.Resource, Issuer: e.Issuer, ClientID: e.ClientID, ClientKind: e.ClientKind, Scope: e.Scope, Expiry: e.Expiry, Refreshable: e.RefreshToken != ""}
}

// Holds reports whether the session holds a token for target's resource.
func (s *Session) Holds(target string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.grantFor(target)
	return g != nil && g.e.AccessToken != ""
}
