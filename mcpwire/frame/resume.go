package frame

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"
)

// Resumption of a Streamable HTTP response stream (2025-03-26 to
// 2025-11-25; 2026-07-28 has none). A server may put an id on its SSE
// events; a client whose response stream ends, or is lost, before the
// response may GET the endpoint with Last-Event-ID set to the last id it
// received, and the server replays that stream from there. 2025-11-25
// (SEP-1699) lets a server close the stream on purpose after an event with
// an id (a "priming" event, empty data) and a retry field, and have the
// client "poll": it must wait the retry, then reconnect. Resumer is that
// client side, bounded, shared by mcpclient and the gateway's upstream.

// ResumeLimits bound the resumption of one request's stream. A zero field
// takes its default.
type ResumeLimits struct {
	// Attempts bounds the reconnections in all (default 32).
	Attempts int
	// Stalled bounds the reconnections in a row after which the stream
	// has brought no new event id (default 3): a server that closes every
	// stream before anything new is not waited on forever.
	Stalled int
	// MaxWait is the longest retry honoured (default 30 s); a server that
	// asks for longer is not resumed.
	MaxWait time.Duration
	// DefaultWait is the wait when the server sent no retry (default 1 s).
	DefaultWait time.Duration
}

func (l ResumeLimits) withDefaults() ResumeLimits {
	if l.Attempts <= 0 {
		l.Attempts = 32
	}
	if l.Stalled <= 0 {
		l.Stalled = 3
	}
	if l.MaxWait <= 0 {
		l.MaxWait = 30 * time.Second
	}
	if l.DefaultWait <= 0 {
		l.DefaultWait = time.Second
	}
	return l
}

// Resumer resumes the response stream of one request: make one per
// request. NewGET builds the GET of the caller's endpoint with its own
// headers (the session, the protocol revision, credentials); Resume sets
// Accept and Last-Event-ID. Do sends it (an http.Client's Do).
type Resumer struct {
	NewGET func(ctx context.Context) (*http.Request, error)
	Do     func(*http.Request) (*http.Response, error)
	Limits ResumeLimits

	attempts int           // reconnections tried
	resumed  int           // reconnections that opened a stream
	stalled  int           // reconnections in a row without a new event id
	lastID   string        // the id the last reconnection resumed from
	retry    time.Duration // the last retry the server sent, on any of the streams
	hasRetry bool
}

// Resumed is the number of reconnections that opened a stream so far.
func (r *Resumer) Resumed() int { return r.resumed }

// ResumeError says why a stream that ended before the response was not
// resumed (any longer). Reason is escaped text: what the server sent is
// quoted.
type ResumeError struct {
	Resumed int // the reconnections that opened a stream before
	Reason  string
	// Status is the HTTP status of a GET that was refused (0 otherwise).
	Status int
}

func (e *ResumeError) Error() string {
	if e.Resumed == 0 {
		return "it was not resumed: " + e.Reason
	}
	return fmt.Sprintf("it was resumed %d time(s), then no more: %s", e.Resumed, e.Reason)
}

// Resumable reports whether readErr, the error that ended a stream read,
// leaves it to be resumed: its end (io.EOF) or a lost connection, not a
// bound of the reader or the end of ctx.
func Resumable(ctx context.Context, readErr error) bool {
	if ctx.Err() != nil {
		return false
	}
	var le *LimitError
	return readErr != nil && !errors.As(readErr, &le)
}

// Resume reconnects to the stream sr read, which ended (Resumable) before
// the response: it waits the server's retry (Limits.DefaultWait without
// one), GETs with Last-Event-ID and returns a reader of the new stream
// with the bounds that sr left (what sr consumed counts against MaxBytes
// and MaxEvents, unless PerEvent), and its body, which the caller closes.
// A GET that fails to connect is tried again within the bounds. It
// returns a *ResumeError when the stream is not to be resumed, or ctx's
// error.
func (r *Resumer) Resume(ctx context.Context, sr *SSEReader) (*SSEReader, io.ReadCloser, error) {
	lim := r.Limits.withDefaults()
	id := sr.LastEventID()
	if id == "" {
		id = r.lastID // a resumed stream that brought no id resumes from the same
	}
	if id == "" {
		return nil, nil, r.fail("the stream carried no event id to resume from", 0)
	}
	if len(id) > 1024 || !headerValue(id) {
		return nil, nil, r.fail("its last event id is not a value an HTTP header can carry", 0)
	}
	if d, ok := sr.Retry(); ok {
		r.retry, r.hasRetry = d, true // the reconnection time outlives its stream
	}
	wait := lim.DefaultWait
	if r.hasRetry {
		wait = r.retry
	}
	if wait > lim.MaxWait {
		return nil, nil, r.fail("the server asks for a wait of "+wait.String()+" before reconnecting, more than the "+lim.MaxWait.String()+" allowed", 0)
	}
	next := sr.lim
	if !next.PerEvent {
		next.MaxBytes -= sr.n
		next.MaxEvents -= sr.events
		if next.MaxBytes <= 0 || next.MaxEvents <= 0 {
			return nil, nil, r.fail("the stream already used its bounds", 0)
		}
	}
	for {
		if id != r.lastID {
			r.stalled = 0
		}
		switch {
		case r.attempts >= lim.Attempts:
			return nil, nil, r.fail(strconv.Itoa(lim.Attempts)+" reconnections in all", 0)
		case r.stalled >= lim.Stalled:
			return nil, nil, r.fail(strconv.Itoa(lim.Stalled)+" reconnections in a row brought no new event", 0)
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return nil, nil, r.fail("the wait of "+wait.String()+" the server asks for would pass the request's deadline", 0)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
		r.attempts++
		r.stalled++
		r.lastID = id
		resp, err := r.get(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			var re *ResumeError
			if errors.As(err, &re) {
				return nil, nil, err
			}
			wait = lim.DefaultWait // not connected: try again, as a stall
			continue
		}
		r.resumed++
		return NewSSEReader(resp.Body, next), resp.Body, nil
	}
}

// get sends the GET that resumes from id: an event stream, or a
// *ResumeError for an answer that is not one, or the error of Do.
func (r *Resumer) get(ctx context.Context, id string) (*http.Response, error) {
	req, err := r.NewGET(ctx)
	if err != nil {
		return nil, r.fail("the GET could not be made", 0)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", id)
	resp, err := r.Do(req)
	if err != nil {
		return nil, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode == http.StatusOK && mt == "text/event-stream" {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		why := "the GET with Last-Event-ID was answered with HTTP " + strconv.Itoa(resp.StatusCode)
		if resp.StatusCode == http.StatusMethodNotAllowed {
			why += " (the server offers no stream to resume)"
		}
		return nil, r.fail(why, resp.StatusCode)
	}
	return nil, r.fail("the GET with Last-Event-ID was answered with a body that is not an event stream", 0)
}

func (r *Resumer) fail(reason string, status int) error {
	return &ResumeError{Resumed: r.resumed, Reason: reason, Status: status}
}
