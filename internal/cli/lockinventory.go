package cli

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/discover"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// lock add --from-inventory FILE [SERVER...|--all]: the servers an
// inventory (mcpdrift discover) lists, each read again from its
// configuration file (the inventory holds no value), observed once with
// what the file says, and pinned under its name. What the lock stores is
// a source without a value:
//
//   - a header whose value is a placeholder (${env:NAME}, ${NAME}, or one
//     after a scheme word, "Bearer ${NAME}") is stored as ${env:NAME}; a
//     header read from an environment variable (Codex env_http_headers,
//     bearer_token_env_var) likewise; a literal value is sent this once and
//     not stored (warned);
//   - a stdio server's command and args as the file has them (placeholders
//     kept, expanded at every observation), and the names of its env
//     entries as pass_env: lock check passes them from its own environment,
//     so a literal value in the file must be exported there (warned);
//   - a URL with user info or query values is refused, as lock add refuses
//     it.
//
// A stdio server runs only with --allow-config-commands, the rule of
// --mcp-config and scan --inventory. It is all or nothing: every server is
// tried and each refusal said on stderr, and when any is refused nothing
// is written — exit 2 when one was bad input, else 3 when one could not be
// observed.

// placeholderValue matches a header value that is one placeholder,
// optionally after a scheme word: what the lock can store as ${env:NAME}.
var placeholderValue = regexp.MustCompile(`^(?:([A-Za-z][A-Za-z0-9-]*) )?\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}$`)

// inventorySource is the lock source of an inventory entry, and what
// could not be stored.
func inventorySource(ent *discover.Entry) (lock.Source, []string) {
	var src lock.Source
	var warn []string
	if ent.Command != "" {
		src.Stdio = append([]string{ent.Command}, ent.Args...)
		names := slices.Clone(ent.EnvPass)
		for _, k := range slices.Sorted(mapKeysOf(ent.Env)) {
			names = append(names, k)
			if m := placeholderValue.FindStringSubmatch(ent.Env[k]); m == nil || m[1] != "" || m[2] != k {
				warn = append(warn, fmt.Sprintf("env %s has a value in the configuration file: the lock passes %s from the environment lock check runs in, so export it there (the value is not stored)", safetext.Quote(k), safetext.Quote(k)))
			}
		}
		slices.Sort(names)
		src.PassEnv = slices.Compact(names)
		return src, warn
	}
	src.URL = ent.URL
	switch ent.Transport {
	case discover.TransportSSE:
		src.Transport = "sse"
	case discover.TransportStreamableHTTP:
		src.Transport = "streamable-http"
	}
	put := func(k, v string) {
		if src.Headers == nil {
			src.Headers = map[string]string{}
		}
		src.Headers[http.CanonicalHeaderKey(k)] = v
	}
	for _, k := range slices.Sorted(mapKeysOf(ent.Headers)) {
		m := placeholderValue.FindStringSubmatch(ent.Headers[k])
		if m == nil {
			warn = append(warn, fmt.Sprintf("header %s has a literal value in the configuration file: it is sent for this observation but not stored; write it as ${env:NAME} so that lock check sends it", safetext.Quote(k)))
			continue
		}
		v := "${env:" + m[2] + "}"
		if m[1] != "" {
			v = m[1] + " " + v
		}
		put(k, v)
	}
	for _, k := range slices.Sorted(mapKeysOf(ent.HeadersFromEnv)) {
		v := "${env:" + ent.HeadersFromEnv[k] + "}"
		if strings.EqualFold(k, "Authorization") {
			v = "Bearer " + v // as the observation sends it (fleet.go)
		}
		put(k, v)
	}
	return src, warn
}

