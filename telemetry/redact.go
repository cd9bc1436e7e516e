package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/redact"
)

// redacting is the one way a span leaves the process: every exporter
// New builds is wrapped in it, in both modes, so that every span's name,
// attribute keys and values, events, links, status description, trace
// state and resource attributes go through the run's redact.Set
// (Options.Secrets) as they are exported — whoever set them, and
// whatever secret was recorded after the span started (the gateway adds a
// downstream's Authorization value as it first sees it, inside the span
// of that very request). Nothing that starts spans redacts anything
// itself.
type redacting struct {
	inner   sdktrace.SpanExporter
	secrets *redact.Set
}

func (r *redacting) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if r.secrets.Empty() {
		return r.inner.ExportSpans(ctx, spans)
	}
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	res := map[*resource.Resource]*resource.Resource{}
	for i, s := range spans {
		out[i] = r.span(s, res)
	}
	return r.inner.ExportSpans(ctx, out)
}

func (r *redacting) Shutdown(ctx context.Context) error { return r.inner.Shutdown(ctx) }

// redactedSpan is a span as it is exported: the SDK's, with the parts
// that can hold text replaced by their redacted copies.
type redactedSpan struct {
	sdktrace.ReadOnlySpan
	name   string
	sc     trace.SpanContext
	attrs  []attribute.KeyValue
	events []sdktrace.Event
	links  []sdktrace.Link
	status sdktrace.Status
	res    *resource.Resource
}

func (s *redactedSpan) Name() string                     { return s.name }
func (s *redactedSpan) SpanContext() trace.SpanContext   { return s.sc }
func (s *redactedSpan) Attributes() []attribute.KeyValue { return s.attrs }
func (s *redactedSpan) Events() []sdktrace.Event         { return s.events }
func (s *redactedSpan) Links() []sdktrace.Link           { return s.links }
func (s *redactedSpan) Status() sdktrace.Status          { return s.status }
func (s *redactedSpan) Resource() *resource.Resource     { return s.res }

// span is s redacted (s itself when nothing in it changes). res holds
// the resources already redacted in this export.
func (r *redacting) span(s sdktrace.ReadOnlySpan, res map[*resource.Resource]*resource.Resource) sdktrace.ReadOnlySpan {
	changed := false
	out := &redactedSpan{ReadOnlySpan: s}
	out.name = r.text(s.Name(), &changed)
	out.sc = r.spanContext(s.SpanContext(), &changed)
	out.attrs = r.attrs(s.Attributes(), &changed)
	out.status = s.Status()
	out.status.Description = r.text(out.status.Description, &changed)
	events := s.Events()
	out.events = events
	for i, e := range events {
		c := false
		e.Name = r.text(e.Name, &c)
		e.Attributes = r.attrs(e.Attributes, &c)
		if c {
			out.events = copyOnce(out.events, events)
			out.events[i], changed = e, true
		}
	}
	links := s.Links()
	out.links = links
	for i, l := range links {
		c := false
		l.SpanContext = r.spanContext(l.SpanContext, &c)
		l.Attributes = r.attrs(l.Attributes, &c)
		if c {
			out.links = copyOnce(out.links, links)
			out.links[i], changed = l, true
		}
	}
	out.res = r.resource(s.Resource(), res, &changed)
	if !changed {
		return s
	}
	return out
}

// copyOnce is cur, or a copy of orig when cur is still orig: the SDK's
// slices are never written.
func copyOnce[T any](cur, orig []T) []T {
	if len(cur) > 0 && len(orig) > 0 && &cur[0] == &orig[0] {
		return append([]T(nil), orig...)
	}
	return cur
}

// text is t redacted; *changed is set when it differs.
func (r *redacting) text(t string, changed *bool) string {
	if t == "" {
		return t
	}
	x := r.secrets.String(t)
	if x != t {
		*changed = true
	}
	return x
}

// attrs is a redacted copy of a when any key or value changes, else a.
func (r *redacting) attrs(a []attribute.KeyValue, changed *bool) []attribute.KeyValue {
	var out []attribute.KeyValue
	for i, kv := range a {
		c := false
		k := attribute.Key(r.text(string(kv.Key), &c))
		v := kv.Value
		switch v.Type() {
		case attribute.STRING:
			v = attribute.StringValue(r.text(v.AsString(), &c))
		case attribute.STRINGSLICE:
			xs := append([]string(nil), v.AsStringSlice()...)
			for j := range xs {
				xs[j] = r.text(xs[j], &c)
			}
			v = attribute.StringSliceValue(xs)
		}
		if !c {
			if out != nil {
				out = append(out, kv)
			}
			continue
		}
		if out == nil {
			out = append(make([]attribute.KeyValue, 0, len(a)), a[:i]...)
		}
		out = append(out, attribute.KeyValue{Key: k, Value: v})
		*changed = true
	}
	if out == nil {
		return a
	}
	return out
}

// spanContext is sc with its trace state redacted: a trace state the
// redaction leaves unparseable is dropped (the ids are not text).
func (r *redacting) spanContext(sc trace.SpanContext, changed *bool) trace.SpanContext {
	ts := sc.TraceState().String()
	c := false
	x := r.text(ts, &c)
	if !c {
		return sc
	}
	*changed = true
	nts, err := trace.ParseTraceState(x)
	if err != nil {
		nts = trace.TraceState{}
	}
	return sc.WithTraceState(nts)
}

// resource is rs with its attributes redacted, made once per export.
func (r *redacting) resource(rs *resource.Resource, done map[*resource.Resource]*resource.Resource, changed *bool) *resource.Resource {
	if rs == nil {
		return rs
	}
	if x, ok := done[rs]; ok {
		if x != rs {
			*changed = true
		}
		return x
	}
	c := false
	a := r.attrs(rs.Attributes(), &c)
	x := rs
	if c {
		x = resource.NewWithAttributes(rs.SchemaURL(), a...)
		*changed = true
	}
	done[rs] = x
	return x
}
