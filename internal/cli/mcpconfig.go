package cli

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// configServer is one server entry of an MCP client configuration file
// ({"mcpServers": {NAME: {...}}} as Claude Desktop, Cursor and others write
// it, or {"servers": {NAME: {...}}} as VS Code does).
type configServer struct {
	command []string
	env     map[string]string
	url     string
	headers http.Header
	// transport is the entry's "type" for a URL: mcpclient.TransportSSE
	// or TransportStreamableHTTP; "" when not given (auto).
	transport string
	ignored   []string
	// expanded are the values placeholders took from the environment:
	// secrets, redacted from every output.
	expanded []string
}

// loadConfigServer reads entry name of an MCP client configuration file.
// The file is parsed strictly (duplicate keys are errors).
func loadConfigServer(src []byte, file, name string) (*configServer, error) {
	bad := func(format string, a ...any) error {
		return usageErr("%s: %s", safetext.Escape(file), fmt.Sprintf(format, a...))
	}
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, inputErr(file, err)
	}
	root := doc.Root()
	var servers jcs.Value
	for _, key := range []string{"mcpServers", "servers"} {
		if v, ok := root.Get(key); ok && v.Kind() == jcs.Object {
			servers = v
			break
		}
	}
	if !servers.Valid() {
		return nil, bad(`no "mcpServers" (or "servers") object`)
	}
	e, ok := servers.Get(name)
	if !ok || e.Kind() != jcs.Object {
		return nil, bad("no server named %s (it has: %s)", safetext.Quote(name), safetext.Escape(fmt.Sprint(servers.Keys())))
	}
	cs := &configServer{}
	// Placeholders are expanded where clients expand them; a value that
	// came from the environment is a secret (cs.expanded) and is never
	// recorded.
	expand := func(where, s string) (string, error) {
		out, vals, err := expandPlaceholders(s, os.LookupEnv)
		if err != nil {
			return "", bad("%s.%s: %s", safetext.Quote(name), where, err.Error())
		}
		cs.expanded = append(cs.expanded, vals...)
		return out, nil
	}
	str := func(k string) (string, bool, error) {
		v, ok := e.Get(k)
		if !ok {
			return "", false, nil
		}
		if v.Kind() != jcs.String {
			return "", false, bad("%s.%s must be a string", safetext.Quote(name), k)
		}
		x, err := expand(k, v.Str())
		return x, true, err
	}
	strMap := func(k string) (map[string]string, error) {
		v, ok := e.Get(k)
		if !ok {
			return nil, nil
		}
		if v.Kind() != jcs.Object {
			return nil, bad("%s.%s must be an object of strings", safetext.Quote(name), k)
		}
		m := map[string]string{}
		for i := 0; i < v.Len(); i++ {
			kk, vv := v.Member(i)
			if vv.Kind() != jcs.String {
				return nil, bad("%s.%s.%s must be a string", safetext.Quote(name), k, safetext.Quote(kk.Str()))
			}
			x, err := expand(k+"."+kk.Str(), vv.Str())
			if err != nil {
				return nil, err
			}
			m[kk.Str()] = x
		}
		return m, nil
	}
	cmd, hasCmd, err := str("command")
	if err != nil {
		return nil, err
	}
	url, hasURL, err := str("url")
	if err != nil {
		return nil, err
	}
	if hasCmd == hasURL {
		return nil, bad("server %s must have exactly one of command and url", safetext.Quote(name))
	}
	if (hasCmd && cmd == "") || (hasURL && url == "") {
		return nil, bad("server %s has an empty command or url", safetext.Quote(name))
	}
	if tv, ok := e.Get("type"); ok {
		if tv.Kind() != jcs.String {
			return nil, bad("%s.type must be a string", safetext.Quote(name))
		}
		switch t := tv.Str(); {
		case t == "stdio" && hasCmd:
		case t == "sse" && hasURL:
			cs.transport = mcpclient.TransportSSE
		case (t == "http" || t == "streamable-http" || t == "streamableHttp" || t == "streamable_http") && hasURL:
			cs.transport = mcpclient.TransportStreamableHTTP
		case t == "stdio" || t == "sse" || t == "http" || t == "streamable-http" || t == "streamableHttp" || t == "streamable_http":
			return nil, bad("server %s has type %s and a %s", safetext.Quote(name), safetext.Quote(t), map[bool]string{true: "command", false: "url"}[hasCmd])
		default:
			return nil, bad("server %s has type %s, which is not stdio, http or sse", safetext.Quote(name), safetext.Quote(t))
		}
	}
	if hasCmd {
		cs.command = []string{cmd}
		if a, ok := e.Get("args"); ok {
			if a.Kind() != jcs.Array {
				return nil, bad("%s.args must be an array of strings", safetext.Quote(name))
			}
			for i := 0; i < a.Len(); i++ {
				if a.Index(i).Kind() != jcs.String {
					return nil, bad("%s.args must be an array of strings", safetext.Quote(name))
				}
				x, err := expand(fmt.Sprintf("args[%d]", i), a.Index(i).Str())
				if err != nil {
					return nil, err
				}
				cs.command = append(cs.command, x)
			}
		}
		if cs.env, err = strMap("env"); err != nil {
			return nil, err
		}
	} else {
		cs.url = url
		h, err := strMap("headers")
		if err != nil {
			return nil, err
		}
		if len(h) > 0 {
			cs.headers = http.Header{}
			for k, v := range h {
				cs.headers.Set(k, v)
			}
		}
	}
	known := map[string]bool{"command": true, "args": true, "env": true, "url": true, "headers": true, "type": true}
	for _, k := range e.Keys() {
		if !known[k] {
			cs.ignored = append(cs.ignored, k)
		}
	}
	sort.Strings(cs.ignored)
	return cs, nil
}

