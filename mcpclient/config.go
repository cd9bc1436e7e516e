package mcpclient

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"golang.org/x/net/http/httpguts"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/surface"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxListBytes     = 64 << 20
	DefaultMaxListTools     = 100000
	DefaultConnectTimeout   = 10 * time.Second
	DefaultRequestTimeout   = 30 * time.Second
	DefaultStartupTimeout   = 20 * time.Second
	DefaultMaxResponseBytes = 16 << 20
	DefaultMaxSSEEvents     = 10000
	DefaultClientName       = "mcpdrift"
	DefaultClientVersion    = "0.1.0-dev"

	// StderrTail is how much of a stdio child's stderr is kept (the end).
	StderrTail = 64 << 10
)

// Config says which server to observe and within which bounds.
type Config struct {
	// Exactly one of BaseURL and Command.

	// BaseURL is a Streamable HTTP endpoint (http or https; no user info:
	// credentials go in Headers, whose values are never recorded).
	BaseURL string
	// Command is the argv of a stdio server. It is executed (no shell), so
	// set it only when the user explicitly asked for it: deciding that is
	// the caller's job. The child gets a minimal environment — PATH, HOME,
	// TMPDIR, LANG (and SYSTEMROOT, TEMP, TMP, USERPROFILE on Windows) —
	// plus the variables named in PassEnv, and its own session and process
	// group; it and what it started are killed when ListTools returns (on
	// Linux through a cgroup, or by making this process a child subreaper
	// while the run is active, which affects the whole process: see the
	// package documentation).
	Command []string
	// PassEnv names further environment variables the child inherits
	// (when set in this process).
	PassEnv []string
	// Calls are tools/call requests sent after the listing, in order. They
	// have side effects: the caller decides (mcpdrift drift sends them only
	// with --invoke-tool and --execute). Arguments must be a JSON object.
	Calls []ToolCall

	// Env sets further variables for the child explicitly (NAME → value),
	// for servers defined in a configuration file; it wins over PassEnv.
	Env map[string]string

	// Headers are sent on every HTTP request (e.g. Authorization). The
	// Observation records their names only. Headers the protocol owns
	// (Content-Type, Accept, Mcp-*) cannot be set here.
	Headers http.Header

	// ClientName and ClientVersion are the clientInfo sent to the server
	// (defaults "mcpdrift" and DefaultClientVersion).
	ClientName, ClientVersion string
	// UserAgent is the User-Agent of every HTTP request; "" keeps Go's
	// default. With ClientName it lets a run look like the client agents
	// use, since a server can serve different lists to different clients.
	UserAgent string

	// Transport selects the HTTP transport of BaseURL: TransportAuto ("",
	// the default) speaks Streamable HTTP and, when initialize is refused
	// with HTTP 400, 404 or 405 and no JSON-RPC answer (the 2024-11-05
	// backwards-compatibility rule), falls back to the deprecated HTTP+SSE
	// transport; TransportStreamableHTTP never falls back; TransportSSE
	// speaks only HTTP+SSE (a "type": "sse" server of a client
	// configuration): GET BaseURL for an event stream, POST to the URL of
	// its endpoint event (same origin only), read responses as message
	// events.
	Transport string

	// ClientCapabilities is the ClientCapabilities object the client
	// declares — in initialize and in every 2026-07-28 _meta — as
	// ParseClientCapabilities returns it; nil or empty means {}. Servers
	// may list some tools only to clients that declare sampling,
	// elicitation or roots, so observing those lists needs them declared.
	// The client still answers no server request with content: every
	// server→client request but ping is refused with a JSON-RPC error.
	ClientCapabilities []byte

	// PreferredRevision is the protocol revision to ask for; default
	// mcpwire.Rev20260728. A legacy revision (mcpwire.LegacyRevisions)
	// skips server/discover and starts with initialize.
	PreferredRevision string

	// MaxListPages, when set, bounds how many tools/list pages are
	// fetched: with more pages, the run stops there (CapReached) and the
	// list is partial. 0 (the default) sets no page bound: the listing is
	// bounded by MaxListBytes, MaxListTools and the context's deadline.
	MaxListPages int
	// MaxListBytes bounds the bytes of all tools/list responses of the
	// run together (default 64 MiB); MaxListTools bounds the tools entries
	// of all pages together (default 100,000). A listing beyond either is
	// a *LimitError (LimitListBytes, LimitListTools).
	MaxListBytes int64
	MaxListTools int

	// OnToolsPage, when set, receives each tools/list page as it arrives:
	// the request's exact bytes and the result (checked as for the
	// transcript: an object with a "tools" array and a string or absent
	// nextCursor), parsed strictly; the result's Doc holds the response's
	// bytes and may be kept. The Transcript is then not built (nil): the
	// caller keeps what it needs, and a caller that needs only digests
	// keeps no page. An error it returns ends the run with that error.
	OnToolsPage func(request []byte, result jcs.Value) error

	// ConnectTimeout bounds TCP connect and TLS handshake (default 10s);
	// RequestTimeout bounds each exchange from sending the request to the
	// last byte of its response (default 30s); StartupTimeout bounds a
	// stdio child's answer to its first request (default 20s).
	ConnectTimeout, RequestTimeout, StartupTimeout time.Duration

	// MaxResponseBytes bounds one response: a JSON body, one SSE stream, or
	// one stdio line (default 16 MiB).
	MaxResponseBytes int64
	// MaxSSEEvents bounds the events of one response stream (default 10000).
	MaxSSEEvents int

	// HTTPClient is optional. Its Transport (and Jar) are used; its
	// CheckRedirect is replaced: redirects are followed only within the
	// same origin (scheme, host and port), without a method change, at most
	// five. A Transport of type *http.Transport must not disable TLS
	// verification.
	HTTPClient *http.Client
	// RootCAs, when set, is the set of roots HTTPS server certificates are
	// verified against instead of the system roots. To add a CA to the
	// system roots, start from x509.SystemCertPool().
	RootCAs *x509.CertPool

	// Auth, when set, authorizes every HTTP request (package oauth): it
	// puts a credential on each request and is told of each 401 and 403,
	// after which the request is sent again when it says so (at most
	// twice). A failure it reports ends the exchange with an *AuthError.
	Auth Auth

	// Surface, when set, observes the model-facing surface after the
	// tools (SurfaceOptions; Observation.Surface).
	Surface *SurfaceOptions

	// Tracer, when set, makes one CLIENT span per request and notification
	// (and an INTERNAL span per listing, parent of its pages), children of
	// the span in ListTools' context, and puts each span's traceparent in
	// the message's params._meta. Nil: no span, and every byte sent is
	// what it is without tracing.
	Tracer mcptrace.Tracer
}

