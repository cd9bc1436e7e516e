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
	"time"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/jcs"
)

// listed is the list of a tools/list response holding the tool array
// text tools: tools as a listing reads them.
func listed(tb testing.TB, tools string) *ToolList {
	tb.Helper()
	tl, err := ParseToolList([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":` + tools + `}}`))
	if err != nil {
		tb.Fatal(err)
	}
	return tl
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
		if _, ok := known.index(b.raw); ok {
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
	good, err := MarshalSnapshot("s", Identity{Endpoint: "e"}, all, Complete)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		known *Known
		found int
	}{
		{"every tool listed", NewKnown(all), 30},
		{"some listed", NewKnown(&ToolList{Form: FormPages, Tools: all.Tools[10:25]}), 15},
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
	// Of a bare tool array (its tools a level above a snapshot's) or a
	// list of no known form, nothing is known.
	for _, form := range []string{FormToolArray, ""} {
		if NewKnown(&ToolList{Form: form, Tools: all.Tools}) != nil {
			t.Errorf("NewKnown of a list of form %q knows its tools", form)
		}
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
	good, _ := MarshalSnapshot("s", Identity{Endpoint: "e"}, base, Complete)
	f.Add(good, false)
	f.Add([]byte(`{"schema":"mcpdrift.tool_snapshot.v1","tools":[{"name":"a"},{"name":"b"}],"tools":[]}`), true)
	f.Fuzz(func(t *testing.T, src []byte, own bool) {
		known := NewKnown(base)
		if w, err := ReadTools(bytes.Clone(src), "f"); own && err == nil && w.Snapshot != nil {
			known = NewKnown(w.Snapshot.ToolList()) // the text's own tools (a copy): every one found
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

// spaces is a reader of a text, then of spaces without end.
type spaces struct{ text []byte }

func (s *spaces) Read(p []byte) (int, error) {
	n := copy(p, s.text)
	s.text = s.text[n:]
	for i := n; i < len(p); i++ {
		p[i] = ' '
	}
	return len(p), nil
}

// stalled gives its text, then nothing and no error, forever.
type stalled struct{ text []byte }

func (s *stalled) Read(p []byte) (int, error) {
	n := copy(p, s.text)
	s.text = s.text[n:]
	return n, nil
}

// TestReadSnapshotKnownHostileReaders: a reader that stalls is given up
// on, and one that goes on past what Parse accepts whole (jcs.MaxInputSize)
// is not read as a snapshot, however small its parts; a tool given a byte
// at a time is read in time linear in its size.
func TestReadSnapshotKnownHostileReaders(t *testing.T) {
	all := listed(t, string(corpus.Tools(4, 2)))
	good, err := MarshalSnapshot("s", Identity{Endpoint: "e"}, all, Complete)
	if err != nil {
		t.Fatal(err)
	}
	known := NewKnown(all)
	if _, _, ok := ReadSnapshotKnown(&stalled{good[:len(good)/2]}, "f", known); ok {
		t.Error("read in parts from a reader that stalled half way")
	}
	big := append(bytes.Clone(good[:bytes.LastIndexByte(good, ']')]), ',')
	if testing.Short() {
		t.Skip("reads 2 GiB of spaces")
	}
	if _, _, ok := ReadSnapshotKnown(&spaces{big}, "f", known); ok {
		t.Error("a text past jcs.MaxInputSize read in parts")
	}
}

// TestReadSnapshotKnownByteByByte: a large tool given a byte at a time is
// cut in time linear in its size (the window is filled, not rescanned per
// byte).
func TestReadSnapshotKnownByteByByte(t *testing.T) {
	desc := strings.Repeat(`x\"`, 1<<19) // 1.5 MB, escapes throughout
	tool := `{"name":"big","description":"` + desc + `","inputSchema":{"type":"object"}}`
	tl := listed(t, `[`+tool+`]`)
	snap, err := MarshalSnapshot("s", Identity{Endpoint: "e"}, tl, Complete)
	if err != nil {
		t.Fatal(err)
	}
	for _, known := range []*Known{NewKnown(tl), NewKnown(listed(t, `[{"name":"other"}]`))} {
		start := time.Now()
		s, err, ok := ReadSnapshotKnown(iotest.OneByteReader(bytes.NewReader(snap)), "f", known)
		if !ok || err != nil || len(s.Tools) != 1 || s.Tools[0].ToolDigest() != tl.Tools[0].ToolDigest() {
			t.Fatalf("read in parts: %v %v", ok, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("a 1.5 MB tool a byte at a time took %v", d)
		}
	}
}
