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
	want := ParamHeaders(schema.Root(), args.Root())
	if len(want) != 1 {
		t.Fatalf("headers %v", want)
	}
	for _, h := range []http.Header{{}, {want[0].Name: {"w"}}, {want[0].Name: {"=?base64?%%%?="}}} {
		e := CheckParamHeaders(h, want)
		if e == nil {
			t.Fatal("no error")
		}
		if msg := e.Error(); safetext.Inert(msg) != msg {
			t.Errorf("not inert: %q", msg)
		}
	}
}
