package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/telemetry"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// OpenTelemetry for every command that makes MCP requests. registerOTLP is
// the one registration: drift, pin and proxy call it, and so must every
// later command that talks to a server (lock check, scan, watch), so that
// the flag, the environment it reads, its usage errors, the redaction of
// its secrets and the export bound are the same everywhere. A command
// uses it in this order:
//
//	otlp := registerOTLP(cmd)                      // with the other flags
//	...
//	RunE:
//	  tr, err := otlp.start(e, telemetry.ModeRun)  // first: a bad endpoint is exit 2,
//	  if err != nil { return err }                 // header values become secrets
//	  defer tr.finish()                            // export, at most 2 s, one warning
//	  ctx = tr.begin(ctx, "lock check")            // the run's root span
//	  cfg.Tracer = tr.tracer()                     // nil when off: nothing changes
//	  ...
//	  if !tr.finish() { /* drop the ids of anything written after */ }
//
// telemetry.ModeService is for a long-running command (proxy, watch):
// spans go out in bounded batches while it runs. Everything here is a
// no-op when export is off (no --otlp-endpoint and no
// OTEL_EXPORTER_OTLP_*ENDPOINT): tracer() is nil, begin returns ctx,
// finish reports true, and every byte sent is what it is without tracing.

// otlpFlags is --otlp-endpoint on one command.
type otlpFlags struct {
	endpoint string
	cmd      *cobra.Command
}

// registerOTLP registers --otlp-endpoint on cmd.
func registerOTLP(cmd *cobra.Command) *otlpFlags {
	f := &otlpFlags{cmd: cmd}
	cmd.Flags().StringVar(&f.endpoint, "otlp-endpoint", "", "export one span per MCP request to this OTLP/HTTP collector (a base URL, like OTEL_EXPORTER_OTLP_ENDPOINT: /v1/traces is appended; OTEL_EXPORTER_OTLP_* and OTEL_SERVICE_NAME are read too). A collector that is down costs at most 2 s and one warning")
	return f
}

// tracing is one command's export (nil, or with a nil provider, when
// off: then nothing is traced and every byte sent is what it was).
type tracing struct {
	e    *env
	p    *telemetry.Provider
	root mcptrace.Span
	done bool
	ok   bool
	// after is said after the warning of a failed export (drift: "; the
	// report carries no trace ids"); set it before finish.
	after string
}

// start resolves the export configuration — a bad endpoint is a usage
// error (exit 2) — records its secrets (header values, URL query values)
// in the run's redact.Set, and starts the provider, which redacts every
// span it exports with that same Set (whatever secret the run records
// later, such as a downstream's Authorization in the gateway). Nothing is
// sent before finish.
func (f *otlpFlags) start(e *env, mode telemetry.Mode) (*tracing, error) {
	set := f.cmd.Flags().Changed("otlp-endpoint")
	s, err := telemetry.Resolve(f.endpoint, set, os.LookupEnv)
	if err != nil {
		return nil, usageErr("%s", err.Error())
	}
	if s == nil {
		return &tracing{e: e, ok: true}, nil
	}
	// Secrets first: nothing printed from here on may carry them.
	warnShort(e, s.Secrets(e.secrets))
	t := &tracing{e: e, ok: true}
	p, err := telemetry.New(s, telemetry.Options{Mode: mode, Version: version(), Warn: t.warn, Secrets: e.secrets})
	if err != nil {
		return nil, usageErr("%s", err.Error())
	}
	t.p = p
	return t, nil
}

// begin starts the run's root span ("mcpdrift COMMAND"), the parent of
// its requests' spans, in the returned context.
func (t *tracing) begin(ctx context.Context, command string) context.Context {
	if !t.on() || t.root != nil {
		return ctx
	}
	ctx, t.root = t.p.Tracer().Start(ctx, mcptrace.Request{Kind: mcptrace.Internal, Name: "mcpdrift " + command,
		Attrs: []mcptrace.Attr{mcptrace.String(mcptrace.KeyCommand, command)}})
	return ctx
}

func (t *tracing) warn(msg string) {
	fmt.Fprintf(t.e.stderr, "mcpdrift: warning: %s%s; the run's results are unaffected\n", msg, t.after)
}

// tracer is the run's tracer (nil when off).
func (t *tracing) tracer() mcptrace.Tracer {
	if t == nil || t.p == nil {
		return nil
	}
	return t.p.Tracer()
}

// on reports whether spans are exported.
func (t *tracing) on() bool { return t != nil && t.p != nil }

// finish ends the root span and exports, within telemetry.ExportBound
// (2 s); a failed export is one warning on stderr. It reports whether the
// spans reached the collector (true when off). Later calls repeat the
// first one's answer.
func (t *tracing) finish() bool {
	if t == nil || t.p == nil {
		return true
	}
	if !t.done {
		t.done = true
		if t.root != nil {
			t.root.End(mcptrace.Outcome{})
		}
		t.ok = t.p.Flush()
	}
	return t.ok
}

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

func newDriftSpans(t *tracing) *driftSpans {
	if !t.on() {
		return nil
	}
	return &driftSpans{t: t.tracer(), conns: map[string]*connSpans{}}
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

// dropIDs removes every finding's ids: a run whose export failed carries
// none, since they would name spans no backend has.
func dropIDs(rep *probe.Report) {
	for i := range rep.Findings {
		rep.Findings[i].TraceID, rep.Findings[i].SpanID = "", ""
	}
	for i := range rep.Suppressed {
		rep.Suppressed[i].TraceID, rep.Suppressed[i].SpanID = "", ""
	}
}
