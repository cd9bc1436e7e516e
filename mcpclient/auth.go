package mcpclient

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Auth authorizes a run's HTTP requests (package oauth implements it):
// the one place credentials other than Config.Headers enter a request.
type Auth interface {
	// Authorize puts the credential for req's URL on req (the
	// Authorization header), or leaves req as it is when it holds none for
	// that URL. An error ends the exchange (an *AuthError).
	Authorize(req *http.Request) error
	// Challenged is told of a 401 or 403 answer to req, with its
	// WWW-Authenticate values. retry says req should be sent again (the
	// Auth now holds a credential that answers the challenge); false with
	// no error leaves the answer as it is; an error ends the exchange (an
	// *AuthError).
	Challenged(ctx context.Context, req *http.Request, status int, wwwAuthenticate []string) (retry bool, err error)
}

// maxAuthRetries bounds how often one request is sent again after a
// challenge.
const maxAuthRetries = 2

// AuthError is an exchange Config.Auth ended: it could not authorize the
// request, or could not answer the server's challenge. HTTP is the answer
// that challenged (nil when none came); errors.As finds it too.
type AuthError struct {
	Method string
	HTTP   *HTTPError
	// Err says why, as escaped text (package oauth's messages are).
	Err error
}

func (e *AuthError) Error() string {
	msg := "mcpclient: " + e.Method + ": "
	if e.HTTP != nil {
		msg += "HTTP " + strconv.Itoa(e.HTTP.Status) + ", and "
	}
	return msg + "authorization failed: " + safetext.Inert(e.Err.Error())
}

func (e *AuthError) Unwrap() []error {
	if e.HTTP == nil {
		return []error{e.Err}
	}
	return []error{e.HTTP, e.Err}
}

// authTransport is the transport of a run with Config.Auth: every
// request authorized, every 401 and 403 told to the Auth and, when it
// says so, the request sent again (its body replayed; at most
// maxAuthRetries times).
type authTransport struct {
	base http.RoundTripper
	auth Auth
}

func (t authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req := r.Clone(r.Context())
		if attempt > 0 {
			body, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = body
		}
		if err := t.auth.Authorize(req); err != nil {
			return nil, &AuthError{Method: methodOf(r), Err: err}
		}
		resp, err := t.base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, err
		}
		if attempt == maxAuthRetries || r.Body != nil && r.GetBody == nil {
			return resp, nil
		}
		www := resp.Header.Values("WWW-Authenticate")
		retry, cerr := t.auth.Challenged(r.Context(), req, resp.StatusCode, www)
		if cerr != nil || retry {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		if cerr != nil {
			he := &HTTPError{Method: methodOf(r), Status: resp.StatusCode, WWWAuthenticate: safetext.Clip(strings.Join(www, ", "), maxWWWAuthenticate)}
			return nil, &AuthError{Method: he.Method, HTTP: he, Err: cerr}
		}
		if !retry {
			return resp, nil
		}
	}
}

// methodOf names a request in a message: its Mcp-Method, else the HTTP
// method.
func methodOf(r *http.Request) string {
	if m := r.Header.Get("Mcp-Method"); m != "" && safetext.IsSafe(m) && len(m) <= 64 {
		return m
	}
	return r.Method
}

// NewAuthTransport is base (nil: http.DefaultTransport) with a authorizing
// every request and answering every 401 and 403 as a run with Config.Auth
// does: for an http.Client of one's own (the gateway's upstream).
func NewAuthTransport(base http.RoundTripper, a Auth) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return authTransport{base: base, auth: a}
}
