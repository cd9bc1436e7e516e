package discover

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Transports, as the inventory names them.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
	// TransportUnknown: the entry names no transport (a URL the client
	// negotiates with, Streamable HTTP first and then the deprecated
	// HTTP+SSE, as mcpdrift does without --transport), or it has no URL or
	// command at all (a Zed server an extension provides).
	TransportUnknown = "unknown"
)

// Entry is one server entry as its file has it, values included: what a
// caller that connects to the server (or runs it) needs. An Inventory
// never holds one; LoadEntry reads one again from the file an inventory
// names. Every string is the file's, unexpanded (${env:NAME} and the like
// are the caller's to expand).
type Entry struct {
	Name    string
	Command string // "" for a URL server
	Args    []string
	Env     map[string]string
	// EnvPass are environment variables the client passes from its own
	// environment, named without a value (Codex env_vars).
	EnvPass []string
	URL     string
	Headers map[string]string
	// HeadersFromEnv maps a header to the environment variable its value
	// is read from (Codex env_http_headers; bearer_token_env_var is
	// Authorization).
	HeadersFromEnv map[string]string
	// Transport is one of the Transport constants.
	Transport string
	// Disabled: the client has the entry switched off ("disabled": true,
	// "enabled": false).
	Disabled bool
	// Ignored are the entry's member names this reader does not use,
	// sorted.
	Ignored []string
}

// EnvNames are the names of every environment variable the entry gives
// its server, sorted.
func (e *Entry) EnvNames() []string {
	out := slices.Collect(mapKeys(e.Env))
	out = append(out, e.EnvPass...)
	slices.Sort(out)
	return slices.Compact(out)
}

