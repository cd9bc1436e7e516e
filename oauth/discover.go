package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Discovery is what a client learned of a protected server: the resource
// to ask a token for, and the authorization server to ask. Its values are
// server-controlled (checked): quote before printing.
type Discovery struct {
	// ServerURL is the MCP server's URL the discovery started from.
	ServerURL string
	// Resource is the resource identifier tokens are requested for (RFC
	// 8707): the protected resource metadata's resource, which covers
	// ServerURL, or ServerURL itself in the 2025-03-26 back-compatibility.
	Resource string
	// Metadata is the protected resource metadata (nil when the server
	// has none: the 2025-03-26 back-compatibility).
	Metadata *ResourceMetadata
	// MetadataURL is where Metadata was read.
	MetadataURL string
	// Issuer and Server are the authorization server used.
	Issuer string
	Server *ServerMetadata
	// Legacy marks the 2025-03-26 back-compatibility: no protected
	// resource metadata, the authorization server at the server's origin
	// (its metadata there, else the default endpoints).
	Legacy bool
}

// DiscoverOptions are the inputs of Discover.
type DiscoverOptions struct {
	// ServerURL is the URL of the MCP server (required).
	ServerURL string
	// Challenge is the Bearer challenge of the server's 401 or 403 (its
	// resource_metadata is read first), zero when there is none.
	Challenge Bearer
	// HTTPClient sends the metadata requests (nil: a default one); the
	// package bounds its bodies and redirects either way.
	HTTPClient *http.Client
	// ProtocolVersion, when set, is sent as MCP-Protocol-Version on the
	// metadata requests (2025-06-18 asks clients to).
	ProtocolVersion string
}

// ErrNotFound marks metadata that is not there (HTTP 404 or 410 at every
// place it was looked for).
var ErrNotFound = errors.New("not found")

// Discover finds the protected resource metadata of a server (the
// challenge's resource_metadata, else the well-known URLs, path-specific
// first) and the metadata of its authorization server (RFC 8414, then
// OpenID Connect Discovery, in the specification's order). A server with
// no protected resource metadata at all is a 2025-03-26 server, and only
// then are its origin's metadata and the default endpoints used.
func Discover(ctx context.Context, o DiscoverOptions) (*Discovery, error) {
	server, err := url.Parse(o.ServerURL)
	if err != nil || server.Host == "" {
		return nil, errors.New("oauth: the server URL is not an absolute URL")
	}
	c := o.HTTPClient
	if c == nil {
		c = newHTTPClient(nil, 0)
	}
	hdr := http.Header{}
	if o.ProtocolVersion != "" {
		hdr.Set("MCP-Protocol-Version", o.ProtocolVersion)
	}
	https := strings.EqualFold(server.Scheme, "https")
	prm, prmURL, err := findResourceMetadata(ctx, c, o.ServerURL, o.Challenge.ResourceMetadata, hdr, https)
	switch {
	case errors.Is(err, ErrNotFound):
		return discoverLegacy(ctx, c, server, hdr)
	case err != nil:
		return nil, err
	}
	if !Covers(prm.Resource, o.ServerURL) {
		return nil, fmt.Errorf("oauth: the protected resource metadata names the resource %s, which is not the server %s: no token is requested for it", quote(prm.Resource), quote(o.ServerURL))
	}
	d := &Discovery{ServerURL: o.ServerURL, Resource: prm.Resource, Metadata: prm, MetadataURL: prmURL}
	var firstErr error
	for _, issuer := range prm.AuthorizationServers {
		if err := checkEndpointScheme(issuer, https); err != nil {
			firstErr = cmp(firstErr, fmt.Errorf("oauth: authorization server %s: %s", quote(issuer), err))
			continue
		}
		m, err := fetchServerMetadata(ctx, c, issuer, hdr, https)
		if err != nil {
			firstErr = cmp(firstErr, err)
			continue
		}
		d.Issuer, d.Server = issuer, m
		return d, nil
	}
	return nil, firstErr
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// findResourceMetadata reads the protected resource metadata: from the
// challenge's URL when it names one, else from the well-known URLs.
// ErrNotFound when there is none anywhere.
func findResourceMetadata(ctx context.Context, c *http.Client, server, fromHeader string, hdr http.Header, https bool) (*ResourceMetadata, string, error) {
	var candidates []string
	if fromHeader != "" {
		if err := checkEndpointScheme(fromHeader, https); err != nil {
			return nil, "", fmt.Errorf("oauth: resource_metadata %s: %s", quote(fromHeader), err)
		}
		candidates = append(candidates, fromHeader)
	}
	wk, err := ResourceMetadataURLs(server)
	if err != nil {
		return nil, "", err
	}
	candidates = append(candidates, wk...)
	for _, u := range candidates {
		b, err := getJSON(ctx, c, u, hdr)
		if notThere(err) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("oauth: protected resource metadata: %w", err)
		}
		m, err := ParseResourceMetadata(b)
		if err != nil {
			return nil, "", fmt.Errorf("oauth: %s: %w", quote(u), err)
		}
		return m, u, nil
	}
	return nil, "", ErrNotFound
}

