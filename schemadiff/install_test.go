package schemadiff_test

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Issue 30, item 4, the class: which endpoint changes are the same
// package's binary installed elsewhere (information under review, denied
// under fail-closed), and which are a rebinding, decided from the
// recorded strings alone. A package is named from its path (npm's
// @scope/name, a Python distribution), never ".bin".
func TestInstallMovedClass(t *testing.T) {
	const (
		moved   = schemadiff.ServerInstallMoved
		rebound = schemadiff.ServerEndpointRebound
		none    = ""
	)
	npx := func(h, bin string) string { return "stdio:/home/u/.npm/_npx/" + h + "/node_modules/.bin/" + bin }
	npxTarget := func(h, pkg string) string {
		return "stdio:/home/u/.npm/_npx/" + h + "/node_modules/" + pkg + "/dist/index.js"
	}
	for _, c := range []struct {
		name           string
		old, oldRes    string
		new, newRes    string
		kind, inDetail string
	}{
		{"npx bin links resolved into one scoped package", npx("aa", "mcp-server-x") + " stdio", npxTarget("aa", "@scope/server-x") + " stdio",
			npx("bb", "mcp-server-x") + " stdio", npxTarget("bb", "@scope/server-x") + " stdio", moved, `"mcp-server-x" of package "@scope/server-x"`},
		{"unscoped package file", "stdio:/opt/a/node_modules/server-x/cli.js", "", "stdio:/opt/b/node_modules/server-x/cli.js", "", moved, `of package "server-x"`},
		{"pnpm store", "stdio:/w/node_modules/.pnpm/@s+x@1.0.0/node_modules/@s/x/bin.js", "", "stdio:/w/node_modules/.pnpm/@s+x@1.1.0/node_modules/@s/x/bin.js", "", moved, `of package "@s/x"`},
		{"a global install's link", "stdio:/usr/local/bin/mcp-x", "stdio:/usr/local/lib/node_modules/@s/x/dist/index.js",
			"stdio:/opt/homebrew/bin/mcp-x", "stdio:/opt/homebrew/lib/node_modules/@s/x/dist/index.js", moved, `of package "@s/x"`},
		{"site-packages", "stdio:/usr/bin/python3 /a/lib/python3.12/site-packages/mcp_server_fetch/__main__.py", "",
			"stdio:/usr/bin/python3 /b/lib/python3.13/site-packages/mcp_server_fetch/__main__.py", "", moved, `of Python distribution "mcp-server-fetch"`},
		{"pipx venv", "stdio:/home/u/.local/pipx/venvs/mcp-server-git/bin/mcp-server-git", "", "stdio:/home/u/.local/share/pipx/venvs/mcp-server-git/bin/mcp-server-git", "", moved, `of Python distribution "mcp-server-git"`},
		{"uv tool", "stdio:/home/u/.local/bin/mcp-server-time", "stdio:/home/u/.local/share/uv/tools/mcp-server-time/bin/mcp-server-time",
			"stdio:/srv/bin/mcp-server-time", "stdio:/srv/uv/tools/mcp_server_time/bin/mcp-server-time", moved, `of Python distribution "mcp-server-time"`},
		{"npx spec in another version", "stdio:npx -y @scope/server-x@1.0.0 stdio", "", "stdio:npx -y @scope/server-x@1.1.0 stdio", "", moved, `"@scope/server-x" (the spec npx installs): version "1.0.0" → "1.1.0"`},
		{"uvx --from spec", "stdio:uvx --from mcp-server-fetch==0.6.2 mcp-server-fetch", "", "stdio:uvx --from mcp_server_fetch==0.6.3 mcp-server-fetch", "", moved, `version "0.6.2" → "0.6.3"`},
		{"an interpreter upgraded under the same path", "stdio:/usr/bin/python3 /srv/app.py", "stdio:/usr/bin/python3.12 /srv/app.py",
			"stdio:/usr/bin/python3 /srv/app.py", "stdio:/usr/bin/python3.13 /srv/app.py", none, ""},

		// Hostile and edge cases: a rebinding.
		{"another package at the same bin name", npx("aa", "mcp-server-x") + " stdio", npxTarget("aa", "@scope/server-x") + " stdio",
			npx("bb", "mcp-server-x") + " stdio", npxTarget("bb", "evil-server-x") + " stdio", rebound, ""},
		{"the same link pointed at another package", "stdio:/usr/local/bin/mcp-x", "stdio:/usr/local/lib/node_modules/@s/x/index.js",
			"stdio:/usr/local/bin/mcp-x", "stdio:/usr/local/lib/node_modules/evil/index.js", rebound, "resolved to"},
		{"bin links without their resolution", npx("aa", "mcp-server-x") + " stdio", "", npx("bb", "mcp-server-x") + " stdio", "", rebound, ""},
		{"other arguments", npx("aa", "mcp-server-x") + " stdio", npxTarget("aa", "@scope/server-x") + " stdio",
			npx("bb", "mcp-server-x") + " sse", npxTarget("bb", "@scope/server-x") + " sse", rebound, ""},
		{"a path that is not a package", "stdio:/opt/a/bin/server", "", "stdio:/opt/b/bin/server", "", rebound, ""},
		{"another file of the package", "stdio:/a/node_modules/p/cli.js", "", "stdio:/b/node_modules/p/admin.js", "", rebound, ""},
		{"npm and Python names alike", "stdio:/a/node_modules/fetch/x", "", "stdio:/b/site-packages/fetch/x", "", rebound, ""},
		{"npx of another package", "stdio:npx -y @scope/server-x@1.0.0", "", "stdio:npx -y @evil/server-x@1.0.0", "", rebound, ""},
		{"a spec that is a URL", "stdio:npx -y https://a.example/x.tgz", "", "stdio:npx -y https://b.example/x.tgz", "", rebound, ""},
		{"a non-launcher's versioned argument", "stdio:/usr/bin/env pkg@1", "", "stdio:/usr/bin/env pkg@2", "", rebound, ""},
	} {
		old := manifest.Identity{Endpoint: c.old, ResolvedEndpoint: c.oldRes}
		nw := manifest.Identity{Endpoint: c.new, ResolvedEndpoint: c.newRes}
		cs, _ := schemadiff.DiffIdentity(old, nw)
		got := ""
		if len(cs) == 1 {
			got = cs[0].Kind
		}
		if len(cs) > 1 || got != c.kind {
			t.Errorf("%s: %+v, want %q", c.name, cs, c.kind)
			continue
		}
		if got == "" {
			continue
		}
		if !strings.Contains(cs[0].Detail, c.inDetail) || strings.Contains(cs[0].Detail, `".bin"`) {
			t.Errorf("%s: detail %s, want it to hold %s", c.name, cs[0].Detail, c.inDetail)
		}
		// One decision per profile: review takes a moved install as
		// information, fail-closed denies it; a rebinding is never allowed.
		for _, p := range []*schemadiff.DecisionProfile{schemadiff.ReviewProfile, schemadiff.FailClosedProfile} {
			v := schemadiff.JudgeIdentity(old, nw, p)
			allow := got == moved && p == schemadiff.ReviewProfile
			if (v.Decision == schemadiff.Allow) != allow || (allow && len(v.Notes) != 1) || (!allow && !strings.Contains(v.Reason, "the endpoint is ")) {
				t.Errorf("%s under %s: %s %q %q", c.name, p.Name, v.Decision, v.Reason, v.Notes)
			}
		}
	}
}

// A rebinding that a recorded resolution might have told apart says so.
func TestUnresolvedBinLinkSaysWhy(t *testing.T) {
	cs, _ := schemadiff.DiffIdentity(manifest.Identity{Endpoint: "stdio:/a/node_modules/.bin/x"}, manifest.Identity{Endpoint: "stdio:/b/node_modules/.bin/x", ResolvedEndpoint: "stdio:/b/node_modules/p/x.js"})
	if len(cs) != 1 || cs[0].Kind != schemadiff.ServerEndpointRebound || !strings.Contains(cs[0].Note, "re-pin") {
		t.Errorf("%+v", cs)
	}
}
