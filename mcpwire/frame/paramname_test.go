package frame

import (
	"net/http"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Found by the second review: a tool's x-mcp-header (the server's inputSchema text) names
// the Mcp-Param-* header, and the mismatch errors show the name raw
// ("missing required %s header"): a server's ESC reaches the gateway's
// client and its log.
func TestParamHeaderNameInert(t *testing.T) {
	schema, err := jcs.Parse([]byte(`{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Q\u001b[31m\u3164 @org/security #1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	args, _ := jcs.Parse([]byte(`{"q":"v"}`))
	// Such a name is not an HTTP header name: ParamHeaders derives no
	// header from it (a client excludes the tool:
	// ParamAnnotationProblem), and the errors of one given by hand stay
	// inert.
	if got := ParamHeaders(schema.Root(), args.Root()); len(got) != 0 {
		t.Fatalf("a header from an invalid annotation: %v", got)
	}
	if p := ParamAnnotationProblem(schema.Root()); p == "" {
		t.Fatal("the annotation is not called invalid")
	}
	want := []ParamHeader{{Name: "Mcp-Param-Q\x1b[31m\u3164 @org/security #1", Value: "v", Text: "v"}}
	want[0].Name = "Mcp-Param-" + "Q\x1b[31m\u3164 @org/security #1"
	for _, h := range []http.Header{{}, {want[0].Name: {"w"}}, {want[0].Name: {"=?base64?%%%?="}}} {
		e := CheckParamHeaders(h, want, nil)
		if e == nil {
			t.Fatal("no error")
		}
		if msg := e.Error(); safetext.Inert(msg) != msg {
			t.Errorf("not inert: %q", msg)
		}
	}
}
