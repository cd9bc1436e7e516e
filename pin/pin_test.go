package pin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/pin"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
)

var acmeV1 = filepath.Join("..", "examples", "acme-github.v1.tools-list.json")

func list(t *testing.T, src []byte) *manifest.ToolList {
	t.Helper()
	tl, err := manifest.ParseToolList(src)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func serve(t *testing.T, tools []json.RawMessage) string {
	t.Helper()
	s, err := mockserver.New(mockserver.Config{Tools: tools, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts.URL + "/mcp"
}

// TestFile: a saved list pinned through the library: the baseline, and a
// snapshot that reads back as the declared side of a comparison.
func TestFile(t *testing.T) {
	src, err := os.ReadFile(acmeV1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pin.File(context.Background(), pin.FileOptions{Tools: list(t, src), Source: acmeV1, ServerID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Declared.Tools) != 5 || r.Declared.Server.ID != "acme" || !r.HasSnapshot() {
		t.Fatalf("declared %+v", r.Declared.Server)
	}
	var b bytes.Buffer
	if err := r.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.ParseSnapshot(b.Bytes(), "s.json"); err != nil {
		t.Errorf("the snapshot does not read back: %v", err)
	}
	side, err := r.Side()
	if err != nil || side.ToolCount != 5 || side.ManifestDigest != r.Declared.ManifestDigest {
		t.Errorf("side: %v %d %q", err, side.ToolCount, side.ManifestDigest)
	}
	// A partial list is refused; so are names that collide.
	partial := list(t, []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}`))
	if _, err := pin.File(context.Background(), pin.FileOptions{Tools: partial, Source: "p.json", ServerID: "x"}); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("a partial list: %v", err)
	}
	collide := list(t, []byte(`{"tools":[{"name":"Search","inputSchema":{"type":"object"}},{"name":"search","inputSchema":{"type":"object"}}]}`))
	if _, err := pin.File(context.Background(), pin.FileOptions{Tools: collide, Source: "c.json", ServerID: "x"}); runerr.KindOf(err) != runerr.Usage || !strings.Contains(err.Error(), "collide") {
		t.Errorf("colliding names: %v", err)
	}
	// An observed record is pinned without tool definitions.
	o, err := pin.Observed(context.Background(), pin.ObservedOptions{Observed: r.Observed, Source: "o.json"})
	if err != nil || o.HasSnapshot() || o.Declared.ManifestDigest != r.Declared.ManifestDigest {
		t.Errorf("an observed record: %v", err)
	}
}

// TestServer: a live pin keeps the endpoint and what the server reports;
// a list that reflects a header value the run sent is refused.
func TestServer(t *testing.T) {
	tools, err := mockserver.LoadToolsFile(acmeV1)
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, tools)
	r, err := pin.Server(context.Background(), pin.ServerOptions{Server: mcpclient.Config{BaseURL: url}, ServerID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Declared.Tools) != 5 || r.Identity.Endpoint != url || r.Identity.ServerName == "" || r.Target != url {
		t.Errorf("identity %+v, target %q", r.Identity, r.Target)
	}
	const secret = "s3cr3t-token-0123456789"
	leak := serve(t, []json.RawMessage{json.RawMessage(`{"name":"leak","description":"` + secret + `","inputSchema":{"type":"object"}}`)})
	set := &redact.Set{}
	cfg := mcpclient.Config{BaseURL: leak, Headers: map[string][]string{"X-Key": {secret}}}
	if _, err := pin.Server(context.Background(), pin.ServerOptions{Server: cfg, ServerID: "x", Secrets: set}); runerr.KindOf(err) != runerr.Usage || !strings.Contains(err.Error(), "reflects credentials") {
		t.Errorf("a reflected secret: %v", err)
	}
	if _, err := pin.Server(context.Background(), pin.ServerOptions{Server: mcpclient.Config{BaseURL: "http://127.0.0.1:1/mcp"}, ServerID: "x"}); runerr.KindOf(err) != runerr.Inconclusive {
		t.Errorf("an unreachable server: %v", err)
	}
}
