package schemadiff

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// An identity change's sentence quotes each of the server's values once,
// in the reader's format (its Detail had been quoted again whole:
// ("server_name \"a\\u001b\" → \"b\"")); Detail, what JSON readers get,
// keeps them quoted by safetext.Quote.
func TestIdentitySentenceQuotesOnce(t *testing.T) {
	changes, _ := DiffIdentity(manifest.Identity{ServerName: "a\x1b", Endpoint: "stdio:/opt/x/node_modules/pkg/bin/srv"},
		manifest.Identity{ServerName: "b", Endpoint: "stdio:/usr/lib/node_modules/pkg/bin/srv"})
	if len(changes) != 2 {
		t.Fatalf("%+v", changes)
	}
	want := map[string][2]string{
		ServerNameChanged:  {`server_name "a\u001b" → "b"`, `(server_name "a\u001b" → "b")`},
		ServerInstallMoved: {`"srv" of package "pkg": "/opt/x/node_modules/pkg/bin" → "/usr/lib/node_modules/pkg/bin"`, `"srv" of package "pkg": "/opt/x/node_modules/pkg/bin" → "/usr/lib/node_modules/pkg/bin")`},
	}
	for _, c := range changes {
		w, ok := want[c.Kind]
		if !ok {
			t.Fatalf("kind %s", c.Kind)
		}
		if !strings.Contains(c.Detail, w[0]) {
			t.Errorf("Detail %s, want %s", c.Detail, w[0])
		}
		s := Sentence(c, safetext.Quote)
		if !strings.Contains(s, w[1]) || strings.Contains(s, `\\`) || strings.Contains(s, `\"`) {
			t.Errorf("Sentence = %s, want it to hold %s", s, w[1])
		}
	}
	cs, _ := DiffIdentity(manifest.Identity{Endpoint: "stdio:/a/node_modules/p/x 1"}, manifest.Identity{Endpoint: "stdio:/b/node_modules/p/x 1"})
	if len(cs) != 1 || cs[0].Detail != `only the install path moved (same package, same binary, same arguments): "x" of package "p": "/a/node_modules/p" → "/b/node_modules/p"` {
		t.Errorf("install moved: %+v", cs)
	}
}
