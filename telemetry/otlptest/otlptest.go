// Package otlptest is a loopback OTLP/HTTP trace receiver for tests: it
// decodes each export with the official OTLP protobuf definitions
// (go.opentelemetry.io/proto/otlp, collector/trace/v1) and keeps the
// spans, so a test can check names, kinds, attributes and parentage of
// what mcpdrift exported. It can also hang or answer an HTTP error, as a
// broken collector does. It is imported by tests only.
package otlptest

import (
	"compress/gzip"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, its ids in lowercase hex.
type Span struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	Kind                          string // INTERNAL, SERVER, CLIENT, PRODUCER, CONSUMER
	Attrs                         map[string]string
	StatusError                   bool
	Service                       string // the resource's service.name
}

// Behaviour is how the receiver answers.
type Behaviour int

// The behaviours.
const (
	Accept Behaviour = iota // 200 and an empty ExportTraceServiceResponse
	Hang                    // never answers (until Close)
	Fail                    // 500
	// Discard decodes each export as Accept does and answers it alike,
	// but keeps only the count of spans (Received): for benchmarks, whose
	// memory figures must not include what the receiver holds.
	Discard
)

// Collector is a receiver on 127.0.0.1.
type Collector struct {
	srv  *httptest.Server
	mode Behaviour
	stop chan struct{}
	once sync.Once

	mu       sync.Mutex
	spans    []Span
	requests []*http.Request
	bodies   [][]byte
	errs     []string
	received int
}

// New starts a receiver; Close it.
func New(mode Behaviour) *Collector {
	c := newCollector(mode)
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	return c
}

func newCollector(mode Behaviour) *Collector {
	return &Collector{mode: mode, stop: make(chan struct{})}
}

// NewTLS starts a receiver that speaks TLS with cfg (its certificate, and
// ClientAuth and ClientCAs to ask for a client's); Close it.
func NewTLS(mode Behaviour, cfg *tls.Config) *Collector {
	c := newCollector(mode)
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(c.serve))
	c.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what tests ask for
	c.srv.TLS = cfg
	c.srv.StartTLS()
	return c
}

// URL is the base URL (give it to --otlp-endpoint).
func (c *Collector) URL() string { return c.srv.URL }

// Close stops the receiver (a hanging one lets its requests go first).
func (c *Collector) Close() {
	c.once.Do(func() { close(c.stop) })
	c.srv.CloseClientConnections()
	c.srv.Close()
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if c.mode != Discard {
		c.mu.Lock()
		c.requests = append(c.requests, r.Clone(r.Context()))
		c.mu.Unlock()
	}
	if err != nil {
		c.fail("reading the body: " + err.Error())
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	switch c.mode {
	case Hang:
		select {
		case <-c.stop:
		case <-r.Context().Done():
		}
		return
	case Fail:
		http.Error(w, "collector says no", http.StatusInternalServerError)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.fail(fmt.Sprintf("unexpected %s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type")))
		http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
		return
	}
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(strings.NewReader(string(body)))
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if err != nil {
			c.fail("gzip: " + err.Error())
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		c.fail("decoding the export: " + err.Error())
		http.Error(w, "bad protobuf", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.received += len(ss.GetSpans())
		}
	}
	if c.mode == Discard {
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
		return
	}
	c.bodies = append(c.bodies, body)
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = value(kv.GetValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, convert(s, service))
			}
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *Collector) fail(msg string) {
	c.mu.Lock()
	c.errs = append(c.errs, msg)
	c.mu.Unlock()
}

func convert(s *tracepb.Span, service string) Span {
	out := Span{
		TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
		Name: s.GetName(), Kind: strings.TrimPrefix(s.GetKind().String(), "SPAN_KIND_"),
		Attrs: map[string]string{}, StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
		Service: service,
	}
	if p := s.GetParentSpanId(); len(p) > 0 {
		out.ParentSpanID = hex.EncodeToString(p)
	}
	for _, kv := range s.GetAttributes() {
		out.Attrs[kv.GetKey()] = value(kv.GetValue())
	}
	return out
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return v.String()
}

// Received is the number of spans decoded so far (in every mode that
// decodes: Accept and Discard).
func (c *Collector) Received() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.received
}

// Spans returns the spans received so far, ordered by name then span id.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]Span(nil), c.spans...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].SpanID < out[j].SpanID
	})
	return out
}

// Requests returns the HTTP requests received (headers included).
func (c *Collector) Requests() []*http.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*http.Request(nil), c.requests...)
}

// Bodies returns the decoded (uncompressed) protobuf bodies accepted.
func (c *Collector) Bodies() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.bodies...)
}

// Errors lists what the receiver could not decode.
func (c *Collector) Errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errs...)
}

// ByID indexes spans by span id.
func ByID(spans []Span) map[string]Span {
	m := make(map[string]Span, len(spans))
	for _, s := range spans {
		m[s.SpanID] = s
	}
	return m
}
