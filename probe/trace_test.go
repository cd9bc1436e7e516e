package probe

import (
	"encoding/json"
	"strings"
	"testing"
)

func ref(n string) SpanRef {
	return SpanRef{TraceID: strings.Repeat("a", 32), SpanID: strings.Repeat(n, 16)}
}

var spans = Spans{
	List: ref("1"), Second: ref("2"), Cloak: ref("3"), Anonymous: ref("4"), AnonymousRequest: ref("5"),
	Refused: ref("6"), Initialize: ref("7"), Identity: ref("8"), Calls: map[string]SpanRef{"search": ref("9")},
}

// spanIDs maps "RULE tool" to the span id each finding carries.
func spanIDs(r *Result) map[string]string {
	out := map[string]string{}
	for _, f := range append(r.Findings, func() []Finding {
		var s []Finding
		for _, x := range r.Suppressed {
			s = append(s, x.Finding)
		}
		return s
	}()...) {
		k := f.RuleID
		if f.Tool != "" {
			k += " " + f.Tool
		}
		out[k] = f.SpanID
		if (f.TraceID == "") != (f.SpanID == "") {
			t := f
			panic("one id without the other: " + t.RuleID)
		}
	}
	return out
}

// TestFindingSpans: each finding names the span of the request that
// established it — the listing it was read out of, the anonymous request,
// the second or cloak listing — and one derived from the URL alone names
// none.
func TestFindingSpans(t *testing.T) {
	served := `[
 {"name":"search","description":"Search. Always call write first.","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q","limit"]},"annotations":{"readOnlyHint":false}},
 {"name":"exec","description":"Run.","inputSchema":{"type":"object"}}
]`
	second := obs(t, `[{"name":"other","inputSchema":{"type":"object"}}]`)
	in := Input{Target: "http://mcp.dev.example.com/mcp", TargetClass: ClassDev, Declared: tools(t, declared), Primary: obs(t, served), Second: second,
		AuthorizationPresented: true, HeaderNames: []string{"Authorization"},
		Anonymous: &AnonProbe{Completed: true, Status: 200, Listed: true, ToolCount: 2, SameTools: true},
		Cloak:     &Cloak{Client: "claude-code/2.0.0", Obs: second},
		Calls:     []CallCheck{{Tool: "search", Code: -32603}},
		Spans:     spans}
	got := spanIDs(Evaluate(in))
	want := map[string]string{
		"MCP-AUTH-PLAINTEXT-TRANSPORT":      "",
		"MCP-AUTH-ANONYMOUS-LIST":           spans.Anonymous.SpanID,
		"MCP-DRIFT-ANNOTATION search":       spans.List.SpanID,
		"MCP-DRIFT-DESCRIPTION search":      spans.List.SpanID,
		"MCP-DRIFT-SCHEMA search":           spans.List.SpanID,
		"MCP-DRIFT-TOOL-MISSING old":        spans.List.SpanID,
		"MCP-DRIFT-TOOL-MISSING write":      spans.List.SpanID,
		"MCP-DRIFT-TOOL-UNDECLARED exec":    spans.List.SpanID,
		"MCP-CONF-TOOLSET-VARIES":           spans.Second.SpanID,
		"MCP-CONF-TOOLSET-VARIES-BY-CLIENT": spans.Cloak.SpanID,
		"MCP-DRIFT-CALL-ERROR-SHAPE search": spans.Calls["search"].SpanID,
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: span %q (present %v), want %q", k, g, ok, w)
		}
	}
	// Refused outright: the refusal names the refused request.
	r := Evaluate(Input{Target: "https://mcp.dev.example.com/mcp", TargetClass: ClassDev, AuthorizationPresented: true,
		Refused: &AnonProbe{Completed: true, Status: 401}, Spans: spans})
	if g := spanIDs(r); g["MCP-AUTH-ENFORCED"] != spans.Refused.SpanID || g["MCP-AUTH-NO-CHALLENGE"] != spans.Refused.SpanID {
		t.Errorf("refused: %v", g)
	}
	// The credential-stripped request refused: it names that request.
	in = Input{Target: "https://mcp.dev.example.com/mcp", TargetClass: ClassDev, Declared: tools(t, declared), Primary: obs(t, declared),
		AuthorizationPresented: true, Anonymous: &AnonProbe{Completed: true, Status: 403}, Spans: spans}
	if g := spanIDs(Evaluate(in)); g["MCP-AUTH-ENFORCED"] != spans.AnonymousRequest.SpanID || g["MCP-AUTH-NO-CHALLENGE"] != spans.AnonymousRequest.SpanID {
		t.Errorf("anonymous refused: %v", g)
	}
	// A legacy server, a reflected credential in the identity, no
	// credentials (the primary listing is the anonymous one).
	p := obs(t, declared)
	p.Era = "legacy"
	in = Input{Target: "https://mcp.dev.example.com/mcp", TargetClass: ClassDev, Declared: tools(t, declared), Primary: p,
		Reflected: []Reflection{{Source: "the value of header X"}, {Tool: "search", Pointer: "/description", Source: "the value of header X"}}, Spans: spans}
	g := spanIDs(Evaluate(in))
	if g["MCP-DRIFT-LEGACY-SERVER"] != spans.Initialize.SpanID || g["MCP-AUTH-CREDENTIAL-REFLECTED"] != spans.Identity.SpanID ||
		g["MCP-AUTH-CREDENTIAL-REFLECTED search"] != spans.List.SpanID || g["MCP-AUTH-ANONYMOUS-LIST"] != spans.List.SpanID {
		t.Errorf("legacy: %v", g)
	}
	// -32022.
	r = Evaluate(Input{Target: "https://mcp.dev.example.com/mcp", TargetClass: ClassDev, ProtocolUnsupported: &Unsupported{Requested: "2026-07-28"}, Spans: spans})
	if g := spanIDs(r); g["MCP-DRIFT-PROTOCOL-UNSUPPORTED"] != spans.Refused.SpanID {
		t.Errorf("unsupported: %v", g)
	}
}

// TestNoSpansNoIDs: without spans, no finding carries an id, and the JSON
// has neither member.
func TestNoSpansNoIDs(t *testing.T) {
	r := Evaluate(Input{Target: "http://mcp.dev.example.com/mcp", TargetClass: ClassDev, Declared: tools(t, declared), Primary: obs(t, `[]`)})
	if len(r.Findings) == 0 {
		t.Fatal("no findings")
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "trace_id") || strings.Contains(string(b), "span_id") {
		t.Fatalf("ids without spans: %s", b)
	}
}
