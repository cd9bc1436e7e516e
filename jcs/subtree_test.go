package jcs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// TestSubtree: subtreeEnd of every node is where a scan of the node spans
// ends, and a walk of the root's children reaches every node.
func TestSubtree(t *testing.T) {
	docs := map[string][]byte{
		"Tools(40,1)":             corpus.Tools(40, 1),
		"LeanTools(300,2)":        corpus.LeanTools(300, 2),
		"ToolsListResponse(30,3)": corpus.ToolsListResponse(30, 3),
		"Pages(60,7,4)":           corpus.Pages(60, 7, 4),
		"LeanTools(0,6)":          corpus.LeanTools(0, 6),
		"strings":                 []byte(`[` + strings.Repeat(`"],[1,2],{\"a\":[3,4]}\\",`, 40) + `"end"]`),
		"numbers":                 []byte(`{"a":[` + strings.Repeat(`1.5e3, -0, 12345678901234567890, 0.1,`, 30) + `7]}`),
		"nested":                  []byte(`[[` + strings.Repeat(`[[1,[2]],{"k":[3]}],`, 30) + `[]],[]]`),
	}
	ins, err := filepath.Glob("testdata/cyberphone/input/*.json")
	if err != nil || len(ins) == 0 {
		t.Fatalf("cyberphone inputs: %v %v", ins, err)
	}
	for _, f := range ins {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = b
	}
	for name, src := range docs {
		d, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := int32(0); i < int32(len(d.nodes)); i++ {
			end := d.end(i)
			want := i + 1
			for want < int32(len(d.nodes)) && d.nodes[want].start < end {
				want++
			}
			if hi := d.subtreeEnd(i); hi != want {
				t.Fatalf("%s: node %d: subtree [%d, %d), scan [%d, %d)", name, i, i, hi, i, want)
			}
		}
		var count func(i int32) int32
		count = func(i int32) int32 {
			n := int32(1)
			if k := d.kind(i); k == Array || k == Object {
				for _, c := range d.children(i) {
					n += count(c)
					if k == Object {
						n += count(c + 1) // the member's value follows its key
					}
				}
			}
			return n
		}
		if hi := d.subtreeEnd(0); hi != count(0) || hi != int32(len(d.nodes)) {
			t.Fatalf("%s: the root's subtree [0, %d) of %d nodes; a walk reaches %d", name, hi, len(d.nodes), count(0))
		}
	}
}
