package surface

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// FuzzParse: a pinned surface from anywhere (a snapshot, a lock) is read
// or refused, never a panic, and what is read writes back to what reads
// the same.
func FuzzParse(f *testing.F) {
	s := New(NotAdvertised, "")
	s.Instructions = NewInstr(jcs.Value{}, false, 0)
	b, _ := Marshal(s, "")
	f.Add(b)
	f.Add([]byte(`{"projections":` + projections + `,"instructions":{"state":"observed","digest":"sha256:00","value":"x"},"prompts":{"state":"not_observed","reason":"r"},"resource_templates":{"state":"not_advertised"},"resources":{"state":"not_requested"}}`))
	f.Add([]byte(`{"projections":` + projections + `,"instructions":{"state":"observed","present":false},"prompts":{"state":"observed","digest":"sha256:00","items":[{"name":"a"},{"name":"a"}]},"resource_templates":{"state":"not_advertised"},"resources":{"state":"not_requested"}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := ParseBytes(src)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\x00\x1b\r\n") {
				t.Fatalf("an error carries a control character raw: %q", err)
			}
			return
		}
		out, err := Marshal(s, "")
		if err != nil {
			t.Fatalf("a surface read cannot be written: %v", err)
		}
		back, err := ParseBytes(out)
		if err != nil {
			t.Fatalf("what was written cannot be read: %v\n%s", err, out)
		}
		if r := Compare(s, back); len(r.Changes) != 0 {
			t.Fatalf("a rewrite changed the surface: %+v", r.Changes)
		}
	})
}

// FuzzList: entries of a listing from a server (any JSON) are read as
// items or invalid entries; a list that can be pinned survives its pin,
// and its comparison with itself is clean, while a list that cannot is
// never clean against anything pinned.
func FuzzList(f *testing.F) {
	f.Add([]byte(`[{"name":"a","description":"d","arguments":[{"name":"x\u0000","required":true}]},{"name":"b"}]`), []byte(`"hi"`))
	f.Add([]byte(`[{"name":"a"},{"name":"a"}]`), []byte(`7`))
	f.Add([]byte(`[1,{"name":2},{"uri":"u"}]`), []byte(`null`))
	f.Fuzz(func(t *testing.T, entries, instr []byte) {
		doc, err := jcs.Parse(entries)
		if err != nil || doc.Root().Kind() != jcs.Array {
			return
		}
		idoc, err := jcs.Parse(instr)
		if err != nil {
			return
		}
		for _, k := range ListKinds {
			s := New(NotAdvertised, "")
			s.Instructions = NewInstr(idoc.Root(), true, 64)
			l := s.List(k)
			l.State, l.Completeness = Observed, Complete
			for i := range doc.Root().Len() {
				l.Add(doc.Root().Index(i))
			}
			r := Compare(s, s)
			if Pinnable(s) != nil {
				if len(l.Invalid)+len(l.Duplicates()) > 0 && len(r.Changes) == 0 && !s.Instructions.Oversize {
					t.Fatalf("an ambiguous or unreadable list compares clean")
				}
				continue
			}
			if len(r.Changes) != 0 {
				t.Fatalf("a pinnable surface differs from itself: %+v", r.Changes)
			}
			b, err := Marshal(s, "  ")
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseBytes(b)
			if err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			if r := Compare(back, s); len(r.Changes) != 0 {
				t.Fatalf("a surface differs from its pin: %+v", r.Changes)
			}
		}
	})
}