func notThere(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.Status == http.StatusNotFound || he.Status == http.StatusGone)
}

// fetchServerMetadata reads an authorization server's metadata at its
// well-known URLs in order and checks it against the issuer.
func fetchServerMetadata(ctx context.Context, c *http.Client, issuer string, hdr http.Header, https bool) (*ServerMetadata, error) {
	urls, err := ServerMetadataURLs(issuer)
	if err != nil {
		return nil, fmt.Errorf("oauth: authorization server %s: %s", quote(issuer), err)
	}
	for _, u := range urls {
		b, err := getJSON(ctx, c, u, hdr)
		if notThere(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("oauth: authorization server metadata: %w", err)
		}
		m, err := ParseServerMetadata(b, issuer)
		if err != nil {
			return nil, fmt.Errorf("oauth: %s: %w", quote(u), err)
		}
		if err := m.checkSchemes(https); err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, fmt.Errorf("oauth: authorization server %s: no metadata at %s", quote(issuer), quote(strings.Join(urls, ", ")))
}

func (m *ServerMetadata) checkSchemes(https bool) error {
	for _, e := range []struct{ name, v string }{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint},
	} {
		if e.v == "" {
			continue
		}
		if err := checkEndpointScheme(e.v, https); err != nil {
			return fmt.Errorf("oauth: authorization server metadata: %s %s: %s", e.name, quote(e.v), err)
		}
	}
	return nil
}

// discoverLegacy is the 2025-03-26 back-compatibility: the authorization
// server is the MCP server's origin; its metadata is at the origin's
// well-known URL, else the default endpoints (/authorize, /token,
// /register) are used.
func discoverLegacy(ctx context.Context, c *http.Client, server *url.URL, hdr http.Header) (*Discovery, error) {
	https := strings.EqualFold(server.Scheme, "https")
	base := url.URL{Scheme: strings.ToLower(server.Scheme), Host: strings.ToLower(server.Host)}
	issuer := base.String()
	resource, err := CanonicalResource(server.String())
	if err != nil {
		return nil, fmt.Errorf("oauth: the server URL: %s", err)
	}
	if err := checkEndpointScheme(issuer, https); err != nil {
		return nil, fmt.Errorf("oauth: %s", err)
	}
	d := &Discovery{ServerURL: server.String(), Resource: resource, Issuer: issuer, Legacy: true}
	mu := base
	mu.Path = "/.well-known/oauth-authorization-server"
	b, err := getJSON(ctx, c, mu.String(), hdr)
	switch {
	case notThere(err):
		mk := func(p string) string { u := base; u.Path = p; return u.String() }
		d.Server = &ServerMetadata{Issuer: issuer, AuthorizationEndpoint: mk("/authorize"), TokenEndpoint: mk("/token"), RegistrationEndpoint: mk("/register")}
		return d, nil
	case err != nil:
		return nil, fmt.Errorf("oauth: authorization server metadata: %w", err)
	}
	m, err := ParseServerMetadata(b, issuer)
	if err != nil {
		return nil, fmt.Errorf("oauth: %s: %w", quote(mu.String()), err)
	}
	d.Server = m
	return d, nil
}
