package mcpclient

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// resumes reports whether a response stream whose read ended with err is
// to be resumed (frame.Resumer): in a legacy Streamable HTTP session
// (2025-03-26 to 2025-11-25: a 2026-07-28 server has no resumption, and
// HTTP+SSE is another transport), a stream that ended or was lost before
// the response, not one a bound or the run stopped.
func (t *httpTransport) resumes(ctx context.Context, err error) bool {
	if !t.legacy || ctx.Err() != nil {
		return false
	}
	var le *LimitError
	return !errors.As(err, &le)
}

// resumption is the resumption of one request's response stream.
type resumption struct {
	r    *frame.Resumer
	body io.Closer // the body of the stream being read, once resumed
}

func (t *httpTransport) newResumption() *resumption {
	return &resumption{r: &frame.Resumer{NewGET: t.newGET, Do: t.client.Do}}
}

// next resumes the stream sr read, which ended with readErr: the new
// stream; or nil and why the request has no response (problem), or the
// run's error (its context).
func (rs *resumption) next(ctx context.Context, sr *sseStream, readErr error) (*sseStream, string, error) {
	nsr, body, err := rs.r.Resume(ctx, sr.SSEReader)
	if err != nil {
		var re *frame.ResumeError
		if !errors.As(err, &re) {
			return nil, "", err
		}
		what := "the event stream ended without the response"
		if readErr != io.EOF {
			what = "the event stream was lost before the response (" + mcpwire.ErrorText(readErr, 200) + ")"
		}
		return nil, what + "; " + re.Error(), nil
	}
	rs.close()
	rs.body = body
	return &sseStream{SSEReader: nsr, method: sr.method}, "", nil
}

func (rs *resumption) close() {
	if rs != nil && rs.body != nil {
		rs.body.Close()
		rs.body = nil
	}
}

// newGET is the GET that resumes a stream: the configured headers, the
// session and its revision (frame.Resumer sets Accept and Last-Event-ID).
func (t *httpTransport) newGET(ctx context.Context) (*http.Request, error) {
	return t.newSessionRequest(ctx, http.MethodGet)
}

// newSessionRequest is a request without a body (GET, DELETE) with the
// configured headers, the session id and the session's revision header.
func (t *httpTransport) newSessionRequest(ctx context.Context, method string) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, method, t.url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range t.cfg.Headers {
		hr.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	t.cfg.setUserAgent(hr.Header)
	if t.sessionID != "" {
		hr.Header.Set(mcpwire.HeaderSessionID, t.sessionID)
	}
	if t.headerVersion != "" {
		hr.Header.Set(mcpwire.HeaderProtocolVersion, t.headerVersion)
	}
	return hr, nil
}
