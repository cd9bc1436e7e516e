// Package mcpclient is the MCP client of mcpdrift: it observes one server's
// tools/list and keeps the bytes of every response it receives, because
// mcpdrift hashes exactly what servers send.
//
// It speaks JSON-RPC itself — over Streamable HTTP and the deprecated
// HTTP+SSE transport with net/http, and over a child's stdin/stdout — and
// does not use the MCP Go SDKs: they drop
// tools (invalid x-mcp-header annotations), filter and re-encode fields
// (unknown fields lost, hints always marshalled), serve tools/list from a
// TTL cache, and stop paginating at an empty nextCursor, which 2026-07-28
// says is a cursor. An observer built on them would hash what the SDK made
// of the answer, not the answer.
//
// # Eras
//
// ListTools first sends server/discover with the 2026-07-28 per-request
// _meta (protocolVersion, clientCapabilities, clientInfo). A result that
// lists supportedVersions, or a recognized modern error (-32020, -32021,
// -32022, or -32601 with HTTP 404), means a modern server (a result
// without supportedVersions proves nothing and is not taken as
// 2026-07-28): -32022 stops the run with a *ProtocolError
// (IsProtocolUnsupported) unless data.supported names another modern
// revision this client speaks, which is tried once. Anything else — an
// empty or non-JSON-RPC body, another error code, -32601 without 404, or
// on stdio no answer within StartupTimeout — means a legacy server, and
// the run falls back to initialize (asking for the newest legacy revision,
// accepting any legacy revision the server answers with, 2024-11-05
// included), then
// notifications/initialized, then tools/list with Mcp-Session-Id and
// MCP-Protocol-Version (from 2025-06-18); the session is ended with DELETE
// (405 accepted). A legacy server's revision is not claimed:
// Observation.ProtocolRevision stays "" and RevisionReason says why.
//
// # Client capabilities
//
// Config.ClientCapabilities (ParseClientCapabilities: a JSON object or
// "sampling,roots") is declared in initialize and in every 2026-07-28
// _meta, because servers may list some tools only to clients that declare
// sampling, elicitation or roots. Declaring is all the client does: every
// server→client request except ping is refused with a JSON-RPC error
// (-32601) on every transport where an answer can travel — stdio, a legacy
// Streamable HTTP session (POSTed back with the session headers), HTTP+SSE
// — and ignored on a 2026-07-28 response stream, where servers must not
// send requests and clients must not POST responses.
//
// # HTTP
//
// Every POST carries Content-Type: application/json, Accept:
// application/json, text/event-stream, Mcp-Method, and the headers derived
// from the body by one function (requestHeaders): Mcp-Protocol-Version is
// read from the body's params._meta, so the two cannot disagree; Mcp-Name
// (tools/call, prompts/get, resources/read) is encoded with
// mcpwire.EncodeHeaderValue. Responses are JSON or SSE by Content-Type.
// SSE streams skip priming events (empty data), comments, events of other
// types, notifications and server requests (which are not answered over
// HTTP). 401 and 403 are *HTTPError with the WWW-Authenticate challenge.
// Redirects are followed within the origin only, without a method change,
// at most five; TLS is always verified.
//
// # HTTP+SSE (2024-11-05, deprecated)
//
// With Config.Transport "sse", or when Transport is auto and initialize is
// refused with HTTP 400, 404 or 405, the client GETs BaseURL for an event
// stream and waits (RequestTimeout, MaxSSEEvents) for its endpoint event:
// a URI that must resolve to BaseURL's origin (scheme, host, port) without
// user info — anything else is refused before a byte is sent to it. Each
// message is POSTed there (202 expected) while the stream is read for its
// response; what is read while waiting for one response is bounded by
// RequestTimeout, MaxResponseBytes and MaxSSEEvents, and so is each event.
// The stream is closed when ListTools returns. The era is legacy and the
// revision not claimed (this transport has no server/discover).
//
// # stdio
//
// Newline-delimited JSON-RPC over a child's stdin/stdout. The child runs
// with a minimal environment in a session and process group of its own;
// when ListTools returns or ctx is cancelled, its stdin is closed, the
// group gets SIGTERM, and then everything contained is killed. On Linux
// the child also gets Pdeathsig SIGKILL and, where cgroup v2 is writable,
// a fresh cgroup, killed with cgroup.kill and removed; otherwise the
// process becomes a child subreaper (PR_SET_CHILD_SUBREAPER) while any
// stdio run is active and kills the descendants it traces through /proc
// until none is left. Being a subreaper is process-wide: while a run is
// active, orphans of the program's other children are reparented to it
// too, and are its to reap. proc_linux.go says what stays out of reach.
// Lines on stdout that do not start a JSON value are skipped
// with a warning (servers that log to stdout are common); a line that
// starts one and is not a valid message is a *ResponseError. Server
// requests are answered: ping with {}, anything else with -32601. stderr
// is kept (the last StderrTail bytes).
//
// # Bytes and bounds
//
// Responses are parsed with jcs, the strict parser the manifest package
// uses, so the ids and cursors that steer the client are read exactly as
// manifest.ParseToolList will read them. Observation.Transcript holds the
// request bodies sent and the response objects as received; it feeds
// manifest.ParseToolList directly. Each exchange is bounded in time
// (RequestTimeout, ConnectTimeout, StartupTimeout), in bytes
// (MaxResponseBytes per body, stream or line) and in SSE events; the list
// in all its bytes (MaxListBytes, 64 MiB) and tools (MaxListTools,
// 100,000) and by cursor cycles, and in pages when MaxListPages is set
// (no page bound by default); the whole run by the context's deadline.
// Config.OnToolsPage receives each page as it is read, parsed, instead of
// a Transcript. Errors are typed
// (*ProtocolError, *HTTPError, *LimitError, *UnreachableError,
// *RedirectError, *ResponseError, *VersionError, *ConfigError) and quote
// at most 200 bytes of server-controlled text, escaped with safetext.
package mcpclient