// expandPlaceholders expands the variables MCP clients write in their
// configuration files — ${env:NAME} (VS Code, Cursor), ${NAME} and
// ${NAME:-default} (Claude Code), ${userHome} — and returns the values
// taken from the environment. ${input:NAME} needs the client's prompt and
// is refused, as is any other ${...} and a variable that is not set: a
// placeholder sent as literal text only fails later, as a refused
// credential.
func expandPlaceholders(s string, lookup func(string) (string, bool)) (string, []string, error) {
	if !strings.Contains(s, "${") {
		return s, nil, nil
	}
	var b strings.Builder
	var vals []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", nil, fmt.Errorf("an unterminated placeholder %s", safetext.Quote(safetext.Clip(s[i:], 40)))
		}
		b.WriteString(s[:i])
		ph := s[i+2 : i+j]
		s = s[i+j+1:]
		name, def, hasDef := ph, "", false
		switch {
		case strings.HasPrefix(ph, "input:"):
			return "", nil, fmt.Errorf("${%s} asks the client to prompt for a value, and mcpdrift cannot: put it in the environment and write ${env:%s}", safetext.Escape(ph), safetext.Escape(strings.TrimPrefix(ph, "input:")))
		case ph == "userHome":
			home, err := os.UserHomeDir()
			if err != nil {
				return "", nil, fmt.Errorf("${userHome}: %s", safetext.Escape(err.Error()))
			}
			b.WriteString(home)
			continue
		case strings.HasPrefix(ph, "env:"):
			name = strings.TrimPrefix(ph, "env:")
		default:
			if k := strings.Index(ph, ":-"); k >= 0 {
				name, def, hasDef = ph[:k], ph[k+2:], true
			}
		}
		if !envName(name) || !strings.HasPrefix(ph, "env:") && vscodeVariables[name] {
			return "", nil, fmt.Errorf("${%s} is not a placeholder mcpdrift knows (${env:NAME}, ${NAME}, ${NAME:-default}, ${userHome})", safetext.Escape(safetext.Clip(ph, 60)))
		}
		v, ok := lookup(name)
		switch {
		case ok:
			vals = append(vals, v)
		case hasDef:
			v = def
		default:
			return "", nil, fmt.Errorf("${%s}: %s is not set in this environment", safetext.Escape(ph), safetext.Escape(name))
		}
		b.WriteString(v)
	}
	return b.String(), vals, nil
}

func envName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// vscodeVariables are the editor's own ${...} variables: they name no
// environment variable, and mcpdrift has no editor to ask.
var vscodeVariables = map[string]bool{
	"workspaceFolder": true, "workspaceFolderBasename": true, "workspaceRoot": true, "file": true,
	"fileWorkspaceFolder": true, "relativeFile": true, "relativeFileDirname": true, "fileBasename": true,
	"fileBasenameNoExtension": true, "fileExtname": true, "fileDirname": true, "fileDirnameBasename": true,
	"cwd": true, "lineNumber": true, "selectedText": true, "execPath": true, "pathSeparator": true,
	"defaultBuildTask": true,
}
