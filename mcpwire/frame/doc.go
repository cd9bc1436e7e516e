// Package frame is the one copy of MCP's framing, shared by the client
// (mcpclient), the strict mock server (mockserver) and the gateway: the
// text/event-stream reader and writer, the bounded newline-delimited line
// reader and writer of stdio, the JSON-RPC 2.0 envelope that keeps the
// received bytes, and the MCP request headers derived from a body.
//
// Everything that reads is bounded: an SSEReader by the bytes it reads (in
// all, or per event), the length of a line and the number of events; a
// LineReader by the length of a line. Nothing here buffers without bound.
//
// The envelope never re-encodes. A Message is parsed once by the strict
// parser (jcs: duplicate member names, invalid UTF-8, lone surrogates,
// trailing data and nesting beyond jcs.MaxDepth are errors) and its id,
// params, result and error are jcs.Values whose Raw bytes are spans of the
// message as received: an answer built with AppendResult or AppendError
// carries the request's exact id bytes, and a forwarded message is the
// bytes that arrived.
//
// Three readings of a JSON-RPC message exist, because the two ends of MCP
// accept different things:
//
//   - Parse classifies any JSON text (the gateway, the header derivation);
//   - FromServer is what an observing client accepts from a server: error
//     responses with a null or absent id, numeric ids of any spelling, a
//     null-id message with a method taken as a notification;
//   - FromClient is what a strict server accepts from a client: ids are
//     strings or integers and never null, methods are non-empty, params are
//     objects; its errors are the JSON-RPC errors to answer with.
//
// DeriveHeaders is the one place where Mcp-Method, Mcp-Name and
// MCP-Protocol-Version come from a body; CheckHeaders is the one check
// that a request's headers agree with its body (-32020 otherwise).
//
// The package knows nothing about tools, lists or decisions.
package frame
