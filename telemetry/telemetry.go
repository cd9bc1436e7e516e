// Package telemetry exports mcpdrift's spans to an OTLP/HTTP collector. It
// is the only package that imports the OpenTelemetry SDK and the
// OTLP/HTTP exporter (which links grpc and protobuf): everything else
// traces through the SDK-free interface of package telemetry/mcptrace,
// which Provider.Tracer implements.
//
// Export is bounded: a run's spans are held in memory and sent once, at
// the end, in one request with a deadline of exportDeadline (1.8 s), so that
// a dead or hanging collector adds at most ExportBound (2 s) to a run, its
// shutdown and warning included — with no retry and
// no redirect followed. A failed export is one warning, never an error: it
// changes no exit code. The gateway (ModeService) exports in batches in
// the background, each bounded the same way, and warns once when export
// starts failing.
package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// ExportBound bounds one export: the time a dead or hanging collector can
// add to a run.
const ExportBound = 2 * time.Second

// exportDeadline is the deadline of one export's request: ExportBound less
// a margin for what surrounds it (the provider's shutdown, the warning,
// the goroutines' wake-up), so that the whole stays within ExportBound: a
// request given the whole bound made a drift against a collector that
// accepts and never answers overrun it.
const exportDeadline = ExportBound - 200*time.Millisecond

// maxRunSpans bounds the spans a run holds for its one export (a run of
// 100,000 tools in pages of 100 makes about 2,000); later ones are
// dropped and counted.
const maxRunSpans = 100000

// Mode is how spans are exported.
type Mode uint8

// The modes.
const (
	// ModeRun holds a run's spans and exports them once, at Flush.
	ModeRun Mode = iota
	// ModeService exports in batches in the background (the gateway).
	ModeService
)

// Options tune a Provider.
type Options struct {
	Mode Mode
	// Version is service.version.
	Version string
	// Warn receives each warning, one line without a newline (the CLI's
	// redacting stderr). Nil: warnings are dropped.
	Warn func(string)
	// Bound overrides the request's deadline (tests only; 0:
	// exportDeadline).
	Bound time.Duration
	// Secrets are redacted from every span as it is exported (redact.go):
	// give the Set the run redacts its other outputs with (the gateway's
	// proxy.Config.Secrets), so that a secret recorded at any time is
	// redacted here too. Nil: the provider's own, empty Set (Secrets).
	Secrets *redact.Set
}

// Provider is one process's exporter and tracer.
type Provider struct {
	s      *Settings
	opt    Options
	tp     *sdktrace.TracerProvider
	exp    sdktrace.SpanExporter
	run    *runProcessor // ModeRun
	tracer trace.Tracer
	rt     *recordingTransport

	mu      sync.Mutex // Flush
	flushed bool
	ok      bool

	wmu     sync.Mutex // the batcher's exports (ModeService)
	failing bool       // the last export failed (warned)
}

var quietOnce sync.Once

// quiet keeps the SDK's own error reports off stderr: its default handler
// and logger write there unredacted, and every export failure is reported
// here, once, instead.
func quiet() {
	quietOnce.Do(func() {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
		otel.SetLogger(logr.Discard())
	})
}

// New starts a provider for s (which Resolve returned). Nothing is sent
// before the first export.
func New(s *Settings, o Options) (*Provider, error) {
	quiet()
	if o.Bound <= 0 {
		o.Bound = exportDeadline
	}
	if o.Secrets == nil {
		o.Secrets = &redact.Set{}
	}
	p := &Provider{s: s, opt: o, ok: true}
	var tlsCfg *tls.Config
	if strings.HasPrefix(s.URL, "https://") {
		// An http:// endpoint uses none of the files: they are not read.
		var err error
		if tlsCfg, err = s.TLS.config(); err != nil {
			return nil, err
		}
	}
	p.rt = &recordingTransport{base: exportTransport(tlsCfg)}
	if u, err := url.Parse(s.URL); err == nil {
		// The exporter keeps only the endpoint's host and path: its query
		// (an API key, often) is put back on every request.
		p.rt.query = u.RawQuery
	}
	client := &http.Client{
		Transport: p.rt,
		Timeout:   o.Bound,
		// A collector's redirect is not followed: the headers (secrets)
		// go to the configured endpoint only.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	exp, err := otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL(s.URL),
		otlptracehttp.WithHeaders(s.Headers),
		otlptracehttp.WithTimeout(o.Bound),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
		otlptracehttp.WithHTTPClient(client),
	)
	if err != nil {
		return nil, &ConfigError{Msg: "the OTLP exporter cannot be set up: " + safetext.Inert(err.Error())}
	}
	// Every span leaves through the redaction, in both modes.
	red := &redacting{inner: exp, secrets: o.Secrets}
	res := resource.NewSchemaless(
		attribute.String("service.name", s.ServiceName),
		attribute.String("service.version", o.Version),
	)
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample()))}
	if o.Mode == ModeRun {
		p.run = &runProcessor{}
		p.exp = red
		opts = append(opts, sdktrace.WithSpanProcessor(p.run))
	} else {
		p.exp = &watched{p: p, inner: red}
		opts = append(opts, sdktrace.WithBatcher(p.exp,
			sdktrace.WithBatchTimeout(5*time.Second), sdktrace.WithExportTimeout(o.Bound), sdktrace.WithMaxQueueSize(8192)))
	}
	p.tp = sdktrace.NewTracerProvider(opts...)
	p.tracer = p.tp.Tracer("github.com/mcpdrift/mcpdrift")
	return p, nil
}

