package discover

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tailscale/hujson"

	"github.com/mcpdrift/mcpdrift/jcs"
)

var jsoncSeeds = []string{
	"{}",
	"// c\n{\"a\": [1, 2,], /* b */ \"c\": {\"d\": null,},}",
	`{"servers": {"x": {"command": "npx", "args": ["-y", "p",],},},}`,
	"{\"a\": \"// not a comment\", \"b\": \"/* nor this */\"}",
	"[1,,]", "[,]", "{,}", `{"a":,}`, "[1,/*c*/]", "[1 // c\n,]",
	"/* unterminated", "{\"a\": 1} /", "\"\\\"//\"", "{\"a\":1}\r\n// end",
}

// StripJSONC agrees with tailscale/hujson's Standardize: whatever hujson
// accepts reads, after either, to the same canonical JSON, and nothing
// hujson refuses reads after StripJSONC.
func checkJSONC(t *testing.T, src []byte) {
	mine, merr := StripJSONC(src)
	if merr == nil && len(mine) != len(src) {
		t.Fatalf("StripJSONC changed the length: %d -> %d", len(src), len(mine))
	}
	if bytes.HasPrefix(src, []byte{0xEF, 0xBB, 0xBF}) || len(src) > 1<<16 || loneCR(src) {
		// hujson keeps a BOM; deep inputs would recurse in hujson; a line
		// comment ends at a lone \r for VS Code's parser and StripJSONC,
		// not for hujson.
		return
	}
	theirs, herr := hujson.Standardize(append([]byte(nil), src...))
	if herr != nil {
		// hujson wants a line comment to end in a line break; VS Code
		// and Zed take one at the end of the file.
		theirs, herr = hujson.Standardize(append(append([]byte(nil), src...), '\n'))
	}
	var mc, hc []byte
	if merr == nil {
		if d, err := jcs.Parse(mine); err == nil {
			mc = d.Root().Canonical()
		}
	}
	if herr == nil {
		if d, err := jcs.Parse(theirs); err == nil {
			hc = d.Root().Canonical()
		}
	}
	if (mc == nil) != (hc == nil) || !bytes.Equal(mc, hc) {
		t.Fatalf("%q: StripJSONC reads %q (%v), hujson %q (%v)", src, mc, merr, hc, herr)
	}
}

func TestStripJSONCAgreesWithHujson(t *testing.T) {
	for _, s := range jsoncSeeds {
		checkJSONC(t, []byte(s))
	}
	for _, rel := range []string{"home/.config/Code/User/settings.json", "home/.config/Code/User/mcp.json", "home/.config/zed/settings.json", "project/.vscode/mcp.json"} {
		b, err := readTestdata(rel)
		if err != nil {
			t.Fatal(err)
		}
		checkJSONC(t, b)
	}
}

func FuzzStripJSONC(f *testing.F) {
	for _, s := range jsoncSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkJSONC(t, b) })
}

// checkEntries: whatever a reader makes of a file, it lists entries or
// errors without panicking, and the inventory it makes holds no value of
// the file's env or headers and validates against the schema.
func checkEntries(t *testing.T, f *format, entries func(*node) ([]found, error), b []byte) {
	root, err := f.read(b)
	if err != nil {
		return
	}
	found, err := entries(root)
	if err != nil {
		return
	}
	inv := &Inventory{Schema: Schema}
	for _, fe := range found {
		if fe.err != nil {
			inv.Errors = append(inv.Errors, FileError{File: "f", Server: fe.name, Reason: fe.err.Error()})
			continue
		}
		e := fe.entry
		if e.Transport == TransportStdio && e.Command == "" || e.Transport != TransportStdio && e.Command != "" {
			t.Fatalf("%+v", e)
		}
		s := toServer(ClientCursor, "f", ScopeProject, fe.project, e)
		js, _ := (&Inventory{Schema: Schema, Servers: []Server{s}}).Marshal()
		for _, v := range e.Env {
			if len(v) >= 12 && !strings.Contains(s.Name, v) && !inNames(v, s) && bytes.Contains(js, []byte(v)) {
				t.Fatalf("env value %q in %s", v, js)
			}
		}
		for _, v := range e.Headers {
			if len(v) >= 12 && !strings.Contains(s.Name, v) && !inNames(v, s) && bytes.Contains(js, []byte(v)) {
				t.Fatalf("header value %q in %s", v, js)
			}
		}
		inv.Servers = append(inv.Servers, s)
	}
	js, err := inv.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadInventory(js, "f"); err != nil {
		t.Fatalf("the inventory does not validate: %v\n%s", err, js)
	}
}

// inNames: v also appears where names, the command, args or the URL are
// written, so finding it is no leak of the value.
func inNames(v string, s Server) bool {
	all := append(append(append([]string{s.Command, s.URL, s.File, s.Project}, s.Args...), s.EnvNames...), s.HeaderNames...)
	for _, x := range all {
		if strings.Contains(x, v) {
			return true
		}
	}
	return false
}

