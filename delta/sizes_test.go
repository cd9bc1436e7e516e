package delta_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Hostile sizes: a server can send a description of many kilobytes,
// changed in a thousand places, a parameter whose name, title and
// description are each as long, an external reference and a hint that is
// a string as long. The delta of such a tool stays readable and small:
// every text clipped (a declaration's texts at 2,000 bytes, a reference at
// 300, a word run at 4 KiB), a word diff past 512 edits one replaced
// stretch, and the whole rendering bounded.
func TestHostileSizes(t *testing.T) {
	// 64 KiB texts, 30 times the clip: the clipping is the same for
	// larger ones, and schemadiff.Compare's capability classification
	// (regular expressions over every text) grows long with megabyte
	// texts.
	const size = 64 << 10
	var oldWords, newWords []string
	for i := 0; i < 12_000; i++ { // about 60 KB each, every 10th word changed
		w := "word"
		oldWords = append(oldWords, w)
		if i%10 == 0 {
			w = "drow"
		}
		newWords = append(newWords, w)
	}
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	big := strings.Repeat("A", size)
	old := parse(t, []byte(`[{"name":"t","description":`+js(strings.Join(oldWords, " "))+`,"annotations":{"readOnlyHint":true},
	  "inputSchema":{"type":"object","properties":{"p":{"type":"string","description":`+js(big)+`}}}}]`))
	nw := parse(t, []byte(`[{"name":"t","description":`+js(strings.Join(newWords, " "))+`,"annotations":{"readOnlyHint":`+js(big)+`},
	  "inputSchema":{"type":"object","properties":{"p":{"type":"string","description":`+js(big+" B")+`},
	   `+js("q"+big)+`:{"type":"string","title":`+js(big)+`,"description":`+js(big)+`},
	   "r":{"$ref":`+js("https://x/"+big)+`}}}}]`))
	start := time.Now()
	r, ds := compare(t, old, nw, schemadiff.ReviewProfile)
	checkConserved(t, r, ds)
	out := text(t, ds)
	took := time.Since(start)
	checkTerminalSafe(t, out, false)
	t.Logf("compared, built and rendered in %v: %d bytes", took, len(out))
	if !strings.Contains(out, "(changed in many places: shown as one replaced stretch)") {
		t.Errorf("the description's diff is not approximate")
	}
	// Eight long texts reach the delta; what it shows is a few
	// clipped runs of each.
	if len(out) > 64<<10 {
		t.Errorf("the delta of megabyte texts is %d bytes", len(out))
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 12<<10 {
			t.Errorf("a line of %d bytes: %.200s…", len(line), line)
		}
	}
	// The HTML page of the same deltas is bounded alike (its style sheet
	// and markup add about 10 KB).
	var page strings.Builder
	if err := report.RenderHTML(&page, &report.Page{Sections: []report.Section{report.DiffSection(r, ds)}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("the HTML page: %d bytes", page.Len())
	if page.Len() > 128<<10 {
		t.Errorf("the HTML page of long texts is %d bytes", page.Len())
	}
}