// ServerInfo is the server's Implementation (serverInfo). Server-controlled:
// escape before printing.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Transports (Config.Transport, Observation.Transport).
const (
	TransportAuto           = ""
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse" // the deprecated HTTP+SSE transport of 2024-11-05
	TransportStdio          = "stdio"
)

// Eras.
const (
	EraModern = "modern" // 2026-07-28 and later: server/discover, _meta per request
	EraLegacy = "legacy" // initialize-era revisions
)

// ToolCall is one tools/call to send.
type ToolCall struct {
	Name      string
	Arguments json.RawMessage
	// InputSchema is the tool's inputSchema as the caller knows it (the
	// declared one): over 2026-07-28 HTTP, the call carries the
	// Mcp-Param-{Name} headers its x-mcp-header annotations ask for
	// (SEP-2243). Empty: none.
	InputSchema json.RawMessage
}

// CallOutcome is what one tools/call returned. Result holds the result
// object exactly as received; a JSON-RPC error fills Code and Message
// instead, and a failure to get a usable answer fills Err (escaped text):
// no response at all (the stream ended, and was not resumed, before it;
// the request timed out; the server could not be reached), or one that
// is not a result (malformed, another id). InputRequired marks the one
// answer Err is set for that is still an answer: a 2026-07-28 result
// asking for input (resultType "input_required"), which this client does
// not provide. Result is server-controlled data: never print or store its
// values.
type CallOutcome struct {
	Name          string          `json:"name"`
	Result        json.RawMessage `json:"-"`
	Code          int             `json:"error_code,omitempty"`
	Message       string          `json:"-"`
	Err           string          `json:"error,omitempty"`
	InputRequired bool            `json:"input_required,omitempty"`
}

