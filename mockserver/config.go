package mockserver

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// Era selects which protocol eras the server speaks.
type Era int

const (
	// DualEra (the default) handles a request whose params._meta carries
	// the modern keys (or that carries Mcp-Method or a modern
	// MCP-Protocol-Version header and no session) statelessly, and
	// everything else with the legacy initialize/session rules.
	DualEra Era = iota
	// ModernOnly speaks only the stateless revisions: initialize is an
	// unknown method (404, -32601, data.supported lists the versions).
	ModernOnly
	// LegacyOnly speaks only the initialize revisions and has no
	// server/discover: a modern request without a session is answered 400
	// -32000 "Bad Request: Server not initialized" over HTTP and -32601 on
	// stdio, as the TypeScript SDK does (mcp-protocol.md §5.4 OBS).
	LegacyOnly
)

func (e Era) String() string {
	switch e {
	case ModernOnly:
		return "modern-only"
	case LegacyOnly:
		return "legacy-only"
	}
	return "dual-era"
}

// ResponseMode selects how successful HTTP responses are framed.
type ResponseMode int

const (
	// JSONResponses answers every request with one application/json body.
	JSONResponses ResponseMode = iota
	// SSEResponses answers requests (status 200) with text/event-stream:
	// modern streams may carry a notifications/progress event (when the
	// request has a progressToken, or always with SSEProgress) before the
	// response; legacy streams start with a priming event (an id and empty
	// data) when 2025-11-25 was negotiated, and interleave a
	// notifications/message log event (and progress) before the response.
	// Error statuses (4xx) are always application/json.
	SSEResponses
)

// DefaultVersions are the revisions served when Config.SupportedVersions is
// empty, newest first.
var DefaultVersions = []string{mcpwire.Rev20260728, mcpwire.Rev20251125, mcpwire.Rev20250618, mcpwire.Rev20250326}

// Defaults of the limits.
const (
	DefaultMaxBodyBytes      = 1 << 20
	DefaultMaxAdminBodyBytes = 16 << 20
	DefaultLogLimit          = 1024
	DefaultMaxSessions       = 1024
)