// HeaderNames are the names of every header the entry sends, sorted.
func (e *Entry) HeaderNames() []string {
	out := slices.Collect(mapKeys(e.Headers))
	out = append(out, slices.Collect(mapKeys(e.HeadersFromEnv))...)
	slices.Sort(out)
	return slices.Compact(out)
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// entryError is a problem with one entry of a file: the rest of the file
// is still read.
type entryError struct {
	server string
	msg    string
}

func (e *entryError) Error() string { return e.msg }

func badEntry(name, format string, a ...any) error {
	return &entryError{server: name, msg: fmt.Sprintf(format, a...)}
}

// dialect is how one client spells an entry, beside the common form
// (command, args, env, url, headers, type).
type dialect struct {
	// urls are the members that hold the URL, with the transport each
	// implies when "type" is absent ("" for the default: unknown).
	urls []urlKey
	// headers is the path of the headers object (default "headers").
	headers []string
	// nestedCommand: "command" may be {"path", "args", "env"} (Zed's older
	// form).
	nestedCommand bool
	// bare: an entry with neither a command nor a URL is listed with
	// transport unknown (Zed's extension-provided servers) instead of
	// refused.
	bare bool
}

type urlKey struct{ key, transport string }

// common is the form Claude Desktop, Claude Code, Cursor and VS Code
// write, and what --mcp-config reads.
var common = &dialect{urls: []urlKey{{"url", ""}}}

// known are the member names the common form understands; other members
// are Entry.Ignored.
var known = map[string]bool{"command": true, "args": true, "env": true, "url": true, "headers": true, "type": true}

// parseEntry reads entry e named name in dialect d.
func parseEntry(name string, e *node, d *dialect) (*Entry, error) {
	q := safetext.Quote(name)
	if e.kind != kObject {
		return nil, badEntry(name, "server %s is %s, not an object", q, e.kind)
	}
	r := &entryReader{name: name, q: q, e: e, used: map[string]bool{}}
	ent := &Entry{Name: name}
	cmdNode, hasCmd, err := r.command(ent, d)
	if err != nil {
		return nil, err
	}
	urlKeyUsed, urlTransport := "", ""
	for _, uk := range d.urls {
		v, ok := r.get(uk.key)
		if !ok {
			continue
		}
		if urlKeyUsed != "" {
			return nil, badEntry(name, "server %s has both %s and %s", q, urlKeyUsed, uk.key)
		}
		u, err := r.str(v, uk.key)
		if err != nil {
			return nil, err
		}
		ent.URL, urlKeyUsed, urlTransport = u, uk.key, uk.transport
	}
	hasURL := urlKeyUsed != ""
	if hasCmd == hasURL {
		if !hasCmd && d.bare {
			ent.Transport = TransportUnknown
			ent.Ignored = ignored(e, r.used, d)
			return ent, nil
		}
		return nil, badEntry(name, "server %s must have exactly one of command and %s", q, strings.Join(urlNames(d), " and "))
	}
	if (hasCmd && ent.Command == "") || (hasURL && ent.URL == "") {
		return nil, badEntry(name, "server %s has an empty command or url", q)
	}
	switch {
	case hasCmd:
		ent.Transport = TransportStdio
	case urlTransport != "":
		ent.Transport = urlTransport
	default:
		ent.Transport = TransportUnknown
	}
	if tv, ok := r.get("type"); ok {
		if tv.kind != kString {
			return nil, badEntry(name, "%s.type must be a string", q)
		}
		t, err := transportOf(name, tv.str, hasCmd)
		if err != nil {
			return nil, err
		}
		ent.Transport = t
	}
	if hasCmd {
		err = r.argsEnv(ent, cmdNode)
	} else {
		err = r.headers(ent, d)
	}
	if err != nil {
		return nil, err
	}
	if v, ok := e.get("disabled"); ok && v.kind == kBool && v.b {
		ent.Disabled = true
	}
	if v, ok := e.get("enabled"); ok && v.kind == kBool && !v.b {
		ent.Disabled = true
	}
	ent.Ignored = ignored(e, r.used, d)
	return ent, nil
}

// entryReader reads the members of server entry e, named name (quoted:
// q), with errors that name it; used collects the members it read.
type entryReader struct {
	name, q string
	e       *node
	used    map[string]bool
}

func (r *entryReader) get(k string) (*node, bool) {
	v, ok := r.e.get(k)
	if ok {
		r.used[k] = true
	}
	return v, ok
}

func (r *entryReader) str(n *node, what string) (string, error) {
	if n.kind != kString {
		return "", badEntry(r.name, "%s.%s must be a string", r.q, what)
	}
	return n.str, nil
}

func (r *entryReader) strMap(n *node, what string) (map[string]string, error) {
	return strMapOf(r.name, r.q, n, what, "object")
}

// strMapOf reads n, member what of server name (quoted: q), as a map of
// strings; of is what a client calls the form it must have (an object, a
// table).
func strMapOf(name, q string, n *node, what, of string) (map[string]string, error) {
	if n.kind != kObject {
		return nil, badEntry(name, "%s.%s must be an "+of+" of strings", q, what)
	}
	m := make(map[string]string, len(n.Keys()))
	for i, k := range n.Keys() {
		if n.Vals()[i].kind != kString {
			return nil, badEntry(name, "%s.%s.%s must be a string", q, what, safetext.Quote(k))
		}
		m[k] = n.Vals()[i].str
	}
	return m, nil
}

func (r *entryReader) strList(n *node, what string) ([]string, error) {
	if n.kind != kArray {
		return nil, badEntry(r.name, "%s.%s must be an array of strings", r.q, what)
	}
	out := make([]string, len(n.Items()))
	for i, it := range n.Items() {
		if it.kind != kString {
			return nil, badEntry(r.name, "%s.%s must be an array of strings", r.q, what)
		}
		out[i] = it.str
	}
	return out, nil
}

// command reads "command" into ent.Command: a string, or in a dialect
// with nestedCommand an object with a path (returned as cmdNode: its args
// and env are read there).
func (r *entryReader) command(ent *Entry, d *dialect) (cmdNode *node, hasCmd bool, err error) {
	v, ok := r.get("command")
	if !ok {
		return nil, false, nil
	}
	if d.nestedCommand && v.kind == kObject {
		p, ok := v.get("path")
		if !ok {
			return nil, false, badEntry(r.name, "%s.command has no path", r.q)
		}
		if ent.Command, err = r.str(p, "command.path"); err != nil {
			return nil, false, err
		}
		return v, true, nil
	}
	if ent.Command, err = r.str(v, "command"); err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// argsEnv reads a stdio entry's args and env, from the entry or from its
// nested command object (cmdNode, when not nil).
func (r *entryReader) argsEnv(ent *Entry, cmdNode *node) error {
	args, env := r.e, r.e
	prefix := ""
	if cmdNode != nil {
		args, env, prefix = cmdNode, cmdNode, "command."
	}
	if a, ok := args.get("args"); ok {
		var err error
		if ent.Args, err = r.strList(a, prefix+"args"); err != nil {
			return err
		}
	}
	if v, ok := env.get("env"); ok {
		var err error
		if ent.Env, err = r.strMap(v, prefix+"env"); err != nil {
			return err
		}
	}
	return nil
}

// headers reads a remote entry's headers, at the dialect's path of
// members ("headers" by default).
func (r *entryReader) headers(ent *Entry, d *dialect) error {
	path := d.headers
	if path == nil {
		path = []string{"headers"}
	}
	h, ok := r.e, true
	for i, p := range path {
		if i == 0 {
			h, ok = r.get(p)
		} else {
			h, ok = h.get(p)
		}
		if !ok {
			break
		}
		if i < len(path)-1 && h.kind != kObject {
			return badEntry(r.name, "%s.%s must be an object", r.q, strings.Join(path[:i+1], "."))
		}
	}
	if ok {
		var err error
		if ent.Headers, err = r.strMap(h, strings.Join(path, ".")); err != nil {
			return err
		}
	}
	return nil
}

func urlNames(d *dialect) []string {
	out := make([]string, len(d.urls))
	for i, u := range d.urls {
		out[i] = u.key
	}
	return out
}

// ignored lists the members of e that were neither read nor of the
// common form (a URL entry's "args" is not reported), sorted.
func ignored(e *node, used map[string]bool, d *dialect) []string {
	var out []string
	for _, k := range e.Keys() {
		if !used[k] && !known[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// transportOf maps an entry's "type".
func transportOf(name, t string, hasCmd bool) (string, error) {
	q := safetext.Quote(name)
	var tr string
	switch t {
	case "stdio":
		tr = TransportStdio
	case "sse":
		tr = TransportSSE
	case "http", "streamable-http", "streamableHttp", "streamable_http":
		tr = TransportStreamableHTTP
	default:
		return "", badEntry(name, "server %s has type %s, which is not stdio, http or sse", q, safetext.Quote(t))
	}
	if (tr == TransportStdio) != hasCmd {
		return "", badEntry(name, "server %s has type %s and a %s", q, safetext.Quote(t), map[bool]string{true: "command", false: "url"}[hasCmd])
	}
	return tr, nil
}
