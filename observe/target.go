package observe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
)

// Target is the target as it is recorded and shown: a URL without user
// info or query values, or "stdio:" and the command line; either with the
// secrets of the run redacted (a ${env:TOKEN} expanded into an argument is
// recorded as [REDACTED], the same at every run, so the endpoint stays
// stable when the token rotates). secrets may be nil.
func Target(cfg mcpclient.Config, secrets *redact.Set) (probe.Target, string) {
	if up, ok := behindGateway(cfg.Command); ok {
		// The gateway is transparent: the server behind it is the one
		// observed (a client configuration whose command is the gateway
		// is the drop-in form), and its identity is that server's.
		t, target := Target(up, secrets)
		t.Class = probe.ClassStdio
		return t, target
	}
	if cfg.BaseURL != "" {
		u := secrets.String(redact.SanitizeURL(cfg.BaseURL))
		return probe.Target{URL: u, Class: probe.ClassifyTarget(cfg.BaseURL)}, u
	}
	argv := make([]string, len(cfg.Command))
	for i, a := range cfg.Command {
		argv[i] = secrets.String(a)
	}
	return probe.Target{Command: argv, Class: probe.ClassStdio}, "stdio:" + ShellJoin(argv)
}

// TargetClass is the class of the target cfg reaches (probe.ClassifyTarget,
// or stdio).
func TargetClass(cfg mcpclient.Config) string {
	if cfg.BaseURL != "" {
		return probe.ClassifyTarget(cfg.BaseURL)
	}
	return probe.ClassStdio
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

// ShellJoin writes argv as a POSIX shell would need it typed, so the
// pinned endpoint of a stdio server is unambiguous (an argument with a
// space stays one argument). It is for comparison and display only:
// mcpdrift never runs it.
func ShellJoin(argv []string) string {
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

// ResolvedEndpoint is the stdio endpoint as it ran: each absolute word of
// the command that is, or passes through, a symlink replaced by the file
// it resolves to (a node_modules/.bin/<bin> link → the package's own
// file), written as Target writes the endpoint (the run's secrets
// redacted); "" for a URL, or when no word resolves to another path.
// mcpdrift is about to start this command, so its files are this
// machine's to read; a pinned endpoint's never are (schemadiff compares
// the recorded strings only).
func ResolvedEndpoint(cfg mcpclient.Config, secrets *redact.Set) string {
	if up, ok := behindGateway(cfg.Command); ok {
		return ResolvedEndpoint(up, secrets)
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
		argv[i] = secrets.String(w)
	}
	if !changed {
		return ""
	}
	return "stdio:" + ShellJoin(argv)
}

// Identity is the identity of a live target as a run establishes it
// before the server answers: the endpoint as recorded, what it resolved
// to, and the environment given to a stdio child.
func Identity(cfg mcpclient.Config, secrets *redact.Set) manifest.Identity {
	_, target := Target(cfg, secrets)
	return manifest.Identity{Endpoint: target, ResolvedEndpoint: ResolvedEndpoint(cfg, secrets), Env: EnvIdentity(cfg)}
}

// EnvIdentity records the environment a stdio server was given beyond the
// minimal one — the config's env and the PassEnv variables — as names and
// value digests, sorted: env vars can change the tool list (nil for a
// URL).
func EnvIdentity(cfg mcpclient.Config) *[]manifest.EnvEntry {
	if len(cfg.Command) == 0 {
		return nil
	}
	vals := map[string]string{}
	for _, n := range cfg.PassEnv {
		if v, ok := os.LookupEnv(n); ok {
			vals[n] = v
		}
	}
	for n, v := range cfg.Env {
		vals[n] = v
	}
	out := []manifest.EnvEntry{}
	for n, v := range vals {
		out = append(out, manifest.EnvEntry{Name: n, Digest: manifest.EnvDigest(n, v)})
	}
	slices.SortFunc(out, func(a, b manifest.EnvEntry) int { return strings.Compare(a.Name, b.Name) })
	return &out
}
