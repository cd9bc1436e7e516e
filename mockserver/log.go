package mockserver

import (
	"net/http"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// LogEntry records one request (an HTTP request to the MCP endpoint or one
// stdio message) and what the server made of it.
type LogEntry struct {
	Time      time.Time
	Transport string // "http", "sse" (HTTP+SSE, LegacySSEHandler) or "stdio"
	// HTTPMethod is the HTTP method ("" on stdio).
	HTTPMethod string
	// Era is "modern" or "legacy" once the request was routed, else "".
	Era string
	// Method is the JSON-RPC method ("" for a response or an unparsable body).
	Method string
	// ID is the raw JSON id ("" for a notification).
	ID string
	// Headers holds the headers of interest (Mcp-*, Accept, Content-Type,
	// Origin); Authorization is recorded as its scheme only.
	Headers http.Header
	// Session is the Mcp-Session-Id the request carried or was given.
	Session string
	// ProtocolVersion is the version the request was handled under.
	ProtocolVersion string
	// Conn is the connection (modern) or session (legacy) number.
	Conn int
	// ClientInfoSent: a modern request carried _meta clientInfo, or a
	// legacy initialize carried clientInfo. ClientInfo is its raw JSON
	// (clipped to 1 KiB).
	ClientInfoSent bool
	ClientInfo     string
	// ClientCapabilities is the raw ClientCapabilities object the request
	// declared (initialize capabilities, or modern _meta), clipped to 1 KiB.
	ClientCapabilities string
	// Anonymous: served the anonymous tool list (no credentials).
	Anonymous bool
	// Passed: the request passed validation and was dispatched.
	Passed bool
	// Status is the HTTP status (0 on stdio).
	Status int
	// Code is the JSON-RPC error code answered, 0 if none.
	Code int
	// Reason is the error message answered, if any.
	Reason string
}

var loggedHeaders = []string{
	mcpwire.HeaderProtocolVersion, mcpwire.HeaderMethod, mcpwire.HeaderName, mcpwire.HeaderSessionID,
	"Accept", "Content-Type", "Origin", "Last-Event-Id",
}

func interestingHeaders(h http.Header) http.Header {
	out := http.Header{}
	add := func(k string, vs []string) {
		for i, v := range vs {
			if i == 8 {
				break
			}
			out[k] = append(out[k], safetext.Clip(v, 256))
		}
	}
	for _, k := range loggedHeaders {
		if vs := h.Values(k); len(vs) > 0 {
			add(k, vs)
		}
	}
	n := 0
	for k, vs := range h {
		if strings.HasPrefix(k, mcpwire.HeaderParamPrefix) && n < 16 {
			add(k, vs)
			n++
		}
	}
	if a := h.Get("Authorization"); a != "" {
		scheme, _, _ := strings.Cut(a, " ")
		out.Set("Authorization", safetext.Clip(scheme, 32)+" [redacted]")
	}
	return out
}

func (s *Server) record(e LogEntry) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.log) < s.cfg.LogLimit {
		s.log = append(s.log, e)
	} else {
		s.log[s.logNext] = e
	}
	s.logNext = (s.logNext + 1) % s.cfg.LogLimit
	s.logTotal++
}

// Log returns the recorded requests, oldest first (at most LogLimit).
func (s *Server) Log() []LogEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]LogEntry, 0, len(s.log))
	if len(s.log) < s.cfg.LogLimit {
		return append(out, s.log...)
	}
	out = append(out, s.log[s.logNext:]...)
	return append(out, s.log[:s.logNext]...)
}

// LogTotal is the number of requests recorded since the start (or the
// last ResetLog), including those the bounded log dropped.
func (s *Server) LogTotal() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logTotal
}

// ResetLog empties the log.
func (s *Server) ResetLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log, s.logNext, s.logTotal = nil, 0, 0
}
