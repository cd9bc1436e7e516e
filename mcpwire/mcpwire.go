// Package mcpwire holds the MCP wire facts that the client (mcpclient) and
// the strict mock server (mockserver) must agree on: protocol revisions,
// header names, error codes, the _meta keys of the 2026-07-28 revision and
// the =?base64?...?= header value encoding. It does no I/O.
package mcpwire

import (
	"encoding/base64"
	"errors"
	"strings"
)

// Protocol revisions.
const (
	Rev20260728 = "2026-07-28" // modern, stateless
	Rev20251125 = "2025-11-25"
	Rev20250618 = "2025-06-18"
	Rev20250326 = "2025-03-26"
	Rev20241105 = "2024-11-05"
)

// ModernRevisions are the stateless revisions (server/discover, _meta in
// params, no initialize).
var ModernRevisions = []string{Rev20260728}

// LegacyRevisions are the initialize-era revisions this project speaks, newest
// first. 2024-11-05 is the first published revision (its HTTP transport is
// the deprecated HTTP+SSE one); its tools/list has the same shape.
var LegacyRevisions = []string{Rev20251125, Rev20250618, Rev20250326, Rev20241105}

// IsModern reports whether rev is a stateless (2026-07-28 or later) revision.
func IsModern(rev string) bool {
	for _, r := range ModernRevisions {
		if r == rev {
			return true
		}
	}
	return false
}

// Header names (canonical forms; HTTP header names are case-insensitive).
const (
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderParamPrefix     = "Mcp-Param-"
)

// _meta keys of the 2026-07-28 revision.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
)

// JSON-RPC error codes.
const (
	CodeParseError                 = -32700
	CodeInvalidRequest             = -32600
	CodeMethodNotFound             = -32601
	CodeInvalidParams              = -32602
	CodeInternalError              = -32603
	CodeHeaderMismatch             = -32020
	CodeMissingClientCapability    = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// IsModernErrorCode reports whether a JSON-RPC error code is one only a
// 2026-07-28 server sends (era detection: such an error means "modern
// server, do not fall back").
func IsModernErrorCode(code int) bool {
	return code == CodeHeaderMismatch || code == CodeMissingClientCapability || code == CodeUnsupportedProtocolVersion
}

const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// EncodeHeaderValue encodes a value for Mcp-Name or Mcp-Param-*: a value of
// visible ASCII (0x21-0x7E, with inner spaces or tabs) is sent as is; a
// value with anything else, with leading or trailing whitespace, or that
// itself looks like the sentinel is sent as =?base64?{base64(UTF-8)}?=.
func EncodeHeaderValue(v string) string {
	if needsEncoding(v) {
		return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + sentinelSuffix
	}
	return v
}

func needsEncoding(v string) bool {
	if v == "" {
		return false
	}
	if strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		return true
	}
	if v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t' {
		return true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' || c == '\t' {
			continue
		}
		if c < 0x21 || c > 0x7e {
			return true
		}
	}
	return false
}

// ErrBadEncoding is returned for a sentinel value whose base64 is invalid.
var ErrBadEncoding = errors.New("invalid =?base64?...?= header value")

// DecodeHeaderValue decodes a header value sent with EncodeHeaderValue. A
// value without the exact lowercase prefix and suffix is literal. Invalid
// base64 (bad padding or characters) is ErrBadEncoding; so is a decoded
// value that is not valid UTF-8.
func DecodeHeaderValue(v string) (string, error) {
	if len(v) < len(sentinelPrefix)+len(sentinelSuffix) || !strings.HasPrefix(v, sentinelPrefix) || !strings.HasSuffix(v, sentinelSuffix) {
		return v, nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
	if err != nil {
		return "", ErrBadEncoding
	}
	if !validUTF8(b) {
		return "", ErrBadEncoding
	}
	return string(b), nil
}

func validUTF8(b []byte) bool {
	return strings.ToValidUTF8(string(b), "\uFFFD") == string(b)
}
