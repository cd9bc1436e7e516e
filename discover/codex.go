package discover

import (
	"slices"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// codexServers reads Codex's config.toml: [mcp_servers.NAME] tables with
// command, args, env, env_vars (names passed from Codex's environment,
// plain or {name, source}), cwd; or url (Streamable HTTP, the only remote
// transport Codex speaks), http_headers, env_http_headers (header to env
// var name), bearer_token_env_var (Authorization); enabled = false
// switches one off.
func codexServers(root *node) ([]found, error) {
	s, err := object(root, "mcp_servers")
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, nil
	}
	out := make([]found, 0, len(s.Keys()))
	for i, name := range s.Keys() {
		e, err := codexEntry(name, s.Vals()[i])
		out = append(out, found{name: name, entry: e, err: err})
	}
	return out, nil
}

var codexKnown = map[string]bool{
	"command": true, "args": true, "env": true, "env_vars": true, "cwd": true, "url": true,
	"http_headers": true, "env_http_headers": true, "bearer_token_env_var": true, "bearer_token": true, "enabled": true,
}

func codexEntry(name string, e *node) (*Entry, error) {
	q := safetext.Quote(name)
	if e.kind != kObject {
		return nil, badEntry(name, "server %s is %s, not a table", q, e.kind)
	}
	r := &codexReader{name: name, q: q, e: e}
	ent := &Entry{Name: name}
	cmd, hasCmd, err := r.str("command")
	if err != nil {
		return nil, err
	}
	url, hasURL, err := r.str("url")
	if err != nil {
		return nil, err
	}
	if hasCmd == hasURL {
		return nil, badEntry(name, "server %s must have exactly one of command and url", q)
	}
	if (hasCmd && cmd == "") || (hasURL && url == "") {
		return nil, badEntry(name, "server %s has an empty command or url", q)
	}
	if hasCmd {
		ent.Command, ent.Transport = cmd, TransportStdio
		err = r.stdio(ent)
	} else {
		ent.URL, ent.Transport = url, TransportStreamableHTTP
		err = r.remote(ent)
	}
	if err != nil {
		return nil, err
	}
	if v, ok := e.get("enabled"); ok {
		if v.kind != kBool {
			return nil, badEntry(name, "%s.enabled must be true or false", q)
		}
		ent.Disabled = !v.b
	}
	for _, k := range e.Keys() {
		if !codexKnown[k] {
			ent.Ignored = append(ent.Ignored, k)
		}
	}
	slices.Sort(ent.Ignored)
	return ent, nil
}

// codexReader reads the members of Codex server table e, named name
// (quoted: q), with errors that name it.
type codexReader struct {
	name, q string
	e       *node
}

func (r *codexReader) str(k string) (string, bool, error) {
	v, ok := r.e.get(k)
	if !ok {
		return "", false, nil
	}
	if v.kind != kString {
		return "", false, badEntry(r.name, "%s.%s must be a string", r.q, k)
	}
	return v.str, true, nil
}

func (r *codexReader) strMap(k string) (map[string]string, error) {
	v, ok := r.e.get(k)
	if !ok {
		return nil, nil
	}
	return strMapOf(r.name, r.q, v, k, "table")
}

// stdio reads a stdio server's args, env and env_vars.
func (r *codexReader) stdio(ent *Entry) error {
	name, q, e := r.name, r.q, r.e
	if a, ok := e.get("args"); ok {
		if a.kind != kArray {
			return badEntry(name, "%s.args must be an array of strings", q)
		}
		for _, it := range a.Items() {
			if it.kind != kString {
				return badEntry(name, "%s.args must be an array of strings", q)
			}
			ent.Args = append(ent.Args, it.str)
		}
	}
	var err error
	if ent.Env, err = r.strMap("env"); err != nil {
		return err
	}
	if v, ok := e.get("env_vars"); ok {
		if v.kind != kArray {
			return badEntry(name, "%s.env_vars must be an array", q)
		}
		for i, it := range v.Items() {
			switch it.kind {
			case kString:
				ent.EnvPass = append(ent.EnvPass, it.str)
			case kObject:
				n, ok := it.get("name")
				if !ok || n.kind != kString {
					return badEntry(name, "%s.env_vars[%d] has no name", q, i)
				}
				ent.EnvPass = append(ent.EnvPass, n.str)
			default:
				return badEntry(name, "%s.env_vars[%d] must be a name or {name, source}", q, i)
			}
		}
	}
	return nil
}

// remote reads a remote server's headers: http_headers,
// env_http_headers, and the bearer token (named or given) as
// Authorization.
func (r *codexReader) remote(ent *Entry) error {
	var err error
	if ent.Headers, err = r.strMap("http_headers"); err != nil {
		return err
	}
	if ent.HeadersFromEnv, err = r.strMap("env_http_headers"); err != nil {
		return err
	}
	if v, ok, err := r.str("bearer_token_env_var"); err != nil {
		return err
	} else if ok {
		if ent.HeadersFromEnv == nil {
			ent.HeadersFromEnv = map[string]string{}
		}
		ent.HeadersFromEnv["Authorization"] = v
	}
	if v, ok, err := r.str("bearer_token"); err != nil {
		return err
	} else if ok {
		if ent.Headers == nil {
			ent.Headers = map[string]string{}
		}
		ent.Headers["Authorization"] = "Bearer " + v
	}
	return nil
}
