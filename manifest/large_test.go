package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// TestSnapshotSchemaTools: snapshotInstance validates each tool as an
// object with its name only, which is right only while the schema says
// no more of a tool, or of the tools array, than that.
func TestSnapshotSchemaTools(t *testing.T) {
	b, err := schemas.Files().ReadFile(schemas.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Tools struct {
				Items map[string]json.RawMessage `json:"items"`
			} `json:"tools"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var arr struct {
		Properties struct {
			Tools map[string]json.RawMessage `json:"tools"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &arr); err != nil {
		t.Fatal(err)
	}
	if len(arr.Properties.Tools) != 2 || string(arr.Properties.Tools["type"]) != `"array"` || arr.Properties.Tools["items"] == nil {
		t.Fatalf("the snapshot schema says more of the tools array than its items: %v", arr.Properties.Tools)
	}
	items := s.Properties.Tools.Items
	want := map[string]string{
		"type":       `"object"`,
		"required":   `["name"]`,
		"properties": `{ "name": { "type": "string", "minLength": 1 } }`,
	}
	if len(items) != len(want) {
		t.Fatalf("the snapshot schema's tools items have %d keywords, snapshotInstance assumes %d: %v", len(items), len(want), items)
	}
	for k, v := range want {
		if string(items[k]) != v {
			t.Errorf("tools items %s = %s, snapshotInstance assumes %s", k, items[k], v)
		}
	}
}

// TestSnapshotInstanceAgrees: the reduced instance and the whole snapshot
// validate alike, with the same problems.
func TestSnapshotInstanceAgrees(t *testing.T) {
	good, err := MarshalSnapshot("s", Identity{Endpoint: "e"}, mustList(t, corpus.LeanTools(20, 3)), Complete)
	if err != nil {
		t.Fatal(err)
	}
	docs := [][]byte{good}
	for _, tools := range []string{`[1]`, `[{}]`, `[{"name":""}]`, `[{"name":7,"x":{}}]`, `[{"name":"a","inputSchema":{"type":"object"}}, "x", null]`, `{}`, `"tools"`} {
		docs = append(docs, []byte(`{"schema":"mcpdrift.tool_snapshot.v1","server":{"id":"s"},"canonicalization":"assay.mcp_manifest_projection.v0","manifest_digest":null,"tools_list_complete":"complete","tools":`+tools+`}`))
	}
	for _, d := range docs {
		doc, err := jcs.Parse(d)
		if err != nil {
			t.Fatal(err)
		}
		full := schemas.ValidateValue(schemas.Snapshot, doc.Root())
		var parts []toolPart
		if tools, ok := doc.Root().Get("tools"); ok && tools.Kind() == jcs.Array {
			for i := range tools.Len() {
				parts = append(parts, readToolPart(tools.Index(i), i))
			}
		}
		reduced := schemas.Validate(schemas.Snapshot, snapshotInstance(doc.Root(), parts))
		if fmt.Sprint(full) != fmt.Sprint(reduced) {
			t.Errorf("%.80s:\n whole:   %v\n reduced: %v", d, full, reduced)
		}
	}
}

