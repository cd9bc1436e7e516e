// Package discover reads the MCP server entries of the clients people
// use (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Zed, Gemini
// CLI, Codex, Continue) from their configuration files, and lists them as
// an Inventory (schema mcpdrift.inventory.v1) that scan and lock add
// take.
//
// Nothing is run and nothing is sent: a stdio server is listed, never
// started. Values are never in an inventory: env and header values
// appear by name only, URLs lose their user info and query values, and
// args that carry secrets are replaced (see cleanArgs for the rule).
//
// Every file is read through an os.Root opened on the directory it
// belongs to (the project directory, or the user's configuration
// directory), so a symlink out of that tree is refused; each file is
// bounded in size (Options.MaxFileSize) and nesting (MaxDepth), and
// parsed strictly: duplicate keys are errors in JSON, JSONC, TOML and
// YAML, and YAML anchors, aliases and merge keys are refused. A file that
// cannot be used is an Inventory error naming the file and the reason;
// one bad file (or one bad entry) never hides the rest.
package discover

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/redact"
)

// Schema is the inventory's schema name.
const Schema = "mcpdrift.inventory.v1"

// Scopes.
const (
	ScopeProject = "project"
	ScopeUser    = "user"
)

// Clients, as the inventory names them.
const (
	ClientClaudeDesktop = "claude-desktop"
	ClientClaudeCode    = "claude-code"
	ClientCursor        = "cursor"
	ClientVSCode        = "vscode"
	ClientWindsurf      = "windsurf"
	ClientZed           = "zed"
	ClientGemini        = "gemini-cli"
	ClientCodex         = "codex"
	ClientContinue      = "continue"
)

// Inventory is what discovery found: every server entry, and every file
// that could not be read.
type Inventory struct {
	Schema  string      `json:"schema"`
	Servers []Server    `json:"servers"`
	Errors  []FileError `json:"errors"`
}

