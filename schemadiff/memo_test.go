package schemadiff

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// TestDiffMemo: a memo answers DiffTool for a pair it diffed under the
// same options with exactly what DiffTool says without it; under other
// options (another trust record, another classifier, other bounds) it is
// not asked, and what a caller does with an answer does not change the
// next one.
func TestDiffMemo(t *testing.T) {
	tl, err := manifest.ParseToolList([]byte(`[
		{"name":"fetch","description":"Fetch a page.","inputSchema":{"type":"object","properties":{"u":{"$ref":"https://s.example/a.json"}}}},
		{"name":"fetch","description":"Fetch a page, or run a shell command.","inputSchema":{"type":"object","properties":{"u":{"$ref":"https://s.example/a.json"},"cmd":{"type":"string","description":"the shell command to run"}}}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	o, n := &tl.Tools[0], &tl.Tools[1]
	pinned := map[string]string{"https://s.example/a.json": "sha256:" + strings.Repeat("0", 64)}
	other := map[string]string{"https://s.example/a.json": "sha256:" + strings.Repeat("0", 64)}
	c := classify.Default()
	base := ToolOptions{Classifier: c, Schema: Options{Refs: &RefPins{Pinned: pinned}}}
	variants := []ToolOptions{
		base,
		{Classifier: c, Schema: Options{Refs: &RefPins{Pinned: pinned}}}, // the same record, another RefPins
		{Classifier: c}, // no trust record
		{Classifier: c, Schema: Options{Refs: &RefPins{Pinned: other}}},                                 // another map
		{Classifier: c, Schema: Options{Refs: &RefPins{Pinned: pinned, Verified: map[string]string{}}}}, // verification asked
		{Classifier: c, Schema: Options{Refs: &RefPins{Pinned: pinned}, MaxNodes: 3}},                   // other bounds
		{Classifier: classify.Default(), Schema: Options{Refs: &RefPins{Pinned: pinned}, Output: true}}, // other options
	}
	m := &DiffMemo{}
	first := base
	first.Memo = m
	got := DiffTool(o, n, first)
	if len(got) == 0 {
		t.Fatal("no change")
	}
	got[0].Kind = "tampered" // a caller's edit stays its own
	for i, v := range variants {
		want := DiffTool(o, n, v)
		v.Memo = m
		if again := DiffTool(o, n, v); !reflect.DeepEqual(again, want) {
			t.Errorf("options %d: with the memo\n%+v\nwithout\n%+v", i, again, want)
		}
	}
	if k := DiffTool(o, n, ToolOptions{Classifier: c}); reflect.DeepEqual(k, DiffTool(o, n, base)) {
		t.Error("the trust record does not change the diff: the test cannot tell the options apart")
	}
	// Another pair is diffed, not answered with the first.
	if cs := DiffTool(n, o, first); reflect.DeepEqual(cs, DiffTool(o, n, base)) {
		t.Error("the reversed pair was answered from the memo")
	}
}
