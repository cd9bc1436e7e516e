package telemetry

import (
	"bytes"
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// TestExportRedacts: whatever part of a span holds a secret — its name,
// an attribute's key or value (a string or a list of strings), an
// event's name or attributes, a link's attributes or trace state, the
// status description, the span's own trace state, the resource's
// service.name — the real OTLP export (both modes) carries none of its
// bytes, including a secret recorded after the span ended, and a span
// with no secret is exported as it was.
func TestExportRedacts(t *testing.T) {
	const early = "tok_9f8e7d6c5b4a3210early"
	const late = "tok_0123456789abcdefLATE"
	for _, mode := range []Mode{ModeRun, ModeService} {
		col := otlptest.New(otlptest.Accept)
		defer col.Close()
		set := &redact.Set{}
		set.Add("a test value", early)
		p, err := New(&Settings{URL: col.URL() + "/v1/traces", ServiceName: "svc-" + early}, Options{Mode: mode, Secrets: set, Warn: func(s string) { t.Errorf("warning: %s", s) }})
		if err != nil {
			t.Fatal(err)
		}
		tr := p.Tracer()
		ctx, sp := tr.Start(context.Background(), mcptrace.Request{Kind: mcptrace.Server, Method: "tools/call", Target: "nope_" + early, ID: `"` + late + `"`,
			Attrs: []mcptrace.Attr{mcptrace.String("k", "v-"+early)}})
		sp.End(mcptrace.Outcome{Failure: "f-" + late, Attrs: []mcptrace.Attr{mcptrace.String(mcptrace.KeyGatewayReason, late)}})
		ts, _ := trace.ParseTraceState("vendor=" + early)
		link := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, TraceState: ts})
		parent := trace.ContextWithRemoteSpanContext(ctx, link)
		_, s := p.tracer.Start(parent, "raw "+late, trace.WithLinks(trace.Link{SpanContext: link, Attributes: []attribute.KeyValue{attribute.String("l", early)}}),
			trace.WithAttributes(attribute.StringSlice("list", []string{"ok", late}), attribute.String("key-"+late, "x")))
		s.AddEvent("event "+early, trace.WithAttributes(attribute.String("e", late)))
		s.SetStatus(codes.Error, "status "+late)
		s.End()
		_, clean := tr.Start(context.Background(), mcptrace.Request{Kind: mcptrace.Internal, Name: "clean"})
		clean.End(mcptrace.Outcome{})
		set.Add("a test value recorded late", late)
		if !p.Flush() {
			t.Fatal("export failed")
		}
		var all bytes.Buffer
		for _, b := range col.Bodies() {
			all.Write(b)
		}
		for _, v := range []string{early, late} {
			if bytes.Contains(all.Bytes(), []byte(v)) {
				t.Errorf("mode %d: the export holds %q", mode, v)
			}
		}
		names := map[string]bool{}
		for _, s := range col.Spans() {
			names[s.Name] = true
		}
		for _, want := range []string{"tools/call nope_" + redact.Placeholder, "raw " + redact.Placeholder, "clean"} {
			if !names[want] {
				t.Errorf("mode %d: no span %q in %v", mode, want, names)
			}
		}
	}
}
