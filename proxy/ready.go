package proxy

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// Observe lists the upstream once on the gateway's own behalf, in a
// session of its own that it then ends, and gates the list as a
// downstream's first tools/list would. It is what makes a replica ready
// (/healthz) before any agent has connected: a readiness probe keeps an
// unready replica out of its Service, so readiness cannot wait for
// traffic. It speaks 2026-07-28 first and initializes a legacy session
// when the upstream does not answer that way. It reports Ready.
func (g *Gateway) Observe(ctx context.Context) bool {
	if g.cfg.Mode == Observe {
		return g.Ready()
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.ListTimeout+g.cfg.RequestTimeout)
	defer cancel()
	ctx, end := g.ownWork(ctx, "mcpdrift proxy observe")
	defer end()
	for _, legacy := range []bool{g.observeLegacy.Load(), !g.observeLegacy.Load()} {
		up, err := g.dial(ctx)
		if err != nil {
			return g.Ready()
		}
		s := newSession(g, "", up, nil)
		ok := s.observeGuarded(ctx, legacy)
		s.close()
		if ok {
			g.observeLegacy.Store(legacy)
			return true
		}
		if ctx.Err() != nil {
			break
		}
	}
	return g.Ready()
}

// observeGuarded is observe, where a panic ends s (fault), not the
// caller's goroutine: Observe runs on /healthz's background goroutine.
func (s *session) observeGuarded(ctx context.Context, legacy bool) (ok bool) {
	defer s.guard("observing the upstream for readiness")
	return s.observe(ctx, legacy)
}

// observe lists and gates in s (after initializing a legacy session).
func (s *session) observe(ctx context.Context, legacy bool) bool {
	if legacy {
		init, _ := frame.Parse([]byte(`{"jsonrpc":"2.0","id":"mcpdrift-proxy-observe","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":` +
			jsonString(s.g.cfg.Upstream.ClientName) + `,"version":` + jsonString(s.g.cfg.Upstream.ClientVersion) + `}}}`))
		if rep := s.handle(ctx, init, nil, nil); !initialized(rep) {
			return false
		}
		note, _ := frame.Parse([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		s.handle(ctx, note, nil, nil)
	}
	gl, err := s.gated(ctx, nil)
	return err == nil && gl != nil && !gl.list.Withheld
}

func jsonString(v string) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// observing: one background observation at a time, at most one per
// observeEvery.
type observing struct {
	running atomic.Bool
	last    atomic.Int64 // unix nanoseconds of the last start
}

const observeEvery = 2 * time.Second

// kickObserve starts a background Observe when the gateway is not ready
// (a probe of /healthz asks), unless one runs or one started within
// observeEvery.
func (g *Gateway) kickObserve() {
	if g.Ready() || g.closing() {
		return
	}
	now := time.Now().UnixNano()
	if now-g.observing.last.Load() < int64(observeEvery) || !g.observing.running.CompareAndSwap(false, true) {
		return
	}
	g.observing.last.Store(now)
	go func() {
		defer g.observing.running.Store(false)
		g.Observe(context.Background())
	}()
}

func (g *Gateway) closing() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}
