package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
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

func (o *observeFlags) register(cmd *cobra.Command, timeout time.Duration) {
	f := cmd.Flags()
	f.DurationVar(&o.timeout, "timeout", timeout, "the deadline of each server's observation")
	f.Int64Var(&o.maxListBytes, "max-list-bytes", mcpclient.DefaultMaxListBytes, "refuse a listing whose tools/list responses exceed this many bytes in all")
	f.IntVar(&o.maxListTools, "max-list-tools", mcpclient.DefaultMaxListTools, "refuse a listing of more than this many tools in all")
	f.Int64Var(&o.maxResponse, "max-response-bytes", mcpclient.DefaultMaxResponseBytes, "refuse any single response larger than this")
	f.StringVar(&o.caFile, "ca-file", "", "PEM file of a CA to trust in addition to the system roots")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules (default: the built-in table)")
	o.suppress.register(f)
	o.oauth.register(f)
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
			v, vals, err := expandPlaceholders(a, os.LookupEnv)
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
	u, err := expandURLSegments(e, src.URL)
	if err != nil {
		return nil, nil, err
	}
	l.baseURL, l.transport = u, src.Transport
	if src.Auth == lock.AuthOAuthClientCredentials && (l.oauth.mode == oauthAuto || l.oauth.mode == "") {
		l.oauth.mode = oauthClientCredentials
	}
	for name, tmpl := range src.Headers {
		v, _, err := expandPlaceholders(tmpl, os.LookupEnv)
		if err != nil {
			return nil, nil, usageErr("header %s: %s", safetext.Quote(name), err.Error())
		}
		l.headers = append(l.headers, name+"="+v)
	}
	return &l, nil, nil
}

// expandURLSegments expands the ${env:NAME} path segments of a lock's URL
// (lock.URLSegmentTemplate) from the environment, each value path-escaped
// into its segment (a '/' in it stays in the segment), in the URL as
// written: every other byte stays as it was (a %2F in another segment
// too). Each value is a secret of the run, recorded before anything can
// print it. A variable that is not set, a value too short to be redacted
// (redact.MinLen: the URL is printed in every report), or a placeholder
// that is not written as ${env:NAME} between slashes is a usage error.
func expandURLSegments(e *env, raw string) (string, error) {
	if !strings.Contains(raw, "${") && !strings.Contains(raw, "%7B") && !strings.Contains(raw, "%7b") {
		return raw, nil
	}
	out, err := redact.MapPathSegments(raw, func(written, decoded string) (string, error) {
		switch {
		case !strings.Contains(decoded, "${"):
			return written, nil
		case written != decoded || !lock.URLSegmentTemplate(written):
			return "", usageErr("a placeholder in the url is a whole path segment written as ${env:NAME}, /${env:NAME}/, not escaped")
		}
		name := strings.TrimSuffix(strings.TrimPrefix(written, "${env:"), "}")
		v, ok := os.LookupEnv(name)
		switch {
		case !ok || v == "":
			return "", usageErr("the url's path segment ${env:%s} is not set: export %s", name, name)
		case len(v) < redact.MinLen:
			return "", usageErr("the url's path segment ${env:%s} is shorter than %d bytes: it cannot be told apart from other text, so it would be written wherever the url is", name, redact.MinLen)
		}
		// Recorded in every form it can take in the URL sent and in what
		// is written about it (escaped again by Go when the URL's path is
		// not a valid encoding).
		e.secrets.AddPathValue("the value of env "+name+" in the url", v)
		return url.PathEscape(v), nil
	})
	if err != nil {
		return "", err
	}
	if _, err := url.Parse(out); err != nil {
		return "", usageErr("the lock's url is not a URL once its placeholders are expanded")
	}
	return out, nil
}

// observation is one live listing of a lock's server.
type observation struct {
	target string
	obs    *mcpclient.Observation
	tools  *manifest.ToolList
	served *lock.Served
}

// observeSource lists the server at src and builds what a check or an
// approval reads: the observed record under the lock's server name and
// the identity the listing established (the publisher key is the
// configured one: a listing cannot establish it).
func observeSource(ctx context.Context, e *env, base *liveFlags, name string, src lock.Source, clientCaps []byte, publisherKey string, c *classify.Classifier, tr mcptrace.Tracer, surf *mcpclient.SurfaceOptions) (*observation, error) {
	l, argv, err := liveFor(e, base, src)
	if err != nil {
		return nil, err
	}
	cfg, err := l.config(e, argv)
	if err != nil {
		return nil, err
	}
	if clientCaps != nil {
		cfg.ClientCapabilities = clientCaps
	}
	cfg.Tracer, cfg.Surface = tr, surf
	o, reflected, err := observeConfig(ctx, e, cfg, l.timeout, name, publisherKey, c)
	if err != nil {
		return o, err
	}
	if reflected > 0 {
		return o, &exitError{ExitInconclusive, fmt.Sprintf("%s reflects a credential this run sent into its tool list (%d place(s)): it is redacted from every output, and nothing from this listing is approved or trusted. Rotate the credential and fix the server", safetext.Quote(o.target), reflected)}
	}
	return o, nil
}

// observeConfig is the one listing of every lock command (check, review,
// approve, add, add --from-inventory): it lists the server cfg reaches
// within timeout and builds the observed record under the lock's server
// name and the identity the listing established (the publisher key is
// the configured one: a listing cannot establish it). reflected is how
// many places of the list carry a secret this run sent; the caller says
// what that means (a pin refuses, a check does not trust it). On an error
// the observation holds the target alone.
func observeConfig(ctx context.Context, e *env, cfg mcpclient.Config, timeout time.Duration, name, publisherKey string, c *classify.Classifier) (*observation, int, error) {
	_, target := e.targetOf(cfg)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	obs, tl, err := listFull(ctx, cfg)
	if err != nil {
		return &observation{target: target}, 0, liveError(target, err)
	}
	id := e.liveIdentity(cfg)
	id.PublisherKey = publisherKey
	if obs.ServerInfo != nil {
		id.ServerName, id.ServerVersion = obs.ServerInfo.Name, obs.ServerInfo.Version
	}
	o := &observation{target: target, obs: obs, tools: tl}
	o.served = &lock.Served{Observed: manifest.BuildObserved(name, tl, manifest.Completeness(obs.Completeness), c), Tools: tl.Tools, Identity: id, Surface: obs.Surface}
	return o, len(reflections(e, tl, obs)) + len(surfaceReflections(e, obs.Surface)), nil
}

// complete refuses a listing that cannot be approved: a tool that was
// not seen would read as removed.
func (o *observation) complete() error {
	switch {
	case o.obs.CapReached, o.obs.CursorCycle, o.tools.Completeness != manifest.Complete:
		return &exitError{ExitInconclusive, fmt.Sprintf("the listing of %s was %s, so nothing is approved from it: a tool that was not seen would be taken as removed", safetext.Quote(o.target), orUnknown(string(o.tools.Completeness)))}
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "not complete"
	}
	return s
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