// Observation is what one ListTools run established. Server-controlled
// strings in it (ServerInfo, CacheScope, WWWAuthenticate, Stderr) are raw
// and bounded: escape them before printing. RevisionReason and Warnings
// are messages composed here, with any server text already escaped.
type Observation struct {
	// Era is EraModern or EraLegacy ("" if not established).
	Era string
	// ProtocolRevision is the negotiated modern revision; "" (unknown) for
	// a legacy server, with RevisionReason saying why.
	ProtocolRevision string
	RevisionReason   string
	// Transport is the transport the run ended up speaking:
	// TransportStreamableHTTP, TransportSSE or TransportStdio.
	Transport string
	// ClientCapabilities is the ClientCapabilities object the run
	// declared, canonical ({} when none).
	ClientCapabilities []byte
	// LegacyVersion is the protocolVersion a legacy server answered
	// initialize with. It is what the session ran at, not a revision the
	// server claims through server/discover.
	LegacyVersion string
	// ServerInfo is from server/discover's _meta, initialize's serverInfo,
	// or the first tools/list page's _meta; nil if none was sent.
	ServerInfo *ServerInfo
	// DiscoverRaw is the server/discover result, bytes as received.
	DiscoverRaw json.RawMessage

	// Transcript is a JSON array of the tools/list requests sent and the
	// responses received, in order; each response is the JSON-RPC response
	// object exactly as received (for SSE, the data of its event). It is
	// the input of manifest.ParseToolList, which reproduces Pages and
	// Completeness from it. It is nil when ListTools returns an error.
	Transcript json.RawMessage
	Pages      int
	// Completeness is "complete" or "partial" (manifest.Complete/Partial):
	// complete when the last page had no nextCursor.
	Completeness string
	CursorCycle  bool // a nextCursor repeated; the run stopped there
	CapReached   bool // MaxListPages (set) pages were read and the last had a nextCursor
	// ListBytes is the size of the tools/list responses read, in bytes.
	ListBytes int64

	// TTLMs and CacheScope are ttlMs and cacheScope of the first tools/list
	// page (TTLMs nil when absent or not an integer). MissingCacheFields
	// reports that some page lacked either field or carried one of the
	// wrong type (ttlMs an integer, cacheScope a string) — required on
	// 2026-07-28 list results.
	TTLMs              *int64
	CacheScope         string
	MissingCacheFields bool

	// HTTPStatus and WWWAuthenticate are from the (first) tools/list
	// exchange, or from the exchange that failed with an HTTPError.
	HTTPStatus      int
	WWWAuthenticate string
	// HeaderNames are the canonical names of Config.Headers, sorted. Values
	// are never recorded.
	HeaderNames []string

	// Stderr is the end of a stdio child's stderr (at most StderrTail
	// bytes, valid UTF-8).
	Stderr string

	Warnings []string

	// Calls are the outcomes of Config.Calls, in order.
	Calls []CallOutcome

	// Surface is the model-facing surface the run observed (nil without
	// Config.Surface): each kind's state says whether it was seen.
	// Server-controlled: escape before printing.
	Surface *surface.Surface
}

// maxWarnings bounds Observation.Warnings.
const maxWarnings = 64

func (o *Observation) warn(msg string) {
	if slices.Contains(o.Warnings, msg) {
		return
	}
	switch {
	case len(o.Warnings) < maxWarnings:
		o.Warnings = append(o.Warnings, msg)
	case len(o.Warnings) == maxWarnings:
		o.Warnings = append(o.Warnings, "further warnings dropped")
	}
}

// reservedHeaders are set by the client and cannot be configured.
var reservedHeaders = []string{"Accept", "Content-Type", "Content-Length", "Host", "Connection", "Transfer-Encoding", "Te", "Upgrade", "Last-Event-Id"}

