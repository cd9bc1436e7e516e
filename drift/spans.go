package drift

import (
	"bytes"
	"context"
	"sync"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// Connections of a drift run (mcptrace.KeyConnection).
const (
	connPrimary   = "primary"
	connSecond    = "second"
	connAnonymous = "anonymous"
	connCloak     = "cloak"
)

// driftSpans records, per connection of a drift, the spans the findings
// name (probe.Spans). Nil when the run is not traced.
type driftSpans struct {
	t     mcptrace.Tracer
	mu    sync.Mutex
	conns map[string]*connSpans
}

func newDriftSpans(t mcptrace.Tracer) *driftSpans {
	if t == nil {
		return nil
	}
	return &driftSpans{t: t, conns: map[string]*connSpans{}}
}

// conn is the tracer of one connection (nil when not traced): every span
// it starts says which connection it belongs to.
func (d *driftSpans) conn(name string) mcptrace.Tracer {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c := &connSpans{t: d.t, name: name, calls: map[string]mcptrace.Span{}}
	d.conns[name] = c
	return c
}

// connSpans is one connection's tracer: it starts spans through the run's
// tracer and keeps the ones findings name.
type connSpans struct {
	t    mcptrace.Tracer
	name string

	mu         sync.Mutex
	listing    mcptrace.Span // the INTERNAL tools/list span
	firstPage  mcptrace.Span
	last       mcptrace.Span // the last request sent
	discover   mcptrace.Span
	initialize mcptrace.Span
	calls      map[string]mcptrace.Span
}

func (c *connSpans) Start(ctx context.Context, r mcptrace.Request) (context.Context, mcptrace.Span) {
	r.Attrs = append(r.Attrs, mcptrace.String(mcptrace.KeyConnection, c.name))
	ctx, s := c.t.Start(ctx, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case r.Kind == mcptrace.Internal && r.Method == "tools/list":
		c.listing = s
	case r.Kind != mcptrace.Client || r.ID == "":
		// a notification is not a request anything is read from
	case r.Method == "tools/list":
		if c.firstPage == nil {
			c.firstPage = s
		}
		c.last = s
	case r.Method == "tools/call":
		c.calls[r.Target] = s
		c.last = s
	default:
		switch r.Method {
		case "server/discover":
			c.discover = s
		case "initialize":
			c.initialize = s
		}
		c.last = s
	}
	return ctx, s
}

func ref(s mcptrace.Span) probe.SpanRef {
	r := mcptrace.RefOf(s)
	return probe.SpanRef{TraceID: r.TraceID, SpanID: r.SpanID}
}

func (d *driftSpans) get(name string) *connSpans {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.conns[name]; c != nil {
		return c
	}
	return &connSpans{}
}

// spans are the refs probe attributes findings to. discoverIdentity says
// that the primary server/discover answer carried serverInfo (else it came
// from initialize, or the first tools/list page).
func (d *driftSpans) spans(era string, discoverRaw []byte) probe.Spans {
	if d == nil {
		return probe.Spans{}
	}
	p, s, a, k := d.get(connPrimary), d.get(connSecond), d.get(connAnonymous), d.get(connCloak)
	for _, c := range []*connSpans{p, s, a, k} {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	out := probe.Spans{List: ref(p.listing), Second: ref(s.listing), Cloak: ref(k.listing), Anonymous: ref(a.listing),
		AnonymousRequest: ref(a.last), Refused: ref(p.last), Initialize: ref(p.initialize), Calls: map[string]probe.SpanRef{}}
	switch {
	case era == "legacy" && p.initialize != nil:
		out.Identity = ref(p.initialize)
	case p.discover != nil && bytes.Contains(discoverRaw, []byte(`"`+mcpwire.MetaServerInfo+`"`)):
		out.Identity = ref(p.discover)
	default:
		out.Identity = ref(p.firstPage)
	}
	for name, sp := range p.calls {
		out.Calls[name] = ref(sp)
	}
	return out
}
