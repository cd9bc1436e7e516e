package cli

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/mcpdrift/mcpdrift/jcs"
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
	ignored []string
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
	str := func(k string) (string, bool, error) {
		v, ok := e.Get(k)
		if !ok {
			return "", false, nil
		}
		if v.Kind() != jcs.String {
			return "", false, bad("%s.%s must be a string", safetext.Quote(name), k)
		}
		return v.Str(), true, nil
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
			m[kk.Str()] = vv.Str()
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
				cs.command = append(cs.command, a.Index(i).Str())
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
