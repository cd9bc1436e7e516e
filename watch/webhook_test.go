package watch

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWebhookDownThenUp: while the receiver answers 503 the event is
// retried with backoff; once it is back the event arrives, once.
func TestWebhookDownThenUp(t *testing.T) {
	var up atomic.Bool
	var mu sync.Mutex
	var got []string
	var tries atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tries.Add(1)
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		if r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
		}
	}))
	defer ts.Close()
	wh := NewWebhook(WebhookOptions{URL: ts.URL, Backoff: 20 * time.Millisecond, BackoffMax: 40 * time.Millisecond, Attempts: 20})
	wh.Send([]byte(`{"seq":1}` + "\n"))
	for tries.Load() < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	up.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wh.Close(ctx)
	if len(got) != 1 || got[0] != `{"seq":1}`+"\n" {
		t.Fatalf("received %q", got)
	}
	if sent, dropped := wh.Stats(); sent != 1 || dropped != 0 {
		t.Fatalf("sent %d dropped %d", sent, dropped)
	}
}

// TestWebhookNeverBlocks: a receiver that hangs never blocks Send; the
// queue keeps the newest events (drop-oldest, counted, warned once per
// hundred); Close gives up at its deadline.
func TestWebhookNeverBlocks(t *testing.T) {
	hang := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(hang)
	var warns atomic.Int32
	wh := NewWebhook(WebhookOptions{URL: ts.URL, Queue: 10, Timeout: time.Minute, Warn: func(s string) {
		if strings.Contains(s, ts.URL) {
			t.Errorf("a warning repeats the URL: %s", s)
		}
		warns.Add(1)
	}})
	start := time.Now()
	for i := range 1000 {
		wh.Send([]byte{byte('0' + i%10)})
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("1,000 sends took %v", el)
	}
	_, dropped := wh.Stats()
	if dropped < 989 || dropped > 990 {
		t.Fatalf("dropped %d, want 989 or 990 (one may be in flight)", dropped)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	wh.Close(ctx)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Close took %v past its deadline", el)
	}
	if warns.Load() < 10 {
		t.Fatalf("%d warnings", warns.Load())
	}
}

// TestWebhookRefused: a 4xx ends the attempts at once (the receiver
// refused the event); redirects are not followed.
func TestWebhookRefused(t *testing.T) {
	var tries atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("a redirect was followed") }))
	defer target.Close()
	for _, status := range []int{http.StatusBadRequest, http.StatusFound} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tries.Add(1)
			w.Header().Set("Location", target.URL)
			w.WriteHeader(status)
		}))
		tries.Store(0)
		wh := NewWebhook(WebhookOptions{URL: ts.URL, Backoff: time.Millisecond})
		wh.Send([]byte("{}"))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		wh.Close(ctx)
		cancel()
		ts.Close()
		if _, dropped := wh.Stats(); tries.Load() != 1 || dropped != 1 {
			t.Fatalf("HTTP %d: %d tries, %d dropped", status, tries.Load(), dropped)
		}
	}
}
