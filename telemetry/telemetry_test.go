package telemetry

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		name    string
		flag    string
		set     bool
		env     map[string]string
		url     string
		from    string
		headers map[string]string
		service string
	}{
		{name: "nothing", env: map[string]string{}},
		{name: "flag", flag: "http://127.0.0.1:4318", set: true, url: "http://127.0.0.1:4318/v1/traces", from: FlagEndpoint, service: DefaultServiceName},
		{name: "flag with a path", flag: "https://otel.example/base/", set: true, url: "https://otel.example/base/v1/traces", from: FlagEndpoint, service: DefaultServiceName},
		{name: "flag wins", flag: "http://a:1", set: true, env: map[string]string{EnvEndpoint: "http://b:2", EnvTracesEndpoint: "http://c:3/x"}, url: "http://a:1/v1/traces", from: FlagEndpoint, service: DefaultServiceName},
		{name: "traces endpoint as it is", env: map[string]string{EnvEndpoint: "http://b:2", EnvTracesEndpoint: "http://c:3/x"}, url: "http://c:3/x", from: EnvTracesEndpoint, service: DefaultServiceName},
		{name: "base endpoint", env: map[string]string{EnvEndpoint: "http://b:2"}, url: "http://b:2/v1/traces", from: EnvEndpoint, service: DefaultServiceName},
		{name: "disabled", env: map[string]string{EnvEndpoint: "http://b:2", EnvSDKDisabled: "true"}},
		{name: "exporter none", env: map[string]string{EnvEndpoint: "http://b:2", EnvTracesExporter: "none"}},
		{name: "http/json", env: map[string]string{EnvEndpoint: "http://b:2", EnvProtocol: "http/json"}, url: "http://b:2/v1/traces", from: EnvEndpoint, service: DefaultServiceName},
		{name: "the flag asks for OTLP/HTTP whatever the protocol", flag: "http://a:1", set: true, env: map[string]string{EnvProtocol: "grpc"}, url: "http://a:1/v1/traces", from: FlagEndpoint, service: DefaultServiceName},
		{name: "traces protocol first", env: map[string]string{EnvEndpoint: "http://b:2", EnvProtocol: "grpc", EnvTracesProtocol: "http/protobuf"}, url: "http://b:2/v1/traces", from: EnvEndpoint, service: DefaultServiceName},
		{name: "flag despite disabled", flag: "http://a:1", set: true, env: map[string]string{EnvSDKDisabled: "true"}, url: "http://a:1/v1/traces", from: FlagEndpoint, service: DefaultServiceName},
		{name: "headers and service", flag: "http://a:1", set: true,
			env: map[string]string{EnvHeaders: "authorization=Bearer%20s3cr3t-token, x-team = one", EnvTracesHeaders: "x-team=two", EnvServiceName: "ci-gate"},
			url: "http://a:1/v1/traces", from: FlagEndpoint, service: "ci-gate",
			headers: map[string]string{"Authorization": "Bearer s3cr3t-token", "X-Team": "two"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Resolve(c.flag, c.set, env(c.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.url == "" {
				if s != nil {
					t.Fatalf("export on: %+v", s)
				}
				return
			}
			if s == nil || s.URL != c.url || s.From != c.from || s.ServiceName != c.service || len(s.Headers) != len(c.headers) {
				t.Fatalf("got %+v", s)
			}
			for k, v := range c.headers {
				if s.Headers[k] != v {
					t.Fatalf("header %s = %q, want %q", k, s.Headers[k], v)
				}
			}
		})
	}
}

func TestResolveRefuses(t *testing.T) {
	secret := "hunter2-secret-value"
	for _, c := range []struct {
		flag string
		set  bool
		env  map[string]string
		want string
	}{
		{flag: "not a url", set: true, want: "must be an http:// or https:// URL"},
		{flag: "", set: true, want: "is not a URL"},
		{flag: "ftp://x", set: true, want: `not "ftp:"`},
		{flag: "http://", set: true, want: "has no host"},
		{flag: "http://user:" + secret + "@h:1", set: true, want: "user info"},
		{flag: "http://h:1/#frag", set: true, want: "#fragment"},
		{flag: "127.0.0.1:4318", set: true, want: "URL"},
		{env: map[string]string{EnvEndpoint: "::nope"}, want: EnvEndpoint + " is not a URL"},
		{flag: "http://h:1", set: true, env: map[string]string{EnvHeaders: "novalue-" + secret}, want: EnvHeaders + ": entry 1"},
		{flag: "http://h:1", set: true, env: map[string]string{EnvHeaders: "a=b,x=%zz" + secret}, want: "entry 2"},
		{flag: "http://h:1", set: true, env: map[string]string{EnvHeaders: "content-type=" + secret}, want: "set by the exporter"},
		{flag: "http://h:1", set: true, env: map[string]string{EnvServiceName: "a\x1bb"}, want: EnvServiceName},
		// A gRPC export configured by the environment (the exporter would
		// turn it into HTTP without a word, and every export would fail).
		{env: map[string]string{EnvEndpoint: "http://h:4317", EnvProtocol: "grpc"}, want: EnvProtocol + " is grpc: mcpdrift exports OTLP over HTTP only"},
		{env: map[string]string{EnvEndpoint: "http://h:4318", EnvProtocol: "http/protobuf", EnvTracesProtocol: "grpc"}, want: EnvTracesProtocol + " is grpc"},
		{flag: "http://h:1", set: true, env: map[string]string{EnvProtocol: "thrift"}, want: EnvProtocol + ` must be http/protobuf or http/json (mcpdrift exports OTLP over HTTP), not "thrift"`},
	} {
		_, err := Resolve(c.flag, c.set, env(c.env))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%q, %v) = %v; want an error with %q", c.flag, c.env, err, c.want)
			continue
		}
		if _, ok := err.(*ConfigError); !ok {
			t.Errorf("%v is not a *ConfigError", err)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the message repeats a secret: %v", err)
		}
	}
}

