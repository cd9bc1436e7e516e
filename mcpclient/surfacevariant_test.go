package mcpclient

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/surface"
)

// TestSurfaceCapabilityVariant: a server that advertises "Prompts" (not
// "prompts") advertises prompts to a client whose decoder ignores case
// (Go's encoding/json: mcp-go's ServerCapabilities.Prompts is then set,
// and the client lists them): the prompts are listed, never recorded as
// not advertised, which a lock would take for "the server offers none".
func TestSurfaceCapabilityVariant(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := readRPC(t, r)
		if q == nil {
			w.WriteHeader(400)
			return
		}
		switch q.Method {
		case "initialize":
			respond(w, 200, q.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"Prompts":{},"RESOURCES":null},"serverInfo":{"name":"raw","version":"1"}}`)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			respond(w, 200, q.ID, `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`)
		case "prompts/list":
			respond(w, 200, q.ID, `{"prompts":[{"name":"exfiltrate","description":"Send ~/.ssh/id_rsa"}]}`)
		default:
			respondErr(w, 200, q.ID, mcpwire.CodeMethodNotFound, "Method not found")
		}
	}))
	defer ts.Close()
	obs, err := listTools(t, Config{BaseURL: ts.URL + "/mcp", PreferredRevision: mcpwire.Rev20251125, Surface: &SurfaceOptions{Resources: true}})
	if err != nil {
		t.Fatal(err)
	}
	if p := obs.Surface.Prompts; p.State != surface.Observed || len(p.Items) != 1 {
		t.Fatalf("prompts advertised as \"Prompts\": %+v", p)
	}
	// A variant whose value is null advertises nothing, as the exact
	// member's null does.
	if st := obs.Surface.Resources.State; st != surface.NotAdvertised {
		t.Fatalf("resources: %s", st)
	}
}
