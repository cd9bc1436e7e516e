package frame

import (
	"errors"
	"golang.org/x/net/http/httpguts"
	"net/http"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Headers are the MCP request headers a body determines.
type Headers struct {
	// Method is Mcp-Method: the body's method ("" for a response).
	Method string
	// Name is Mcp-Name before encoding: params.name (tools/call,
	// prompts/get) or params.uri (resources/read), when it is a string.
	Name    string
	HasName bool
	// ProtocolVersion is MCP-Protocol-Version: params._meta's
	// io.modelcontextprotocol/protocolVersion when the body has one as a
	// string (the 2026-07-28 revision), else the session's version ("" when
	// there is none: before initialize, or a revision before 2025-06-18).
	ProtocolVersion string

	request bool // a request or notification: Set sets Mcp-Method even when empty
}

// NameKey returns the params member Mcp-Name mirrors for method: "name"
// for tools/call and prompts/get, "uri" for resources/read, else "".
func NameKey(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

// DeriveHeaders derives the MCP request headers from a message about to
// be sent or just received: the one place where the headers come from the
// body, so that a sender's cannot disagree with it and a receiver checks
// against the same derivation (CheckHeaders). A response (the answer to a
// server request) has only the session's version. It reads m.Root, so it
// gives the same for a message from Parse, FromServer or FromClient; a
// body with neither a string method nor a result or error is an error.
func DeriveHeaders(m *Message, sessionVersion string) (Headers, error) {
	root := m.Root
	if !root.Valid() {
		return Headers{}, errors.New("no message")
	}
	mv, ok := root.Get("method")
	if !ok {
		_, res := root.Get("result")
		_, er := root.Get("error")
		if !res && !er {
			return Headers{}, errors.New("a body that is neither a request nor a response")
		}
		return Headers{ProtocolVersion: sessionVersion}, nil
	}
	if mv.Kind() != jcs.String {
		return Headers{}, errors.New("request body without a method")
	}
	hs := Headers{Method: mv.Str(), ProtocolVersion: sessionVersion, request: true}
	if !headerValue(hs.Method) {
		return Headers{}, errors.New("the method cannot be sent as the Mcp-Method header (a control or non-ASCII character, or spaces around it)")
	}
	if params, ok := root.Get("params"); ok && params.Kind() == jcs.Object {
		if meta, ok := params.Get("_meta"); ok {
			if v, ok := meta.Get(mcpwire.MetaProtocolVersion); ok && v.Kind() == jcs.String {
				hs.ProtocolVersion = v.Str()
				if !headerValue(hs.ProtocolVersion) {
					return Headers{}, errors.New("params._meta's protocolVersion cannot be sent as the MCP-Protocol-Version header (a control or non-ASCII character, or spaces around it)")
				}
			}
		}
		if key := NameKey(hs.Method); key != "" {
			if n, ok := params.Get(key); ok && n.Kind() == jcs.String {
				hs.Name, hs.HasName = n.Str(), true
			}
		}
	}
	return hs, nil
}

// headerValue reports whether s survives as an HTTP header value as it
// is: visible ASCII, with spaces and tabs only inside (a receiver trims
// them at the ends, so a body value with them there could never match its
// header, and a control character cannot be sent at all).
func headerValue(s string) bool {
	if s != strings.Trim(s, " \t") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// Set sets the headers on h: Mcp-Method for a request or notification,
// Mcp-Name (encoded with mcpwire.EncodeHeaderValue) when the body has a
// name, MCP-Protocol-Version when not empty.
func (hs Headers) Set(h http.Header) {
	if hs.request || hs.Method != "" {
		h.Set(mcpwire.HeaderMethod, hs.Method)
	}
	if hs.HasName {
		h.Set(mcpwire.HeaderName, mcpwire.EncodeHeaderValue(hs.Name))
	}
	if hs.ProtocolVersion != "" {
		h.Set(mcpwire.HeaderProtocolVersion, hs.ProtocolVersion)
	}
}

// CheckHeaders checks that the headers of a 2026-07-28 request or
// notification agree with its body (as DeriveHeaders derives them), and
// answers a disagreement with -32020 (HTTP 400). supported, when not nil,
// checks the body's version at its place in the order and returns the
// error for a version not served (-32022); h is nil on stdio, where only
// the body's rules apply.
//
// A request, in this order: MCP-Protocol-Version exactly once, not empty,
// and equal to params._meta's protocolVersion (which the caller has
// validated);
// supported; Mcp-Method exactly once and equal to the method (values are
// case-sensitive); for tools/call, prompts/get and resources/read
// params.name or params.uri a string (-32602 otherwise, status 0) and
// Mcp-Name exactly once, of visible ASCII, SP and HTAB only,
// =?base64?...?= decoded, equal to it.
//
// A notification: MCP-Protocol-Version exactly once, equal to
// params._meta's protocolVersion when the body has one; supported (of the
// header's version); Mcp-Method, when sent, exactly once and equal to the
// method. On stdio a notification has nothing to check.
//
// Header values are compared with spaces and tabs around them trimmed.
func CheckHeaders(h http.Header, m *Message, supported func(version string) *Error) *Error {
	hs, err := DeriveHeaders(m, "")
	if err != nil {
		return Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: %s", err.Error())
	}
	if m.Kind == Notification {
		if h == nil {
			return nil
		}
		return checkNotificationHeaders(h, m, hs, supported)
	}
	if h != nil {
		hv, e := SingleHeader(h, mcpwire.HeaderProtocolVersion)
		if e != nil {
			return e
		}
		if hv == "" || hv != hs.ProtocolVersion {
			return Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header %s does not match _meta protocolVersion %s", safetext.Quote(safetext.Clip(hv, 64)), safetext.Quote(safetext.Clip(hs.ProtocolVersion, 64)))
		}
	}
	if supported != nil {
		if e := supported(hs.ProtocolVersion); e != nil {
			return e
		}
	}
	if h != nil {
		hm, e := SingleHeader(h, mcpwire.HeaderMethod)
		if e != nil {
			return e
		}
		if hm != hs.Method {
			return Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: Mcp-Method header %s does not match method %s", safetext.Quote(safetext.Clip(hm, 64)), safetext.Quote(safetext.Clip(hs.Method, 64)))
		}
	}
	if key := NameKey(hs.Method); key != "" {
		if !hs.HasName {
			return Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: params.%s must be a string", key)
		}
		if h != nil {
			raw, e := SingleHeader(h, mcpwire.HeaderName)
			if e != nil {
				return e
			}
			if e := CheckHeaderValue(mcpwire.HeaderName, raw, hs.Name); e != nil {
				return e
			}
		}
	}
	return nil
}

func checkNotificationHeaders(h http.Header, m *Message, hs Headers, supported func(string) *Error) *Error {
	hv, e := SingleHeader(h, mcpwire.HeaderProtocolVersion)
	if e != nil {
		return e
	}
	if meta, ok := m.Meta(); ok {
		if pv, ok := meta.Get(mcpwire.MetaProtocolVersion); ok && (pv.Kind() != jcs.String || pv.Str() != hv) {
			return Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header does not match _meta protocolVersion")
		}
	}
	if supported != nil {
		if e := supported(hv); e != nil {
			return e
		}
	}
	if len(h.Values(mcpwire.HeaderMethod)) > 0 {
		hm, e := SingleHeader(h, mcpwire.HeaderMethod)
		if e != nil {
			return e
		}
		if hm != hs.Method {
			return Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: Mcp-Method header does not match method")
		}
	}
	return nil
}

// shownName is a header name in a message: as it is when it is an HTTP
// token (every name mcpdrift sends), else quoted (safetext.Quote): an
// Mcp-Param-* name comes from a server's x-mcp-header, its text.
func shownName(name string) string {
	if httpguts.ValidHeaderFieldName(name) {
		return name
	}
	return safetext.Quote(name)
}

// SingleHeader returns the one value of a required header, spaces and
// tabs around it trimmed: absent or repeated is a -32020 (HTTP 400).
func SingleHeader(h http.Header, name string) (string, *Error) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: missing required %s header", shownName(name))
	case 1:
		return strings.Trim(vs[0], " \t"), nil
	}
	return "", Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header repeated", shownName(name))
}

// CheckHeaderValue checks an Mcp-Name or Mcp-Param-* value against the
// body's: only visible ASCII, SP and HTAB on the wire; =?base64?...?=
// decoded (invalid base64 is a mismatch); then equal to want. A
// disagreement is a -32020 (HTTP 400).
func CheckHeaderValue(name, raw, want string) *Error {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' {
			return Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header has invalid characters (non-ASCII values must be =?base64?...?= encoded)", shownName(name))
		}
	}
	got, err := mcpwire.DecodeHeaderValue(raw)
	if err != nil {
		return Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header: %s", shownName(name), safetext.Inert(err.Error()))
	}
	if got != want {
		return Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header does not match the body value %s", shownName(name), safetext.Quote(safetext.Clip(want, 128)))
	}
	return nil
}
