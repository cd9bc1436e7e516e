package discover

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// Marshal writes the inventory as indented JSON with a final newline.
func (inv *Inventory) Marshal() ([]byte, error) {
	out := *inv
	if out.Servers == nil {
		out.Servers = []Server{}
	}
	if out.Errors == nil {
		out.Errors = []FileError{}
	}
	for i := range out.Servers {
		if out.Servers[i].EnvNames == nil {
			out.Servers[i].EnvNames = []string{}
		}
		if out.Servers[i].HeaderNames == nil {
			out.Servers[i].HeaderNames = []string{}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Text writes the inventory for a person: one line per server (client,
// scope, name, transport, then the URL or the command and args, the env
// and header names, and the file), then one line per error. Every field
// is escaped (safetext).
func (inv *Inventory) Text() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%d server(s), %d error(s)\n", len(inv.Servers), len(inv.Errors))
	for _, s := range inv.Servers {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t", s.Client, s.Scope, safetext.Quote(s.Name), s.Transport)
		if s.URL != "" {
			b.WriteString(safetext.Escape(s.URL))
		} else if s.Command != "" {
			b.WriteString(safetext.Quote(s.Command))
			for _, a := range s.Args {
				b.WriteString(" " + safetext.Quote(a))
			}
		} else {
			b.WriteString("(no url or command)")
		}
		if len(s.EnvNames) > 0 {
			b.WriteString("\tenv: " + quoteAll(s.EnvNames))
		}
		if len(s.HeaderNames) > 0 {
			b.WriteString("\theaders: " + quoteAll(s.HeaderNames))
		}
		var notes []string
		if s.Redacted {
			notes = append(notes, "redacted")
		}
		if s.Disabled {
			notes = append(notes, "disabled")
		}
		if len(notes) > 0 {
			b.WriteString("\t(" + strings.Join(notes, ", ") + ")")
		}
		b.WriteString("\t" + safetext.Escape(s.File))
		if s.Project != "" {
			b.WriteString(" project " + safetext.Escape(s.Project))
		}
		b.WriteString("\n")
	}
	for _, e := range inv.Errors {
		b.WriteString("error: " + e.Line() + "\n")
	}
	return []byte(b.String())
}

// Line is the error as one line of text, escaped: the file, the server
// when one entry is at fault, and the reason.
func (e FileError) Line() string {
	s := safetext.Escape(e.File) + ": "
	if e.Server != "" {
		s += "server " + safetext.Quote(e.Server) + ": "
	}
	return s + safetext.Inert(e.Reason)
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = safetext.Quote(x)
	}
	return strings.Join(q, ",")
}

// ReadInventory reads an inventory that mcpdrift discover wrote (file
// names it in errors): strict JSON (duplicate keys refused), validated
// against schemas/inventory.v1.schema.json, then decoded. The error names
// the file and the JSON pointer of each problem.
func ReadInventory(src []byte, file string) (*Inventory, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", safetext.Escape(file), err)
	}
	if err := schemas.ValidateValue(schemas.Inventory, doc.Root()); err != nil {
		return nil, fmt.Errorf("%s: not a %s inventory: %s", safetext.Escape(file), Schema, safetext.Inert(err.Error()))
	}
	var inv Inventory
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&inv); err != nil {
		return nil, fmt.Errorf("%s: %s", safetext.Escape(file), safetext.Inert(err.Error()))
	}
	return &inv, nil
}