func mustList(t testing.TB, src []byte) *ToolList {
	t.Helper()
	tl, err := ParseToolList(src)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestPageListAgreesWithTranscript: a list built page by page is the list
// its transcript reads as: the same tools, bytes, pointers, digests and
// unreadable entries.
func TestPageListAgreesWithTranscript(t *testing.T) {
	pagesDoc, err := jcs.Parse(corpus.Pages(45, 10, 9))
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for i := range pagesDoc.Root().Len() {
		r, _ := pagesDoc.Root().Index(i).Get("result")
		results = append(results, string(r.Raw()))
	}
	// Unreadable entries on the last page.
	last := results[len(results)-1]
	results[len(results)-1] = strings.Replace(last, `"tools":[`, `"tools":[7,{"title":"no name"},{"name":3},`, 1)
	var transcript strings.Builder
	transcript.WriteString("[")
	pl := NewPageList(ParseOptions{SkipInvalidTools: true})
	for i, r := range results {
		if i > 0 {
			transcript.WriteString(",")
		}
		cursor := ""
		if i > 0 {
			prev, _ := jcs.Parse([]byte(results[i-1]))
			c, _ := prev.Root().Get("nextCursor")
			cursor = `,"cursor":` + string(c.Raw())
		}
		fmt.Fprintf(&transcript, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"_meta":{}%s}},{"jsonrpc":"2.0","id":%d,"result":%s}`, i+1, cursor, i+1, r)
		doc, err := jcs.Parse([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		if err := pl.Add(doc.Root()); err != nil {
			t.Fatal(err)
		}
	}
	transcript.WriteString("]")
	want, err := ParseToolListWith([]byte(transcript.String()), ParseOptions{SkipInvalidTools: true})
	if err != nil {
		t.Fatal(err)
	}
	got := pl.List(want.Completeness, want.Reason)
	if len(got.Tools) != len(want.Tools) || got.Pages != want.Pages || len(got.Tools) != 45 {
		t.Fatalf("%d tools in %d pages, want %d in %d (45 tools)", len(got.Tools), got.Pages, len(want.Tools), want.Pages)
	}
	for i := range got.Tools {
		g, w := &got.Tools[i], &want.Tools[i]
		if g.Name != w.Name || g.Pointer != w.Pointer || !bytes.Equal(g.Raw(), w.Raw()) || g.ToolDigest() != w.ToolDigest() {
			t.Errorf("tool %d: %q at %s (%s), want %q at %s (%s)", i, g.Name, g.Pointer, g.ToolDigest(), w.Name, w.Pointer, w.ToolDigest())
		}
	}
	if !reflect.DeepEqual(got.Invalid, want.Invalid) || len(got.Invalid) != 3 {
		t.Errorf("invalid %v, want %v (3)", got.Invalid, want.Invalid)
	}
}

// TestToolDigestCached: the digest computed when a tool is read is the one
// its projection hashes to.
func TestToolDigestCached(t *testing.T) {
	tl := mustList(t, corpus.Tools(40, 2))
	for i := range tl.Tools {
		tt := tl.Tools[i]
		if want := Digest(tt.Proj().AppendToolPreimage(nil)); tt.ToolDigest() != want || tt.digest != want {
			t.Fatalf("%s: %s, want %s", tt.Name, tt.ToolDigest(), want)
		}
	}
}

// TestArtifactEntriesAgree: the tool entries read from the parse tree are
// what encoding/json decodes from the text.
func TestArtifactEntriesAgree(t *testing.T) {
	tl := mustList(t, corpus.LeanTools(200, 5))
	o := BuildObserved("s", tl, Complete, nil)
	d, err := Pin(o, PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ac := "x\u2028<y>"
	d.Tools = append(d.Tools, ToolEntry{Name: "odd \"name\" é", ToolDigest: d.Tools[0].ToolDigest, Privileged: true, PrivilegeClassification: "classified", ActionClass: &ac, FieldDigests: &FieldDigests{}})
	d.Tools = append(d.Tools, ToolEntry{Name: "bare", ToolDigest: d.Tools[0].ToolDigest, PrivilegeClassification: "unclassified"})
	db, _ := MarshalArtifact(d)
	ob, _ := MarshalArtifact(o)
	gotD, err := ParseDeclared(db, "d")
	if err != nil {
		t.Fatal(err)
	}
	var wantD Declared
	if err := json.Unmarshal(db, &wantD); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*gotD, wantD) {
		t.Errorf("declared read from the tree differs from encoding/json's")
	}
	gotO, err := ParseObserved(ob, "o")
	if err != nil {
		t.Fatal(err)
	}
	var wantO Observed
	if err := json.Unmarshal(ob, &wantO); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*gotO, wantO) {
		t.Errorf("observed read from the tree differs from encoding/json's")
	}
	// Unknown members are still refused (by the schema, before decoding).
	bad := bytes.Replace(db, []byte(`"privileged": true`), []byte(`"privileged": true, "extra": 1`), 1)
	if _, err := ParseDeclared(bad, "d"); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("an unknown member in an entry: %v", err)
	}
}

// TestPageListGrowsByDoubling: the tools of a listing of many pages are
// gathered into arrays that double, so that what was read is copied about
// twice in all, not about four times more (slices.Grow grows a large
// slice by 1.25x): 100 pages of 300 tools, in arrays of at most 3 times
// the 30,000 tools in all.
func TestPageListGrowsByDoubling(t *testing.T) {
	const pages, per = 100, 300
	pl := NewPageList(ParseOptions{})
	arrays := map[*Tool]int{} // each array's capacity
	var b strings.Builder
	for p := range pages {
		b.Reset()
		b.WriteString(`{"tools":[`)
		for i := range per {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"name":"t%d_%d","inputSchema":{"type":"object"}}`, p, i)
		}
		b.WriteString(`]}`)
		doc, err := jcs.Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if err := pl.Add(doc.Root()); err != nil {
			t.Fatal(err)
		}
		arrays[&pl.Tools()[0]] = cap(pl.Tools())
	}
	if n := len(pl.Tools()); n != pages*per {
		t.Fatalf("%d tools", n)
	}
	for i, tool := range pl.Tools() {
		if want := fmt.Sprintf("t%d_%d", i/per, i%per); tool.Name != want {
			t.Fatalf("tool %d is %q, want %q", i, tool.Name, want)
		}
	}
	all := 0
	for _, c := range arrays {
		all += c
	}
	if all > 3*pages*per {
		t.Errorf("%d tools were gathered in %d arrays of %d tools in all (at most %d)", pages*per, len(arrays), all, 3*pages*per)
	}
}
