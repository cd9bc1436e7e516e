package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

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
