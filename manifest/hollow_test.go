package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// readBoth reads src with ReadTools and with ReadToolsWith (lean, on src
// as the source when hollow), and fails unless they agree: the same error,
// or the same kind of document with the same tools (names, pointers,
// digests, field digests, shape problems, imprecise numbers), the same
// snapshot members, and tools that attach to the parse ReadTools made.
func readBoth(t *testing.T, src []byte, hollow bool) {
	t.Helper()
	readBothWith(t, src, ReadOptions{Lean: true}, hollow, false, nil)
}

// readDeferred is readBoth reading with DeferDigests and settling with
// the tools of with; framed, from a Source alone (ReadSnapshotFramed when
// it frames the document).
func readDeferred(t *testing.T, src []byte, hollow, framed bool, with []Tool) {
	t.Helper()
	readBothWith(t, src, ReadOptions{Lean: true, DeferDigests: true}, hollow || framed, framed, with)
}

func readBothWith(t *testing.T, src []byte, opt ReadOptions, hollow, framed bool, with []Tool) {
	t.Helper()
	want, werr := ReadTools(src, "f")
	if hollow {
		opt.Source, opt.Size = bytes.NewReader(src), int64(len(src))
	}
	in := src
	if framed {
		in = nil
	}
	got, gerr := ReadToolsWith(in, "f", opt)
	if gerr == nil && got.Snapshot != nil {
		gerr = got.Snapshot.Settle(with)
	}
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("ReadTools: %v\nReadToolsWith: %v", werr, gerr)
	}
	if werr != nil {
		return
	}
	if (want.Snapshot == nil) != (got.Snapshot == nil) || (want.List == nil) != (got.List == nil) || (want.Declared == nil) != (got.Declared == nil) {
		t.Fatalf("read as another kind of document: %+v, %+v", want, got)
	}
	var wt, gt []Tool
	switch {
	case want.Snapshot != nil:
		ws, gs := want.Snapshot, got.Snapshot
		if ws.ServerID != gs.ServerID || ws.ManifestDigest != gs.ManifestDigest || ws.Completeness != gs.Completeness || fmt.Sprint(ws.Identity) != fmt.Sprint(gs.Identity) || !bytes.Equal(ws.ClientCapabilities, gs.ClientCapabilities) {
			t.Fatalf("snapshot members differ: %+v, %+v", ws, gs)
		}
		wt, gt = ws.Tools, gs.Tools
	case want.List != nil:
		wt, gt = want.List.Tools, got.List.Tools
	default:
		return
	}
	if len(wt) != len(gt) {
		t.Fatalf("%d tools, ReadTools %d", len(gt), len(wt))
	}
	for i := range wt {
		w, g := &wt[i], &gt[i]
		if !g.IsLean() {
			t.Fatalf("%s: not lean", g.Name)
		}
		wn, wtot := impreciseNumbers(w, 3)
		gn, gtot := impreciseNumbers(g, 3)
		if g.Name != w.Name || g.Pointer != w.Pointer || g.ToolDigest() != w.ToolDigest() || g.FieldDigests() != w.FieldDigests() || g.ShapeProblem() != w.ShapeProblem() || fmt.Sprint(gn) != fmt.Sprint(wn) || gtot != wtot {
			t.Fatalf("tool %d (%q) read lean differs", i, w.Name)
		}
		if !g.SameBytes(w) || g.RawLen() != len(w.Value.Raw()) {
			t.Fatalf("tool %q: not the same bytes", w.Name)
		}
		b, err := g.Bytes()
		if err != nil || !bytes.Equal(b, w.Value.Raw()) {
			t.Fatalf("tool %q: Bytes %q, %v", w.Name, b, err)
		}
		if err := g.Attach(nil); err != nil || g.IsLean() || !bytes.Equal(g.Value.Canonical(), w.Value.Canonical()) {
			t.Fatalf("tool %q: attached %v", w.Name, err)
		}
	}
}

