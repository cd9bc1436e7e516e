package schemadiff

import (
	"path"
	"strings"

	"github.com/mcpdrift/mcpdrift/manifest"
)

// An install move is decided from the recorded endpoints alone: the
// filesystem of the server a baseline was pinned from may be another
// machine's, or gone (an npx cache cleaned). What is inferred from a path
// (packageOf):
//
//   - node_modules: the innermost node_modules/<name> or
//     node_modules/@scope/<name> component names an npm package
//     (".../_npx/<hash>/node_modules/@scope/name/dist/index.js" is package
//     "@scope/name"; pnpm's node_modules/.pnpm/<id>/node_modules/<name>
//     too). A node_modules/.bin/<bin> link names only a binary, which any
//     package may provide: its package is the one of the file the link
//     resolves to, which mcpdrift records when it starts the server itself
//     (Identity.ResolvedEndpoint); without that record the package is not
//     known.
//   - Python: site-packages/<name> or dist-packages/<name> (the import
//     package, or <name>.py), pipx's venvs/<dist>/ and uv's tools/<dist>/
//     name a distribution, compared as PEP 503 normalizes names
//     ("mcp_server_fetch" is "mcp-server-fetch"). A virtual environment's
//     bin/<script> or uvx's hashed cache names none.
//   - Any other path names no package: "/usr/local/bin/server" and
//     "/opt/bin/server" may be two different programs.
//
// A launcher's package spec that changed only in its version
// ("npx -y @scope/name@1.0.0" → "@scope/name@1.1.0"; uvx, bunx, pnpm dlx)
// is the same package installed again elsewhere, too.

// pkgRef is a package inferred from a path: its ecosystem and its name.
type pkgRef struct{ eco, name string }

func (p pkgRef) known() bool { return p.name != "" }

// what says which package it is, for a detail: the ecosystem's word, then
// the name (a value, quoted by the caller).
func (p pkgRef) what() string {
	if p.eco == "python" {
		return " of Python distribution "
	}
	return " of package "
}

// packageOf names the package an installed file belongs to (see above);
// the zero pkgRef when the path names none.
func packageOf(p string) pkgRef {
	segs := strings.Split(path.Clean(p), "/")
	for i := len(segs) - 2; i >= 0; i-- {
		switch seg := segs[i]; {
		case seg == "node_modules":
			n := segs[i+1]
			switch {
			case n == ".bin" || n == ".pnpm" || n == "" || strings.HasPrefix(n, "."):
				// A bin link or the store: the package is further in, or
				// unknown.
				continue
			case strings.HasPrefix(n, "@"):
				if i+2 < len(segs) && segs[i+2] != "" {
					return pkgRef{"npm", n + "/" + segs[i+2]}
				}
				continue
			}
			return pkgRef{"npm", n}
		case seg == "site-packages" || seg == "dist-packages":
			n := strings.TrimSuffix(segs[i+1], ".py")
			if strings.HasSuffix(n, ".dist-info") || strings.HasSuffix(n, ".egg-info") || strings.HasPrefix(n, "_") || n == "" {
				continue
			}
			return pkgRef{"python", pep503(n)}
		case (seg == "venvs" && i > 0 && segs[i-1] == "pipx") || (seg == "tools" && i > 0 && segs[i-1] == "uv"):
			if segs[i+1] != "" && i+2 < len(segs) {
				return pkgRef{"python", pep503(segs[i+1])}
			}
		}
	}
	return pkgRef{}
}