// Config is everything the mock can be told. The zero Config is a strict
// dual-era server with no tools, JSON responses, one page, ttlMs 0 and
// cacheScope "public".
type Config struct {
	// Tools is the default tool list: raw JSON tool objects, served with
	// their exact bytes (responses are assembled by byte concatenation).
	// Each must be valid JSON; nothing else is required of it, so broken
	// tools (no name, duplicate names, odd schemas) can be served to test
	// clients. Load one from a manifest with LoadTools; swap it at runtime
	// with Server.SetTools.
	Tools []json.RawMessage

	// ConnectionTools serves a different list on the Nth connection (1-based):
	// in the modern era "connection" is a TCP connection (numbered in the
	// order of their first request; precise when Server.ConnContext is set
	// as the http.Server's ConnContext, otherwise keyed by the request's
	// RemoteAddr), in the legacy era it is the Nth session (initialize), on
	// stdio the Nth ServeStdio call (modern) or initialize (legacy).
	// Connections without an entry get the default list.
	ConnectionTools map[int][]json.RawMessage

	// AnonymousTools, when non-nil (an empty list counts), is served to
	// requests without an Authorization header instead of answering them
	// 401, when RequireAuth is set. A wrong token is still 401.
	AnonymousTools []json.RawMessage

	// CapabilityTools lists further tools for clients that declare a client
	// capability: CapabilityTools["sampling"] is appended to the list of a
	// client whose ClientCapabilities (initialize capabilities, or the
	// 2026-07-28 _meta clientCapabilities) has a "sampling" member — as
	// server-everything registers trigger-sampling-request only for such
	// clients. Lists are appended in the order of the capability names.
	CapabilityTools map[string][]json.RawMessage

	// ServerRequest, when set, is a server→client request method (for
	// example "sampling/createMessage") sent before the response to every
	// method in HostileMethods wherever a request can travel: on SSE
	// response streams, on the HTTP+SSE stream, on stdio. The client's
	// answer is logged (LogEntry.Reason "response: error -32601" or
	// "response: result"). Params are the smallest valid ones of the
	// method. On a 2026-07-28 stream this is non-conformant on purpose.
	ServerRequest string

	// DiscoverWithoutVersions leaves supportedVersions out of the
	// server/discover result (non-conformant: a client must not take such
	// an answer as 2026-07-28).
	DiscoverWithoutVersions bool

	// SSEEndpoint replaces the URI of the HTTP+SSE endpoint event
	// (LegacySSEHandler; default: the handler's path with
	// ?sessionId=ID). "{session}" in it is replaced by the session id. A
	// hostile test points it at another origin.
	SSEEndpoint string
	// SSEOmitEndpoint opens the HTTP+SSE stream without an endpoint event
	// (it sends keep-alive comments, or floods with SSEFlood).
	SSEOmitEndpoint bool
	// SSEFlood answers the methods in HostileMethods on the HTTP+SSE
	// stream with notifications, forever, instead of the response; with
	// SSEOmitEndpoint, the stream floods from its start.
	SSEFlood bool

	// Era: dual (default), modern-only or legacy-only.
	Era Era
	// SupportedVersions, newest first (default DefaultVersions). Versions
	// after 2025-11-25 are modern, the others legacy.
	SupportedVersions []string

	// PageSize is the number of tools per tools/list page (0: one page).
	PageSize int
	// EmptyStringCursor makes the cursor of the second page "" in the
	// modern era (2026-07-28: an empty string is a valid cursor, not the
	// end). A legacy request with cursor "" is an invalid cursor.
	EmptyStringCursor bool
	// CursorCycle makes the last page's nextCursor point back at the first
	// page, forever.
	CursorCycle bool

	// OmitCacheFields leaves ttlMs and cacheScope out of modern
	// tools/list and server/discover results (non-conformant).
	OmitCacheFields bool
	// ServerInfoOnlyInDiscover leaves serverInfo out of the _meta of every
	// modern result but server/discover's (a SHOULD of the revision).
	ServerInfoOnlyInDiscover bool
	// TTLMs is the ttlMs of cacheable results (default 0).
	TTLMs int64
	// CacheScope is "public" or "private" (default: "private" when
	// RequireAuth is set, else "public").
	CacheScope string

	// ServerName and ServerVersion are the serverInfo (defaults
	// "mcpdrift-mockserver" and "0.0.0").
	ServerName, ServerVersion string
	// Instructions, when set, are returned by initialize and server/discover
	// (unless Surface has instructions of its own).
	Instructions string

	// Surface is served beside the tools: instructions, prompts, resource
	// templates and resources (surface.go); swap it with SetSurface or
	// ReloadFile. nil: none.
	Surface *Surface
	// SurfacePageSize is the number of items per page of prompts/list,
	// resources/templates/list and resources/list (0: one page).
	SurfacePageSize int
	// EndlessLists names surface list methods whose pages never end:
	// every page has a fresh nextCursor (hostile: a client must bound
	// them).
	EndlessLists []string

	// ListChanged advertises tools.listChanged and sends
	// notifications/tools/list_changed when the tools are swapped
	// (SetTools, ReloadFile, the admin endpoint): on every stdio
	// connection, on every legacy session's GET stream (GET with
	// Mcp-Session-Id opens one; without ListChanged GET stays 405), and on
	// every 2026-07-28 subscriptions/listen stream that asked for
	// toolsListChanged (without ListChanged, listen is -32601).
	ListChanged bool

	// RequireAuth, when set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN). A missing or wrong token is 401.
	RequireAuth string
	// NoChallenge omits WWW-Authenticate from 401 responses.
	NoChallenge bool
	// Challenge replaces the default WWW-Authenticate value
	// (Bearer resource_metadata="<scheme>://<host>/.well-known/oauth-protected-resource<path>").
	Challenge string

	// Response selects JSON (default) or SSE framing.
	Response ResponseMode
	// SSEProgress sends a notifications/progress event before every modern
	// SSE response even when the request has no progressToken (then with
	// token "mock-progress", which a conformant server would not do).
	SSEProgress bool

	// AllowAnyOrigin turns off the Origin check (by default a request with
	// an Origin header that is not a loopback origin is 403).
	AllowAnyOrigin bool

	// Hostile knobs, for client tests. Slow and RedirectTo apply to every
	// method; the others only to the methods in HostileMethods (default
	// tools/list).
	//
	// Slow delays every JSON-RPC answer (transport-level refusals such as
	// 401, 405 or 406 are immediate).
	Slow time.Duration
	// Oversized streams a tools/list result of valid-looking JSON tool
	// objects: when > 0, until at least that many bytes and then closes the
	// document (valid JSON just over the size); when < 0, forever (until
	// the client goes away or the server is closed).
	Oversized int64
	// NeverEndingSSE answers with an event stream that sends keep-alive
	// comments and never the response.
	NeverEndingSSE bool
	// StreamEndsEarly answers on an event stream that ends before the
	// response (after the notifications; in a 2025-11-25 session after
	// the priming event, whose id resumes nothing): a call that gets no
	// answer.
	StreamEndsEarly bool
	// PollCalls answers in a legacy session as SEP-1699 lets a server
	// poll: the event stream (with event ids whatever the revision) ends
	// after an event with an id and a retry of PollRetry, and the response
	// is sent on the GET that resumes from that id (Last-Event-ID). A
	// modern session (2026-07-28 has no resumption) is answered as usual.
	PollCalls bool
	// PollRetry is the retry PollCalls asks for (default 50 ms).
	PollRetry time.Duration
	// WrongID answers with an id that is not the request's.
	WrongID bool
	// InvalidJSON answers with a truncated, invalid JSON body.
	InvalidJSON bool
	// ErrorInsteadOfResult answers HTTP 200 with a JSON-RPC error -32603.
	ErrorInsteadOfResult bool
	// RedirectTo answers every request to the MCP endpoint with 307 and
	// this Location.
	RedirectTo string
	// HostileMethods lists the JSON-RPC methods the hostile knobs affect
	// (default ["tools/list"]).
	HostileMethods []string

	// MaxBodyBytes bounds a request body or stdio line (default 1 MiB).
	MaxBodyBytes int64
	// MaxAdminBodyBytes bounds a manifest POSTed to the admin handler
	// (default 16 MiB).
	MaxAdminBodyBytes int64
	// LogLimit bounds the request log (default 1024 entries; the oldest go).
	LogLimit int
	// MaxSessions bounds live legacy sessions (default 1024; the oldest go).
	MaxSessions int
}

var versionRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// isModernRev: the known modern revisions and anything dated after the
// last legacy one.
func isModernRev(v string) bool {
	return mcpwire.IsModern(v) || v > mcpwire.Rev20251125
}

// LoadTools reads a tool list in any form manifest.ParseToolList accepts
// (a JSON-RPC tools/list response, a bare result, an array of pages, a bare
// tool array) and returns the tool objects' exact bytes, in order. The
// result is never nil.
func LoadTools(src []byte) ([]json.RawMessage, error) {
	tl, err := manifest.ParseToolList(src)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(tl.Tools))
	for _, t := range tl.Tools {
		out = append(out, append(json.RawMessage(nil), t.Raw()...))
	}
	return out, nil
}

// LoadToolsFile is LoadTools on a file, refusing files over 64 MiB.
func LoadToolsFile(path string) ([]json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const max = 64 << 20
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	tools, err := LoadTools(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tools, nil
}