// exportTransport is the exporter's own HTTP transport (not shared with
// MCP traffic): Go's defaults, proxies from the environment, and the TLS
// configuration the environment gives (nil: Go's default). The exporter
// reads the certificate variables only for a client it builds itself, so
// they are read here for the one mcpdrift gives it.
func exportTransport(tlsCfg *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = exportDeadline
	if tlsCfg != nil {
		t.TLSClientConfig = tlsCfg
	}
	return t
}

// maxPEMBytes bounds a certificate or key file read for TLS to the
// collector.
const maxPEMBytes = 1 << 20

// config reads the files into a TLS configuration (nil when none is
// named). A file that cannot be read, or holds no usable PEM, is a
// ConfigError naming its variable and path, never its contents.
func (f TLSFiles) config() (*tls.Config, error) {
	if f.CA == "" && f.Cert == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := readPEM(f.CAFrom, f.CA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, bad("%s (%s) holds no PEM certificate", f.CAFrom, safetext.Quote(f.CA))
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" {
		certPEM, err := readPEM(f.CertFrom, f.Cert)
		if err != nil {
			return nil, err
		}
		keyPEM, err := readPEM(f.KeyFrom, f.Key)
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, bad("%s (%s) and %s (%s) are not a PEM certificate and its private key", f.CertFrom, safetext.Quote(f.Cert), f.KeyFrom, safetext.Quote(f.Key))
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func readPEM(from, path string) ([]byte, error) {
	// Only a regular file: opening a FIFO (or /dev/stdin) would wait for
	// a writer with no bound.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, bad("%s (%s) is not a regular file", from, safetext.Quote(path))
	}
	fh, err := os.Open(path)
	if err != nil {
		why := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err.Error()
		}
		return nil, bad("%s (%s) cannot be read: %s", from, safetext.Quote(path), safetext.Inert(why))
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, bad("%s (%s) is not a regular file", from, safetext.Quote(path))
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxPEMBytes+1))
	switch {
	case err != nil:
		return nil, bad("%s (%s) cannot be read", from, safetext.Quote(path))
	case len(b) > maxPEMBytes:
		return nil, bad("%s (%s) is larger than %d bytes", from, safetext.Quote(path), maxPEMBytes)
	}
	return b, nil
}

// Secrets are the values of s a run must redact from everything it
// writes: every header value (with the credential inside an
// Authorization-style value) and the URL's query values.
func (s *Settings) Secrets(set *redact.Set) (short []string) {
	for name, v := range s.Headers {
		short = append(short, set.AddHeader(name, v)...)
	}
	return append(short, set.AddURL(s.URL)...)
}

// Shown is the endpoint as messages show it: without query values.
func (s *Settings) Shown() string { return redact.SanitizeURL(s.URL) }

// Tracer is the provider's mcptrace.Tracer. It also has a method
// Secrets() *redact.Set, the Set its spans are redacted with: a gateway
// given this tracer and no proxy.Config.Secrets redacts with that Set.
func (p *Provider) Tracer() mcptrace.Tracer { return tracer{p.tracer, p.opt.Secrets} }

// Secrets is the Set every exported span is redacted with
// (Options.Secrets).
func (p *Provider) Secrets() *redact.Set { return p.opt.Secrets }

