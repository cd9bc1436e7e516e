package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeAuth holds a token after the first challenge, or fails.
type fakeAuth struct {
	token      string
	fail       error
	challenges atomic.Int32
}

func (a *fakeAuth) Authorize(r *http.Request) error {
	if a.token != "" {
		r.Header.Set("Authorization", "Bearer "+a.token)
	}
	return nil
}

func (a *fakeAuth) Challenged(_ context.Context, _ *http.Request, status int, www []string) (bool, error) {
	a.challenges.Add(1)
	if a.fail != nil {
		return false, a.fail
	}
	a.token = "the-token"
	return true, nil
}

// guarded answers 401 to requests without the token, then as srv.
func guarded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer the-token" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="x"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestAuthSeam(t *testing.T) {
	srv := &modernServer{t: t, pages: threePages()}
	ts := httptest.NewServer(guarded(srv))
	defer ts.Close()
	a := &fakeAuth{}
	obs := mustList(t, Config{BaseURL: ts.URL, Auth: a})
	if obs.Pages != 3 || a.challenges.Load() != 1 {
		t.Fatalf("pages %d, challenges %d", obs.Pages, a.challenges.Load())
	}
	// An Auth that cannot answer ends the run with an *AuthError that is
	// also the *HTTPError of the 401.
	b := &fakeAuth{fail: errors.New("oauth: no token for \"x\"")}
	obs, err := listTools(t, Config{BaseURL: ts.URL, Auth: b})
	var ae *AuthError
	var he *HTTPError
	if !errors.As(err, &ae) || !errors.As(err, &he) || he.Status != 401 || obs.HTTPStatus != 401 || !strings.Contains(err.Error(), "authorization failed") {
		t.Fatalf("err %v (%T), obs %+v", err, err, obs)
	}
}
