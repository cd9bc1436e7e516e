// Package mockserver is a strict, configurable MCP server for tests, the
// demo and `mcpdrift mock-server`.
//
// It is strict by default: it validates what a conformant client must send
// and refuses everything else with the status and JSON-RPC error the
// specification gives (docs: mcp-protocol.md §4.8, §5.5), because a mock
// that accepts anything cannot prove that a client sends anything. Its
// knobs (Config) make it serve paginated, per-connection, swapped,
// anonymous or hostile tool lists; every request is recorded in a bounded
// log (Server.Log) so that tests can see what the client sent, including
// whether it sent clientInfo.
//
// A Server is an http.Handler for the MCP endpoint (Streamable HTTP, both
// eras, at whatever path it is mounted); LegacySSEHandler serves the
// deprecated HTTP+SSE transport of 2024-11-05 (GET for a stream whose
// endpoint event names where to POST; responses as message events);
// ServeStdio serves newline-delimited JSON-RPC. AdminHandler swaps the
// tools over HTTP; SetTools and ReloadFile swap them in-process.
//
// Tool objects are served with their exact bytes: results are assembled by
// byte concatenation, never by re-encoding. Two framings cannot carry line
// breaks, which in valid JSON can only be insignificant whitespace: on
// stdio CR and LF become spaces (a message is one line), and an SSE event
// is compacted to one data: line (whitespace between tokens dropped,
// nothing inside a string or a number touched), as the official
// conformance suite expects. Either way every tool's canonical form, and
// so its digest, is the one of the bytes loaded: the mock is the server,
// and what a client hashes is what it sent.
//
// Client capabilities: CapabilityTools lists further tools to clients that
// declare a capability (as server-everything does for sampling,
// elicitation and roots), and ServerRequest sends a server→client request
// before a response so that a client's refusal can be tested.
//
// tools/call is a trivial echo with no side effects: every known tool
// answers {"content":[{"type":"text","text":"ok"}]} (plus resultType and
// _meta in the modern era).
//
// # Eras
//
// DualEra (default) handles a POST statelessly (modern) when params._meta
// carries io.modelcontextprotocol/protocolVersion or /clientCapabilities,
// or — without Mcp-Session-Id and not an initialize — when it carries
// Mcp-Method or a modern MCP-Protocol-Version header; everything else gets
// the legacy initialize/session rules. ModernOnly and LegacyOnly speak one
// era. SupportedVersions dated after 2025-11-25 are modern.
//
// # Validation (HTTP)
//
// Checked in this order; the first failure answers.
//
//	Condition                                          HTTP  JSON-RPC
//	RedirectTo set                                     307   —
//	Origin present and not a loopback origin           403   -32600
//	RequireAuth: no Authorization (and no anonymous    401   -32000 (+ WWW-Authenticate unless NoChallenge)
//	  list), or a wrong token / scheme
//	GET, PUT, ...; DELETE on a modern-only server      405   -32600 (Allow: POST[, DELETE])
//	Content-Type not (exactly one) application/json    415   -32600
//	Accept not listing application/json AND            406   -32600
//	  text/event-stream (explicitly, q > 0)
//	body > MaxBodyBytes (1 MiB)                        413   -32600
//	not JSON (strict: duplicate names, bad UTF-8...)   400   -32700, id null
//	batch, not an object, jsonrpc != "2.0", id null    400   -32600
//	  or not string/integer, params not structured
//	params an array                                    400   -32602
//
// Modern era (2026-07-28):
//
//	initialize without modern _meta (modern-only)      404   -32601, data {supported, requested}
//	a JSON-RPC response POSTed                         400   -32600
//	notification: MCP-Protocol-Version missing,        400   -32020 / -32022
//	  repeated, unequal to _meta's, unsupported;
//	  Mcp-Method (when sent) unequal to method
//	notification accepted                              202   —
//	params or params._meta missing / not an object     400   -32602
//	_meta protocolVersion missing / not a string       400   -32602
//	_meta clientCapabilities missing / not an object   400   -32602
//	_meta clientInfo without string name+version,      400   -32602
//	  _meta logLevel not a logging level
//	MCP-Protocol-Version missing or repeated           400   -32020
//	MCP-Protocol-Version != _meta protocolVersion      400   -32020
//	version not supported (or a legacy one)            400   -32022, data {supported, requested}
//	Mcp-Method missing, repeated or != method          400   -32020 (values are case-sensitive)
//	tools/call, prompts/get: params.name not a string; 400   -32602
//	  resources/read: params.uri not a string
//	Mcp-Name missing or repeated (those three methods) 400   -32020
//	Mcp-Name with bytes outside visible ASCII/SP/HTAB  400   -32020
//	Mcp-Name =?base64?...?= invalid (padding, chars)   400   -32020 (mcpwire.DecodeHeaderValue)
//	Mcp-Name (decoded) != params.name / params.uri     400   -32020
//	Mcp-Param-{H} missing or != an argument annotated  400   -32020 (an integer's as the
//	  "x-mcp-header": "H" that is present and not null        same number, exactly)
//	Mcp-Param-{H} sent for an annotated argument that  400   -32020
//	  is absent, null or not a string, integer or boolean
//	unknown method (ping, prompts/*, resources/*, ...) 404   -32601
//	invalid cursor; unknown tool; arguments not object 400   -32602
//	success                                            200   result with resultType "complete",
//	                                                         ttlMs + cacheScope (list, discover;
//	                                                         unless OmitCacheFields), _meta serverInfo
//
// An incoming Mcp-Session-Id is ignored and none is ever sent.
//
// Legacy era (2025-11-25, 2025-06-18, 2025-03-26):
//
//	initialize carrying Mcp-Session-Id                 400   -32600
//	initialize without string protocolVersion, object  400   -32602 (no session minted)
//	  capabilities, clientInfo with name+version
//	initialize                                         200   negotiated version (the requested one if
//	                                                         supported, else the latest legacy);
//	                                                         Mcp-Session-Id minted
//	anything else without Mcp-Session-Id               400   -32000 "Bad Request: Server not initialized"
//	Mcp-Session-Id repeated                            400   -32000
//	unknown or ended session                           404   -32001 "Session not found"
//	MCP-Protocol-Version missing (negotiated           400   -32000
//	  >= 2025-06-18), repeated, or != negotiated
//	a JSON-RPC response POSTed                         400   -32600
//	notification (notifications/initialized marks      202   —
//	  the session ready)
//	request other than ping before                     400   -32000
//	  notifications/initialized
//	unknown method (server/discover included)          200   -32601
//	invalid cursor; unknown tool                       200   -32602
//	GET                                                405   -32600
//	DELETE with the session (same header rules)        200   session ended; then 404
//
// HTTP+SSE (LegacySSEHandler; legacy versions only, 2024-11-05 included
// when SupportedVersions names it):
//
//	Condition                                          HTTP  JSON-RPC
//	modern-only server                                 405   -32600
//	GET without Accept text/event-stream               406   -32600
//	GET                                                200   stream: "endpoint" event (PATH?sessionId=ID,
//	                                                         or SSEEndpoint), then "message" events
//	POST without ?sessionId                            405   -32600 (Allow: GET)
//	POST to an unknown or ended session                404   -32001
//	POST: Content-Type, size, JSON as for Streamable HTTP 415/413/400
//	POST of a message                                  202   the answer goes to the stream, with the
//	                                                         stdio session rules
//
// stdio has the same semantics without headers and sessions: modern
// requests need the _meta fields (-32602) and a supported version
// (-32022); a legacy client must initialize (-32000 "Server not
// initialized" before it, -32601 for unknown methods such as
// server/discover), then send notifications/initialized; ping always
// works; a second initialize is -32600; notifications get no answer.
package mockserver
