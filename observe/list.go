package observe

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// List runs one tools/list and keeps its tools: every page is parsed
// once, strictly, by the client as it arrives, and read into the list
// (after cfg's own OnToolsPage). An entry that is not a readable tool is
// kept aside (ToolList.Invalid) and makes a complete listing partial.
func List(ctx context.Context, cfg mcpclient.Config) (*mcpclient.Observation, *manifest.ToolList, error) {
	return ListInto(ctx, cfg, manifest.NewPageList(manifest.ParseOptions{SkipInvalidTools: true}))
}

// ListInto is List reading the pages into pl, whose tools a caller may
// look at once the tools are listed (from Config.Surface's ResourcesIf).
func ListInto(ctx context.Context, cfg mcpclient.Config, pl *manifest.PageList) (*mcpclient.Observation, *manifest.ToolList, error) {
	prev := cfg.OnToolsPage
	cfg.OnToolsPage = func(req []byte, res jcs.Value) error {
		if prev != nil {
			if err := prev(req, res); err != nil {
				return err
			}
		}
		if err := pl.Add(res); err != nil {
			return fmt.Errorf("the server's tools/list could not be read: %w", err)
		}
		return nil
	}
	obs, err := mcpclient.ListTools(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return obs, ListOf(pl, obs), nil
}

// ListOf is the list a listing read, its completeness the client's: an
// unreadable entry makes a complete listing partial (what was read is a
// subset of what was served, and nobody can compare the rest).
func ListOf(pl *manifest.PageList, obs *mcpclient.Observation) *manifest.ToolList {
	tl := pl.List(manifest.Completeness(obs.Completeness), Reason(obs))
	if len(tl.Invalid) > 0 && obs.Completeness == string(manifest.Complete) {
		obs.Completeness = string(manifest.Partial)
		tl.Completeness = manifest.Partial
	}
	return tl
}

// Reason says how the client established a listing's completeness.
func Reason(obs *mcpclient.Observation) string {
	switch {
	case obs.CursorCycle:
		return "a nextCursor repeated: the server's cursor chain cycles"
	case obs.CapReached:
		return fmt.Sprintf("the page cap was reached after %d pages: later pages were not observed", obs.Pages)
	case obs.Completeness != string(manifest.Complete):
		return "the last page has a nextCursor that was not followed: later pages were not observed"
	}
	return fmt.Sprintf("%d pages; the listing started without a cursor and ended without nextCursor", obs.Pages)
}

// Failed is the error of a listing of target that failed: a configuration
// the client refuses is runerr.Usage; a server that cannot be reached or
// that does not answer usably is runerr.Inconclusive. mcpclient's
// messages are escaped already (safetext.Inert only guards that).
func Failed(target string, err error) error {
	if ce, ok := errors.AsType[*mcpclient.ConfigError](err); ok {
		return runerr.Usagef("%s", safetext.Inert(ce.Msg))
	}
	return runerr.Inconclusivef("cannot observe %s: %s", safetext.Quote(target), safetext.Inert(err.Error()))
}

// RecordSecrets records in set every secret cfg sends: header values (and
// the credentials inside them), the URL's user info and query values, the
// values of the variables a stdio child is passed or given. It returns
// the labels of those too short to redact (a caller says so).
func RecordSecrets(cfg mcpclient.Config, set *redact.Set) (short []string) {
	for name, vs := range cfg.Headers {
		for _, v := range vs {
			short = append(short, set.AddHeader(name, v)...)
		}
	}
	short = append(short, set.AddURL(cfg.BaseURL)...)
	for _, n := range cfg.PassEnv {
		if v, ok := os.LookupEnv(n); ok && !set.Add("the value of env "+n+" passed to the stdio server", v) {
			short = append(short, "the value of env "+n)
		}
	}
	for n, v := range cfg.Env {
		if !set.Add("the value of env "+n+" of the stdio server", v) {
			short = append(short, "the value of env "+n)
		}
	}
	return short
}

// Reflections lists where a served list, and the identity the server
// reported, carry a secret of secrets (the values the run sent).
func Reflections(secrets *redact.Set, tools []manifest.Tool, obs *mcpclient.Observation) []probe.Reflection {
	return append(ToolReflections(secrets, tools), IdentityReflections(secrets, obs)...)
}

// ToolReflections lists where tools carry a secret of secrets.
func ToolReflections(secrets *redact.Set, tools []manifest.Tool) []probe.Reflection {
	if secrets.Empty() {
		return nil
	}
	var out []probe.Reflection
	for i := range tools {
		if label, ptr := secrets.FindInValue(tools[i].Value()); label != "" {
			out = append(out, probe.Reflection{Tool: tools[i].Name, Pointer: ptr, Source: label})
		}
	}
	return out
}

// IdentityReflections lists a secret of secrets in the server's reported
// identity (serverInfo).
func IdentityReflections(secrets *redact.Set, obs *mcpclient.Observation) []probe.Reflection {
	if secrets.Empty() || obs == nil || obs.ServerInfo == nil {
		return nil
	}
	if label := secrets.Find(obs.ServerInfo.Name + "\x00" + obs.ServerInfo.Version); label != "" {
		return []probe.Reflection{{Source: label}}
	}
	return nil
}
