package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// DocumentAuth authorizes the fetch of documents that the tools of some
// MCP servers name in an external $ref (package reffetch's Authorizer),
// with the run's Session, under one rule: a document that answers 401 gets
// a token only when its own protected resource metadata (RFC 9728: the
// challenge's resource_metadata, else the well-known URLs at the
// document's origin) names a resource that covers the document and, among
// its authorization servers, the issuer one of those MCP servers is
// authorized by. The token is then one for the document's resource (RFC
// 8707), got as the Session gets any (a held or cached grant, refreshed;
// else the Session's mode: client_credentials, the browser flow only in
// ModeLogin, never a new grant in ModeCached): never the MCP server's
// token unless the document's resource is the MCP server's own. A
// document behind any other authorization server, or with no resource
// metadata, gets no token, and the error says why.
//
// The issuer an MCP server is authorized by is the one of the grant the
// Session holds for it, else of the grant cached for it; in ModeLogin and
// ModeClientCredentials, with neither, the one its protected resource
// metadata names (the one the run authorizes it against).
type DocumentAuth struct {
	s       *Session
	servers []string
}

// Documents is the DocumentAuth of the documents the tools of the MCP
// servers at these URLs refer to.
func (s *Session) Documents(servers ...string) *DocumentAuth {
	return &DocumentAuth{s: s, servers: slices.Clone(servers)}
}

// Covers is the package's Covers: where a token may go.
func (a *DocumentAuth) Covers(resource, target string) bool { return Covers(resource, target) }

// Challenged answers the 401 of a GET of doc whose WWW-Authenticate values
// are given: the resource a token was got for and the Authorization header
// value to send, or why no token is sent. The document's resource
// metadata is read through rt (the fetch's own transport: its address
// checks hold), the authorization server's metadata and the token through
// the Session's client.
func (a *DocumentAuth) Challenged(ctx context.Context, doc string, wwwAuthenticate []string, rt http.RoundTripper) (resource, authorization string, err error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var b Bearer
	if len(wwwAuthenticate) > 0 {
		cs, err := ParseWWWAuthenticate(wwwAuthenticate)
		if err != nil {
			return "", "", errors.New("its WWW-Authenticate header is malformed, so it is not followed")
		}
		b, _ = BearerOf(cs)
	}
	u, err := url.Parse(doc)
	if err != nil || u.Host == "" {
		return "", "", errors.New("the document URL is not an absolute URL")
	}
	issuers, err := a.serverIssuers(ctx)
	if err != nil {
		return "", "", err
	}
	https := strings.EqualFold(u.Scheme, "https")
	prm, prmURL, err := findResourceMetadata(ctx, newHTTPClient(rt, s.o.RequestTimeout), doc, b.ResourceMetadata, http.Header{}, https)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", "", fmt.Errorf("the document has no protected resource metadata (RFC 9728), so its authorization server is not known: a token is asked only of the authorization server of the MCP server (%s)", quoteAll(issuers))
	case err != nil:
		return "", "", err
	}
	if !Covers(prm.Resource, doc) {
		return "", "", fmt.Errorf("its protected resource metadata names the resource %s, which does not cover the document: no token is asked for it or sent to it", quote(prm.Resource))
	}
	issuer := ""
	for _, as := range prm.AuthorizationServers {
		if slices.Contains(issuers, as) {
			issuer = as
			break
		}
	}
	if issuer == "" {
		return "", "", fmt.Errorf("it is behind the authorization server %s, not the one the MCP server is authorized by (%s): a token is asked only of the MCP server's own authorization server", quoteAll(prm.AuthorizationServers), quoteAll(issuers))
	}
	if err := checkEndpointScheme(issuer, https); err != nil {
		return "", "", fmt.Errorf("oauth: authorization server %s: %s", quote(issuer), err)
	}
	m, err := fetchServerMetadata(ctx, s.hc, issuer, http.Header{}, https)
	if err != nil {
		return "", "", err
	}
	d := &Discovery{ServerURL: doc, Resource: prm.Resource, Metadata: prm, MetadataURL: prmURL, Issuer: issuer, Server: m}
	tok, err := s.documentToken(ctx, d, b)
	if err != nil {
		return "", "", err
	}
	return d.Resource, "Bearer " + tok, nil
}

