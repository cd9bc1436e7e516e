package cli

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/discover"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// servers are the fleet's servers, from the one source given.
func (f *fleetFlags) servers(e *env) ([]*fleetServer, error) {
	src, err := f.selected()
	if err != nil {
		return nil, err
	}
	// A bound that is wrong is wrong for every server: refuse it once.
	if err := checkBounds(e, f.base()); err != nil {
		return nil, err
	}
	switch src {
	case "--lock":
		return f.lockServers(e)
	case "--inventory":
		return f.inventoryServers(e)
	}
	return f.urlServers(e)
}

// lockServers are the servers of --lock, each with its entry: scan gates
// each against it (checkServer, lock check's own check); watch decides
// each observation against its approved tools.
func (f *fleetFlags) lockServers(e *env) ([]*fleetServer, error) {
	src, err := readInput(e, f.lockPath, DefaultMaxInput)
	if err != nil {
		return nil, err
	}
	l, err := lock.Parse(src, f.lockPath)
	if err != nil {
		return nil, usageErr("%s", err.Error())
	}
	out := make([]*fleetServer, 0, len(l.Servers))
	for _, s := range l.Servers {
		fs := &fleetServer{name: s.Name, lockServer: s, baseline: s.ToolValues(), hasBaseline: true}
		lf, argv, err := liveFor(e, f.base(), s.Source)
		if err == nil {
			fs.cfg, err = lf.config(e, argv)
		}
		if err != nil {
			fs.err = errMessage(err)
		} else {
			if s.ClientCapabilities != nil {
				fs.cfg.ClientCapabilities = s.ClientCapabilities
			}
			_, fs.target = e.targetOf(fs.cfg)
		}
		out = append(out, fs)
	}
	return out, nil
}

// inventoryServers are the servers of --inventory, each read again from
// the configuration file the inventory names (the inventory holds no
// value). A stdio server runs only with --allow-config-commands, as a
// command read from --mcp-config: without it, it is not observed and says
// why. A disabled entry is skipped.
func (f *fleetFlags) inventoryServers(e *env) ([]*fleetServer, error) {
	src, err := readInput(e, f.inventory, DefaultMaxInput)
	if err != nil {
		return nil, err
	}
	inv, err := discover.ReadInventory(src, f.inventory)
	if err != nil {
		return nil, usageErr("%s", safetext.Inert(err.Error()))
	}
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	opt := discover.Options{Home: home, Dirs: []string{cwd}}
	var out []*fleetServer
	seen := map[string]int{}
	for _, s := range inv.Servers {
		if s.Disabled {
			continue
		}
		name := inventoryName(s)
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s#%d", name, seen[name])
		}
		fs := &fleetServer{name: name, target: s.URL}
		if s.Transport == discover.TransportStdio {
			fs.target = "stdio:" + observe.ShellJoin(append([]string{s.Command}, s.Args...))
		}
		out = append(out, fs)
		ent, err := discover.LoadEntry(s, opt)
		if err != nil {
			fs.err = safetext.Inert(err.Error())
			continue
		}
		if ent.Command != "" && !f.allowConfig {
			fs.err = "not run: it is a command read from " + safetext.Quote(s.File) + ", which would run code on this machine; pass --allow-config-commands if you mean it"
			continue
		}
		cfg, err := f.entryConfig(e, ent)
		if err != nil {
			fs.err = errMessage(err)
			continue
		}
		fs.cfg = cfg
		_, fs.target = e.targetOf(cfg)
	}
	return out, nil
}

// inventoryName names an inventory server: client, scope and name (and
// the project of a project entry of a user file), so the same name in two
// clients' files is two servers.
func inventoryName(s discover.Server) string {
	n := s.Client + ":" + s.Scope + ":" + s.Name
	if s.Project != "" {
		n += "@" + s.Project
	}
	return n
}

// entryConfig turns an entry read from a configuration file into a client
// configuration, expanding its placeholders as clients do
// (discover.Expand) and holding every value the entry sends as a secret
// of the run; the bounds and checks are liveFlags.config's.
func (f *fleetFlags) entryConfig(e *env, ent *discover.Entry) (mcpclient.Config, error) {
	expand := func(where, s string) (string, error) {
		v, vals, err := discover.Expand(s, os.LookupEnv)
		if err != nil {
			return "", usageErr("server %s: %s: %s", safetext.Quote(ent.Name), where, err.Error())
		}
		for _, x := range vals {
			e.secrets.Add("a value a placeholder took from the environment", x)
		}
		return v, nil
	}
	l := f.base()
	var argv []string
	var env map[string]string
	if ent.Command != "" {
		c, err := expand("command", ent.Command)
		if err != nil {
			return mcpclient.Config{}, err
		}
		argv = []string{c}
		for i, a := range ent.Args {
			x, err := expand(fmt.Sprintf("args[%d]", i), a)
			if err != nil {
				return mcpclient.Config{}, err
			}
			argv = append(argv, x)
		}
		env = map[string]string{}
		for _, k := range slices.Sorted(mapKeysOf(ent.Env)) {
			x, err := expand("env."+k, ent.Env[k])
			if err != nil {
				return mcpclient.Config{}, err
			}
			env[k] = x
			e.secrets.Add("the value of env "+k+" of the stdio server", x)
		}
		l.stdio, l.passEnv = true, ent.EnvPass
		for _, n := range ent.EnvPass {
			if v, ok := os.LookupEnv(n); ok {
				e.secrets.Add("the value of env "+n+" passed to the stdio server", v)
			}
		}
	} else {
		u, err := expand("url", ent.URL)
		if err != nil {
			return mcpclient.Config{}, err
		}
		e.secrets.AddURL(u)
		l.baseURL = u
		switch ent.Transport {
		case discover.TransportSSE:
			l.transport = mcpclient.TransportSSE
		case discover.TransportStreamableHTTP:
			l.transport = mcpclient.TransportStreamableHTTP
		}
		for _, k := range slices.Sorted(mapKeysOf(ent.Headers)) {
			v, err := expand("headers."+k, ent.Headers[k])
			if err != nil {
				return mcpclient.Config{}, err
			}
			e.secrets.AddHeader(http.CanonicalHeaderKey(k), v)
			l.headers = append(l.headers, k+"="+v)
		}
		for _, k := range slices.Sorted(mapKeysOf(ent.HeadersFromEnv)) {
			v, ok := os.LookupEnv(ent.HeadersFromEnv[k])
			if !ok {
				return mcpclient.Config{}, usageErr("server %s: header %s is read from env %s, which is not set", safetext.Quote(ent.Name), safetext.Quote(k), safetext.Quote(ent.HeadersFromEnv[k]))
			}
			if strings.EqualFold(k, "Authorization") && !strings.Contains(v, " ") {
				v = "Bearer " + v // Codex bearer_token_env_var holds the token alone
			}
			e.secrets.AddHeader(http.CanonicalHeaderKey(k), v)
			l.headers = append(l.headers, k+"="+v)
		}
	}
	cfg, err := l.config(e, argv)
	if err != nil {
		return cfg, err
	}
	if len(env) > 0 {
		cfg.Env = env
	}
	return cfg, nil
}

func mapKeysOf(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
