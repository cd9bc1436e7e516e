package oauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// maxMetadataBytes bounds a metadata document (protected resource,
// authorization server, client registration answer).
const maxMetadataBytes = 256 << 10

// ResourceMetadata is an OAuth 2.0 Protected Resource Metadata document
// (RFC 9728), the members this client reads. Server-controlled.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// ServerMetadata is an authorization server's metadata (RFC 8414, or
// OpenID Connect Discovery 1.0), the members this client reads.
// Server-controlled.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	// ISSParameterSupported: the authorization response carries iss
	// (RFC 9207), which the client then requires.
	ISSParameterSupported bool `json:"authorization_response_iss_parameter_supported"`
	// ClientIDMetadataDocumentSupported: a URL may be the client_id
	// (Client ID Metadata Documents).
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported"`
}

// strictDecode decodes one JSON object into v: a document that is not an
// object, holds trailing data or a member of the wrong type is refused.
func strictDecode(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("not a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(v); err != nil {
		return errors.New("not valid JSON of the expected shape")
	}
	if d.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// ParseResourceMetadata reads a protected resource metadata document and
// checks what this client relies on: an absolute resource URL without a
// fragment, and at least one authorization server (each an https URL, or
// http on a loopback host).
func ParseResourceMetadata(b []byte) (*ResourceMetadata, error) {
	var m ResourceMetadata
	if err := strictDecode(b, &m); err != nil {
		return nil, fmt.Errorf("protected resource metadata: %s", err)
	}
	if _, err := resourceURL(m.Resource); err != nil {
		return nil, fmt.Errorf("protected resource metadata: resource %s: %s", quote(m.Resource), err)
	}
	if len(m.AuthorizationServers) == 0 {
		return nil, errors.New("protected resource metadata: no authorization_servers")
	}
	for _, as := range m.AuthorizationServers {
		if _, err := issuerURL(as); err != nil {
			return nil, fmt.Errorf("protected resource metadata: authorization server %s: %s", quote(as), err)
		}
	}
	return &m, nil
}

// ParseServerMetadata reads an authorization server metadata document and
// checks it against the issuer it was looked up for: the issuer must be
// that one exactly (RFC 8414 §3.3), and each endpoint an https URL (http
// only on a loopback host, when the issuer is one) at the issuer's
// origin. legacy is the 2025-03-26 back-compatibility case, where the
// server's origin is the issuer.
func ParseServerMetadata(b []byte, issuer string) (*ServerMetadata, error) {
	var m ServerMetadata
	if err := strictDecode(b, &m); err != nil {
		return nil, fmt.Errorf("authorization server metadata: %s", err)
	}
	if m.Issuer != issuer {
		return nil, fmt.Errorf("authorization server metadata: its issuer %s is not %s, the issuer it was looked up for", quote(m.Issuer), quote(issuer))
	}
	if err := m.checkEndpoints(); err != nil {
		return nil, err
	}
	return &m, nil
}

// checkEndpoints holds every endpoint to the issuer's origin and scheme.
func (m *ServerMetadata) checkEndpoints() error {
	iss, err := issuerURL(m.Issuer)
	if err != nil {
		return fmt.Errorf("authorization server metadata: issuer %s: %s", quote(m.Issuer), err)
	}
	for _, e := range []struct{ name, v string }{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint},
	} {
		if e.v == "" {
			if e.name == "token_endpoint" {
				return errors.New("authorization server metadata: no token_endpoint")
			}
			continue
		}
		if err := sameOrigin(e.v, iss); err != nil {
			return fmt.Errorf("authorization server metadata: %s %s: %s", e.name, quote(e.v), err)
		}
	}
	return nil
}

// sameOrigin checks that raw is an absolute URL at the origin of base,
// with no user info or fragment.
func sameOrigin(raw string, base *url.URL) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return errors.New("not a URL")
	case u.User != nil:
		return errors.New("carries user info")
	case u.Fragment != "" || u.RawFragment != "":
		return errors.New("has a fragment")
	case u.Scheme != "https" && u.Scheme != "http":
		return errors.New("is not an https URL")
	case Origin(u) != Origin(base):
		return errors.New("is at another origin than the issuer " + Origin(base))
	}
	return nil
}

