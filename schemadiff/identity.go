package schemadiff

import (
	"fmt"

	"github.com/mcpdrift/mcpdrift/manifest"
)

// DiffIdentity compares the server half of the identity tuple. A field
// that one side does not know is not compared (and Unverified lists it),
// so a missing pin never reads as "unchanged".
func DiffIdentity(old, new manifest.Identity) (changes []Change, unverified []string) {
	type field struct {
		name, kind, sev string
		o, n            string
	}
	for _, f := range []field{
		{"endpoint", ServerEndpointRebound, "high", old.Endpoint, new.Endpoint},
		{"publisher_key", PublisherKeyChanged, "high", old.PublisherKey, new.PublisherKey},
		{"server_name", ServerNameChanged, "medium", old.ServerName, new.ServerName},
		{"server_version", ServerVersionChanged, "low", old.ServerVersion, new.ServerVersion},
	} {
		switch {
		case f.o == "" && f.n == "":
		case f.o == "" || f.n == "":
			unverified = append(unverified, f.name)
		case f.o != f.n:
			d := fmt.Sprintf("%s %q → %q", f.name, f.o, f.n)
			if f.name == "publisher_key" {
				d = "the publisher key changed"
			}
			changes = append(changes, Change{Kind: f.kind, Pointer: "/identity/" + f.name, Direction: Neutral, Severity: f.sev, Detail: d})
		}
	}
	return changes, unverified
}
