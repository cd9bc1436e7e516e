package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
)

// Client is how this program identifies itself to one authorization
// server. Secret is a secret of the run.
type Client struct {
	Kind       string // ClientPreRegistered, ClientMetadataDocument, ClientDynamic
	ID         string
	Secret     string
	AuthMethod string // AuthBasic, AuthPost, AuthNone
}

// ClientOptions say which client identities may be used, in the order of
// preference: a pre-registered client (ID), a Client ID Metadata Document
// (MetadataURL, when the server supports them), dynamic registration
// (RFC 7591, when the server offers it).
type ClientOptions struct {
	// ID and Secret are a client registered with the authorization server
	// beforehand; Secret "" is a public client.
	ID, Secret string
	// MetadataURL is the https URL of this client's metadata document,
	// used as its client_id where the server supports that.
	MetadataURL string
	// Name is the client_name of a dynamic registration (default
	// "mcpdrift").
	Name string
}

// authMethod picks the token endpoint authentication of a client with or
// without a secret from what the server supports (RFC 8414's default,
// client_secret_basic, when it says nothing).
func authMethod(supported []string, hasSecret bool) (string, error) {
	if supported == nil {
		supported = []string{AuthBasic}
	}
	if !hasSecret {
		if slices.Contains(supported, AuthNone) {
			return AuthNone, nil
		}
		return "", errors.New("the authorization server does not accept public clients (token_endpoint_auth_methods_supported has no \"none\"): give a client secret")
	}
	for _, m := range []string{AuthBasic, AuthPost} {
		if slices.Contains(supported, m) {
			return m, nil
		}
	}
	if slices.Contains(supported, AuthNone) {
		return AuthNone, nil
	}
	return "", errors.New("the authorization server supports neither client_secret_basic, client_secret_post nor none")
}

// checkMetadataURL holds a Client ID Metadata Document URL to https with
// a path (the document's rules).
func checkMetadataURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil {
		return errors.New("a client metadata URL must be an https URL with a path, without a fragment or user info")
	}
	return nil
}

// registration is a dynamic client registration request (RFC 7591).
type registration struct {
	ClientName      string   `json:"client_name"`
	RedirectURIs    []string `json:"redirect_uris"`
	GrantTypes      []string `json:"grant_types"`
	ResponseTypes   []string `json:"response_types"`
	AuthMethod      string   `json:"token_endpoint_auth_method"`
	ApplicationType string   `json:"application_type"`
	Scope           string   `json:"scope,omitempty"`
}

// registered is the answer to a registration, the members read.
type registered struct {
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	AuthMethod   string   `json:"token_endpoint_auth_method"`
	RedirectURIs []string `json:"redirect_uris"`
}

// register registers a client dynamically for the loopback redirect.
// The answer's redirect_uris, when it gives any, must be exactly the one
// asked for: a server that registered another redirect is refused.
func register(ctx context.Context, hc *http.Client, m *ServerMetadata, name, redirect string, sec Secrets) (*Client, error) {
	method := AuthNone
	if !supports(m.TokenEndpointAuthMethodsSupported, AuthNone, false) {
		var err error
		if method, err = authMethod(m.TokenEndpointAuthMethodsSupported, true); err != nil {
			return nil, fmt.Errorf("oauth: dynamic registration: %s", err)
		}
	}
	if name == "" {
		name = "mcpdrift"
	}
	body, _ := json.Marshal(registration{
		ClientName: name, RedirectURIs: []string{redirect}, GrantTypes: []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"}, AuthMethod: method, ApplicationType: "native",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("oauth: dynamic registration: the registration endpoint is not a URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth: dynamic registration: %s", requestError(m.RegistrationEndpoint, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("oauth: dynamic registration: %s", requestError(m.RegistrationEndpoint, err))
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oauth: dynamic registration: %s", (&HTTPError{URL: m.RegistrationEndpoint, Status: resp.StatusCode}).Error())
	}
	var r registered
	if err := strictDecode(b, &r); err != nil || r.ClientID == "" {
		return nil, errors.New("oauth: dynamic registration: the answer is not a client registration")
	}
	sec.Add("the client secret of a dynamically registered client", r.ClientSecret)
	for _, u := range r.RedirectURIs {
		if u != redirect {
			return nil, fmt.Errorf("oauth: dynamic registration: the server registered the redirect URI %s, not the loopback one asked for", quote(u))
		}
	}
	if r.AuthMethod != "" {
		method = r.AuthMethod
	}
	switch method {
	case AuthBasic, AuthPost:
		if r.ClientSecret == "" {
			return nil, errors.New("oauth: dynamic registration: the client was registered for " + method + " without a client_secret")
		}
	case AuthNone:
	default:
		return nil, fmt.Errorf("oauth: dynamic registration: token_endpoint_auth_method %s is not one this client speaks", quote(method))
	}
	return &Client{Kind: ClientDynamic, ID: r.ClientID, Secret: r.ClientSecret, AuthMethod: method}, nil
}
