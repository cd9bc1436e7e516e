package schemadiff

import (
	"path"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/manifest"
)

// DiffIdentity compares the server half of the identity tuple. A field
// that one side does not know is not compared (and Unverified lists it),
// so a missing pin never reads as "unchanged". A stdio endpoint that only
// moved the install path of the same package's same binary is
// ServerInstallMoved (medium), not a rebinding; the stdio server's
// environment is compared by names and value digests.
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
		case f.name == "endpoint" && manifest.SameEndpoint(f.o, f.n):
		case f.o != f.n:
			d, parts := composed(f.name+" ", f.o, " → ", f.n)
			kind, sev := f.kind, f.sev
			switch f.name {
			case "publisher_key":
				d, parts = "the publisher key changed", nil
			case "endpoint":
				if moved, why := installMovedParts(f.o, f.n); moved {
					kind, sev = ServerInstallMoved, "medium"
					d, parts = composed(why...)
				}
			}
			changes = append(changes, Change{Kind: kind, Pointer: "/identity/" + f.name, Direction: Neutral, Severity: sev, Detail: d, parts: parts})
		}
	}
	changes = append(changes, diffEnv(old.Env, new.Env)...)
	return changes, unverified
}

// diffEnv compares the environments of a stdio server by name and value
// digest. A side without any recorded env is not compared.
func diffEnv(old, new *[]manifest.EnvEntry) []Change {
	if old == nil || new == nil {
		return nil
	}
	o, n := map[string]string{}, map[string]string{}
	for _, e := range *old {
		o[e.Name] = e.Digest
	}
	for _, e := range *new {
		n[e.Name] = e.Digest
	}
	var added, removed, changed []string
	for k, d := range n {
		switch od, ok := o[k]; {
		case !ok:
			added = append(added, k)
		case od != d:
			changed = append(changed, k)
		}
	}
	for k := range o {
		if _, ok := n[k]; !ok {
			removed = append(removed, k)
		}
	}
	if len(added)+len(removed)+len(changed) == 0 {
		return nil
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", added}, {"removed", removed}, {"value changed", changed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	return []Change{{Kind: ServerEnvChanged, Pointer: "/identity/env", Direction: Neutral, Severity: "medium",
		Detail: "the stdio server's environment changed: " + strings.Join(parts, "; ") + " (names and value digests compared; values are never recorded)"}}
}

// InstallMoved reports whether two stdio endpoints (as recorded: "stdio:"
// and the shell-quoted command line) differ only in where the same binary
// of the same package is installed, and says how.
func InstallMoved(a, b string) (bool, string) {
	moved, parts := installMovedParts(a, b)
	if !moved {
		return false, ""
	}
	d, _ := composed(parts...)
	return true, d
}

// installMoved reports whether two stdio endpoints differ only in where
// the same binary of the same package is installed: the same arguments,
// and every differing word an absolute path with the same file name and
// the same package (the node_modules/<package> component, or the
// directory holding the file when there is none).
func installMovedParts(a, b string) (bool, []string) {
	const pre = "stdio:"
	if !strings.HasPrefix(a, pre) || !strings.HasPrefix(b, pre) {
		return false, nil
	}
	wa, okA := shellSplit(strings.TrimPrefix(a, pre))
	wb, okB := shellSplit(strings.TrimPrefix(b, pre))
	if !okA || !okB || len(wa) != len(wb) || len(wa) == 0 {
		return false, nil
	}
	parts := []string{"only the install path moved (same package, same binary, same arguments): "}
	for i := range wa {
		if wa[i] == wb[i] {
			continue
		}
		x, y := wa[i], wb[i]
		if !path.IsAbs(x) || !path.IsAbs(y) || path.Base(x) != path.Base(y) {
			return false, nil
		}
		px, py := packageOf(x), packageOf(y)
		if px == "" || px != py {
			return false, nil
		}
		if len(parts) > 1 {
			parts[len(parts)-1] += "; "
		}
		parts = append(parts, path.Base(x), " of package ", px, ": ", path.Dir(x), " → ", path.Dir(y), "")
	}
	if len(parts) == 1 {
		return false, nil
	}
	return true, parts
}

// packageOf names the package an installed file belongs to: the nearest
// node_modules/<name> (or node_modules/@scope/<name>) component, else the
// name of the directory that holds the file (".bin" for a package
// manager's bin links, which name the binary only).
func packageOf(p string) string {
	segs := strings.Split(path.Clean(p), "/")
	for i := len(segs) - 3; i >= 0; i-- {
		if segs[i] != "node_modules" || segs[i+1] == ".bin" {
			continue
		}
		if strings.HasPrefix(segs[i+1], "@") {
			return segs[i+1] + "/" + segs[i+2]
		}
		return segs[i+1]
	}
	if len(segs) >= 2 {
		return segs[len(segs)-2]
	}
	return ""
}

// shellSplit reads back a command line written by the CLI's shellJoin:
// plain words and single-quoted words ('\” for a quote). ok is false for
// anything else.
func shellSplit(s string) ([]string, bool) {
	var out []string
	for i := 0; i < len(s); {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			break
		}
		var w strings.Builder
		for i < len(s) && s[i] != ' ' {
			if s[i] == '\'' {
				j := strings.IndexByte(s[i+1:], '\'')
				if j < 0 {
					return nil, false
				}
				w.WriteString(s[i+1 : i+1+j])
				i += j + 2
				continue
			}
			if s[i] == '\\' && i+1 < len(s) {
				w.WriteByte(s[i+1])
				i += 2
				continue
			}
			w.WriteByte(s[i])
			i++
		}
		out = append(out, w.String())
	}
	return out, true
}