// Server is one server entry, without any value: env and header names
// only, the URL cleaned, args with secrets replaced.
type Server struct {
	Client string `json:"client"`
	// File is the configuration file's path.
	File  string `json:"file"`
	Scope string `json:"scope"`
	// Project is the project directory an entry of a user file is for
	// (Claude Code's "projects" in ~/.claude.json); such an entry has
	// scope project.
	Project   string   `json:"project,omitempty"`
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	URL       string   `json:"url,omitempty"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	EnvNames  []string `json:"env_names"`
	// HeaderNames includes Authorization when the client sends a bearer
	// token from the environment (Codex bearer_token_env_var).
	HeaderNames []string `json:"header_names"`
	// Redacted: the URL or args shown are not those of the file (user
	// info, query values or secret-looking args were replaced).
	Redacted bool `json:"redacted,omitempty"`
	// Disabled: the client has this entry switched off.
	Disabled bool `json:"disabled,omitempty"`
}

// FileError is a file, or one entry of a file, that could not be read.
type FileError struct {
	File string `json:"file"`
	// Server names the entry when the problem is one entry's (the rest of
	// the file was read).
	Server string `json:"server,omitempty"`
	Reason string `json:"reason"`
}

// Platforms (runtime.GOOS values) whose paths differ.
const (
	Linux   = "linux"
	MacOS   = "darwin"
	Windows = "windows"
)

// DefaultMaxFileSize bounds each configuration file (~/.claude.json holds
// much besides servers, and grows).
const DefaultMaxFileSize = 32 << 20

// Options say where to look.
type Options struct {
	// Dirs are project directories (absolute paths, for absolute File
	// names); each is read for the project-scope files.
	Dirs []string
	// Home, when not empty, is the user's home directory: the user-scope
	// files of Platform are read.
	Home string
	// Platform is a runtime.GOOS value; anything but darwin and windows
	// reads the Linux paths.
	Platform string
	// Getenv looks up APPDATA, XDG_CONFIG_HOME, CODEX_HOME and
	// CLAUDE_CONFIG_DIR (nil: none is set).
	Getenv func(string) string
	// MaxFileSize bounds each file (0: DefaultMaxFileSize).
	MaxFileSize int64
}

// ErrNoDir is returned for a project directory that is not a directory.
var ErrNoDir = errors.New("not a directory")

// Discover reads every configuration file that opt names and returns the
// inventory, servers and errors each in a deterministic order (by file,
// then project, then name). It fails only when a project directory cannot
// be opened; every problem with a file is an Inventory error.
func Discover(opt Options) (*Inventory, error) {
	if opt.MaxFileSize <= 0 {
		opt.MaxFileSize = DefaultMaxFileSize
	}
	if opt.Getenv == nil {
		opt.Getenv = func(string) string { return "" }
	}
	var cands []candidate
	if opt.Home != "" {
		cands = append(cands, userCandidates(opt)...)
	}
	seenDir := map[string]bool{}
	for _, d := range opt.Dirs {
		d = filepath.Clean(d)
		if seenDir[d] {
			continue
		}
		seenDir[d] = true
		if err := checkDir(d); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		cands = append(cands, projectCandidates(d)...)
	}
	inv := &Inventory{Schema: Schema, Servers: []Server{}, Errors: []FileError{}}
	seen := map[string]bool{}
	for _, c := range cands {
		for _, f := range c.files(opt.MaxFileSize) {
			key := c.client + "\x00" + f.path
			if seen[key] {
				continue
			}
			seen[key] = true
			if f.err != nil {
				inv.Errors = append(inv.Errors, FileError{File: f.path, Reason: f.err.Error()})
				continue
			}
			readFile(inv, c, f)
		}
	}
	sortInventory(inv)
	return inv, nil
}

// sortInventory puts servers and errors in their one order.
func sortInventory(inv *Inventory) {
	slices.SortStableFunc(inv.Servers, func(a, b Server) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Project, b.Project), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Client, b.Client))
	})
	slices.SortStableFunc(inv.Errors, func(a, b FileError) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Server, b.Server), cmp.Compare(a.Reason, b.Reason))
	})
}

// readFile parses one file and adds its servers and errors.
func readFile(inv *Inventory, c candidate, f file) {
	fm := c.formatOf(f.path)
	root, err := fm.read(f.src)
	if err != nil {
		inv.Errors = append(inv.Errors, FileError{File: f.path, Reason: "invalid " + fm.name + ": " + err.Error()})
		return
	}
	found, err := c.entries(root)
	if err != nil {
		inv.Errors = append(inv.Errors, FileError{File: f.path, Reason: err.Error()})
		return
	}
	for _, fe := range found {
		if fe.err != nil {
			inv.Errors = append(inv.Errors, FileError{File: f.path, Server: fe.name, Reason: fe.err.Error()})
			continue
		}
		scope := c.scope
		if fe.project != "" {
			scope = ScopeProject
		}
		inv.Servers = append(inv.Servers, toServer(c.client, f.path, scope, fe.project, fe.entry))
	}
}

// toServer is what an inventory shows of an entry.
func toServer(client, file, scope, project string, e *Entry) Server {
	s := Server{Client: client, File: file, Scope: scope, Project: project, Name: e.Name, Transport: e.Transport,
		EnvNames: e.EnvNames(), HeaderNames: e.HeaderNames(), Disabled: e.Disabled, Command: e.Command}
	var r1, r2 bool
	if e.URL != "" {
		s.URL, r1 = cleanURL(e.URL)
	}
	s.Args, r2 = cleanArgs(e.Args)
	if strings.ContainsAny(s.Command, " \t") {
		// A command written with its arguments in one string (some clients
		// split it) is cleaned as args are.
		if parts, changed := cleanArgs(strings.Fields(s.Command)); changed {
			s.Command, r1 = strings.Join(parts, " "), true
		}
	} else if tokenShaped(s.Command) {
		s.Command, r1 = redact.Placeholder, true
	}
	s.Redacted = r1 || r2
	return s
}