// pep503 normalizes a Python distribution name: lower case, and every run
// of '-', '_' and '.' one '-'.
func pep503(n string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(n) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// endpointWords reads a stdio endpoint ("stdio:" and the shell-quoted
// command line) back into its words; ok false for anything else.
func endpointWords(ep string) ([]string, bool) {
	const pre = "stdio:"
	if !strings.HasPrefix(ep, pre) {
		return nil, false
	}
	w, ok := shellSplit(strings.TrimPrefix(ep, pre))
	return w, ok && len(w) > 0
}

// resolvedWords are the words of an identity's resolved endpoint when it
// has one of n words (the endpoint's own count), else nil.
func resolvedWords(id manifest.Identity, n int) []string {
	if id.ResolvedEndpoint == "" {
		return nil
	}
	w, ok := endpointWords(id.ResolvedEndpoint)
	if !ok || len(w) != n {
		return nil
	}
	return w
}

// wordPackage is the package of word i: that of the file it resolved to
// when the side recorded one that names a package, else that of its own
// path.
func wordPackage(words, resolved []string, i int) pkgRef {
	if resolved != nil {
		if p := packageOf(resolved[i]); p.known() {
			return p
		}
	}
	return packageOf(words[i])
}

// Outcomes of comparing two stdio endpoints word by word.
const (
	endpointSame    = iota // nothing that decides differs
	endpointMoved          // only the install of the same package moved
	endpointRebound        // anything else
)

// installMovedParts compares two stdio identities word by word: moved
// when they run the same package's same binary with the same arguments,
// only installed elsewhere: every word that differs is an absolute path of
// the same file name in the same package on both sides, or a launcher's
// package spec that changed only in its version; and a word that is the
// same but resolved to another file resolved into the same package (a
// word whose resolutions name no package on either side, an interpreter
// upgraded under /usr/bin/python3, is not compared). The parts are the
// detail (see composed).
func installMovedParts(old, new manifest.Identity) (int, []string) {
	wa, okA := endpointWords(old.Endpoint)
	wb, okB := endpointWords(new.Endpoint)
	if !okA || !okB || len(wa) != len(wb) {
		return endpointRebound, nil
	}
	ra, rb := resolvedWords(old, len(wa)), resolvedWords(new, len(wb))
	parts := []string{"only the install path moved (same package, same binary, same arguments): "}
	add := func(p ...string) {
		if len(parts) > 1 {
			parts[len(parts)-1] += "; "
		}
		parts = append(parts, p...)
	}
	for i := range wa {
		x, y := wa[i], wb[i]
		if x == y {
			if ra == nil || rb == nil || ra[i] == rb[i] {
				continue
			}
			// The same word, resolved to another file.
			px, py := packageOf(ra[i]), packageOf(rb[i])
			switch {
			case !px.known() && !py.known():
				continue
			case px != py:
				return endpointRebound, nil
			}
			add(x, px.what(), px.name, ": resolved to ", ra[i], " → ", rb[i], "")
			continue
		}
		if !path.IsAbs(x) || !path.IsAbs(y) {
			if name, vx, vy, ok := specMoved(wa, wb, i); ok {
				add(name, " (the spec "+path.Base(wa[0])+" installs): version ", vx, " → ", vy, "")
				continue
			}
			return endpointRebound, nil
		}
		if path.Base(x) != path.Base(y) {
			return endpointRebound, nil
		}
		px, py := wordPackage(wa, ra, i), wordPackage(wb, rb, i)
		if !px.known() || px != py {
			if (!px.known() && isBinLink(x) && ra == nil) || (!py.known() && isBinLink(y) && rb == nil) {
				return endpointRebound, []string{unresolvedBin}
			}
			return endpointRebound, nil
		}
		add(path.Base(x), px.what(), px.name, ": ", path.Dir(x), " → ", path.Dir(y), "")
	}
	if len(parts) == 1 {
		return endpointSame, nil
	}
	return endpointMoved, parts
}

// unresolvedBin is the note of a rebinding that a recorded resolution
// might have shown to be a moved install.
const unresolvedBin = "a node_modules/.bin link names a binary, not its package, and a side that does not record what it resolved to (resolved_endpoint, pinned before mcpdrift recorded it) cannot say which package it ran: re-pin to record it"

// isBinLink reports whether p is a package manager's bin link
// (node_modules/.bin/<bin>).
func isBinLink(p string) bool {
	return path.Base(path.Dir(p)) == ".bin" && path.Base(path.Dir(path.Dir(p))) == "node_modules"
}

// launchers are the commands that install a package spec and run its
// binary (the word after "dlx" for pnpm and yarn).
var launchers = map[string]string{"npx": "npm", "bunx": "npm", "pnpx": "npm", "pnpm": "npm", "yarn": "npm", "uvx": "python"}

// specMoved reports whether word i of two command lines that a launcher
// starts is the same package's spec in another version: "name@1.0.0" →
// "name@1.1.0" (npm, uvx), "name==1.0" → "name==1.1" (uvx --from); and
// names the package and both versions.
func specMoved(wa, wb []string, i int) (name, va, vb string, ok bool) {
	eco, isLauncher := launchers[path.Base(wa[0])]
	if !isLauncher || wa[0] != wb[0] || i == 0 {
		return "", "", "", false
	}
	if b := path.Base(wa[0]); (b == "pnpm" || b == "yarn") && (len(wa) < 2 || wa[1] != "dlx") {
		return "", "", "", false
	}
	na, va, okA := splitSpec(wa[i], eco)
	nb, vb, okB := splitSpec(wb[i], eco)
	if !okA || !okB || na != nb || va == vb {
		return "", "", "", false
	}
	return na, va, vb, true
}

// splitSpec splits a package spec into its name and version: npm's
// "[@scope/]name@version", Python's "name@version" or "name==version"
// (the name normalized).
func splitSpec(s, eco string) (name, version string, ok bool) {
	if strings.HasPrefix(s, "-") {
		return "", "", false
	}
	cut := strings.LastIndexByte(s, '@')
	sep := 1
	if eco == "python" {
		if j := strings.Index(s, "=="); j > 0 {
			cut, sep = j, 2
		}
	}
	if cut <= 0 || cut+sep >= len(s) {
		return "", "", false
	}
	name, version = s[:cut], s[cut+sep:]
	if strings.ContainsAny(name, "/") && (eco != "npm" || !strings.HasPrefix(name, "@") || strings.Count(name, "/") != 1) {
		return "", "", false // a path or a URL, not a registry name
	}
	if strings.ContainsAny(name+version, ":\\ ") {
		return "", "", false
	}
	if eco == "python" {
		name = pep503(name)
	}
	return name, version, true
}
