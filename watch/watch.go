// Package watch keeps a fleet of MCP servers observed: each server is
// observed again when the ttlMs of its last tools/list expires (with
// jitter, since the specification forbids polling in lockstep), after a
// default interval when it sent none, with exponential backoff after a
// failure, and at once when it sends notifications/tools/list_changed.
// Each change is one Event (names and digests, and the decision core's
// verdict against the baseline).
//
// The package does no I/O of its own: the observation, the listener, the
// clock and the randomness are the caller's (Options), so the schedule is
// deterministic under test. Run ends when its context ends, after the
// observations in flight have finished (drain).
package watch

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Defaults of Options.
const (
	DefaultInterval       = 5 * time.Minute
	DefaultMinInterval    = 30 * time.Second
	DefaultMaxInterval    = 24 * time.Hour
	DefaultJitter         = 0.2
	DefaultBackoffMin     = 5 * time.Second
	DefaultBackoffMax     = 10 * time.Minute
	DefaultObserveTimeout = 30 * time.Second
	DefaultDebounce       = time.Second
	DefaultConcurrency    = 16
)

// Target is one server kept observed.
type Target struct {
	// Name identifies the server in events (escaped when written).
	Name   string
	Config mcpclient.Config
	// Baseline, with HasBaseline, is what every observation is decided
	// against (a lock entry's approved tools); without it, each change is
	// decided against the observation before it.
	Baseline    []manifest.Tool
	HasBaseline bool
}

// Result is one successful listing.
type Result struct {
	Tools          []manifest.Tool
	ManifestDigest string
	// Complete: the listing ended without nextCursor (a partial one is
	// an inconclusive event, never compared).
	Complete bool
	// Reason says why a listing is partial.
	Reason string
	// TTL is the ttlMs of the listing (nil: none sent).
	TTL *time.Duration
}

// Clock is the time source (real time by default).
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

func defaultRand() float64 { return rand.Float64() }

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Options say how to observe and when.
type Options struct {
	// Observe lists one server (required). Its context carries the
	// deadline ObserveTimeout; it is not cancelled when Run's context
	// ends, so an observation in flight finishes (drain).
	Observe func(ctx context.Context, t *Target) (*Result, error)
	// Listen holds open the server's list_changed stream, calling changed
	// for each notification, until ctx ends or the stream does (nil: no
	// listening). A *mcpclient.ListenUnsupportedError stops listening to
	// that server; other errors are retried with backoff.
	Listen func(ctx context.Context, t *Target, changed func()) error
	// Emit receives each event, one at a time, in seq order.
	Emit func(*Event)
	// Warn receives messages about the watch itself (escaped).
	Warn func(string)

	Clock Clock
	// Rand returns a number in [0, 1) for jitter (math/rand/v2.Float64
	// by default; tests inject a fixed sequence).
	Rand func() float64

	// Interval is the delay after a listing without ttlMs. A ttlMs is
	// held within [MinInterval, MaxInterval]: 0 means "stale at once",
	// which is not a polling interval.
	Interval, MinInterval, MaxInterval time.Duration
	// Jitter adds up to this fraction of the delay, at random.
	Jitter float64
	// BackoffMin and BackoffMax bound the delay after failures: it
	// doubles with each consecutive failure, half of it at random.
	BackoffMin, BackoffMax time.Duration
	// ObserveTimeout bounds each observation.
	ObserveTimeout time.Duration
	// Debounce is the least time between two observations of a server
	// that list_changed notifications start (a flood of notifications is
	// one observation per Debounce).
	Debounce time.Duration
	// Concurrency bounds the observations in flight.
	Concurrency int

	// Decide tunes the decision core.
	Decide decide.Options
}

