package cli

import (
	"path/filepath"
	"strings"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
)

// targetOf is the target as it is recorded and shown: a URL without user
// info or query values, or "stdio:" and the command line; either with the
// secrets the run sends redacted (a ${env:TOKEN} expanded into an argument
// is recorded as [REDACTED], the same at every run, so the endpoint stays
// stable when the token rotates).
func (e *env) targetOf(cfg mcpclient.Config) (probe.Target, string) {
	if up, ok := behindGateway(cfg.Command); ok {
		// The gateway is transparent: the server behind it is the one
		// observed (a client configuration whose command is the gateway
		// is the drop-in form), and its identity is that server's.
		t, target := e.targetOf(up)
		t.Class = probe.ClassStdio
		return t, target
	}
	if cfg.BaseURL != "" {
		u := e.secrets.String(redact.SanitizeURL(cfg.BaseURL))
		return probe.Target{URL: u, Class: probe.ClassifyTarget(cfg.BaseURL)}, u
	}
	argv := make([]string, len(cfg.Command))
	for i, a := range cfg.Command {
		argv[i] = e.secrets.String(a)
	}
	return probe.Target{Command: argv, Class: probe.ClassStdio}, "stdio:" + shellJoin(argv)
}

// behindGateway reads a stdio command that is mcpdrift's own gateway in
// front of a server (`mcpdrift proxy ... --upstream-url URL` or
// `... --upstream-stdio -- CMD ARGS...`): the server behind it, as a
// config of its own. Any other command, or a gateway whose upstream its
// words do not give (--lock, --mcp-config), is not read.
func behindGateway(argv []string) (mcpclient.Config, bool) {
	if len(argv) < 3 || argv[1] != "proxy" {
		return mcpclient.Config{}, false
	}
	if b := strings.TrimSuffix(filepath.Base(argv[0]), ".exe"); b != "mcpdrift" {
		return mcpclient.Config{}, false
	}
	for i := 2; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "--upstream-url" && i+1 < len(argv):
			return mcpclient.Config{BaseURL: argv[i+1]}, true
		case strings.HasPrefix(a, "--upstream-url="):
			return mcpclient.Config{BaseURL: strings.TrimPrefix(a, "--upstream-url=")}, true
		case a == "--upstream-stdio":
			if i+2 < len(argv) && argv[i+1] == "--" {
				return mcpclient.Config{Command: argv[i+2:]}, true
			}
			return mcpclient.Config{}, false
		case a == "--":
			return mcpclient.Config{}, false
		}
	}
	return mcpclient.Config{}, false
}

// shellJoin writes argv as a POSIX shell would need it typed, so the
// pinned endpoint of a stdio server is unambiguous (an argument with a
// space stays one argument). It is for comparison and display only:
// mcpdrift never runs it.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,%") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// resolvedEndpoint is the stdio endpoint as it ran: each absolute word of
// the command that is, or passes through, a symlink replaced by the file
// it resolves to (a node_modules/.bin/<bin> link → the package's own
// file), written as targetOf writes the endpoint (the run's secrets
// redacted); "" for a URL, or when no word resolves to another path.
// mcpdrift is about to start this command, so its files are this
// machine's to read; a pinned endpoint's never are (schemadiff compares
// the recorded strings only).
func (e *env) resolvedEndpoint(cfg mcpclient.Config) string {
	if up, ok := behindGateway(cfg.Command); ok {
		return e.resolvedEndpoint(up)
	}
	if cfg.BaseURL != "" || len(cfg.Command) == 0 {
		return ""
	}
	argv := make([]string, len(cfg.Command))
	changed := false
	for i, a := range cfg.Command {
		w := a
		if filepath.IsAbs(a) {
			if r, err := filepath.EvalSymlinks(a); err == nil && r != filepath.Clean(a) {
				w, changed = r, true
			}
		}
		argv[i] = e.secrets.String(w)
	}
	if !changed {
		return ""
	}
	return "stdio:" + shellJoin(argv)
}

// liveIdentity is the identity of a live target as this run establishes
// it before the server answers: the endpoint as recorded, what it
// resolved to, and the environment given to a stdio child.
func (e *env) liveIdentity(cfg mcpclient.Config) manifest.Identity {
	_, target := e.targetOf(cfg)
	return manifest.Identity{Endpoint: target, ResolvedEndpoint: e.resolvedEndpoint(cfg), Env: envIdentity(cfg)}
}

// driftIdentities are the identities drift compares (probe.Input.Pinned
// and Now): the one the declared side's snapshot pinned, and the one the
// run established; both nil when the declared side recorded none or the
// server was not listed.
func (e *env) driftIdentities(cfg mcpclient.Config, obs *mcpclient.Observation, pinned *manifest.Identity) (*manifest.Identity, *manifest.Identity) {
	if pinned == nil || obs == nil {
		return nil, nil
	}
	now := e.liveIdentity(cfg)
	if obs.ServerInfo != nil {
		now.ServerName, now.ServerVersion = obs.ServerInfo.Name, obs.ServerInfo.Version
	}
	return pinned, &now
}

func targetClassOf(cfg mcpclient.Config) string {
	if cfg.BaseURL != "" {
		return probe.ClassifyTarget(cfg.BaseURL)
	}
	return probe.ClassStdio
}