// normalize validates c and fills defaults.
func (c Config) normalize() (Config, error) {
	bad := func(msg string) (Config, error) { return c, &ConfigError{Msg: msg} }
	switch {
	case c.BaseURL == "" && len(c.Command) == 0:
		return bad("set BaseURL or Command")
	case c.BaseURL != "" && len(c.Command) > 0:
		return bad("set only one of BaseURL and Command")
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil {
			return bad("BaseURL: " + quote(c.BaseURL) + " is not a URL")
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return bad("BaseURL must be http or https")
		}
		if u.Host == "" {
			return bad("BaseURL has no host")
		}
		if u.User != nil {
			return bad("BaseURL must not carry user info; send credentials in Headers")
		}
		if u.Fragment != "" {
			return bad("BaseURL must not have a fragment")
		}
		if len(c.PassEnv) > 0 || len(c.Env) > 0 {
			return bad("PassEnv and Env apply to Command only")
		}
		switch c.Transport {
		case TransportAuto, TransportStreamableHTTP, TransportSSE:
		default:
			return bad("Transport " + quote(c.Transport) + " is not " + TransportStreamableHTTP + " or " + TransportSSE)
		}
	} else {
		if c.Command[0] == "" {
			return bad("Command[0] is empty")
		}
		for _, a := range c.Command {
			if strings.IndexByte(a, 0) >= 0 {
				return bad("Command contains a NUL byte")
			}
		}
		for _, n := range c.PassEnv {
			if n == "" || strings.ContainsAny(n, "=\x00") {
				return bad("PassEnv has an invalid name " + quote(n))
			}
		}
		for n, v := range c.Env {
			if n == "" || strings.ContainsAny(n, "=\x00") || strings.IndexByte(v, 0) >= 0 {
				return bad("Env has an invalid entry " + quote(n))
			}
		}
		if len(c.Headers) > 0 || c.HTTPClient != nil || c.RootCAs != nil || c.Transport != TransportAuto || c.Auth != nil {
			return bad("Headers, HTTPClient, RootCAs, Transport and Auth apply to BaseURL only")
		}
	}
	for _, call := range c.Calls {
		args := bytes.TrimSpace(call.Arguments)
		if call.Name == "" || len(args) == 0 || args[0] != '{' || !json.Valid(args) {
			return bad("a tools/call needs a name and a JSON object of arguments")
		}
	}
	for name, vals := range c.Headers {
		if !httpguts.ValidHeaderFieldName(name) { // an RFC 9110 token
			return bad("header name " + quote(name) + " is not a token")
		}
		cn := http.CanonicalHeaderKey(name)
		if strings.HasPrefix(cn, "Mcp-") || slices.Contains(reservedHeaders, cn) {
			return bad("header " + cn + " is set by the client")
		}
		for _, v := range vals {
			if strings.ContainsAny(v, "\r\n\x00") {
				return bad("the value of header " + cn + " contains CR, LF or NUL")
			}
		}
	}
	if c.HTTPClient != nil {
		if tr, ok := c.HTTPClient.Transport.(*http.Transport); ok && tr.TLSClientConfig != nil && tr.TLSClientConfig.InsecureSkipVerify {
			return bad("HTTPClient disables TLS verification")
		}
		if c.RootCAs != nil {
			if _, ok := c.HTTPClient.Transport.(*http.Transport); !ok && c.HTTPClient.Transport != nil {
				return bad("RootCAs needs HTTPClient.Transport to be nil or an *http.Transport")
			}
		}
	}
	if strings.ContainsAny(c.UserAgent, "\r\n\x00") || strings.ContainsAny(c.ClientName+c.ClientVersion, "\x00") {
		return bad("UserAgent, ClientName and ClientVersion must not contain CR, LF or NUL")
	}
	caps, err := ParseClientCapabilities(string(c.ClientCapabilities))
	if err != nil {
		return bad(err.Error())
	}
	c.ClientCapabilities = caps
	if c.PreferredRevision == "" {
		c.PreferredRevision = mcpwire.Rev20260728
	}
	if !mcpwire.IsModern(c.PreferredRevision) && !slices.Contains(mcpwire.LegacyRevisions, c.PreferredRevision) {
		return bad("PreferredRevision " + quote(c.PreferredRevision) + " is not a revision this client speaks")
	}
	if c.ClientName == "" {
		c.ClientName = DefaultClientName
	}
	if c.ClientVersion == "" {
		c.ClientVersion = DefaultClientVersion
	}
	if c.MaxListPages < 0 || c.MaxListBytes < 0 || c.MaxListTools < 0 || c.ConnectTimeout < 0 || c.RequestTimeout < 0 || c.StartupTimeout < 0 || c.MaxResponseBytes < 0 || c.MaxSSEEvents < 0 {
		return bad("limits must not be negative")
	}
	c.MaxListBytes = orDefault(c.MaxListBytes, DefaultMaxListBytes)
	c.MaxListTools = orDefault(c.MaxListTools, DefaultMaxListTools)
	c.ConnectTimeout = orDefault(c.ConnectTimeout, DefaultConnectTimeout)
	c.RequestTimeout = orDefault(c.RequestTimeout, DefaultRequestTimeout)
	c.StartupTimeout = orDefault(c.StartupTimeout, DefaultStartupTimeout)
	c.MaxResponseBytes = orDefault(c.MaxResponseBytes, DefaultMaxResponseBytes)
	c.MaxSSEEvents = orDefault(c.MaxSSEEvents, DefaultMaxSSEEvents)
	return c, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// headerNames returns the canonical names of h, sorted.
func headerNames(h http.Header) []string {
	if len(h) == 0 {
		return nil
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// tlsConfig is the TLS configuration of the default transport.
func (c *Config) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: c.RootCAs}
}

// setUserAgent sets the configured User-Agent on h (nothing when unset).
func (c *Config) setUserAgent(h http.Header) {
	if c.UserAgent != "" {
		h.Set("User-Agent", c.UserAgent)
	}
}
