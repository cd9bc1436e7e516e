package cli

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"

	"github.com/mcpdrift/mcpdrift/discover"
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

// loadConfigServer reads entry name of an MCP client configuration file
// in the common form (discover.LookupJSON: strict, duplicate keys are
// errors) and expands the placeholders in its strings.
func loadConfigServer(src []byte, file, name string) (*configServer, error) {
	bad := func(format string, a ...any) error {
		return usageErr("%s: %s", safetext.Escape(file), fmt.Sprintf(format, a...))
	}
	e, err := discover.LookupJSON(src, name)
	if err != nil {
		return nil, bad("%s", err.Error())
	}
	cs := &configServer{ignored: e.Ignored}
	// Placeholders are expanded where clients expand them; a value that
	// came from the environment is a secret (cs.expanded) and is never
	// recorded.
	expand := func(where, s string) (string, error) {
		out, vals, err := discover.Expand(s, os.LookupEnv)
		if err != nil {
			return "", bad("%s.%s: %s", safetext.Quote(name), where, err.Error())
		}
		cs.expanded = append(cs.expanded, vals...)
		return out, nil
	}
	strMap := func(what string, m map[string]string) (map[string]string, error) {
		if m == nil {
			return nil, nil
		}
		out := make(map[string]string, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			x, err := expand(what+"."+k, m[k])
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	switch e.Transport {
	case discover.TransportSSE:
		cs.transport = mcpclient.TransportSSE
	case discover.TransportStreamableHTTP:
		cs.transport = mcpclient.TransportStreamableHTTP
	}
	if e.Command != "" {
		cmd, err := expand("command", e.Command)
		if err != nil {
			return nil, err
		}
		cs.command = []string{cmd}
		for i, a := range e.Args {
			x, err := expand(fmt.Sprintf("args[%d]", i), a)
			if err != nil {
				return nil, err
			}
			cs.command = append(cs.command, x)
		}
		if cs.env, err = strMap("env", e.Env); err != nil {
			return nil, err
		}
		return cs, nil
	}
	if cs.url, err = expand("url", e.URL); err != nil {
		return nil, err
	}
	h, err := strMap("headers", e.Headers)
	if err != nil {
		return nil, err
	}
	if len(h) > 0 {
		cs.headers = http.Header{}
		for k, v := range h {
			cs.headers.Set(k, v)
		}
	}
	return cs, nil
}