// serverIssuers are the issuers the MCP servers are authorized by (see
// DocumentAuth), at least one, or why none is known.
func (a *DocumentAuth) serverIssuers(ctx context.Context) ([]string, error) {
	s := a.s
	var out []string
	var firstErr error
	for _, srv := range a.servers {
		iss, err := s.serverIssuer(ctx, srv)
		if err != nil {
			firstErr = cmp(firstErr, err)
			continue
		}
		if !slices.Contains(out, iss) {
			out = append(out, iss)
		}
	}
	switch {
	case len(out) > 0:
		return out, nil
	case firstErr != nil:
		return nil, firstErr
	}
	return nil, errors.New("no MCP server it belongs to is reached over HTTP with OAuth")
}

// serverIssuer is the issuer the MCP server at server is authorized by.
func (s *Session) serverIssuer(ctx context.Context, server string) (string, error) {
	if g := s.grantFor(server); g != nil && g.e.Issuer != "" {
		return g.e.Issuer, nil
	}
	if !s.o.ForceLogin && s.o.Store != nil {
		e, err := s.o.Store.Find(server, s.clientFilter())
		if err != nil {
			return "", err
		}
		if e != nil && e.Issuer != "" {
			return e.Issuer, nil
		}
	}
	if s.o.Mode == ModeCached {
		return "", fmt.Errorf("no token for the MCP server %s is held or cached, so the authorization server it is authorized by is not known", quote(server))
	}
	d, err := Discover(ctx, DiscoverOptions{ServerURL: server, HTTPClient: s.hc, ProtocolVersion: s.o.ProtocolVersion})
	if err != nil {
		return "", fmt.Errorf("the MCP server %s: %w", quote(server), err)
	}
	return d.Issuer, nil
}

// documentToken is an access token for d's resource from d's issuer: the
// grant held or cached for exactly that resource and issuer (refreshed
// when about to expire), else a new one as the mode allows.
func (s *Session) documentToken(ctx context.Context, d *Discovery, b Bearer) (string, error) {
	g := s.grants[d.Resource]
	if g != nil && g.e != nil && g.e.Issuer != d.Issuer {
		g.e = nil // nothing of another authorization server is used here
	}
	if g == nil {
		g = &grant{}
		s.grants[d.Resource] = g
	}
	if (g.e == nil || g.e.AccessToken == "") && !s.o.ForceLogin && s.o.Store != nil {
		es, err := s.o.Store.List()
		if err != nil {
			return "", err
		}
		for _, e := range es {
			if e.Resource == d.Resource && e.Issuer == d.Issuer && (s.clientFilter() == "" || e.ClientID == s.clientFilter()) {
				s.adopt(e)
				break
			}
		}
	}
	if g.e != nil && g.e.AccessToken != "" {
		if g.e.Expiry.IsZero() || !s.o.Now().Add(refreshMargin).After(g.e.Expiry) {
			return g.e.AccessToken, nil
		}
		if g.e.RefreshToken != "" && s.refresh(ctx, g) == nil {
			return g.e.AccessToken, nil
		}
		g.e.AccessToken = ""
	}
	scopes, err := s.scopesFor(http.StatusUnauthorized, b, d, g)
	if err != nil {
		return "", err
	}
	if err := s.obtain(ctx, d, g, scopes, false); err != nil {
		return "", err
	}
	return g.e.AccessToken, nil
}

// quoteAll quotes each of list, comma separated.
func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, v := range list {
		q[i] = quote(v)
	}
	return strings.Join(q, ", ")
}
