package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Token endpoint authentication methods (RFC 7591 §2).
const (
	AuthBasic = "client_secret_basic"
	AuthPost  = "client_secret_post"
	AuthNone  = "none"
)

// maxLifetime caps a token's lifetime as the client counts it.
const maxLifetime = 366 * 24 * time.Hour

// authStyle maps a token endpoint authentication method to x/oauth2's.
func authStyle(method string) oauth2.AuthStyle {
	if method == AuthBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// oauthConfig is x/oauth2's configuration of a client at a server.
func oauthConfig(m *ServerMetadata, c *Client, redirect string, scopes []string) *oauth2.Config {
	secret := c.Secret
	if c.AuthMethod == AuthNone {
		secret = ""
	}
	return &oauth2.Config{
		ClientID:     c.ID,
		ClientSecret: secret,
		Endpoint:     oauth2.Endpoint{AuthURL: m.AuthorizationEndpoint, TokenURL: m.TokenEndpoint, AuthStyle: authStyle(c.AuthMethod)},
		RedirectURL:  redirect,
		Scopes:       scopes,
	}
}

// checkToken refuses a token response this client will not use: no
// access token, one that cannot be a header value, a token type other
// than Bearer, a lifetime of 0 or less. It returns the expiry (zero when
// the server gave no lifetime).
func checkToken(t *oauth2.Token, now time.Time) (time.Time, error) {
	switch {
	case t == nil || t.AccessToken == "":
		return time.Time{}, errors.New("the token response has no access_token")
	case !headerSafe(t.AccessToken) || t.RefreshToken != "" && !headerSafe(t.RefreshToken):
		return time.Time{}, errors.New("the token response's token is not printable ASCII without spaces")
	case t.TokenType != "" && !strings.EqualFold(t.TokenType, "bearer"):
		return time.Time{}, fmt.Errorf("the token response's token_type is %s, not Bearer", quote(t.TokenType))
	}
	raw := t.Extra("expires_in")
	if raw == nil {
		return time.Time{}, nil
	}
	var secs float64
	switch v := raw.(type) {
	case float64:
		secs = v
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return time.Time{}, errors.New("the token response's expires_in is not a number")
		}
		secs = f
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return time.Time{}, errors.New("the token response's expires_in is not a number")
		}
		secs = f
	default:
		return time.Time{}, errors.New("the token response's expires_in is not a number")
	}
	if math.IsNaN(secs) || secs <= 0 {
		return time.Time{}, fmt.Errorf("the token response gives a lifetime of %s seconds: a token that is already expired is refused", strconv.FormatFloat(secs, 'g', 6, 64))
	}
	d := time.Duration(math.Min(secs, maxLifetime.Seconds())) * time.Second
	return now.Add(d), nil
}

func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// tokenError is the message of a failed token request: the server's
// error code and description quoted, never its body.
func tokenError(what string, err error) error {
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		msg := fmt.Sprintf("oauth: %s: the token endpoint answered HTTP %d", what, status)
		if re.ErrorCode != "" {
			msg += " with error " + quote(re.ErrorCode)
		}
		if re.ErrorDescription != "" {
			msg += ": " + quote(re.ErrorDescription)
		}
		return errors.New(msg)
	case errors.Is(err, errTooLarge):
		return fmt.Errorf("oauth: %s: the token endpoint's answer is larger than allowed", what)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fmt.Errorf("oauth: %s: %w", what, err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("oauth: %s: %s", what, requestError(ue.URL, ue.Err))
	}
	return fmt.Errorf("oauth: %s: the token endpoint's answer is not a usable token response", what)
}

// withClient puts the HTTP client x/oauth2 sends with into ctx.
func withClient(ctx context.Context, c *http.Client) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, c)
}

// exchange trades an authorization code for a token (PKCE verifier and
// resource sent).
func exchange(ctx context.Context, hc *http.Client, cfg *oauth2.Config, code, verifier, resource string) (*oauth2.Token, error) {
	t, err := cfg.Exchange(withClient(ctx, hc), code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return nil, tokenError("exchanging the authorization code", err)
	}
	return t, nil
}

// clientCredentials runs the client_credentials grant for resource.
func clientCredentials(ctx context.Context, hc *http.Client, m *ServerMetadata, c *Client, resource string, scopes []string) (*oauth2.Token, error) {
	cc := clientcredentials.Config{
		ClientID:       c.ID,
		ClientSecret:   c.Secret,
		TokenURL:       m.TokenEndpoint,
		Scopes:         scopes,
		EndpointParams: url.Values{"resource": {resource}},
		AuthStyle:      authStyle(c.AuthMethod),
	}
	t, err := cc.Token(withClient(ctx, hc))
	if err != nil {
		return nil, tokenError("the client_credentials grant", err)
	}
	return t, nil
}

// refresh runs the refresh_token grant with the resource (RFC 8707 §2.2),
// which x/oauth2's token source does not send: the one token request
// made here rather than by x/oauth2.
func refresh(ctx context.Context, hc *http.Client, e *Entry) (*oauth2.Token, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {e.RefreshToken}, "resource": {e.Resource}}
	if e.AuthMethod != AuthBasic {
		form.Set("client_id", e.ClientID)
		if e.AuthMethod == AuthPost && e.ClientSecret != "" {
			form.Set("client_secret", e.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, errors.New("oauth: refreshing the token: the token endpoint is not a URL")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if e.AuthMethod == AuthBasic {
		req.SetBasicAuth(url.QueryEscape(e.ClientID), url.QueryEscape(e.ClientSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, tokenError("refreshing the token", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, tokenError("refreshing the token", err)
	}
	var raw map[string]any
	if json.Unmarshal(body, &raw) != nil {
		raw = nil
	}
	str := func(k string) string { s, _ := raw[k].(string); return s }
	if resp.StatusCode != http.StatusOK {
		return nil, tokenError("refreshing the token", &oauth2.RetrieveError{Response: resp, ErrorCode: str("error"), ErrorDescription: str("error_description")})
	}
	if raw == nil {
		return nil, errors.New("oauth: refreshing the token: the token endpoint's answer is not a JSON object")
	}
	t := &oauth2.Token{AccessToken: str("access_token"), TokenType: str("token_type"), RefreshToken: str("refresh_token")}
	return t.WithExtra(raw), nil
}