func FuzzJSONConfig(f *testing.F) {
	f.Add([]byte(good), 0)
	f.Add([]byte(`{"mcpServers":{"a":{"type":"sse","url":"https://u:p@h/s?t=1","headers":{"A":"secret-value-xyz"}}}}`), 1)
	f.Add([]byte(`{"projects":{"/p":{"mcpServers":{"a":{"command":"x","args":["--token","t"]}}}}}`), 2)
	f.Add([]byte(`{"mcpServers":{"w":{"serverUrl":"https://h/mcp"},"g":{"httpUrl":"https://h"}}}`), 3)
	f.Add([]byte("// c\n{\"context_servers\":{\"z\":{\"command\":{\"path\":\"p\",\"args\":[],\"env\":{}}},\"e\":{\"source\":\"extension\"},}}"), 4)
	f.Add([]byte(`{"mcp":{"servers":{"v":{"command":"x"}}},"servers":{"v":{"url":"https://h"}}}`), 5)
	readers := []struct {
		f *format
		e func(*node) ([]found, error)
	}{
		{fJSON, mcpServers(common)}, {fJSON, mcpServers(windsurfDialect)}, {fJSON, claudeCodeUser},
		{fJSONC, mcpServers(geminiDialect)}, {fJSONC, zedServers}, {fJSONC, vscodeSettings}, {fJSONC, vscodeServers},
	}
	f.Fuzz(func(t *testing.T, b []byte, which int) {
		r := readers[uint(which)%uint(len(readers))]
		checkEntries(t, r.f, r.e, b)
		if e, err := LookupJSON(b, "a"); err == nil && (e.Command == "") == (e.URL == "") {
			t.Fatalf("LookupJSON: exactly one of command and url: %+v", e)
		}
	})
}

func FuzzTOMLConfig(f *testing.F) {
	for _, rel := range []string{"home/.codex/config.toml", "project/.codex/config.toml"} {
		b, err := readTestdata(rel)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("[mcp_servers.a]\ncommand='x'\nenv_vars=[{name='N'}, 'M']\n"))
	f.Fuzz(func(t *testing.T, b []byte) { checkEntries(t, fTOML, codexServers, b) })
}

func FuzzYAMLConfig(f *testing.F) {
	for _, rel := range []string{"home/.continue/config.yaml", "home/.continue/mcpServers/linear.yaml", "project/.continue/mcpServers/playwright-mcp.yaml"} {
		b, err := readTestdata(rel)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("mcpServers:\n  - name: a\n    url: https://h\n    requestOptions: {headers: {A: secret-value-xyz}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) { checkEntries(t, fYAML, continueDir("", ScopeProject).entries, b) })
}

func FuzzReadInventory(f *testing.F) {
	b, err := readTestdata("inventory.golden.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"schema":"mcpdrift.inventory.v1","servers":[],"errors":[{"file":"f","reason":"r"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		inv, err := ReadInventory(b, "f")
		if err != nil {
			return
		}
		if inv.Schema != Schema {
			t.Fatalf("schema %q", inv.Schema)
		}
		for _, s := range inv.Servers {
			if s.Transport == TransportStdio && s.Command == "" || (s.Transport == TransportSSE || s.Transport == TransportStreamableHTTP) && s.URL == "" {
				t.Fatalf("accepted %+v", s)
			}
		}
		again, err := inv.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadInventory(again, "f"); err != nil {
			t.Fatalf("a read inventory does not read back: %v", err)
		}
	})
}

func loneCR(b []byte) bool {
	for i, c := range b {
		if c == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			return true
		}
	}
	return false
}

// FuzzExpand: the placeholder expansion of a client configuration's (and a
// lock source's) strings never panics, leaves a string without "${" as it
// is, and takes from the environment only what it returns as taken.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"plain", "${env:TOKEN}", "Bearer ${env:TOKEN}", "${HOME}/x", "${X:-default}", "${userHome}", "${input:key}", "${", "${env:}", "${workspaceFolder}", "a${env:TOKEN}b${X:-y}"} {
		f.Add(s)
	}
	env := map[string]string{"TOKEN": "t0k3n-value-for-fuzz", "HOME": "/home/u"}
	f.Fuzz(func(t *testing.T, s string) {
		out, vals, err := Expand(s, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			return
		}
		if !strings.Contains(s, "${") && out != s {
			t.Fatalf("Expand(%q) = %q: a string without placeholders changed", s, out)
		}
		for _, v := range vals {
			if v != env["TOKEN"] && v != env["HOME"] {
				t.Fatalf("Expand(%q) took %q, which the environment does not hold", s, v)
			}
		}
	})
}