// resourceURL parses a resource identifier (RFC 8707 §2): absolute, http
// or https, no fragment, no user info.
func resourceURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || raw == "":
		return nil, errors.New("not a URL")
	case u.Scheme != "https" && u.Scheme != "http" || u.Host == "":
		return nil, errors.New("not an absolute http(s) URL")
	case u.User != nil:
		return nil, errors.New("carries user info")
	case u.Fragment != "" || u.RawFragment != "":
		return nil, errors.New("has a fragment")
	case u.Scheme == "http" && !IsLoopback(u.Hostname()):
		return nil, errors.New("is plain HTTP to a host that is not loopback")
	}
	return u, nil
}

// issuerURL parses an issuer identifier (RFC 8414 §2): https (http only
// for a loopback host), no query, no fragment.
func issuerURL(raw string) (*url.URL, error) {
	u, err := resourceURL(raw)
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.ForceQuery {
		return nil, errors.New("has a query")
	}
	return u, nil
}

// IsLoopback reports whether host (no port) is a loopback name or address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Origin is scheme://host:port, lower case, the default port explicit.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// Covers reports whether a token issued for resource may be sent to
// target: the same origin, and target's path is resource's path or below
// it (a whole segment). This is the one test of where a token goes.
func Covers(resource, target string) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Host == "" {
		return false
	}
	t, err := url.Parse(target)
	if err != nil || t.Host == "" || t.User != nil {
		return false
	}
	if Origin(r) != Origin(t) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	tp := t.EscapedPath()
	return rp == "" || tp == rp || strings.HasPrefix(tp, rp+"/")
}

// CanonicalResource is the resource identifier of a server URL (RFC 8707,
// as the MCP authorization specification writes it): scheme and host
// lower case, no fragment, no query, no trailing slash after the path.
func CanonicalResource(raw string) (string, error) {
	u, err := resourceURL(raw)
	if err != nil {
		return "", err
	}
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath}
	return strings.TrimSuffix(c.String(), "/"), nil
}

// ResourceMetadataURLs are the well-known URLs of a server's protected
// resource metadata, in the order the specification gives (2025-11-25 on):
// the path-specific one first (when the URL has a path), then the root.
func ResourceMetadataURLs(server string) ([]string, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return nil, errors.New("not an absolute URL")
	}
	base := url.URL{Scheme: u.Scheme, Host: u.Host}
	const wk = "/.well-known/oauth-protected-resource"
	var out []string
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		b := base
		b.Path = wk + u.Path
		b.RawPath = ""
		out = append(out, strings.TrimSuffix(b.String(), "/"))
	}
	b := base
	b.Path = wk
	return append(out, b.String()), nil
}

// ServerMetadataURLs are the URLs of an authorization server's metadata,
// in the order the specification gives (2025-11-25 on): for an issuer
// with a path, RFC 8414 with the path inserted, OpenID Connect Discovery
// with the path inserted, then with it appended; for one without, RFC 8414
// then OpenID Connect Discovery.
func ServerMetadataURLs(issuer string) ([]string, error) {
	u, err := issuerURL(issuer)
	if err != nil {
		return nil, err
	}
	base := url.URL{Scheme: u.Scheme, Host: u.Host}
	p := strings.TrimSuffix(u.Path, "/")
	mk := func(path string) string { b := base; b.Path = path; return b.String() }
	if p == "" {
		return []string{mk("/.well-known/oauth-authorization-server"), mk("/.well-known/openid-configuration")}, nil
	}
	return []string{
		mk("/.well-known/oauth-authorization-server" + p),
		mk("/.well-known/openid-configuration" + p),
		mk(p + "/.well-known/openid-configuration"),
	}, nil
}

// supports reports whether list (absent: the default given) holds v.
func supports(list []string, v string, def bool) bool {
	if list == nil {
		return def
	}
	return slices.Contains(list, v)
}

// quote is the one way server-controlled text enters a message.
func quote(s string) string { return safetext.Quote(safetext.Clip(s, 200)) }
