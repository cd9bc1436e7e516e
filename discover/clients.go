package discover

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// The dialects of each client, beside the common form.
var (
	// Windsurf: a remote server's URL is serverUrl (url is read too).
	windsurfDialect = &dialect{urls: []urlKey{{"serverUrl", ""}, {"url", ""}}}
	// Gemini CLI: url is an SSE endpoint, httpUrl a Streamable HTTP one.
	geminiDialect = &dialect{urls: []urlKey{{"url", TransportSSE}, {"httpUrl", TransportStreamableHTTP}}}
	// Zed: command and args flat, or command {path, args, env}; a server
	// an extension provides has neither command nor URL.
	zedDialect = &dialect{urls: []urlKey{{"url", ""}}, nestedCommand: true, bare: true}
	// Continue: headers under requestOptions.
	continueDialect = &dialect{urls: []urlKey{{"url", ""}}, headers: []string{"requestOptions", "headers"}}
)

// userCandidates are the user-scope files of opt.Platform.
func userCandidates(opt Options) []candidate {
	home := opt.Home
	env := func(k, def string) string {
		if v := opt.Getenv(k); v != "" && filepath.IsAbs(v) {
			return v
		}
		return def
	}
	var desktop, vscodeUser, zed candidate
	switch opt.Platform {
	case MacOS:
		support := filepath.Join("Library", "Application Support")
		desktop = candidate{root: home, rel: filepath.Join(support, "Claude", "claude_desktop_config.json")}
		vscodeUser = candidate{root: home, rel: filepath.Join(support, "Code", "User")}
		zed = candidate{root: home, rel: filepath.Join(".config", "zed", "settings.json")}
	case Windows:
		appData := env("APPDATA", filepath.Join(home, "AppData", "Roaming"))
		desktop = candidate{root: appData, rel: filepath.Join("Claude", "claude_desktop_config.json")}
		vscodeUser = candidate{root: appData, rel: filepath.Join("Code", "User")}
		zed = candidate{root: appData, rel: filepath.Join("Zed", "settings.json")}
	default:
		cfg := env("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
		desktop = candidate{root: cfg, rel: filepath.Join("Claude", "claude_desktop_config.json")}
		vscodeUser = candidate{root: cfg, rel: filepath.Join("Code", "User")}
		zed = candidate{root: cfg, rel: filepath.Join("zed", "settings.json")}
	}
	claudeDir := env("CLAUDE_CONFIG_DIR", home)
	codexDir := env("CODEX_HOME", filepath.Join(home, ".codex"))
	u := func(c candidate, client string, f *format, entries func(*node) ([]found, error)) candidate {
		c.client, c.scope, c.format, c.entries = client, ScopeUser, f, entries
		return c
	}
	return []candidate{
		u(desktop, ClientClaudeDesktop, fJSON, mcpServers(common)),
		u(candidate{root: claudeDir, rel: ".claude.json"}, ClientClaudeCode, fJSON, claudeCodeUser),
		u(candidate{root: home, rel: filepath.Join(".cursor", "mcp.json")}, ClientCursor, fJSON, mcpServers(common)),
		u(candidate{root: vscodeUser.root, rel: filepath.Join(vscodeUser.rel, "mcp.json")}, ClientVSCode, fJSONC, vscodeServers),
		u(candidate{root: vscodeUser.root, rel: filepath.Join(vscodeUser.rel, "settings.json")}, ClientVSCode, fJSONC, vscodeSettings),
		u(candidate{root: home, rel: filepath.Join(".codeium", "windsurf", "mcp_config.json")}, ClientWindsurf, fJSON, mcpServers(windsurfDialect)),
		u(zed, ClientZed, fJSONC, zedServers),
		u(candidate{root: home, rel: filepath.Join(".gemini", "settings.json")}, ClientGemini, fJSONC, mcpServers(geminiDialect)),
		u(candidate{root: codexDir, rel: "config.toml"}, ClientCodex, fTOML, codexServers),
		u(candidate{root: home, rel: filepath.Join(".continue", "config.yaml")}, ClientContinue, fYAML, continueServers),
		continueDir(home, ScopeUser),
	}
}

// projectCandidates are the project-scope files of directory d.
func projectCandidates(d string) []candidate {
	p := func(rel, client string, f *format, entries func(*node) ([]found, error)) candidate {
		return candidate{root: d, rel: rel, client: client, scope: ScopeProject, format: f, entries: entries}
	}
	return []candidate{
		p(".mcp.json", ClientClaudeCode, fJSON, mcpServers(common)),
		p(filepath.Join(".cursor", "mcp.json"), ClientCursor, fJSON, mcpServers(common)),
		p(filepath.Join(".vscode", "mcp.json"), ClientVSCode, fJSONC, vscodeServers),
		p(filepath.Join(".vscode", "settings.json"), ClientVSCode, fJSONC, vscodeSettings),
		p(filepath.Join(".zed", "settings.json"), ClientZed, fJSONC, zedServers),
		p(filepath.Join(".gemini", "settings.json"), ClientGemini, fJSONC, mcpServers(geminiDialect)),
		p(filepath.Join(".codex", "config.toml"), ClientCodex, fTOML, codexServers),
		continueDir(d, ScopeProject),
	}
}

// continueDir is Continue's directory of server blocks: YAML files, and
// JSON files in the mcpServers form copied from another client.
func continueDir(root, scope string) candidate {
	return candidate{root: root, rel: filepath.Join(".continue", "mcpServers"), glob: []string{".yaml", ".yml", ".json"},
		client: ClientContinue, scope: scope, formats: map[string]*format{".yaml": fYAML, ".yml": fYAML, ".json": fJSON},
		entries: func(n *node) ([]found, error) {
			if v, ok := n.get("mcpServers"); ok && v.kind == kObject {
				return mcpServers(common)(n)
			}
			return continueServers(n)
		}}
}

// formatOf is the format of one file of a candidate.
func (c candidate) formatOf(path string) *format {
	if c.formats != nil {
		for ext, f := range c.formats {
			if strings.HasSuffix(path, ext) {
				return f
			}
		}
	}
	return c.format
}

// object returns member k of the top level when it is an object (nil when
// absent), or an error naming it.
func object(root *node, path ...string) (*node, error) {
	if root.kind != kObject {
		return nil, fmt.Errorf("the top level is %s, not an object", root.kind)
	}
	n := root
	for i, k := range path {
		v, ok := n.get(k)
		if !ok {
			return nil, nil
		}
		if v.kind != kObject {
			return nil, fmt.Errorf("%s is %s, not an object", strings.Join(path[:i+1], "."), v.kind)
		}
		n = v
	}
	return n, nil
}

// members reads each member of servers as an entry.
func members(servers *node, d *dialect, project string) []found {
	if servers == nil {
		return nil
	}
	out := make([]found, 0, len(servers.Keys()))
	for i, name := range servers.Keys() {
		e, err := parseEntry(name, servers.Vals()[i], d)
		out = append(out, found{project: project, name: name, entry: e, err: err})
	}
	return out
}

// mcpServers reads {"mcpServers": {NAME: entry}}.
func mcpServers(d *dialect) func(*node) ([]found, error) {
	return func(root *node) ([]found, error) {
		s, err := object(root, "mcpServers")
		if err != nil {
			return nil, err
		}
		return members(s, d, ""), nil
	}
}

// claudeCodeUser reads ~/.claude.json: the user's mcpServers, and those
// of each project under "projects" (scope project, Project its path).
func claudeCodeUser(root *node) ([]found, error) {
	s, err := object(root, "mcpServers")
	if err != nil {
		return nil, err
	}
	out := members(s, common, "")
	projects, err := object(root, "projects")
	if err != nil {
		return out, err
	}
	if projects == nil {
		return out, nil
	}
	for i, path := range projects.Keys() {
		p := projects.Vals()[i]
		if p.kind != kObject {
			continue
		}
		ps, ok := p.get("mcpServers")
		if !ok {
			continue
		}
		if ps.kind != kObject {
			out = append(out, found{project: path, err: fmt.Errorf("projects.%s.mcpServers is %s, not an object", safetext.Quote(path), ps.kind)})
			continue
		}
		out = append(out, members(ps, common, path)...)
	}
	return out, nil
}

// vscodeServers reads .vscode/mcp.json (and the user's mcp.json):
// {"servers": {NAME: entry}, "inputs": [...]}.
func vscodeServers(root *node) ([]found, error) {
	s, err := object(root, "servers")
	if err != nil {
		return nil, err
	}
	return members(s, common, ""), nil
}

// vscodeSettings reads settings.json: {"mcp": {"servers": {...}}}, or the
// same under the flat key "mcp.servers".
func vscodeSettings(root *node) ([]found, error) {
	s, err := object(root, "mcp", "servers")
	if err != nil {
		return nil, err
	}
	if s == nil {
		if s, err = object(root, "mcp.servers"); err != nil {
			return nil, err
		}
	}
	return members(s, common, ""), nil
}

// zedServers reads Zed's settings.json: {"context_servers": {NAME: entry}}.
func zedServers(root *node) ([]found, error) {
	s, err := object(root, "context_servers")
	if err != nil {
		return nil, err
	}
	return members(s, zedDialect, ""), nil
}

// continueServers reads Continue's config.yaml or a block file:
// mcpServers is a list of entries, each with its name.
func continueServers(root *node) ([]found, error) {
	if root.kind == kNull {
		return nil, nil
	}
	if root.kind != kObject {
		return nil, fmt.Errorf("the top level is %s, not a mapping", root.kind)
	}
	list, ok := root.get("mcpServers")
	if !ok || list.kind == kNull {
		return nil, nil
	}
	if list.kind != kArray {
		return nil, fmt.Errorf("mcpServers is %s, not a list", list.kind)
	}
	var out []found
	seen := map[string]bool{}
	for i, it := range list.Items() {
		nv, ok := it.get("name")
		if !ok || nv.kind != kString || nv.str == "" {
			out = append(out, found{name: fmt.Sprintf("mcpServers[%d]", i), err: fmt.Errorf("mcpServers[%d] has no name", i)})
			continue
		}
		name := nv.str
		if seen[name] {
			out = append(out, found{name: name, err: fmt.Errorf("server %s is listed twice; the first is kept", safetext.Quote(name))})
			continue
		}
		seen[name] = true
		e, err := parseEntry(name, without(it, "name"), continueDialect)
		out = append(out, found{name: name, entry: e, err: err})
	}
	return out, nil
}

// without is object n less member k.
func without(n *node, k string) *node {
	out := &node{kind: n.kind, str: n.str, b: n.b, items: n.Items()}
	for i, key := range n.Keys() {
		if key != k {
			out.keys = append(out.keys, key)
			out.vals = append(out.vals, n.Vals()[i])
		}
	}
	return out
}
