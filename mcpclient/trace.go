package mcpclient

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// Tracing (Config.Tracer). Each request and notification the run sends is
// one CLIENT span, and a listing is one INTERNAL span "tools/list" whose
// children are its pages, so that what is read out of a listing of many
// pages names one span. The span's traceparent goes into the message's
// params._meta (mcptrace.RewriteMeta) before it is sent; the transcript
// holds the request as sent. Without a Tracer nothing here runs and every
// byte is what it was.

// traced is the tracing state of a run (nil without a Tracer).
type traced struct {
	t         mcptrace.Tracer
	transport string
	host      string
	port      int
}

func newTraced(c *Config) *traced {
	if c.Tracer == nil {
		return nil
	}
	tr := &traced{t: c.Tracer, transport: mcptrace.TransportPipe}
	if c.BaseURL != "" {
		tr.transport = mcptrace.TransportTCP
		if u, err := url.Parse(c.BaseURL); err == nil {
			tr.host = u.Hostname()
			if p, err := strconv.Atoi(u.Port()); err == nil {
				tr.port = p
			} else if u.Scheme == "https" {
				tr.port = 443
			} else {
				tr.port = 80
			}
		}
	}
	return tr
}

// version is the protocol version the run speaks now ("" before it is
// known).
func (r *run) version() string {
	if r.rev != "" {
		return r.rev
	}
	return r.obs.LegacyVersion
}

// startSpan starts the CLIENT span of req and puts its trace context into
// req's params._meta.
func (r *run) startSpan(ctx context.Context, req *rpcRequest) (context.Context, mcptrace.Span) {
	tr := r.trace
	m, err := frame.Parse(req.Body)
	if err != nil {
		return ctx, nil // cannot happen: the body was encoded here
	}
	sr := mcptrace.Request{Kind: mcptrace.Client, Method: req.Method, Transport: tr.transport,
		ServerAddress: tr.host, ServerPort: tr.port, ProtocolVersion: r.version()}
	if req.ID != 0 {
		sr.ID = strconv.FormatInt(req.ID, 10)
	}
	if req.Method == methodToolsCall {
		if n, ok := m.Param("name"); ok && n.Kind() == jcs.String {
			sr.Target = n.Str()
		}
	}
	ctx, sp := tr.t.Start(ctx, sr)
	if sc := sp.Context(); sc.Valid() {
		req.Body = mcptrace.RewriteMeta(m, sc)
	}
	return ctx, sp
}

// endSpan ends the span of a request with what came back.
func (r *run) endSpan(sp mcptrace.Span, rep *reply, err error) {
	if sp == nil {
		return
	}
	o := mcptrace.Outcome{ProtocolVersion: r.version()}
	if rep != nil {
		o.HTTPStatus = rep.status
		switch m := rep.msg; {
		case m != nil && m.isErr:
			o.RPCCode, o.HasRPCCode = m.code, true
		case m != nil:
			if v, ok := m.result.Get("isError"); ok && v.Kind() == jcs.True {
				o.ToolError = true
			}
		case !okStatus(rep.status):
			o.Failure = strconv.Itoa(rep.status)
		default:
			o.Failure = "invalid_response"
		}
	}
	if err != nil {
		o.Failure = failureClass(err)
	}
	sp.End(o)
}

// failureClass is the error.type of a request that got no usable answer:
// a fixed word, never the error's text.
func failureClass(err error) string {
	var le *LimitError
	var he *HTTPError
	switch {
	case errors.As(err, &he):
		return strconv.Itoa(he.Status)
	case errors.As(err, &le) && (le.Kind == LimitRequestTime || le.Kind == LimitStartupTime):
		return "timeout"
	case errors.As(err, &le):
		return "limit"
	case errors.As(err, new(*UnreachableError)):
		return "unreachable"
	case errors.As(err, new(*ResponseError)):
		return "invalid_response"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "_OTHER"
}

// tracedRoundTrip is roundTrip with a span around it.
func (r *run) tracedRoundTrip(ctx context.Context, req *rpcRequest) (*reply, error) {
	ctx, sp := r.startSpan(ctx, req)
	rep, err := r.t.roundTrip(ctx, req, !r.answered)
	r.endSpan(sp, rep, err)
	return rep, err
}

// notify sends a notification (with its span when tracing).
func (r *run) notify(ctx context.Context, req *rpcRequest) error {
	if r.trace == nil {
		return r.t.notify(ctx, req)
	}
	ctx, sp := r.startSpan(ctx, req)
	err := r.t.notify(ctx, req)
	r.endSpan(sp, nil, err)
	return err
}

// list runs the listing, in its INTERNAL span when tracing: the span the
// findings read out of the listing name, whatever its number of pages.
func (r *run) list(ctx context.Context) error {
	if r.trace == nil {
		return r.listTools(ctx)
	}
	ctx, sp := r.trace.t.Start(ctx, mcptrace.Request{Kind: mcptrace.Internal, Name: methodToolsList, Method: methodToolsList,
		Transport: r.trace.transport, ServerAddress: r.trace.host, ServerPort: r.trace.port, ProtocolVersion: r.version()})
	err := r.listTools(ctx)
	o := mcptrace.Outcome{Attrs: []mcptrace.Attr{
		mcptrace.Int(mcptrace.KeyListPages, int64(r.obs.Pages)),
		mcptrace.Bool(mcptrace.KeyListComplete, err == nil && r.obs.Completeness == "complete"),
	}}
	if err != nil {
		o.Failure = failureClass(err)
	}
	sp.End(o)
	return err
}
