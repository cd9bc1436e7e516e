package cli

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/discover"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// How a server of the lock is reached and observed: the lock's source
// (a URL with header placeholders, or a stdio command as typed) becomes
// the live flags drift and pin use, so every bound, every secret rule and
// every transport is the same code.

// observeFlags are the bounds of each observation of a lock command.
type observeFlags struct {
	timeout      time.Duration
	maxListBytes int64
	maxListTools int
	maxResponse  int64
	caFile       string
	rules        string
	suppress     suppressionFlags
	oauth        oauthFlags
}

func (o *observeFlags) AddFlags(cmd *cobra.Command, timeout time.Duration) {
	f := cmd.Flags()
	f.DurationVar(&o.timeout, "timeout", timeout, "the deadline of each server's observation")
	f.Int64Var(&o.maxListBytes, "max-list-bytes", mcpclient.DefaultMaxListBytes, "refuse a listing whose tools/list responses exceed this many bytes in all")
	f.IntVar(&o.maxListTools, "max-list-tools", mcpclient.DefaultMaxListTools, "refuse a listing of more than this many tools in all")
	f.Int64Var(&o.maxResponse, "max-response-bytes", mcpclient.DefaultMaxResponseBytes, "refuse any single response larger than this")
	f.StringVar(&o.caFile, "ca-file", "", "PEM file of a CA to trust in addition to the system roots")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules (default: the built-in table)")
	o.suppress.AddFlags(f)
	o.oauth.AddFlags(f)
}

func (o *observeFlags) live() *liveFlags {
	return &liveFlags{timeout: o.timeout, maxListBytes: o.maxListBytes, maxListTools: o.maxListTools, maxResponse: o.maxResponse, caFile: o.caFile, oauth: o.oauth}
}

// checkBounds refuses, once and before anything runs, bounds that are
// wrong for every server of a run (the checks of liveFlags.config, asked
// of a placeholder URL that is never contacted).
func checkBounds(e *env, base *liveFlags) error {
	probe := *base
	probe.baseURL = "http://127.0.0.1/"
	_, err := probe.config(e, nil)
	return err
}

// sourceOf turns lock add's flags into the lock's source: header values
// that are ${env:NAME} placeholders are stored as written; a literal
// value is sent for this observation but never stored (warned).
func sourceOf(e *env, l *liveFlags, argv []string) (lock.Source, error) {
	var src lock.Source
	switch {
	case l.mcpConfig != "":
		return src, usageErr("lock add reads no --mcp-config: give --url URL or --stdio -- CMD ARGS... (a lock stores how to reach the server)")
	case l.stdio:
		src.Stdio, src.PassEnv = argv, l.passEnv
	default:
		src.URL, src.Transport = l.baseURL, l.transport
	}
	for _, h := range l.headers {
		name, value, ok := strings.Cut(h, "=")
		name = http.CanonicalHeaderKey(strings.TrimSpace(name))
		if !ok || name == "" {
			return src, usageErr("--header must be NAME=VALUE")
		}
		if !lock.HeaderTemplate(value) {
			fmt.Fprintf(e.stderr, "mcpdrift: warning: header %s has a literal value: it is sent for this observation but not stored in the lock; write it as %s so that lock check sends it\n", safetext.Quote(name), safetext.Quote("${env:NAME}"))
			continue
		}
		if src.Headers == nil {
			src.Headers = map[string]string{}
		}
		src.Headers[name] = value
	}
	return src, nil
}

// liveFor is the live flags and the stdio argv that reach s's source,
// with every placeholder expanded from the environment (the values are
// secrets of this run).
func liveFor(e *env, base *liveFlags, src lock.Source) (*liveFlags, []string, error) {
	l := *base
	l.headers, l.passEnv, l.baseURL, l.stdio, l.transport = nil, nil, "", false, ""
	if len(src.Stdio) > 0 {
		l.stdio, l.passEnv = true, src.PassEnv
		argv := make([]string, len(src.Stdio))
		for i, a := range src.Stdio {
			v, vals, err := discover.Expand(a, os.LookupEnv)
			if err != nil {
				return nil, nil, usageErr("argument %d of the stdio command: %s", i+1, err.Error())
			}
			for _, s := range vals {
				e.secrets.Add("an env value in the stdio command", s)
			}
			argv[i] = v
		}
		return &l, argv, nil
	}
	u, err := lockrun.ExpandURL(src.URL, os.LookupEnv, e.secrets)
	if err != nil {
		return nil, nil, err
	}
	l.baseURL, l.transport = u, src.Transport
	if src.Auth == lock.AuthOAuthClientCredentials && (l.oauth.mode == oauthAuto || l.oauth.mode == "") {
		l.oauth.mode = oauthClientCredentials
	}
	for name, tmpl := range src.Headers {
		v, _, err := discover.Expand(tmpl, os.LookupEnv)
		if err != nil {
			return nil, nil, usageErr("header %s: %s", safetext.Quote(name), err.Error())
		}
		l.headers = append(l.headers, name+"="+v)
	}
	return &l, nil, nil
}

// lockConnect reaches a lock's source with base's bounds, CA, OAuth and
// client settings (liveFor, then liveFlags.config): every secret recorded,
// every bound checked as drift and pin check theirs.
func lockConnect(e *env, base *liveFlags) lockrun.Connect {
	return func(src lock.Source) (mcpclient.Config, error) {
		l, argv, err := liveFor(e, base, src)
		if err != nil {
			return mcpclient.Config{}, err
		}
		return l.config(e, argv)
	}
}

// exitCodeOf is an error's exit code: the command's own, a workflow's by
// its kind (runerr: usage 2, inconclusive 3), 2 for a plain error.
func exitCodeOf(err error) int {
	if xe, ok := errors.AsType[*exitError](err); ok {
		return xe.code
	}
	if runerr.KindOf(err) == runerr.Inconclusive {
		return ExitInconclusive
	}
	return ExitUsage
}

// errMessage is an error's message as stderr shows it (a workflow's
// message, runerr's, is escaped where it is made: Inert lets it through).
func errMessage(err error) string {
	if xe, ok := errors.AsType[*exitError](err); ok {
		return xe.msg
	}
	return safetext.Inert(err.Error())
}