// Fill checks the Options and sets the defaults of the zero fields (Run
// calls it).
func (o *Options) Fill() error {
	if o.Observe == nil {
		return errors.New("watch: Options.Observe is required")
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Rand == nil {
		o.Rand = defaultRand
	}
	if o.Emit == nil {
		o.Emit = func(*Event) {}
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Interval, DefaultInterval)
	def(&o.MinInterval, DefaultMinInterval)
	def(&o.MaxInterval, DefaultMaxInterval)
	def(&o.BackoffMin, DefaultBackoffMin)
	def(&o.BackoffMax, DefaultBackoffMax)
	def(&o.ObserveTimeout, DefaultObserveTimeout)
	def(&o.Debounce, DefaultDebounce)
	if o.Jitter <= 0 {
		o.Jitter = DefaultJitter
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxInterval < o.MinInterval {
		o.MaxInterval = o.MinInterval
	}
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = o.BackoffMin
	}
	return nil
}

// NextDelay is the schedule, a pure function of its inputs: after
// failures consecutive failures, BackoffMin doubled failures-1 times
// (at most BackoffMax), its second half at random; otherwise the ttl
// (nil: Interval) held within [MinInterval, MaxInterval], plus up to
// Jitter of it at random. r is in [0, 1). Options must be filled
// (Run does it; tests call Fill).
func (o *Options) NextDelay(ttl *time.Duration, failures int, r float64) time.Duration {
	r = min(max(r, 0), math.Nextafter(1, 0))
	if failures > 0 {
		d := o.BackoffMax
		if failures-1 < 62 {
			if b := o.BackoffMin << (failures - 1); b > 0 && b < o.BackoffMax {
				d = b
			}
		}
		return d/2 + time.Duration(r*float64(d-d/2))
	}
	base := o.Interval
	if ttl != nil {
		base = min(max(*ttl, o.MinInterval), o.MaxInterval)
	}
	return base + time.Duration(r*o.Jitter*float64(base))
}

// Run watches every target until ctx ends, then waits for the
// observations in flight and returns nil. It returns an error only for
// Options it cannot use.
func Run(ctx context.Context, targets []*Target, opt Options) error {
	if err := opt.Fill(); err != nil {
		return err
	}
	w := &watcher{opt: &opt, sem: make(chan struct{}, opt.Concurrency)}
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, t)
		}()
	}
	wg.Wait()
	return nil
}

type watcher struct {
	opt *Options
	sem chan struct{}

	mu  sync.Mutex // serializes Emit and Rand
	seq int64
}

func (w *watcher) rand() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opt.Rand()
}

func (w *watcher) emit(ev *Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	ev.Seq = w.seq
	ev.Schema = SchemaID
	w.opt.Emit(ev)
}

// state is what the watch knows of one server.
type state struct {
	observed bool // a complete listing was seen
	digest   string
	tools    []manifest.Tool
	failures int
	failKind string // the kind of the failure streak's event
}

func (w *watcher) loop(ctx context.Context, t *Target) {
	changed := make(chan struct{}, 1)
	ended := make(chan struct{}, 1)
	var lwg sync.WaitGroup
	if w.opt.Listen != nil {
		lwg.Add(1)
		go func() {
			defer lwg.Done()
			w.listen(ctx, t, changed, ended)
		}()
	}
	defer lwg.Wait()
	st := &state{}
	trigger := TriggerStart
	var lastLC time.Time // when the last list_changed observation started
	for {
		res, err, ok := w.observe(ctx, t)
		if !ok {
			return // ctx ended while waiting for a slot
		}
		last := w.opt.Clock.Now()
		ev := st.update(t, res, err, w.opt)
		var ttl *time.Duration
		if err == nil && res.Complete {
			ttl = res.TTL
		}
		delay := w.opt.NextDelay(ttl, st.failures, w.rand())
		if ev != nil {
			ev.Time, ev.Server, ev.Trigger = stamp(last), safetext.Escape(t.Name), trigger
			ms := delay.Milliseconds()
			ev.NextInMs = &ms
			if err == nil && res.TTL != nil {
				tm := res.TTL.Milliseconds()
				ev.TTLMs = &tm
			}
			w.emit(ev)
		}
		next := TriggerInterval
		switch {
		case st.failures > 0:
			next = TriggerRetry
		case ttl != nil:
			next = TriggerTTL
		}
		select {
		case <-ctx.Done():
			return
		case <-w.opt.Clock.After(delay):
			trigger = next
		case <-ended:
			trigger = TriggerStreamEnded
		case <-changed:
			trigger = TriggerListChanged
			// A flood of notifications is one observation per Debounce.
			if wait := w.opt.Debounce - w.opt.Clock.Now().Sub(lastLC); !lastLC.IsZero() && wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-w.opt.Clock.After(wait):
				}
			}
			select {
			case <-changed: // notifications meanwhile are this observation
			default:
			}
			lastLC = w.opt.Clock.Now()
		}
	}
}

