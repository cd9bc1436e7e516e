package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// Bounds of the requests this package sends.
const (
	// DefaultRequestTimeout bounds one request to an authorization server
	// or for metadata.
	DefaultRequestTimeout = 30 * time.Second
	maxRedirects          = 3
)

// errTooLarge is a response body beyond its bound.
var errTooLarge = errors.New("the response is larger than allowed")

// boundedTransport limits every response body it returns to max bytes: a
// read past them fails with errTooLarge.
type boundedTransport struct {
	base http.RoundTripper
	max  int64
}

func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, errTooLarge
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more than allowed is there: the body is too large.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, errTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// newHTTPClient is the client of the requests this package sends: the
// base transport (nil: a clone of http.DefaultTransport), bodies bounded,
// a timeout per request, and redirects followed only for GET, within the
// origin, at most maxRedirects (a POST is never redirected: a token
// request's credentials stay where they were sent).
func newHTTPClient(base http.RoundTripper, timeout time.Duration) *http.Client {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return &http.Client{
		Transport: boundedTransport{base: base, max: maxMetadataBytes},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			switch {
			case len(via) > maxRedirects:
				return errors.New("too many redirects")
			case via[0].Method != http.MethodGet || req.Method != http.MethodGet:
				return errors.New("a redirect of a " + via[0].Method)
			case Origin(req.URL) != Origin(via[0].URL):
				return errors.New("a redirect to another origin")
			}
			return nil
		},
	}
}

// HTTPError is an answer with an unexpected status.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	return "HTTP " + strconv.Itoa(e.Status) + " from " + quote(e.URL)
}

// getJSON GETs url and returns its body when the answer is 200 with a
// JSON body, within maxMetadataBytes. A 404 is an *HTTPError.
func getJSON(ctx context.Context, c *http.Client, rawURL string, header http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL", quote(rawURL))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, requestError(rawURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, &HTTPError{URL: rawURL, Status: resp.StatusCode}
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, requestError(rawURL, err)
	}
	return buf.Bytes(), nil
}

// requestError is the message of a request that failed: the URL quoted,
// the cause as mcpwire shows a transport error.
func requestError(rawURL string, err error) error {
	if errors.Is(err, errTooLarge) {
		return fmt.Errorf("%s: the response is larger than allowed", quote(rawURL))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s: %s", quote(rawURL), mcpwire.ErrorText(err, 300))
}

// checkEndpointScheme refuses plain HTTP to a host that is not loopback,
// and plain HTTP at all when the resource itself is reached over https.
func checkEndpointScheme(raw string, resourceHTTPS bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	if strings.EqualFold(u.Scheme, "https") {
		return nil
	}
	if !strings.EqualFold(u.Scheme, "http") || !IsLoopback(u.Hostname()) {
		return errors.New("not https (plain HTTP is accepted only on a loopback host)")
	}
	if resourceHTTPS {
		return errors.New("plain HTTP, for a resource reached over https")
	}
	return nil
}