func snapshotOf(t testing.TB, list string) []byte {
	t.Helper()
	tl, err := ParseToolList([]byte(list))
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalSnapshotWith("s", Identity{Endpoint: "https://x/mcp", ServerName: "n"}, tl, Complete, SnapshotOptions{ClientCapabilities: []byte(`{"sampling":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const leanList = `{"tools":[{"name":"a","description":"caf\u00e9","inputSchema":{"type":"object","properties":{"n":{"maximum":9007199254740993}}}},{"name":"b","inputSchema":{"type":"string"}},{"name":"c","x":[1,{"y":"\n"}]}]}`

// TestReadToolsLeanAgrees: reading lean (and hollow) accepts and refuses
// what ReadTools does, with the same messages, and reads the same tools.
func TestReadToolsLeanAgrees(t *testing.T) {
	snap := snapshotOf(t, leanList)
	s := string(snap)
	cases := map[string]string{
		"snapshot":          s,
		"empty":             string(snapshotOf(t, `{"tools":[]}`)),
		"list":              leanList,
		"bare":              `[{"name":"a","inputSchema":{"type":"object"}}]`,
		"edited digest":     strings.Replace(s, `"manifest_digest": "sha256:`, `"manifest_digest": "sha256:0`, 1),
		"edited tool":       strings.Replace(s, `"caf\u00e9"`, `"cafe"`, 1),
		"tool not object":   strings.Replace(s, `{"name":"b"`, `7,{"name":"b"`, 1),
		"tool without name": strings.Replace(s, `{"name":"b",`, `{`, 1),
		"name not string":   strings.Replace(s, `{"name":"b"`, `{"name":2`, 1),
		"duplicate tools":   strings.Replace(s, `"tools": [`, `"tools": [], "tools": [`, 1),
		"duplicate in tool": strings.Replace(s, `{"name":"b"`, `{"name":"b","name":"b"`, 1),
		"syntax in tools":   strings.Replace(s, `{"name":"b"`, `{"name":"b",,`, 1),
		"syntax after":      strings.TrimSuffix(s, "}\n") + `,"x":}`,
		"trailing":          s + "x",
		"schema after":      `{"tools":[],"schema":"mcpdrift.tool_snapshot.v1"}`,
		"other schema":      strings.Replace(s, SnapshotSchemaID, "assay.declared_mcp_manifest.v0", 1),
		"unknown member":    strings.Replace(s, `"tools": [`, `"zz": 1, "tools": [`, 1),
		"tools not array":   `{"schema":"mcpdrift.tool_snapshot.v1","tools":{"a":1}}`,
		"duplicate names":   strings.Replace(s, `{"name":"c"`, `{"name":"a"`, 1),
	}
	// What a deferred reading settles with: the same tools, some of them,
	// tools of the same names and other bytes.
	same, err := ParseToolList([]byte(leanList))
	if err != nil {
		t.Fatal(err)
	}
	other, err := ParseToolList([]byte(strings.ReplaceAll(leanList, `"x":[1,`, `"x":[2,`)))
	if err != nil {
		t.Fatal(err)
	}
	leanSame := append([]Tool(nil), same.Tools...)
	for i := range leanSame {
		leanSame[i].Lean()
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			readBoth(t, []byte(src), false)
			readBoth(t, []byte(src), true)
			for _, with := range [][]Tool{nil, same.Tools, same.Tools[1:], leanSame, other.Tools} {
				readDeferred(t, []byte(src), false, false, with)
				readDeferred(t, []byte(src), true, false, with)
				readDeferred(t, []byte(src), true, true, with)
			}
		})
	}
}

// TestUnsettledRefused: the tools of a snapshot read with DeferDigests
// give no digest or fact before Settle, and a settled snapshot whose bytes
// changed under it is refused.
func TestUnsettledRefused(t *testing.T) {
	src := bytes.Clone(snapshotOf(t, leanList))
	got, err := ReadToolsWith(src, "f", ReadOptions{Lean: true, DeferDigests: true, Source: bytes.NewReader(src)})
	if err != nil {
		t.Fatal(err)
	}
	tl := got.Snapshot.Tools
	for name, f := range map[string]func(){
		"ToolDigest":   func() { tl[0].ToolDigest() },
		"FieldDigests": func() { tl[0].FieldDigests() },
		"ShapeProblem": func() { tl[0].ShapeProblem() },
		"Imprecise":    func() { ImpreciseNumbers(tl, 5) },
		"Digest of":    func() { ManifestDigestOf(tl) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of an unsettled tool did not panic", name)
				}
			}()
			f()
		}()
	}
	src[bytes.Index(src, []byte(`"x":[1`))+5] = '7'
	if err := got.Snapshot.Settle(nil); !errors.Is(err, ErrBytesChanged) {
		t.Fatalf("settled over changed bytes: %v", err)
	}
}

// TestHollowTools: a hollow tool holds no bytes, reads them again checked,
// refuses bytes that changed, and is read by what reads a lean tool.
func TestHollowTools(t *testing.T) {
	snap := snapshotOf(t, leanList)
	src := bytes.Clone(snap)
	got, err := ReadToolsWith(snap, "f", ReadOptions{Lean: true, Source: bytes.NewReader(src)})
	if err != nil {
		t.Fatal(err)
	}
	tools := got.Snapshot.Tools
	for i := range tools {
		if !tools[i].IsHollow() || !tools[i].IsLean() || tools[i].raw != nil {
			t.Fatalf("%s: not hollow", tools[i].Name)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Raw of a hollow tool did not panic")
			}
		}()
		tools[0].Raw()
	}()
	// A served tool with the same bytes becomes hollow on the same source;
	// one with other bytes does not.
	tl, err := ParseToolList([]byte(leanList))
	if err != nil {
		t.Fatal(err)
	}
	served := tl.Tools
	for i := range served {
		served[i].Lean()
	}
	if !served[0].ShareBytesOf(&tools[0]) || !served[0].IsHollow() || served[0].ToolDigest() != tools[0].ToolDigest() {
		t.Fatal("a served tool of the same bytes was not made hollow")
	}
	if served[1].ShareBytesOf(&tools[2]) || served[1].IsHollow() {
		t.Fatal("a served tool of other bytes was made hollow")
	}
	if !served[1].SameBytes(&tools[1]) || served[1].SameBytes(&tools[2]) {
		t.Fatal("SameBytes")
	}
	// The file changes under the run: every read of it is refused.
	idx := bytes.Index(src, []byte(`caf\u00e9`))
	src[idx] = 'C'
	if _, err := tools[0].Bytes(); !errors.Is(err, ErrBytesChanged) {
		t.Fatalf("Bytes of changed bytes: %v", err)
	}
	if err := served[0].Attach(nil); !errors.Is(err, ErrBytesChanged) || !served[0].IsHollow() {
		t.Fatalf("Attach of changed bytes: %v", err)
	}
	// Truncated.
	short := bytes.NewReader(src[:idx])
	h := tools[1]
	h.ref = &rawRef{at: short, off: tools[1].ref.off, n: tools[1].ref.n, sum: tools[1].ref.sum}
	if _, err := h.Bytes(); !errors.Is(err, ErrBytesChanged) {
		t.Fatalf("Bytes past the end: %v", err)
	}
	// Unchanged tools still attach.
	if err := tools[2].Attach(nil); err != nil || tools[2].IsLean() {
		t.Fatal(err)
	}
}

func FuzzReadToolsLean(f *testing.F) {
	f.Add(snapshotOf(f, leanList))
	f.Add(snapshotOf(f, `{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"number","maximum":1E3}}}},{"name":"b","_meta":{"k":[1,2]}}]}`))
	f.Add([]byte(leanList))
	f.Add([]byte(`{"schema":"mcpdrift.tool_snapshot.v1","tools":[{"name":"a"}],"tools":[]}`))
	same, err := ParseToolList([]byte(leanList))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		readBoth(t, src, false)
		readBoth(t, src, true)
		readDeferred(t, src, true, false, nil)
		readDeferred(t, src, true, false, same.Tools)
		readDeferred(t, src, true, true, nil)
		readDeferred(t, src, true, true, same.Tools)
	})
}

// TestReadSnapshotFramed: a snapshot mcpdrift writes is framed (scanned
// in chunks, not parsed): its elements are where a parse puts them, its
// tools nameless until settled, named by the tools of their bytes or by
// their own parse; what the scan does not expect is declined, for the
// whole reading.
func TestReadSnapshotFramed(t *testing.T) {
	snap := snapshotOf(t, leanList)
	s, ok, err := ReadSnapshotFramed(bytes.NewReader(snap), int64(len(snap)), "f")
	if err != nil || !ok {
		t.Fatalf("not framed: %v %v", ok, err)
	}
	want, err := ReadTools(snap, "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != len(want.Snapshot.Tools) {
		t.Fatalf("%d tools, want %d", len(s.Tools), len(want.Snapshot.Tools))
	}
	for i := range s.Tools {
		w := want.Snapshot.Tools[i].Value
		if s.Tools[i].Name != "" || s.Tools[i].ref.off != int64(w.Offset()) || s.Tools[i].ref.n != len(w.Raw()) {
			t.Fatalf("tool %d framed at %d+%d, parsed at %d+%d", i, s.Tools[i].ref.off, s.Tools[i].ref.n, w.Offset(), len(w.Raw()))
		}
	}
	if err := s.Settle(want.Snapshot.Tools[1:]); err != nil {
		t.Fatal(err)
	}
	for i := range s.Tools {
		if s.Tools[i].Name != want.Snapshot.Tools[i].Name || s.Tools[i].ToolDigest() != want.Snapshot.Tools[i].ToolDigest() {
			t.Fatalf("tool %d settled as %q", i, s.Tools[i].Name)
		}
	}
	// Declined: the whole reading decides.
	deep := strings.Repeat("[", 998) + strings.Repeat("]", 998)
	big := `{"schema":"mcpdrift.tool_snapshot.v1","pad":"` + strings.Repeat("x", framedHeadMax) + `","tools":[]}`
	for name, src := range map[string]string{
		"escaped member name":      strings.Replace(string(snap), `"tools":`, `"tool\u0073":`, 1),
		"tools not an array":       `{"schema":"mcpdrift.tool_snapshot.v1","tools":{}}`,
		"an element not an object": strings.Replace(string(snap), `"tools": [`, `"tools": [1,`, 1),
		"a trailing comma":         strings.Replace(string(snap), "\n  ]", ",]", 1),
		"nesting at the limit":     strings.Replace(string(snap), `{"name":"c","x":[1,`, `{"name":"c","x":[`+deep+`,`, 1),
		"a head beyond the bound":  big,
		"not an object":            `[{"name":"a"}]`,
		"the end inside":           string(snap[:len(snap)/2]),
	} {
		if _, ok, err := ReadSnapshotFramed(bytes.NewReader([]byte(src)), int64(len(src)), "f"); ok || err != nil {
			t.Errorf("%s: framed (%v, %v)", name, ok, err)
		}
		readDeferred(t, []byte(src), true, true, nil)
	}
}

// TestToolListLeanLetsGoOfTheTree: once a list is lean, nothing it holds
// keeps its parse tree alive (pin --input writes its baseline and
// snapshot without the tree, which is larger than the input), and the
// tools read as they did: names, digests, bytes and the checks' facts.
func TestToolListLeanLetsGoOfTheTree(t *testing.T) {
	src := corpus.LeanTools(3000, 5)
	tl, err := ParseToolList(src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseToolList(src)
	if err != nil {
		t.Fatal(err)
	}
	tree := weak.Make(tl.Doc)
	tl.Lean()
	for range 5 {
		runtime.GC()
	}
	if tree.Value() != nil {
		t.Fatal("the parse tree is still reachable from the lean list")
	}
	if len(tl.Tools) != len(want.Tools) {
		t.Fatalf("%d tools, want %d", len(tl.Tools), len(want.Tools))
	}
	for i := range tl.Tools {
		a, b := &tl.Tools[i], &want.Tools[i]
		if !a.IsLean() || a.Name != b.Name || a.Pointer != b.Pointer || a.ToolDigest() != b.ToolDigest() || a.FieldDigests() != b.FieldDigests() ||
			!bytes.Equal(a.Raw(), b.Raw()) || a.ShapeProblem() != b.ShapeProblem() {
			t.Fatalf("tool %d (%s) reads otherwise once lean", i, b.Name)
		}
	}
	gi, gn := ImpreciseNumbers(tl.Tools, -1)
	wi, wn := ImpreciseNumbers(want.Tools, -1)
	if gn != wn || !slices.Equal(gi, wi) {
		t.Fatalf("imprecise numbers: %d %v, want %d %v", gn, gi, wn, wi)
	}
	runtime.KeepAlive(src)
}

// TestReadLeanList: ReadOptions.LeanList reads a tool list, in every
// form, with each tool lean (ParseOptions.Lean) and without its parse
// tree, as ReadTools and then ToolList.Lean read it; it refuses what
// ReadTools refuses, with the same message; and it reads a snapshot as
// ReadTools does.
func TestReadLeanList(t *testing.T) {
	docs := map[string][]byte{
		"list":              []byte(leanList),
		"snapshot":          snapshotOf(t, leanList),
		"bare":              corpus.LeanTools(3000, 5),
		"response":          corpus.ToolsListResponse(300, 3),
		"pages":             corpus.Pages(600, 7, 4),
		"tool without name": []byte(strings.Replace(leanList, `{"name":"b",`, `{`, 1)),
		"tool not object":   []byte(strings.Replace(leanList, `{"name":"b"`, `7,{"name":"b"`, 1)),
		"syntax in tools":   []byte(strings.Replace(leanList, `{"name":"b"`, `{"name":"b",,`, 1)),
		"duplicate in tool": []byte(strings.Replace(leanList, `{"name":"b"`, `{"name":"b","name":"b"`, 1)),
	}
	for name, src := range docs {
		want, werr := ReadTools(src, "f")
		got, gerr := ReadToolsWith(src, "f", ReadOptions{LeanList: true})
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("%s: ReadTools: %v\nLeanList: %v", name, werr, gerr)
		}
		if werr != nil {
			continue
		}
		var wt, gt []Tool
		switch {
		case want.List != nil && got.List != nil:
			w, g := want.List, got.List
			if g.Doc != nil {
				t.Errorf("%s: the lean list holds its parse tree", name)
			}
			if g.Form != w.Form || g.Completeness != w.Completeness || g.Reason != w.Reason || g.Pages != w.Pages {
				t.Errorf("%s: read as %s %s (%d pages), ReadTools %s %s (%d)", name, g.Form, g.Completeness, g.Pages, w.Form, w.Completeness, w.Pages)
			}
			wt, gt = w.Tools, g.Tools
			wi, wn := ImpreciseNumbers(wt, -1)
			gi, gn := ImpreciseNumbers(gt, -1)
			if gn != wn || !slices.Equal(gi, wi) {
				t.Errorf("%s: imprecise numbers: %d %v, want %d %v", name, gn, gi, wn, wi)
			}
		case want.Snapshot != nil && got.Snapshot != nil:
			wt, gt = want.Snapshot.Tools, got.Snapshot.Tools
		default:
			t.Fatalf("%s: read as another kind of document: %+v, %+v", name, want, got)
		}
		if len(gt) != len(wt) || len(wt) == 0 {
			t.Fatalf("%s: %d tools, ReadTools %d", name, len(gt), len(wt))
		}
		for i := range wt {
			a, b := &gt[i], &wt[i]
			if a.IsLean() != (want.List != nil) || a.Name != b.Name || a.Pointer != b.Pointer || a.ToolDigest() != b.ToolDigest() || a.FieldDigests() != b.FieldDigests() ||
				!bytes.Equal(a.Raw(), b.Raw()) || a.ShapeProblem() != b.ShapeProblem() || a.ParamHeaderProblem() != b.ParamHeaderProblem() {
				t.Fatalf("%s: tool %d (%s) reads otherwise (lean %v)", name, i, b.Name, a.IsLean())
			}
		}
	}
}