// Flush exports what was not exported yet, within the bound, and then
// stops the provider: spans ended later are dropped. It reports whether
// every span reached the collector (true when there was none); on failure
// it warns once. It may be called more than once: later calls report the
// first one's result.
func (p *Provider) Flush() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flushed {
		return p.ok
	}
	p.flushed = true
	ctx, cancel := context.WithTimeout(context.Background(), p.opt.Bound)
	defer cancel()
	if p.run != nil {
		spans, dropped := p.run.take()
		if len(spans) > 0 {
			err := p.exp.ExportSpans(ctx, spans)
			if err != nil {
				p.ok = false
				p.warn(fmt.Sprintf("OpenTelemetry: %d span(s) not exported to %s: %s", len(spans), safetext.Escape(p.s.Shown()), p.reason(ctx, err)))
			} else if dropped > 0 {
				p.warn(fmt.Sprintf("OpenTelemetry: %d span(s) beyond the run's %d were dropped, not exported", dropped, maxRunSpans))
			}
		}
		_ = p.tp.Shutdown(ctx)
		return p.ok
	}
	// ModeService: the batcher's last export, bounded like every other
	// (a failure it meets is warned by watched, once per streak).
	err := p.tp.Shutdown(ctx)
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if err != nil && !p.failing {
		p.warn(fmt.Sprintf("OpenTelemetry: the last spans were not exported to %s: %s", safetext.Escape(p.s.Shown()), p.reason(ctx, err)))
		// The batcher's last export, still running, fails a moment later:
		// it is the same failure, already said.
		p.failing = true
	}
	p.ok = err == nil && !p.failing
	return p.ok
}

func (p *Provider) warn(msg string) {
	if p.opt.Warn != nil {
		p.opt.Warn(msg)
	}
}

// reason says why an export failed, in fixed words and the collector's
// status code; never the collector's body.
func (p *Provider) reason(ctx context.Context, err error) string {
	status, terr := p.rt.last()
	var ne net.Error
	switch {
	case status != 0 && (status < 200 || status > 299):
		return "the collector answered HTTP " + strconv.Itoa(status)
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || errors.As(terr, &ne) && ne.Timeout() || errors.As(err, &ne) && ne.Timeout():
		return "no answer within " + p.opt.Bound.String()
	case terr != nil:
		var oe *net.OpError
		if errors.As(terr, &oe) {
			return "cannot reach the collector (" + safetext.Inert(safetext.ClipEscaped(oe.Error(), 200)) + ")"
		}
		return "cannot reach the collector"
	}
	return "the export failed"
}

// recordingTransport remembers the last status and transport error of the
// exporter's requests, so that a warning can say what happened without
// quoting the collector.
type recordingTransport struct {
	base   http.RoundTripper
	query  string // the endpoint's query, which the exporter drops
	mu     sync.Mutex
	status int
	err    error
}

func (t *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.query != "" && r.URL.RawQuery == "" {
		r = r.Clone(r.Context())
		r.URL.RawQuery = t.query
	}
	resp, err := t.base.RoundTrip(r)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status, t.err = 0, err
	if resp != nil {
		t.status = resp.StatusCode
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		t.err = ue.Err
	}
	return resp, err
}

func (t *recordingTransport) last() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.err
}

// runProcessor holds a run's ended spans for its one export.
type runProcessor struct {
	mu      sync.Mutex
	spans   []sdktrace.ReadOnlySpan
	dropped int
	done    bool
}

func (r *runProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (r *runProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.done:
	case len(r.spans) >= maxRunSpans:
		r.dropped++
	default:
		r.spans = append(r.spans, s)
	}
}

func (r *runProcessor) take() ([]sdktrace.ReadOnlySpan, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	s, d := r.spans, r.dropped
	r.spans = nil
	return s, d
}

func (r *runProcessor) Shutdown(context.Context) error   { r.take(); return nil }
func (r *runProcessor) ForceFlush(context.Context) error { return nil }

// watched is the gateway's exporter: each export bounded, and one warning
// when export starts failing (the next only after one succeeded again).
type watched struct {
	p     *Provider
	inner sdktrace.SpanExporter
	fails atomic.Int64
}

func (w *watched) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	ctx, cancel := context.WithTimeout(ctx, w.p.opt.Bound)
	defer cancel()
	err := w.inner.ExportSpans(ctx, spans)
	w.p.wmu.Lock()
	defer w.p.wmu.Unlock()
	if err == nil {
		w.p.failing = false
		return nil
	}
	w.fails.Add(1)
	if !w.p.failing {
		w.p.failing = true
		w.p.warn(fmt.Sprintf("OpenTelemetry: %d span(s) not exported to %s: %s; further failures are not reported until an export succeeds", len(spans), safetext.Escape(w.p.s.Shown()), w.p.reason(ctx, err)))
	}
	return err
}

func (w *watched) Shutdown(ctx context.Context) error { return w.inner.Shutdown(ctx) }

// tracer implements mcptrace.Tracer with the SDK.
type tracer struct {
	t       trace.Tracer
	secrets *redact.Set
}

// Secrets is the Set the provider's export redacts with.
func (t tracer) Secrets() *redact.Set { return t.secrets }

