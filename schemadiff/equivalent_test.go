package schemadiff

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

func toolFrom(t testing.TB, src string) (*manifest.Tool, bool) {
	d, err := jcs.Parse([]byte(src))
	if err != nil {
		return nil, false
	}
	tool, err := manifest.ToolFromValue(d.Root(), "")
	if err != nil {
		return nil, false
	}
	return &tool, true
}

// TestEquivalent: tools that differ only in how they are written are
// equivalent; a member outside the projection, or a number beyond float64
// precision, makes them not.
func TestEquivalent(t *testing.T) {
	base := `{"name":"a","description":"d","inputSchema":{"type":"object"},"title":"T","_meta":{"x":1}}`
	for _, c := range []struct {
		other string
		want  bool
	}{
		{`{"_meta":{"x":1.0},"title":"\u0054","inputSchema":{"type":"object"},"description":"d","name":"a"}`, true},
		{`{"name":"a","description":"d","inputSchema":{"type":"object"},"title":"T2","_meta":{"x":1}}`, false},
		{`{"name":"a","description":"d","inputSchema":{"type":"object"},"title":"T"}`, false},
		{`{"name":"a","description":"d","inputSchema":{"type":"object"},"title":"T","_meta":{"x":1},"icons":[]}`, false},
		{`{"name":"a","description":"e","inputSchema":{"type":"object"},"title":"T","_meta":{"x":1}}`, false},
	} {
		o, _ := toolFrom(t, base)
		n, ok := toolFrom(t, c.other)
		if !ok {
			t.Fatalf("%s does not read", c.other)
		}
		if got := o.Equivalent(n); got != c.want {
			t.Errorf("%s: Equivalent %v, want %v", c.other, got, c.want)
		}
	}
	// Numbers beyond float64 precision: alike when spelled alike.
	big := `{"name":"a","inputSchema":{"type":"object","maximum":9007199254740993}}`
	o, _ := toolFrom(t, big)
	n, _ := toolFrom(t, big)
	if !o.Equivalent(n) {
		t.Error("a tool is not equivalent to itself")
	}
	n, _ = toolFrom(t, `{"name":"a","inputSchema":{"type":"object","maximum":9007199254740992}}`)
	if o.Equivalent(n) {
		t.Error("9007199254740993 and 9007199254740992 (one canonical form) are equivalent")
	}
}

// FuzzEquivalent: two tools that are Equivalent (and refer out to nothing)
// have no change between them when diffed, parsed again.
func FuzzEquivalent(f *testing.F) {
	f.Add(`{"name":"a","title":"x","inputSchema":{"type":"object"}}`, `{"inputSchema":{"type":"object"},"title":"\u0078","name":"a"}`)
	f.Add(`{"name":"a","_meta":{"k":[1,2]}}`, `{"name":"a","_meta":{"k":[1,2.0]}}`)
	f.Add(`{"name":"a","x-v":1e2}`, `{"name":"a","x-v":100}`)
	f.Add(`{"name":"a","x":9007199254740993}`, `{"name":"a","x":9007199254740992}`)
	f.Add(`{"name":"a","x":[1e400,9007199254740993]}`, `{"x":[1e400,9007199254740993],"name":"a"}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		o, ok1 := toolFrom(t, a)
		n, ok2 := toolFrom(t, b)
		if !ok1 || !ok2 || o.Name != n.Name || !o.Equivalent(n) || n.MayReferOut() || o.MayReferOut() {
			return
		}
		if cs := DiffTool(o, n, ToolOptions{}); len(cs) > 0 {
			t.Fatalf("equivalent tools %s and %s have changes: %+v", a, b, cs)
		}
	})
}