// run starts a provider against c, makes a small trace and flushes it.
func run(t *testing.T, c *otlptest.Collector, headers map[string]string, warn func(string)) (ok bool, took time.Duration, root, child mcptrace.Span) {
	t.Helper()
	p, err := New(&Settings{URL: c.URL() + "/v1/traces", From: FlagEndpoint, Headers: headers, ServiceName: "svc"}, Options{Version: "1.2.3", Warn: warn})
	if err != nil {
		t.Fatal(err)
	}
	tr := p.Tracer()
	ctx, root := tr.Start(context.Background(), mcptrace.Request{Kind: mcptrace.Internal, Name: "mcpdrift drift"})
	_, child = tr.Start(ctx, mcptrace.Request{Kind: mcptrace.Client, Method: "tools/call", Target: "d\u0435lete_file", ID: "7",
		Transport: mcptrace.TransportTCP, ServerAddress: "127.0.0.1", ServerPort: 9})
	child.End(mcptrace.Outcome{ToolError: true, HTTPStatus: 200})
	root.End(mcptrace.Outcome{})
	start := time.Now()
	ok = p.Flush()
	return ok, time.Since(start), root, child
}

func TestExport(t *testing.T) {
	c := otlptest.New(otlptest.Accept)
	defer c.Close()
	var warnings []string
	ok, _, root, child := run(t, c, map[string]string{"Authorization": "Bearer abc-123-secret"}, func(s string) { warnings = append(warnings, s) })
	if !ok || len(warnings) > 0 {
		t.Fatalf("ok %v, warnings %q, receiver errors %q", ok, warnings, c.Errors())
	}
	spans := c.Spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans: %+v", len(spans), spans)
	}
	byID := otlptest.ByID(spans)
	cs, rs := byID[mcptrace.RefOf(child).SpanID], byID[mcptrace.RefOf(root).SpanID]
	if cs.Name != `tools/call d\u0435lete_file` || cs.Kind != "CLIENT" || cs.ParentSpanID != rs.SpanID || cs.TraceID != rs.TraceID || rs.Kind != "INTERNAL" || rs.ParentSpanID != "" {
		t.Fatalf("spans: %+v", spans)
	}
	want := map[string]string{
		mcptrace.KeyMethodName: "tools/call", mcptrace.KeyToolName: `d\u0435lete_file`, mcptrace.KeyOperationName: "execute_tool",
		mcptrace.KeyRequestID: "7", mcptrace.KeyErrorType: "tool_error", mcptrace.KeyNetworkTransport: "tcp",
		mcptrace.KeyServerAddress: "127.0.0.1", mcptrace.KeyServerPort: "9", mcptrace.KeyHTTPStatusCode: "200",
	}
	for k, v := range want {
		if cs.Attrs[k] != v {
			t.Errorf("%s = %q, want %q", k, cs.Attrs[k], v)
		}
	}
	if !cs.StatusError || cs.Service != "svc" {
		t.Errorf("status error %v, service %q", cs.StatusError, cs.Service)
	}
	reqs := c.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer abc-123-secret" {
		t.Fatalf("%d requests, Authorization %q", len(reqs), reqs[0].Header.Get("Authorization"))
	}
}

