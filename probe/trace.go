package probe

import "strings"

// SpanRef names one exported span (lowercase hex ids); the zero SpanRef
// names none.
type SpanRef struct {
	TraceID string
	SpanID  string
}

func (s SpanRef) zero() bool { return s.TraceID == "" || s.SpanID == "" }

// Spans name the requests a run made, for the findings they established
// (Input.Spans). Every field is zero when the run was not traced or its
// spans are not exported: a finding then carries no ids at all.
type Spans struct {
	// List is the primary listing: the INTERNAL tools/list span whose
	// children are its pages (a listing of several pages is one span).
	List SpanRef
	// Second, Cloak and Anonymous are the listings of the second
	// connection, of the cloak check and of the credential-stripped probe.
	Second, Cloak, Anonymous SpanRef
	// AnonymousRequest is the credential-stripped request that was refused
	// or failed (the request whose answer shows enforcement).
	AnonymousRequest SpanRef
	// Refused is the primary request refused with 401 or 403, or answered
	// -32022 (which may be server/discover, initialize or tools/list).
	Refused SpanRef
	// Initialize is the legacy initialize, whose answer made the session
	// legacy; Identity the request whose answer carried serverInfo.
	Initialize, Identity SpanRef
	// Calls are the tools/call spans by tool name.
	Calls map[string]SpanRef
}

// spanOf is the span that established f: attribution is per producer
// (the apiverity specification, "Correlating a finding with the call that
// produced it"), never the run's.
//
//   - MCP-AUTH-PLAINTEXT-TRANSPORT comes from the URL alone: none.
//   - The other auth findings name the request whose answer they are
//     about: the credential-stripped one (its listing when it listed, else
//     the request that was refused or failed), or — when the primary
//     request itself was refused — that request; an anonymous listing
//     without credentials presented is the primary listing.
//   - A credential reflected into a tool names the listing; into the
//     server's identity, the request that carried serverInfo.
//   - MCP-CONF-TOOLSET-VARIES and -ORDER-VARIES name the second listing
//     (the one that showed the variance); -VARIES-BY-CLIENT the cloak
//     listing.
//   - MCP-DRIFT-PROTOCOL-UNSUPPORTED names the request answered -32022;
//     MCP-DRIFT-LEGACY-SERVER the initialize.
//   - MCP-DRIFT-CALL-* name their tools/call.
//   - Every other conformance, presence, schema, annotation, description
//     and escalation finding was read out of the primary listing.
func spanOf(f Finding, in Input) SpanRef {
	s := in.Spans
	switch f.RuleID {
	case "MCP-AUTH-PLAINTEXT-TRANSPORT":
		return SpanRef{}
	case "MCP-AUTH-ANONYMOUS-LIST":
		if in.Anonymous != nil && in.Anonymous.Listed {
			return s.Anonymous
		}
		return s.List
	case "MCP-AUTH-ENFORCED", "MCP-AUTH-NO-CHALLENGE":
		if in.Refused != nil {
			return s.Refused
		}
		return s.AnonymousRequest
	case "MCP-AUTH-INDETERMINATE":
		return s.AnonymousRequest
	case "MCP-AUTH-CREDENTIAL-REFLECTED":
		if f.Tool == "" {
			return s.Identity
		}
		return s.List
	case "MCP-CONF-TOOLSET-VARIES", "MCP-CONF-ORDER-VARIES":
		return s.Second
	case "MCP-CONF-TOOLSET-VARIES-BY-CLIENT":
		return s.Cloak
	case "MCP-DRIFT-PROTOCOL-UNSUPPORTED":
		return s.Refused
	case "MCP-DRIFT-LEGACY-SERVER":
		return s.Initialize
	}
	if strings.HasPrefix(f.RuleID, "MCP-DRIFT-CALL-") {
		return s.Calls[f.Tool]
	}
	return s.List
}

// attribute sets each finding's trace_id and span_id.
func attribute(r *Result, in Input) {
	for i := range r.Findings {
		if ref := spanOf(r.Findings[i], in); !ref.zero() {
			r.Findings[i].TraceID, r.Findings[i].SpanID = ref.TraceID, ref.SpanID
		}
	}
}
