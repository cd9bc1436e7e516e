package jcs_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// TestVariantOf: a member other than name that a case-insensitive
// decoder takes for it is found, the exact name alone is not one, and
// neither is a value that is not an object.
func TestVariantOf(t *testing.T) {
	for _, c := range []struct{ in, name, want string }{
		{`{"tools":[]}`, "tools", ""},
		{`{"tools":[],"Tools":[]}`, "tools", "Tools"},
		{`{"TOOLS":[]}`, "tools", "TOOLS"},
		{`{"toolſ":[]}`, "tools", "toolſ"},
		{`{"nextcursor":"x"}`, "nextCursor", "nextcursor"},
		{`{"tool":[]}`, "tools", ""},
		{`["tools"]`, "tools", ""},
	} {
		d, err := jcs.Parse([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := d.Root().VariantOf(c.name)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s VariantOf(%q) = %q, %v; want %q", c.in, c.name, got, ok, c.want)
		}
	}
}