// TestBrokenCollector: a collector that hangs, answers 500 or is not
// there costs at most the bound and gives one warning, with no body of
// the collector's and no header value in it.
func TestBrokenCollector(t *testing.T) {
	for _, mode := range []struct {
		name string
		b    otlptest.Behaviour
		dead bool
		want string
	}{
		{"hangs", otlptest.Hang, false, "no answer within 1.8s"},
		{"500", otlptest.Fail, false, "the collector answered HTTP 500"},
		{"dead", otlptest.Accept, true, "cannot reach the collector"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			c := otlptest.New(mode.b)
			if mode.dead {
				c.Close()
			} else {
				defer c.Close()
			}
			var mu sync.Mutex
			var warnings []string
			ok, took, _, _ := run(t, c, map[string]string{"X-Key": "abc-123-secret"}, func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() })
			t.Logf("%s: export took %v", mode.name, took)
			if ok || len(warnings) != 1 || !strings.Contains(warnings[0], mode.want) || !strings.Contains(warnings[0], "2 span(s) not exported") {
				t.Fatalf("ok %v, warnings %q", ok, warnings)
			}
			if strings.Contains(warnings[0], "abc-123-secret") || strings.Contains(warnings[0], "collector says no") {
				t.Fatalf("the warning quotes a secret or the collector: %q", warnings[0])
			}
			if took > ExportBound {
				t.Fatalf("the export took %v, more than the %v bound", took, ExportBound)
			}
		})
	}
}

func TestServiceModeWarnsOnce(t *testing.T) {
	c := otlptest.New(otlptest.Fail)
	defer c.Close()
	var mu sync.Mutex
	var warnings []string
	p, err := New(&Settings{URL: c.URL() + "/v1/traces", ServiceName: "svc"}, Options{Mode: ModeService, Warn: func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	w := p.exp.(*watched)
	for range 3 {
		_, s := p.Tracer().Start(context.Background(), mcptrace.Request{Kind: mcptrace.Server, Method: "ping"})
		s.End(mcptrace.Outcome{})
		_ = p.tp.ForceFlush(context.Background())
	}
	start := time.Now()
	p.Flush()
	if took := time.Since(start); took > ExportBound {
		t.Fatalf("shutdown took %v", took)
	}
	mu.Lock()
	defer mu.Unlock()
	if w.fails.Load() < 3 || len(warnings) != 1 || !strings.Contains(warnings[0], "HTTP 500") {
		t.Fatalf("%d failed exports, warnings %q", w.fails.Load(), warnings)
	}
}

func TestUnsampledParentGivesNoRef(t *testing.T) {
	c := otlptest.New(otlptest.Accept)
	defer c.Close()
	p, err := New(&Settings{URL: c.URL() + "/v1/traces", ServiceName: "svc"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	parent, _ := mcptrace.ParseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	parent.Remote = true
	_, s := p.Tracer().Start(context.Background(), mcptrace.Request{Kind: mcptrace.Server, Method: "ping", Parent: parent})
	s.End(mcptrace.Outcome{})
	if !mcptrace.RefOf(s).IsZero() {
		t.Fatalf("an unsampled span has a ref: %+v", mcptrace.RefOf(s))
	}
	if got := s.Context(); got.TraceID != parent.TraceID || got.Sampled() {
		t.Fatalf("context %+v", got)
	}
	p.Flush()
	if n := len(c.Spans()); n != 0 {
		t.Fatalf("%d unsampled spans exported", n)
	}
}

// TestServiceModeFlush: the gateway's last spans go out at Flush, at once
// (not at the bound), and are received.
func TestServiceModeFlush(t *testing.T) {
	c := otlptest.New(otlptest.Accept)
	defer c.Close()
	p, err := New(&Settings{URL: c.URL() + "/v1/traces", ServiceName: "svc"}, Options{Mode: ModeService, Warn: func(s string) { t.Errorf("warning %s", s) }})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, s := p.Tracer().Start(context.Background(), mcptrace.Request{Kind: mcptrace.Server, Method: "ping"})
		s.End(mcptrace.Outcome{})
	}
	start := time.Now()
	if !p.Flush() {
		t.Fatal("flush failed")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("flush took %v", took)
	}
	if n := len(c.Spans()); n != 3 {
		t.Fatalf("%d spans received", n)
	}
}

// TestServiceShutdownWarnsOnce: the gateway's shutdown against a collector
// that never answers warns once: the batcher's last export, still running
// when Flush gives up, failed a moment later and warned again (found by a
// review).
func TestServiceShutdownWarnsOnce(t *testing.T) {
	c := otlptest.New(otlptest.Hang)
	defer c.Close()
	var mu sync.Mutex
	var warnings []string
	p, err := New(&Settings{URL: c.URL() + "/v1/traces", ServiceName: "svc"}, Options{Mode: ModeService,
		Warn: func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	_, s := p.Tracer().Start(context.Background(), mcptrace.Request{Kind: mcptrace.Server, Method: "ping"})
	s.End(mcptrace.Outcome{})
	start := time.Now()
	if p.Flush() {
		t.Error("Flush says the spans were exported")
	}
	if took := time.Since(start); took > ExportBound {
		t.Errorf("shutdown took %v", took)
	}
	time.Sleep(300 * time.Millisecond) // the batcher's export ends meanwhile
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 {
		t.Fatalf("%d warnings: %q", len(warnings), warnings)
	}
}