// addFromInventory pins the selected servers of an inventory into lf.
func addFromInventory(e *env, lf *lockFile, o *lockAddOptions, names []string, c *classify.Classifier, a lock.Approval) error {
	invPath, all, allowConfig, base := o.fromInventory, o.all, o.live.allowConfig, &o.live
	if len(names) == 0 && !all {
		return usageErr("name the inventory's servers to add (their name, or client:scope:name), or give --all")
	}
	if len(names) > 0 && all {
		return usageErr("give server names or --all, not both")
	}
	src, err := readInput(e, invPath, DefaultMaxInput)
	if err != nil {
		return err
	}
	inv, err := discover.ReadInventory(src, invPath)
	if err != nil {
		return usageErr("%s", safetext.Inert(err.Error()))
	}
	var picked []discover.Server
	for _, s := range inv.Servers {
		if s.Disabled && !slices.Contains(names, s.Name) && !slices.Contains(names, inventoryName(s)) {
			continue
		}
		if all || slices.Contains(names, s.Name) || slices.Contains(names, inventoryName(s)) {
			picked = append(picked, s)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(picked, func(s discover.Server) bool { return s.Name == n || inventoryName(s) == n }) {
			return usageErr("the inventory %s has no server %s", safetext.Quote(invPath), safetext.Quote(n))
		}
	}
	byName := map[string][]discover.Server{}
	for _, s := range picked {
		byName[s.Name] = append(byName[s.Name], s)
	}
	for n, ss := range byName {
		if len(ss) > 1 {
			var which []string
			for _, s := range ss {
				which = append(which, safetext.Quote(inventoryName(s)))
			}
			return usageErr("the inventory lists server %s %d times (%s): name the one to add as client:scope:name", safetext.Quote(n), len(ss), strings.Join(which, ", "))
		}
	}
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	opt := discover.Options{Home: home, Dirs: []string{cwd}}
	ff := &fleetFlags{timeout: base.timeout, maxListBytes: base.maxListBytes, maxListTools: base.maxListTools, maxResponse: base.maxResponse, caFile: base.caFile}
	refused, added, code := 0, 0, ExitInconclusive
	failCode := func(name, why string, c int) {
		refused++
		if c == ExitUsage {
			code = ExitUsage
		}
		fmt.Fprintf(e.stderr, "mcpdrift: server %s not added: %s\n", safetext.Quote(name), why)
	}
	fail := func(name, why string) { failCode(name, why, ExitUsage) }
	for _, s := range picked {
		switch {
		case !lock.ValidName(s.Name):
			fail(s.Name, "its name is not a lock server name (letters, digits, '.', '_', '-')")
			continue
		case lf.lock.Server(s.Name) != nil:
			fail(s.Name, "it is already in the lock")
			continue
		}
		ent, err := discover.LoadEntry(s, opt)
		if err != nil {
			fail(s.Name, safetext.Inert(err.Error()))
			continue
		}
		if ent.Command != "" && !allowConfig {
			fail(s.Name, "it is a command read from "+safetext.Quote(s.File)+", which would run code on this machine; pass --allow-config-commands if you mean it")
			continue
		}
		source, warns := inventorySource(ent)
		// Refused before anything is sent: a source the lock could not
		// store (a literal key in the url, say).
		if err := lock.CheckSource(source); err != nil {
			fail(s.Name, safetext.Inert(err.Error()))
			continue
		}
		cfg, err := ff.entryConfig(e, ent)
		if err != nil {
			fail(s.Name, errMessage(err))
			continue
		}
		r, err := lockrun.Add(e.context(), lockrun.AddOptions{Lock: lf.lock, Name: s.Name, Source: source, Server: cfg, Profile: o.profile, AutoApprove: o.autoApprove,
			Classifier: c, Secrets: e.secrets, Timeout: base.timeout, Approval: a,
			Vouch: manifest.Vouch{Suppressions: func() (*manifest.Suppressions, error) { return base.suppress.load(e) }, Today: today()}})
		if err != nil {
			failCode(s.Name, errMessage(err), exitCodeOf(err))
			continue
		}
		for _, x := range r.Acknowledged {
			fmt.Fprintf(e.stderr, "mcpdrift: %s\n", x)
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(e.stderr, "mcpdrift: warning: %s\n", w)
		}
		srv, target := r.Server, r.Listing.Target
		for _, w := range warns {
			fmt.Fprintf(e.stderr, "mcpdrift: warning: server %s: %s\n", safetext.Quote(s.Name), w)
		}
		fmt.Fprintf(e.stderr, "mcpdrift: pinned %s: %d tools from %s (%s)\n", safetext.Quote(s.Name), len(srv.Tools), safetext.Quote(target), safetext.Quote(s.File))
		added++
	}
	if refused > 0 {
		return &exitError{code, fmt.Sprintf("%d of %d server(s) of %s could not be added (each said above): nothing was written", refused, len(picked), safetext.Quote(invPath))}
	}
	if added == 0 {
		return usageErr("the inventory %s has no server to add", safetext.Quote(invPath))
	}
	return lf.save(e)
}