// LoadEntry reads the entry an inventory lists from its file again, with
// every value (headers, env, the URL and args as the file has them): what
// a caller that connects to the server, or runs its command, needs. The
// file is read as Discover reads it: at most opt.MaxFileSize bytes, and
// no symlink out of its tree, which is the deepest of opt.Dirs and
// opt.Home that holds the file (the file's own directory when none does).
func LoadEntry(s Server, opt Options) (*Entry, error) {
	if opt.MaxFileSize <= 0 {
		opt.MaxFileSize = DefaultMaxFileSize
	}
	c, ok := readerFor(s)
	if !ok {
		return nil, fmt.Errorf("%s: no reader for client %s", safetext.Escape(s.File), safetext.Quote(s.Client))
	}
	dir := ""
	for _, d := range append([]string{opt.Home}, opt.Dirs...) {
		if d = filepath.Clean(d); d != "." && within(d, s.File) && len(d) > len(dir) {
			dir = d
		}
	}
	if dir == "" {
		dir = filepath.Dir(s.File)
	}
	rel, err := filepath.Rel(dir, s.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", safetext.Escape(s.File), safetext.Inert(err.Error()))
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", safetext.Escape(s.File), safetext.Inert(reason(err)))
	}
	defer r.Close()
	f := readIn(r, dir, rel, opt.MaxFileSize)
	if f.err != nil {
		return nil, fmt.Errorf("%s: %s", safetext.Escape(s.File), safetext.Inert(f.err.Error()))
	}
	fm := c.formatOf(s.File)
	root, err := fm.read(f.src)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid %s: %s", safetext.Escape(s.File), fm.name, err.Error())
	}
	found, err := c.entries(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", safetext.Escape(s.File), err.Error())
	}
	for _, fe := range found {
		if fe.name == s.Name && fe.project == s.Project {
			if fe.err != nil {
				return nil, fmt.Errorf("%s: %s", safetext.Escape(s.File), fe.err.Error())
			}
			return fe.entry, nil
		}
	}
	return nil, fmt.Errorf("%s: no server named %s any more", safetext.Escape(s.File), safetext.Quote(s.Name))
}

// readerFor is how s.File is read for s.Client.
func readerFor(s Server) (candidate, bool) {
	base := filepath.Base(s.File)
	c := candidate{client: s.Client, format: fJSON}
	switch s.Client {
	case ClientClaudeDesktop, ClientCursor:
		c.entries = mcpServers(common)
	case ClientClaudeCode:
		c.entries = mcpServers(common)
		if base == ".claude.json" {
			c.entries = claudeCodeUser
		}
	case ClientVSCode:
		c.format, c.entries = fJSONC, vscodeServers
		if base == "settings.json" {
			c.entries = vscodeSettings
		}
	case ClientWindsurf:
		c.entries = mcpServers(windsurfDialect)
	case ClientZed:
		c.format, c.entries = fJSONC, zedServers
	case ClientGemini:
		c.format, c.entries = fJSONC, mcpServers(geminiDialect)
	case ClientCodex:
		c.format, c.entries = fTOML, codexServers
	case ClientContinue:
		if base == "config.yaml" && filepath.Base(filepath.Dir(s.File)) != "mcpServers" {
			c.format, c.entries = fYAML, continueServers
		} else {
			d := continueDir("", s.Scope)
			c.formats, c.entries = d.formats, d.entries
		}
	default:
		return c, false
	}
	return c, true
}

// ErrNoServers is LookupJSON's error for a file without a servers object.
var ErrNoServers = errors.New(`no "mcpServers" (or "servers") object`)

// LookupJSON reads entry name of an MCP client configuration file in the
// common JSON form ({"mcpServers": {NAME: {...}}} as Claude Desktop,
// Claude Code and Cursor write it, or {"servers": {...}} as VS Code does),
// strictly (package jcs: duplicate keys are errors). It is what
// mcpdrift's --mcp-config reads.
func LookupJSON(src []byte, name string) (*Entry, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, err
	}
	root := fromJCS(doc.Root())
	var servers *node
	for _, key := range []string{"mcpServers", "servers"} {
		if v, ok := root.get(key); ok && v.kind == kObject {
			servers = v
			break
		}
	}
	if servers == nil {
		return nil, ErrNoServers
	}
	e, ok := servers.get(name)
	if !ok || e.kind != kObject {
		return nil, fmt.Errorf("no server named %s (it has: %s)", safetext.Quote(name), safetext.Escape(fmt.Sprint(servers.Keys())))
	}
	return parseEntry(name, e, common)
}
