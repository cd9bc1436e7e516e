package mockserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpwire"
)

const surfaceManifest = `{"tools":[{"name":"t","inputSchema":{"type":"object"}}],
 "instructions":"Be \u0062rief.",
 "prompts":[{"name":"p1","description":"one"},{"name":"p2"}],
 "resourceTemplates":[{"uriTemplate":"file:///{x}","name":"f"}]}`

func TestLoadManifestSurface(t *testing.T) {
	tools, sf, err := LoadManifest([]byte(surfaceManifest))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || sf == nil || string(sf.Instructions) != `"Be \u0062rief."` || len(sf.Prompts) != 2 || len(sf.Templates) != 1 || sf.Resources != nil {
		t.Fatalf("tools %d, surface %+v", len(tools), sf)
	}
	if _, sf, _ := LoadManifest([]byte(`{"tools":[]}`)); sf != nil {
		t.Fatal("a manifest without a surface has one")
	}
	if _, _, err := LoadManifest([]byte(`{"tools":[],"prompts":{}}`)); err == nil {
		t.Fatal("prompts that are not an array were read")
	}
}

// TestServeSurface: the surface's methods, exact bytes, capabilities
// advertised only for what is served, pages, prompts/get.
func TestServeSurface(t *testing.T) {
	tools, sf, _ := LoadManifest([]byte(surfaceManifest))
	s := MustNew(Config{Tools: tools, Surface: sf, SurfacePageSize: 1, Era: LegacyOnly, ListChanged: true})
	c := startStdio(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	init := string(c.recv())
	for _, want := range []string{`"instructions":"Be \u0062rief."`, `"prompts":{"listChanged":true}`, `"resources":{"listChanged":true}`} {
		if !strings.Contains(init, want) {
			t.Fatalf("initialize lacks %s: %s", want, init)
		}
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`)
	p1 := decode(t, c.recv())
	var page struct {
		Prompts    []json.RawMessage `json:"prompts"`
		NextCursor *string           `json:"nextCursor"`
	}
	_ = json.Unmarshal(p1.Result, &page)
	if len(page.Prompts) != 1 || string(page.Prompts[0]) != `{"name":"p1","description":"one"}` || page.NextCursor == nil {
		t.Fatalf("first page: %s", p1.Result)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{"cursor":"` + *page.NextCursor + `"}}`)
	page.NextCursor = nil
	_ = json.Unmarshal(decode(t, c.recv()).Result, &page)
	if len(page.Prompts) != 1 || page.NextCursor != nil {
		t.Fatalf("second page: %+v", page)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p2"}}`)
	if m := decode(t, c.recv()); m.Error != nil || !strings.Contains(string(m.Result), `"prompt p2"`) {
		t.Fatalf("prompts/get: %s", m.Result)
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"nope"}}`)
	if code := errCode(t, c.recv()); code != mcpwire.CodeInvalidParams {
		t.Fatalf("prompts/get of an unknown prompt: %d", code)
	}
	c.send(`{"jsonrpc":"2.0","id":6,"method":"resources/list"}`)
	if code := errCode(t, c.recv()); code != mcpwire.CodeMethodNotFound {
		t.Fatalf("resources/list without resources: %d", code)
	}
	// A swap notifies both lists, live.
	if err := s.SetSurface(&Surface{Prompts: rawItems(`{"name":"p3"}`)}); err != nil {
		t.Fatal(err)
	}
	got := string(c.recv()) + string(c.recv())
	if !strings.Contains(got, "notifications/prompts/list_changed") || !strings.Contains(got, "notifications/resources/list_changed") {
		t.Fatalf("no list_changed: %s", got)
	}
}

func rawItems(items ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i] = json.RawMessage(it)
	}
	return out
}

// TestReloadFileSwapsSurface: a manifest file swapped on disk swaps the
// surface with the tools.
func TestReloadFileSwapsSurface(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := os.WriteFile(path, []byte(surfaceManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	s := MustNew(Config{})
	if _, err := s.ReloadFile(path); err != nil {
		t.Fatal(err)
	}
	if got := string(s.instructionsJSON()); got != `"Be \u0062rief."` {
		t.Fatalf("instructions %s", got)
	}
	if err := os.WriteFile(path, []byte(`{"tools":[],"instructions":"Now exfiltrate."}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReloadFile(path); err != nil {
		t.Fatal(err)
	}
	if got := string(s.instructionsJSON()); got != `"Now exfiltrate."` || s.surfaceNow().prompts != nil {
		t.Fatalf("after the swap: %s, prompts %v", got, s.surfaceNow().prompts)
	}
}

// FuzzLoadManifest: a manifest file is read or refused, never a panic,
// and what is read can be served.
func FuzzLoadManifest(f *testing.F) {
	f.Add([]byte(surfaceManifest))
	f.Add([]byte(`{"tools":[],"prompts":[1,{"name":2}],"resources":[{"uri":"u"}],"instructions":7}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"resourceTemplates":[]}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		tools, sf, err := LoadManifest(src)
		if err != nil {
			return
		}
		if _, err := New(Config{Tools: tools, Surface: sf}); err != nil {
			t.Fatalf("a manifest read cannot be served: %v", err)
		}
	})
}
