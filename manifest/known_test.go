package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/jcs"
)

// listed is the tools of a tools/list response holding the tool array
// text tools: tools as a listing reads them.
func listed(tb testing.TB, tools string) []Tool {
	tb.Helper()
	tl, err := ParseToolList([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":` + tools + `}}`))
	if err != nil {
		tb.Fatal(err)
	}
	return tl.Tools
}

// sameRead fails t when ReadToolsKnown of src does not read what ReadTools
// reads: the same tools (names, pointers, bytes, digests and facts) and
// snapshot, or the same error. It reports whether the text was read in
// parts, and how many of its tools were found in known.
func sameRead(t testing.TB, src []byte, known *Known) (parts bool, found int) {
	t.Helper()
	got, gerr := ReadToolsKnown(src, "f", known)
	want, werr := ReadTools(src, "f")
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%.200q:\n known: %v\n whole: %v", src, gerr, werr)
	}
	// Read a byte at a time, or failing half way, it reads the same or
	// leaves the text to be read whole.
	s1, e1, ok1 := ReadSnapshotKnown(iotest.OneByteReader(bytes.NewReader(src)), "f", known)
	s2, e2, ok2 := ReadSnapshotKnown(bytes.NewReader(src), "f", known)
	_, _, ok3 := ReadSnapshotKnown(io.MultiReader(bytes.NewReader(src[:len(src)/2]), iotest.ErrReader(errors.New("cut"))), "f", known)
	if ok1 != ok2 || fmt.Sprint(e1) != fmt.Sprint(e2) || (s1 == nil) != (s2 == nil) || (s1 != nil && s1.ManifestDigest != s2.ManifestDigest) {
		t.Fatalf("%.200q: read a byte at a time: %v %v; at once: %v %v", src, ok1, e1, ok2, e2)
	}
	if ok3 && len(src) > 1 {
		t.Fatalf("%.200q: read in parts from a reader that failed half way", src)
	}
	parts = ok2
	if werr != nil || want.Snapshot == nil {
		if parts && werr == nil {
			t.Fatalf("%.200q: read in parts, but it is not a snapshot", src)
		}
		return parts, 0
	}
	g, w := got.Snapshot, want.Snapshot
	if g == nil || g.ManifestDigest != w.ManifestDigest || len(g.Tools) != len(w.Tools) || !bytes.Equal(g.Surface, w.Surface) ||
		g.ServerID != w.ServerID || g.Identity.Endpoint != w.Identity.Endpoint || !bytes.Equal(g.ClientCapabilities, w.ClientCapabilities) || g.Completeness != w.Completeness {
		t.Fatalf("%.200q: read with known tools differs from whole", src)
	}
	for i := range g.Tools {
		a, b := g.Tools[i], w.Tools[i]
		if known.find(b.raw) != nil {
			found++
		}
		if within(src, a.raw) {
			t.Fatalf("tool %d holds the bytes it was read from", i)
		}
		a.raw, b.raw = nil, nil
		if !reflect.DeepEqual(a, b) || !bytes.Equal(g.Tools[i].raw, w.Tools[i].raw) {
			t.Fatalf("%.200q: tool %d read with known tools differs from whole:\n%+v\n%+v", src, i, a, b)
		}
	}
	return true, found
}

// within reports whether b is a part of src's memory.
func within(src, b []byte) bool {
	if len(src) == 0 || len(b) == 0 {
		return false
	}
	s := uintptr(unsafe.Pointer(unsafe.SliceData(src)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= s && p < s+uintptr(len(src))
}

// TestReadToolsKnown: a snapshot is read with known tools exactly as it is
// read whole, its tools found or parsed; a text laid out otherwise, or
// hostile, is read whole (or refused as the whole read refuses it).
func TestReadToolsKnown(t *testing.T) {
	all := listed(t, string(corpus.Tools(30, 4)))
	good, err := MarshalSnapshot("s", Identity{Endpoint: "e"}, &ToolList{Tools: all}, Complete)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		known *Known
		found int
	}{
		{"every tool listed", NewKnown(all), 30},
		{"some listed", NewKnown(all[10:25]), 15},
		{"none listed", NewKnown(listed(t, string(corpus.Tools(5, 9)))), 0},
	} {
		parts, found := sameRead(t, good, c.known)
		if !parts || found != c.found {
			t.Errorf("%s: in parts %v, %d found; want true, %d", c.name, parts, found, c.found)
		}
	}
	if NewKnown(nil) != nil {
		t.Error("NewKnown of no tools is not nil")
	}

	head := `{"schema":"mcpdrift.tool_snapshot.v1","server":{"id":"s"},"canonicalization":"assay.mcp_manifest_projection.v0","manifest_digest":null,"tools_list_complete":"complete",`
	a := `{"name":"a","inputSchema":{"type":"object"}}`
	deep := strings.Repeat("[", jcs.MaxDepth-3) + strings.Repeat("]", jcs.MaxDepth-3)
	known := NewKnown(listed(t, `[`+a+`,{"name":"b","d":"]}\"["}]`))
	for _, c := range []struct {
		tail  string
		parts bool // read in parts (else whole)
	}{
		{`"tools":[` + a + `]}`, true},
		{`"tools":[]}`, true},
		{`"tools":[` + a + `,` + a + `]}`, true},
		{`"tools":[{"name":"a"} , {"name":"b","d":"]}\"["}]}`, true},
		{`"tools":[{"name":"a","x":` + deep + `}]}`, true},             // within the depth bound whole, and so in parts
		{`"tools":[{"name":"a","x":[` + deep + `]}]}`, false},          // beyond it: refused whole, and in parts
		{`"tools":[` + a + `],"tools":[{"name":"b"}]}`, false},         // twice: the rest refuses a duplicate
		{`"tools":[{"name":"a"}],"\u0074ools":[{"name":"b"}]}`, false}, // twice, once escaped
		{`"\u0074ools":[` + a + `]}`, false},                           // only escaped: not found, read whole
		{`"tools":[` + a + ` x]}`, false},
		{`"tools":[` + a + `,]}`, false},
		{`"tools":[` + a + `}`, false},
		{`"tools":[{"name":"a","b":1,"b":2}]}`, false},
		{`"tools":[tru]}`, false},
		{`"tools":` + a + `}`, false},
		{`"tools":[{"name":"\ud800"}]}`, false},
		{`"tools":[1]}`, true},
		{`"tools":["x"]}`, true},
	} {
		src := []byte(head + c.tail)
		if got, _ := sameRead(t, src, known); got != c.parts {
			_, err := ReadTools(src, "f")
			t.Errorf("%s: read in parts %v, want %v (whole: %v)", c.tail, got, c.parts, err)
		}
	}
	// A tool listed at the deepest a page allows is found in a snapshot,
	// where it sits a level higher (twice: a list of repeated names has
	// no manifest digest).
	deepest := `{"name":"a","x":` + strings.Repeat("[", jcs.MaxDepth-4) + strings.Repeat("]", jcs.MaxDepth-4) + `}`
	if parts, found := sameRead(t, []byte(head+`"tools":[`+deepest+`,`+deepest+`]}`), NewKnown(listed(t, `[`+deepest+`]`))); !parts || found != 2 {
		t.Errorf("the deepest listed tool: in parts %v, %d found", parts, found)
	}
}

// FuzzReadToolsKnown: whatever the text, and whether its tools are known
// or not, reading it with known tools agrees with reading it whole.
func FuzzReadToolsKnown(f *testing.F) {
	base := listed(f, string(corpus.Tools(3, 4)))
	good, _ := MarshalSnapshot("s", Identity{Endpoint: "e"}, &ToolList{Tools: base}, Complete)
	f.Add(good, false)
	f.Add([]byte(`{"schema":"mcpdrift.tool_snapshot.v1","tools":[{"name":"a"},{"name":"b"}],"tools":[]}`), true)
	f.Fuzz(func(t *testing.T, src []byte, own bool) {
		known := NewKnown(base)
		if w, err := ReadTools(bytes.Clone(src), "f"); own && err == nil && w.Snapshot != nil {
			known = NewKnown(w.Snapshot.Tools) // the text's own tools (a copy): every one found
		}
		sameRead(t, src, known)
	})
}

// TestNameDigestOf: the name and tool digest NameDigestOf reads are those
// ToolFromValue reads, for every tool of a realistic list.
func TestNameDigestOf(t *testing.T) {
	doc, err := jcs.Parse(corpus.Tools(60, 7))
	if err != nil {
		t.Fatal(err)
	}
	root := doc.Root()
	for i := range root.Len() {
		v := root.Index(i)
		want, err := ToolFromValue(v, "/x")
		if err != nil {
			t.Fatal(err)
		}
		got, err := NameDigestOf(v, "/x")
		if err != nil || got.Name != want.Name || got.ToolDigest != want.ToolDigest() {
			t.Fatalf("tool %d: %+v %v, want %s %s", i, got, err, want.Name, want.ToolDigest())
		}
	}
}
