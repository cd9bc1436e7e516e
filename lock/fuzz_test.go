package lock

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParse: a lock is hostile input. Parse never panics; a lock it
// accepts writes back canonically (Marshal, then Parse and Marshal again,
// gives the same bytes) and every tool's approval is of its definition.
func FuzzParse(f *testing.F) {
	good := sampleLock(f).Marshal()
	f.Add(good)
	f.Add([]byte(`{"schema":"mcpdrift.lock.v1","servers":[]}`))
	f.Add(bytes.Replace(good, []byte(`"review"`), []byte(`"fail-closed"`), 1))
	f.Add(bytes.Replace(good, []byte(`"acme"`), []byte(`"zeta"`), -1))
	withRef := sampleLock(f)
	withRef.Servers[0].PinRef(Ref{URL: "https://schemas.example.com/a.json", SHA256: "sha256:" + strings.Repeat("a", 64), By: "alice", At: alice.At}, alice)
	f.Add(withRef.Marshal())
	withSurface := sampleLock(f)
	if err := withSurface.Servers[0].PinSurface(servedSurface(f, `"Be brief."`, `{"name":"p","arguments":[{"name":"a"}]}`), alice); err != nil {
		f.Fatal(err)
	}
	f.Add(withSurface.Marshal())
	f.Fuzz(func(t *testing.T, src []byte) {
		l, err := Parse(src, "fuzz.lock")
		if err != nil {
			return
		}
		b := l.Marshal()
		l2, err := Parse(b, "again")
		if err != nil {
			t.Fatalf("Parse refuses what Marshal wrote: %v\n%s", err, b)
		}
		if b2 := l2.Marshal(); !bytes.Equal(b, b2) {
			t.Fatalf("not canonical:\n%s\n---\n%s", b, b2)
		}
		for _, s := range l2.Servers {
			for _, tl := range s.Tools {
				if v := tl.ToolValue(); tl.Approval.Digest != v.ToolDigest() {
					t.Fatalf("approval of %q is not of its definition", tl.Name)
				}
			}
		}
	})
}