// observe runs one observation within a slot of Concurrency. ok is false
// when ctx ended before a slot was free. The observation itself is not
// cancelled by ctx: it finishes within ObserveTimeout (drain).
func (w *watcher) observe(ctx context.Context, t *Target) (res *Result, err error, ok bool) {
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, false
	}
	defer func() { <-w.sem }()
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.opt.ObserveTimeout)
	defer cancel()
	res, err = w.opt.Observe(octx, t)
	if err == nil && res == nil {
		err = errors.New("the observation returned nothing")
	}
	return res, err, true
}

// update folds one observation into the state and returns its event, or
// nil when nothing changed.
func (st *state) update(t *Target, res *Result, err error, opt *Options) *Event {
	if err != nil || !res.Complete {
		st.failures++
		kind, msg := KindUnreachable, ""
		if err != nil {
			msg = safetext.Inert(err.Error())
		} else {
			kind, msg = KindInconclusive, "the listing was partial, so nothing was compared: "+safetext.Inert(res.Reason)
		}
		if st.failKind == kind {
			return nil // one event per streak
		}
		st.failKind = kind
		ev := &Event{Kind: kind, Error: msg, Failures: st.failures}
		if st.observed {
			ev.ManifestDigest = &DigestPair{Old: st.digest}
		}
		return ev
	}
	ev := &Event{}
	switch {
	case !st.observed && st.failKind == "":
		ev.Kind = KindObserved
	case st.failKind != "":
		ev.Kind = KindRecovered
	case res.ManifestDigest != st.digest:
		ev.Kind = KindChanged
	default:
		ev = nil
	}
	if ev != nil {
		n := len(res.Tools)
		ev.ToolCount = &n
		ev.ManifestDigest = &DigestPair{New: res.ManifestDigest}
		if st.observed {
			ev.ManifestDigest.Old = st.digest
			ev.Tools = Compare(st.tools, res.Tools)
		}
		switch {
		case t.HasBaseline:
			ev.Baseline = BaselineLock
			ev.Decision, ev.Decisions = Verdict(t.Baseline, res.Tools, opt.Decide)
		case st.observed:
			ev.Baseline = BaselinePrevious
			ev.Decision, ev.Decisions = Verdict(st.tools, res.Tools, opt.Decide)
		}
	}
	st.observed, st.digest, st.tools = true, res.ManifestDigest, res.Tools
	st.failures, st.failKind = 0, ""
	return ev
}

// streamOpen is how long a listener must have run to count as a stream
// that was open (a refused connection returns at once).
const streamOpen = 5 * time.Second

// listen holds the target's list_changed stream open, again after it
// ends (with backoff), until ctx ends or the server offers none. When a
// stream that was open ends, the server is observed at once: changes
// while no stream is open would otherwise wait for its ttl.
func (w *watcher) listen(ctx context.Context, t *Target, changed, ended chan<- struct{}) {
	failures := 0
	for ctx.Err() == nil {
		start := w.opt.Clock.Now()
		err := w.opt.Listen(ctx, t, func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		})
		if ctx.Err() != nil {
			return
		}
		if _, ok := errors.AsType[*mcpclient.ListenUnsupportedError](err); ok {
			w.opt.Warn("server " + safetext.Quote(t.Name) + ": " + safetext.Inert(err.Error()) + "; it is observed on its ttlMs or the interval only")
			return
		}
		lasted := w.opt.Clock.Now().Sub(start)
		if lasted >= streamOpen {
			// A stream that was open ended: what it would have said since
			// is unknown, so the server is observed now, not at its ttl.
			select {
			case ended <- struct{}{}:
			default:
			}
		}
		if lasted > w.opt.BackoffMax {
			failures = 0 // a stream that stayed open a while was no failure
		}
		failures++
		select {
		case <-ctx.Done():
			return
		case <-w.opt.Clock.After(w.opt.NextDelay(nil, failures, w.rand())):
		}
	}
}
