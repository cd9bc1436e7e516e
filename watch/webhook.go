package watch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Defaults of WebhookOptions.
const (
	DefaultWebhookQueue      = 1024
	DefaultWebhookAttempts   = 6
	DefaultWebhookTimeout    = 10 * time.Second
	DefaultWebhookBackoff    = time.Second
	DefaultWebhookBackoffMax = 30 * time.Second
)

// WebhookOptions say where events are POSTed and within which bounds.
type WebhookOptions struct {
	// URL receives each event as one POST (Content-Type
	// application/json, the event's line). Redirects are not followed.
	URL    string
	Client *http.Client // default: a client with Timeout
	// Queue bounds the events waiting; when it is full the oldest is
	// dropped (counted, with a warning).
	Queue int
	// Attempts bounds the POSTs of one event (a 2xx ends them; a 4xx
	// other than 408 and 429 too: the receiver refused the event).
	Attempts int
	// Timeout bounds one POST, to the last byte of the answer.
	Timeout time.Duration
	// Backoff is the delay after the first failed POST, doubled after
	// each further one, at most BackoffMax.
	Backoff, BackoffMax time.Duration
	// Warn receives what went wrong, without the URL (it may hold a
	// token).
	Warn  func(string)
	Clock Clock
}

// Webhook delivers events to a URL in the background. Send never blocks:
// a webhook that is down never stops or delays the watch.
type Webhook struct {
	opt WebhookOptions

	mu      sync.Mutex
	queue   [][]byte
	dropped int64
	sent    int64
	wake    chan struct{}
	done    chan struct{}
	closing chan struct{} // Close was called: deliver what is queued
	stop    chan struct{} // Close's deadline passed: stop now
	once    sync.Once
}

// NewWebhook starts delivering; Close stops it.
func NewWebhook(opt WebhookOptions) *Webhook {
	if opt.Queue <= 0 {
		opt.Queue = DefaultWebhookQueue
	}
	if opt.Attempts <= 0 {
		opt.Attempts = DefaultWebhookAttempts
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultWebhookTimeout
	}
	if opt.Backoff <= 0 {
		opt.Backoff = DefaultWebhookBackoff
	}
	if opt.BackoffMax < opt.Backoff {
		opt.BackoffMax = max(DefaultWebhookBackoffMax, opt.Backoff)
	}
	if opt.Warn == nil {
		opt.Warn = func(string) {}
	}
	if opt.Clock == nil {
		opt.Clock = realClock{}
	}
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: opt.Timeout}
	} else {
		c := *opt.Client
		opt.Client = &c
	}
	opt.Client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	w := &Webhook{opt: opt, wake: make(chan struct{}, 1), done: make(chan struct{}), closing: make(chan struct{}), stop: make(chan struct{})}
	go w.run()
	return w
}

// Send queues one event line. When the queue is full the oldest waiting
// event is dropped.
func (w *Webhook) Send(line []byte) {
	w.mu.Lock()
	if len(w.queue) >= w.opt.Queue {
		w.queue[0] = nil
		w.queue = w.queue[1:]
		w.dropped++
		if w.dropped == 1 || w.dropped%100 == 0 {
			w.opt.Warn(fmt.Sprintf("the webhook's queue is full (%d events): the oldest was dropped (%d dropped so far)", w.opt.Queue, w.dropped))
		}
	}
	w.queue = append(w.queue, bytes.Clone(line))
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Stats are the events delivered and dropped so far.
func (w *Webhook) Stats() (sent, dropped int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent, w.dropped
}

// Close delivers what is queued until ctx ends, then stops; the events
// still queued are dropped and counted.
func (w *Webhook) Close(ctx context.Context) {
	w.once.Do(func() { close(w.closing) })
	select {
	case <-w.done:
		return
	case <-ctx.Done():
	}
	close(w.stop)
	<-w.done
	w.mu.Lock()
	left := len(w.queue)
	w.mu.Unlock()
	if left > 0 {
		w.opt.Warn(fmt.Sprintf("the webhook was stopped with %d events undelivered", left))
	}
}

func (w *Webhook) next() ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		return nil, false
	}
	b := w.queue[0]
	w.queue[0] = nil
	w.queue = w.queue[1:]
	return b, true
}

func (w *Webhook) run() {
	defer close(w.done)
	for {
		line, ok := w.next()
		if !ok {
			select {
			case <-w.wake:
				continue
			case <-w.closing:
				if _, more := w.peek(); more {
					continue
				}
				return
			}
		}
		if !w.deliver(line) {
			w.mu.Lock()
			w.queue = append([][]byte{line}, w.queue...)
			w.mu.Unlock()
			return
		}
	}
}

func (w *Webhook) peek() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue), len(w.queue) > 0
}

// deliver POSTs one event within Attempts; false when Close's deadline
// stopped it first.
func (w *Webhook) deliver(line []byte) bool {
	delay := w.opt.Backoff
	var why string
	for attempt := 1; attempt <= w.opt.Attempts; attempt++ {
		var retry bool
		retry, why = w.post(line)
		if why == "" {
			w.mu.Lock()
			w.sent++
			w.mu.Unlock()
			return true
		}
		if !retry || attempt == w.opt.Attempts {
			break
		}
		select {
		case <-w.opt.Clock.After(delay):
		case <-w.stop:
			return false
		}
		delay = min(delay*2, w.opt.BackoffMax)
	}
	w.mu.Lock()
	w.dropped++
	n := w.dropped
	w.mu.Unlock()
	w.opt.Warn(fmt.Sprintf("an event could not be delivered to the webhook (%s); dropped (%d dropped so far)", why, n))
	return true
}

// post sends one POST: why is "" on a 2xx, else what failed, with retry
// saying whether another attempt may succeed.
func (w *Webhook) post(line []byte) (retry bool, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), w.opt.Timeout)
	defer cancel()
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.opt.URL, bytes.NewReader(line))
	if err != nil {
		return false, "the request could not be built"
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.opt.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return true, "no answer within " + w.opt.Timeout.String()
		}
		return true, "the webhook could not be reached"
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch s := resp.StatusCode; {
	case s >= 200 && s <= 299:
		return false, ""
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return true, fmt.Sprintf("HTTP %d", s)
	default:
		return false, fmt.Sprintf("HTTP %d", s)
	}
}
