package frame

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// resumeServer serves one event stream per GET: gets[i] for the i-th GET
// (the last one again past the end), recording each Last-Event-ID and
// when it came.
type resumeServer struct {
	mu      sync.Mutex
	gets    []string
	status  int
	lastIDs []string
	times   []time.Time
}

func (s *resumeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.lastIDs)
	s.lastIDs = append(s.lastIDs, r.Header.Get("Last-Event-ID"))
	s.times = append(s.times, time.Now())
	status, body := s.status, ""
	if len(s.gets) > 0 {
		body = s.gets[min(n, len(s.gets)-1)]
	}
	s.mu.Unlock()
	if r.Method != http.MethodGet || r.Header.Get("Accept") != "text/event-stream" {
		http.Error(w, "not a GET for an event stream", http.StatusBadRequest)
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, body)
}

func (s *resumeServer) resumer(url string) *Resumer {
	c := &http.Client{Timeout: 5 * time.Second}
	return &Resumer{
		NewGET: func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		},
		Do:     c.Do,
		Limits: ResumeLimits{DefaultWait: time.Millisecond},
	}
}

// firstStream is a reader that read a stream to its end.
func firstStream(t *testing.T, in string, l SSELimits) *SSEReader {
	t.Helper()
	sr := NewSSEReader(strings.NewReader(in), l)
	for {
		if _, err := sr.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			return sr
		}
	}
}

// TestResumeAfterPolling: a stream closed after a priming event with an
// id and a retry (SEP-1699) is resumed after the retry, from that id, and
// the new stream carries the response.
func TestResumeAfterPolling(t *testing.T) {
	s := &resumeServer{gets: []string{"id: e2\ndata: \n\nid: e3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"}}
	ts := httptest.NewServer(s)
	defer ts.Close()
	sr := firstStream(t, "id: e1\nretry: 120\ndata: \n\n", lim(1<<20, 1<<20, 100))
	r := s.resumer(ts.URL)
	ended := time.Now()
	nsr, body, err := r.Resume(context.Background(), sr)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	if waited := s.times[0].Sub(ended); waited < 120*time.Millisecond || waited > time.Second {
		t.Errorf("reconnected after %v, want the server's retry of 120ms", waited)
	}
	if s.lastIDs[0] != "e1" {
		t.Errorf("Last-Event-ID %q, want e1", s.lastIDs[0])
	}
	var got []string
	for {
		ev, err := nsr.Next()
		if err != nil {
			break
		}
		got = append(got, string(ev.Data))
	}
	if len(got) != 2 || !strings.Contains(got[1], `"id":1`) {
		t.Errorf("resumed stream: %q", got)
	}
	if r.Resumed() != 1 {
		t.Errorf("resumed %d", r.Resumed())
	}
}

// TestResumeRefusals: what is not resumed, and why.
func TestResumeRefusals(t *testing.T) {
	ts405 := httptest.NewServer(&resumeServer{status: http.StatusMethodNotAllowed})
	defer ts405.Close()
	cases := []struct {
		name, stream, want string
		status             int
		ctxTimeout         time.Duration
	}{
		{"no id", "data: \n\n", "no event id", 0, 0},
		{"id cut inside an event", "id: x\ndata: {\"a\"", "no event id", 0, 0},
		{"id not a header value", "id: a\x01b\ndata: \n\n", "HTTP header", 0, 0},
		{"retry too long", "id: a\nretry: 3600000\ndata: \n\n", "more than the 30s allowed", 0, 0},
		{"past the deadline", "id: a\nretry: 5000\ndata: \n\n", "deadline", 0, time.Second},
		{"405", "id: a\ndata: \n\n", "HTTP 405 (the server offers no stream to resume)", http.StatusMethodNotAllowed, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if c.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.ctxTimeout)
				defer cancel()
			}
			r := (&resumeServer{}).resumer(ts405.URL)
			_, _, err := r.Resume(ctx, firstStream(t, c.stream, lim(1<<20, 1<<20, 100)))
			var re *ResumeError
			if !errors.As(err, &re) || !strings.Contains(re.Reason, c.want) || re.Status != c.status {
				t.Fatalf("got %v, want a ResumeError saying %q (status %d)", err, c.want, c.status)
			}
		})
	}
}

// TestResumeStalls: a server whose every resumed stream ends with nothing
// new is given up on after Stalled reconnections; one that makes progress
// each time is bounded by Attempts.
func TestResumeStalls(t *testing.T) {
	for _, c := range []struct {
		name   string
		gets   []string
		limits ResumeLimits
		want   string
		tries  int
	}{
		{"no progress", []string{": nothing\n\n"}, ResumeLimits{Stalled: 3}, "3 reconnections in a row", 3},
		{"progress", []string{"id: 1\ndata: \n\n", "id: 2\ndata: \n\n", "id: 3\ndata: \n\n", "id: 4\ndata: \n\n", "id: 5\ndata: \n\n"}, ResumeLimits{Attempts: 4}, "4 reconnections in all", 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &resumeServer{gets: c.gets}
			ts := httptest.NewServer(s)
			defer ts.Close()
			r := s.resumer(ts.URL)
			r.Limits.Stalled, r.Limits.Attempts = c.limits.Stalled, c.limits.Attempts
			sr := firstStream(t, "id: 0\nretry: 1\ndata: \n\n", lim(1<<20, 1<<20, 100))
			var err error
			for {
				var body io.ReadCloser
				if sr, body, err = r.Resume(context.Background(), sr); err != nil {
					break
				}
				for {
					if _, rerr := sr.Next(); rerr != nil {
						break
					}
				}
				body.Close()
			}
			var re *ResumeError
			if !errors.As(err, &re) || !strings.Contains(re.Reason, c.want) || len(s.lastIDs) != c.tries || re.Resumed != c.tries {
				t.Fatalf("got %v after %d GETs (%q), want %q after %d", err, len(s.lastIDs), s.lastIDs, c.want, c.tries)
			}
		})
	}
}

// TestResumeKeepsBounds: the resumed stream is read within what the first
// one left of the bytes.
func TestResumeKeepsBounds(t *testing.T) {
	s := &resumeServer{gets: []string{"data: " + strings.Repeat("x", 100) + "\n\n"}}
	ts := httptest.NewServer(s)
	defer ts.Close()
	first := "id: a\nretry: 1\ndata: \n\n"
	sr := firstStream(t, first, lim(int64(len(first))+50, 1<<20, 100))
	nsr, body, err := s.resumer(ts.URL).Resume(context.Background(), sr)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	var le *LimitError
	if _, err := nsr.Next(); !errors.As(err, &le) || le.Limit != LimitBytes {
		t.Fatalf("got %v, want the bytes bound the first stream left", err)
	}
}
