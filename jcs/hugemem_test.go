package jcs

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/internal/hugemem"
)

// TestParseAdvisedSame: a parse whose arrays and decoded-string buffer are
// large enough to be advised into huge pages (hugemem, as the command
// line's file runs have them) gives the Doc, slice for slice, that a parse
// without the advice gives, serial or in parts, and the advice is given:
// the split arrays of a 10 MB tool list, and the decoded-string buffer of
// 7 MB of strings with escapes.
func TestParseAdvisedSame(t *testing.T) {
	defer hugemem.Enable(hugemem.Enabled())
	if hugemem.Enable(true); !hugemem.Enabled() {
		t.Skip("GODEBUG=disablethp is set: the advice stays off")
	}
	escapes := []byte(`[` + strings.Repeat(`"a line\nwith \"quotes\", a tab\t, a \\ and \u00e9t\u00e9 in it, then more plain text",`, 90000) + `"end"]`)
	for _, c := range []struct {
		name     string
		src      []byte
		groups   int
		advised  bool // the advice must be given
		minBytes int
	}{
		{"LeanTools(6000,9) in 2 parts", corpus.LeanTools(6000, 9), 2, true, 8 << 20},
		{"LeanTools(6000,9) serial", corpus.LeanTools(6000, 9), 0, false, 8 << 20},
		{"escapes serial", escapes, 0, true, 6 << 20},
		{"escapes in 2 parts", escapes, 2, true, 6 << 20},
	} {
		if len(c.src) < c.minBytes {
			t.Fatalf("%s: %d bytes, too small to be advised", c.name, len(c.src))
		}
		hugemem.Enable(false)
		want, err, _ := parseWith(t, c.src, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		hugemem.Enable(true)
		before := hugemem.Advised()
		got, err, _ := parseWith(t, c.src, c.groups)
		advised := hugemem.Advised() - before
		if err != nil {
			t.Fatalf("%s, advised: %v", c.name, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%s: the advised parse differs: %s", c.name, docDiff(want, got))
		}
		if !bytes.Equal(want.Root().Canonical(), got.Root().Canonical()) {
			t.Fatalf("%s: canonical forms differ", c.name)
		}
		if c.advised && advised == 0 {
			t.Fatalf("%s: no buffer was advised", c.name)
		}
	}
}
