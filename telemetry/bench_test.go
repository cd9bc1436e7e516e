package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// BenchmarkSpan: one CLIENT tools/call span as the gateway makes it (a
// remote parent, the request's attributes at Start, the outcome's at End),
// through the SDK and the batching exporter (ModeService) to a loopback
// collector that decodes and discards, against the named baseline of the
// same span through the SDK's tracer with the attributes the SDK would be
// given directly (no mcptrace translation, no escaping). The difference is
// what this package's seam costs over the SDK itself.
//
//	go test ./telemetry -run '^$' -bench Span -benchmem
func BenchmarkSpan(b *testing.B) {
	c := otlptest.New(otlptest.Discard)
	defer c.Close()
	p, err := New(&Settings{URL: c.URL() + "/v1/traces", From: FlagEndpoint, ServiceName: "bench"}, Options{Mode: ModeService, Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Flush()
	parent, _ := mcptrace.ParseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	req := mcptrace.Request{Kind: mcptrace.Client, Method: "tools/call", Target: "search_issues", ID: "42", Transport: mcptrace.TransportTCP,
		ServerAddress: "127.0.0.1", ServerPort: 8080, ProtocolVersion: "2026-07-28", Parent: parent,
		Attrs: []mcptrace.Attr{mcptrace.String(mcptrace.KeyGatewayMode, "enforce")}}
	out := mcptrace.Outcome{HTTPStatus: 200, Attrs: []mcptrace.Attr{mcptrace.String(mcptrace.KeyGatewayDecision, "allow"), mcptrace.String(mcptrace.KeyGatewayReason, "unchanged")}}
	b.Run("mcptrace", func(b *testing.B) {
		tr := p.Tracer()
		b.ReportAllocs()
		for b.Loop() {
			_, sp := tr.Start(context.Background(), req)
			_ = sp.Context()
			sp.End(out)
		}
	})
	b.Run("sdk-baseline", func(b *testing.B) {
		t := p.tracer
		b.ReportAllocs()
		for b.Loop() {
			ctx := trace.ContextWithRemoteSpanContext(context.Background(), otelContext(req.Parent))
			_, sp := t.Start(ctx, "tools/call search_issues", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
				attribute.String(mcptrace.KeyMethodName, "tools/call"), attribute.String(mcptrace.KeyOperationName, "execute_tool"),
				attribute.String(mcptrace.KeyToolName, "search_issues"), attribute.String(mcptrace.KeyRequestID, "42"),
				attribute.String(mcptrace.KeyNetworkTransport, "tcp"), attribute.String(mcptrace.KeyServerAddress, "127.0.0.1"),
				attribute.Int(mcptrace.KeyServerPort, 8080), attribute.String(mcptrace.KeyProtocolVersion, "2026-07-28"),
				attribute.String(mcptrace.KeyGatewayMode, "enforce")))
			_ = sp.SpanContext()
			sp.SetAttributes(attribute.Int(mcptrace.KeyHTTPStatusCode, 200), attribute.String(mcptrace.KeyGatewayDecision, "allow"),
				attribute.String(mcptrace.KeyGatewayReason, "unchanged"))
			sp.End()
		}
	})
}