func (t tracer) Start(ctx context.Context, r mcptrace.Request) (context.Context, mcptrace.Span) {
	if r.Parent.Valid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, otelContext(r.Parent))
	}
	kind := trace.SpanKindInternal
	switch r.Kind {
	case mcptrace.Client:
		kind = trace.SpanKindClient
	case mcptrace.Server:
		kind = trace.SpanKindServer
	}
	ctx, s := t.t.Start(ctx, mcptrace.SpanName(r), trace.WithSpanKind(kind), trace.WithAttributes(startAttrs(r)...))
	return ctx, span{s}
}

func otelContext(sc mcptrace.SpanContext) trace.SpanContext {
	cfg := trace.SpanContextConfig{TraceID: sc.TraceID, SpanID: sc.SpanID, TraceFlags: trace.TraceFlags(sc.Flags), Remote: sc.Remote}
	if sc.TraceState != "" {
		if ts, err := trace.ParseTraceState(sc.TraceState); err == nil {
			cfg.TraceState = ts
		}
	}
	return trace.NewSpanContext(cfg)
}

// startAttrs are the attributes a request's span starts with.
func startAttrs(r mcptrace.Request) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 10+len(r.Attrs)) // every key below: one allocation
	if r.Method != "" {
		a = append(a, attribute.String(mcptrace.KeyMethodName, mcptrace.MethodText(r.Method)))
	}
	if r.Method == "tools/call" {
		a = append(a, attribute.String(mcptrace.KeyOperationName, mcptrace.OperationExecuteTool))
		if t := mcptrace.TargetText(r.Target); t != "" {
			a = append(a, attribute.String(mcptrace.KeyToolName, t))
		}
	}
	if r.ID != "" {
		a = append(a, attribute.String(mcptrace.KeyRequestID, safetext.EscapeASCII(safetext.Clip(r.ID, 128))))
	}
	if r.Transport != "" {
		a = append(a, attribute.String(mcptrace.KeyNetworkTransport, r.Transport))
	}
	if r.ServerAddress != "" {
		a = append(a, attribute.String(mcptrace.KeyServerAddress, safetext.EscapeASCII(safetext.Clip(r.ServerAddress, 256))))
		if r.ServerPort > 0 {
			a = append(a, attribute.Int(mcptrace.KeyServerPort, r.ServerPort))
		}
	}
	if r.ProtocolVersion != "" {
		a = append(a, attribute.String(mcptrace.KeyProtocolVersion, safetext.EscapeASCII(safetext.Clip(r.ProtocolVersion, 64))))
	}
	if r.SessionID != "" {
		a = append(a, attribute.String(mcptrace.KeySessionID, mcptrace.SessionText(r.SessionID)))
	}
	return appendAttrs(a, r.Attrs)
}

func appendAttrs(a []attribute.KeyValue, xs []mcptrace.Attr) []attribute.KeyValue {
	for _, x := range xs {
		switch x.Type {
		case mcptrace.TypeInt:
			a = append(a, attribute.Int64(x.Key, x.Int))
		case mcptrace.TypeBool:
			a = append(a, attribute.Bool(x.Key, x.Bool))
		default:
			a = append(a, attribute.String(x.Key, safetext.EscapeASCII(safetext.Clip(x.Str, 256))))
		}
	}
	return a
}

type span struct{ s trace.Span }

func (s span) Context() mcptrace.SpanContext {
	sc := s.s.SpanContext()
	if !sc.IsValid() {
		return mcptrace.SpanContext{}
	}
	return mcptrace.SpanContext{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Flags: byte(sc.TraceFlags()), TraceState: sc.TraceState().String()}
}

func (s span) End(o mcptrace.Outcome) {
	a := make([]attribute.KeyValue, 0, 5+len(o.Attrs))
	if o.HasRPCCode {
		a = append(a, attribute.String(mcptrace.KeyResponseStatusCode, strconv.Itoa(o.RPCCode)))
	}
	if o.HTTPStatus != 0 {
		a = append(a, attribute.Int(mcptrace.KeyHTTPStatusCode, o.HTTPStatus))
	}
	if o.ProtocolVersion != "" {
		a = append(a, attribute.String(mcptrace.KeyProtocolVersion, safetext.EscapeASCII(safetext.Clip(o.ProtocolVersion, 64))))
	}
	if o.SessionID != "" {
		a = append(a, attribute.String(mcptrace.KeySessionID, mcptrace.SessionText(o.SessionID)))
	}
	a = appendAttrs(a, o.Attrs)
	if et := o.ErrorType(); et != "" {
		a = append(a, attribute.String(mcptrace.KeyErrorType, safetext.EscapeASCII(safetext.Clip(et, 64))))
		s.s.SetStatus(codes.Error, safetext.EscapeASCII(safetext.Clip(et, 64)))
	}
	s.s.SetAttributes(a...)
	s.s.End()
}
