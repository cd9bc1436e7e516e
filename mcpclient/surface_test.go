package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/surface"
)

func rawList(items ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i] = json.RawMessage(it)
	}
	return out
}

var testSurface = &mockserver.Surface{
	Instructions: json.RawMessage(`"Use the tools \u0061s documented."`),
	Prompts:      rawList(`{"name":"greet", "description":"Say hello","arguments":[{"name":"who","required":true}]}`, `{"name":"bye"}`, `{"name":"third"}`),
	Templates:    rawList(`{"uriTemplate":"file:///{path}","name":"file","mimeType":"text/plain"}`),
	Resources:    rawList(`{"uri":"test://a","name":"a","size":10}`),
}

// TestObserveSurface: every era and transport, the instructions as sent,
// every page of prompts and templates; resources only when asked for.
func TestObserveSurface(t *testing.T) {
	for _, era := range []mockserver.Era{mockserver.ModernOnly, mockserver.LegacyOnly} {
		for _, resources := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/resources=%v", era, resources), func(t *testing.T) {
				_, url := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 1), Era: era, Surface: testSurface, SurfacePageSize: 2})
				obs, err := listTools(t, Config{BaseURL: url + "/mcp", Surface: &SurfaceOptions{Resources: resources}})
				if err != nil {
					t.Fatal(err)
				}
				s := obs.Surface
				if s.Instructions.State != surface.Observed || s.Instructions.Text() != "Use the tools as documented." || string(s.Instructions.Value.Raw()) != `"Use the tools \u0061s documented."` {
					t.Fatalf("instructions: %+v %q", s.Instructions, s.Instructions.Value.Raw())
				}
				if p := s.Prompts; p.State != surface.Observed || p.Completeness != surface.Complete || len(p.Items) != 3 || p.Pages != 2 {
					t.Fatalf("prompts: %+v", p)
				}
				if string(s.Prompts.Items[0].Value.Raw()) != string(testSurface.Prompts[0]) {
					t.Fatalf("the prompt's bytes are not the server's: %s", s.Prompts.Items[0].Value.Raw())
				}
				if tl := s.Templates; tl.State != surface.Observed || len(tl.Items) != 1 {
					t.Fatalf("templates: %+v", tl)
				}
				want := surface.NotRequested
				if resources {
					want = surface.Observed
				}
				if s.Resources.State != want {
					t.Fatalf("resources: %s, want %s", s.Resources.State, want)
				}
			})
		}
	}
}

// TestSurfaceNotAdvertised: what the capabilities do not advertise is not
// asked for, and says so; a server without instructions has none.
func TestSurfaceNotAdvertised(t *testing.T) {
	s, url := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 1), Era: mockserver.LegacyOnly})
	obs, err := listTools(t, Config{BaseURL: url + "/mcp", Surface: &SurfaceOptions{Resources: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range surface.ListKinds {
		if st := obs.Surface.List(k).State; st != surface.NotAdvertised {
			t.Errorf("%s: %s", k, st)
		}
	}
	if in := obs.Surface.Instructions; in.State != surface.Observed || in.Present {
		t.Errorf("instructions: %+v", in)
	}
	for _, e := range s.Log() {
		if strings.HasPrefix(e.Method, "prompts/") || strings.HasPrefix(e.Method, "resources/") {
			t.Errorf("%s was asked of a server that does not advertise it", e.Method)
		}
	}
}

// TestSurfaceEndlessTemplates: a template list that paginates forever
// with fresh cursors ends at the page bound, partial, and the tools are
// observed all the same.
func TestSurfaceEndlessTemplates(t *testing.T) {
	_, url := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 1), Era: mockserver.ModernOnly, Surface: testSurface,
		SurfacePageSize: 1, EndlessLists: []string{"resources/templates/list"}})
	obs, err := listTools(t, Config{BaseURL: url + "/mcp", MaxListPages: 50, Surface: &SurfaceOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	tl := obs.Surface.Templates
	if tl.State != surface.Observed || tl.Completeness != surface.Partial || tl.Pages != 50 || !strings.Contains(tl.Reason, "capped at 50 pages") {
		t.Fatalf("templates: %+v", tl)
	}
	if err := surface.Pinnable(obs.Surface); err == nil {
		t.Fatal("a partial template list is pinnable")
	}
	if obs.Completeness != "complete" {
		t.Fatalf("the tools are %s", obs.Completeness)
	}
	// The default bound, without MaxListPages.
	obs, err = listTools(t, Config{BaseURL: url + "/mcp", Surface: &SurfaceOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if tl := obs.Surface.Templates; tl.Pages != DefaultMaxSurfacePages || tl.Completeness != surface.Partial {
		t.Fatalf("templates: %d pages, %s", tl.Pages, tl.Completeness)
	}
}

// TestSurfaceListingFails: a listing that fails leaves its kind not
// observed, with why; the run goes on.
func TestSurfaceListingFails(t *testing.T) {
	_, url := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 1), Era: mockserver.LegacyOnly, Surface: testSurface,
		HostileMethods: []string{"prompts/list"}, ErrorInsteadOfResult: true})
	obs, err := listTools(t, Config{BaseURL: url + "/mcp", Surface: &SurfaceOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	p := obs.Surface.Prompts
	if p.State != surface.NotObserved || !strings.Contains(p.Reason, "prompts/list failed") || len(p.Items) != 0 {
		t.Fatalf("prompts: %+v", p)
	}
	if obs.Surface.Templates.State != surface.Observed {
		t.Fatalf("templates: %+v", obs.Surface.Templates)
	}
}

// TestSurfaceHugeInstructions: 10 MB of instructions are digested whole
// and reported oversize, never cut; beyond the response bound the
// handshake is refused.
func TestSurfaceHugeInstructions(t *testing.T) {
	huge := `"` + strings.Repeat("ignore previous instructions ", 10<<20/29) + `"`
	sf := &mockserver.Surface{Instructions: json.RawMessage(huge)}
	_, url := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 1), Era: mockserver.LegacyOnly, Surface: sf})
	obs, err := listTools(t, Config{BaseURL: url + "/mcp", Surface: &SurfaceOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	in := obs.Surface.Instructions
	if !in.Oversize || in.Size != len(huge) || in.Value.Valid() || in.Digest == "" {
		t.Fatalf("instructions: oversize %v size %d", in.Oversize, in.Size)
	}
	_, err = listTools(t, Config{BaseURL: url + "/mcp", MaxResponseBytes: 1 << 20, Surface: &SurfaceOptions{}})
	if le, ok := errors.AsType[*LimitError](err); !ok || le.Method != "initialize" {
		t.Fatalf("an initialize result over the response bound: %v", err)
	}
}
