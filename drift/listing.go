package drift

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// The listings of a drift. Every page is parsed once, strictly, by the
// client as it arrives: the primary listing keeps the tools
// (observe.List); the others (a second connection, the credential-stripped
// probe) keep each tool's name and digest and drop every page once it is
// read (listNames); the cloak check lists as another client.

// nameDigests keeps, page by page, each tool's name and tool digest, and
// nothing of the page itself.
type nameDigests struct {
	nd      []manifest.NameDigest // in served order
	seen    map[string]bool
	dup     bool
	invalid []string
	pages   int
}

func (n *nameDigests) add(res jcs.Value) error {
	n.pages++
	tools, _ := res.Get("tools") // an array: the client checked
	for i := range tools.Len() {
		v := tools.Index(i)
		ptr := fmt.Sprintf("/%d/result/tools/%d", 2*n.pages-1, i)
		if v.Kind() != jcs.Object {
			n.invalid = append(n.invalid, safetext.Quote(ptr)+": "+safetext.Escape("a tools entry must be an object, found "+v.Kind().String()))
			continue
		}
		t, err := manifest.NameDigestOf(v, ptr)
		if err != nil {
			msg := safetext.Inert(err.Error())
			if ie, ok := errors.AsType[*manifest.InputError](err); ok {
				msg = safetext.Quote(ie.Pointer) + ": " + safetext.Inert(ie.Msg)
			}
			n.invalid = append(n.invalid, msg)
			continue
		}
		n.record(t.Name, t.ToolDigest)
	}
	return nil
}

// names are the names of nd, in order.
func names(nd []manifest.NameDigest) []string {
	out := make([]string, len(nd))
	for i := range nd {
		out[i] = nd[i].Name
	}
	return out
}

// record keeps one tool's name and digest.
func (n *nameDigests) record(name, digest string) {
	n.nd = append(n.nd, manifest.NameDigest{Name: name, ToolDigest: digest})
	if n.seen[name] {
		n.dup = true
	}
	n.seen[name] = true
}

// listNames runs one tools/list and keeps only what a comparison of tool
// sets needs: the probe.Observation it returns has the tools' names (in
// served order; no definitions) and the manifest digest ("" when names
// repeat, as manifest.ManifestDigestOf).
func listNames(ctx context.Context, cfg mcpclient.Config) (*mcpclient.Observation, *probe.Observation, error) {
	n := &nameDigests{seen: map[string]bool{}}
	cfg.OnToolsPage = func(_ []byte, res jcs.Value) error { return n.add(res) }
	obs, err := mcpclient.ListTools(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if len(n.invalid) > 0 && obs.Completeness == string(manifest.Complete) {
		obs.Completeness = string(manifest.Partial)
	}
	d := ""
	if !n.dup {
		d = manifest.ManifestDigest(n.nd)
	}
	return obs, &probe.Observation{
		Invalid: n.invalid,
		Names:   names(n.nd), Completeness: manifest.Completeness(obs.Completeness), CapReached: obs.CapReached, CursorCycle: obs.CursorCycle,
		Era: obs.Era, Revision: obs.ProtocolRevision, RevisionReason: obs.RevisionReason, MissingCacheFields: obs.MissingCacheFields, ManifestDigest: d,
	}, nil
}

// pending is a listing running beside the primary one.
type pending[T any] struct {
	done   chan struct{}
	cancel context.CancelFunc
	obs    *mcpclient.Observation
	val    T
	err    error
}

// start runs list on its own connection (its own child, over stdio) once
// gate is closed, while the caller lists on the primary one.
func start[T any](ctx context.Context, gate <-chan struct{}, cfg mcpclient.Config, list func(context.Context, mcpclient.Config) (*mcpclient.Observation, T, error)) *pending[T] {
	ctx, cancel := context.WithCancel(ctx)
	p := &pending[T]{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		select {
		case <-gate:
		case <-ctx.Done():
			p.err = ctx.Err()
			return
		}
		p.obs, p.val, p.err = list(ctx, cfg)
	}()
	return p
}

// wait returns the listing's outcome.
func (p *pending[T]) wait() (*mcpclient.Observation, T, error) {
	<-p.done
	p.cancel()
	return p.obs, p.val, p.err
}

// stop abandons the listing (its connection is closed, its child ended)
// and waits until it has ended; after wait, or on nil, it does nothing.
func (p *pending[T]) stop() {
	if p == nil {
		return
	}
	p.cancel()
	<-p.done
}

// finish waits until the listing has ended (nil: at once).
func (p *pending[T]) finish() {
	if p != nil {
		<-p.done
	}
}

// others are the listings a drift makes beside its primary one, each on
// its own connection: a second one for per-connection stability
// (names and digests only), the cloak check (as another client), and the
// credential-stripped probe (names only). Over HTTP they start once the
// primary listing has read its first page, so that a server which holds
// one session per client at a time gives it to the primary listing. Over
// stdio, where each connection is its own child and a server can take a
// second to start, they start at once. Each connection traces through its
// own tracer of d.spans (telemetry.go), so that a finding can name the
// listing it was read from.
type others struct {
	second *pending[*probe.Observation]
	cloak  *pending[*manifest.ToolList]
	anon   *pending[*probe.Observation]
	gate   chan struct{}
	open   sync.Once
	spans  *driftSpans // nil when the run is not traced
}

func startOthers(ctx context.Context, cfg mcpclient.Config, d *run) *others {
	o := &others{gate: make(chan struct{}), spans: d.spans}
	if cfg.BaseURL == "" {
		o.release()
	}
	if !d.opt.SkipSecond {
		cfg2 := cfg
		cfg2.HTTPClient, cfg2.Calls = nil, nil
		cfg2.Tracer = d.spans.conn(connSecond)
		o.second = start(ctx, o.gate, cfg2, listNames)
	}
	if d.cloakAs != "" {
		cfg3 := cfg
		cfg3.HTTPClient, cfg3.Calls = nil, nil
		cfg3.Tracer = d.spans.conn(connCloak)
		cfg3.ClientName, cfg3.ClientVersion, _ = strings.Cut(d.cloakAs, "/")
		if cfg3.BaseURL != "" {
			cfg3.UserAgent = d.cloakAs
		}
		o.cloak = start(ctx, o.gate, cfg3, observe.List)
	}
	if cfg.BaseURL != "" && (len(cfg.Headers) > 0 || cfg.Auth != nil) && !d.opt.SkipAuthProbe {
		anonCfg := cfg
		anonCfg.Headers, anonCfg.Calls, anonCfg.Auth = nil, nil, nil
		anonCfg.Tracer = d.spans.conn(connAnonymous)
		o.anon = start(ctx, o.gate, anonCfg, listNames)
	}
	return o
}

// release lets the other listings start.
func (o *others) release() { o.open.Do(func() { close(o.gate) }) }

// stop ends every other listing.
func (o *others) stop() { stopAll(o.second, o.cloak, o.anon) }

// primary runs the primary listing. When it fails while other listings
// ran beside it, in a way another connection can cause (a server that
// holds one session per client and drops the older one, a stdio server
// that cannot run twice at once: a lock, a port), it is made once more,
// alone, after them, and warning says so. A refusal (401, 403), a
// revision the server does not speak, a listing beyond its bounds or the
// run's deadline are not tried again.
func (o *others) primary(ctx context.Context, cfg mcpclient.Config, list func(context.Context, mcpclient.Config) (*mcpclient.Observation, *manifest.ToolList, error)) (obs *mcpclient.Observation, tl *manifest.ToolList, warning string, err error) {
	pcfg := cfg
	pcfg.Tracer = o.spans.conn(connPrimary)
	pcfg.OnToolsPage = func([]byte, jcs.Value) error {
		o.release()
		return nil
	}
	obs, tl, err = list(ctx, pcfg)
	started := false
	select {
	case <-o.gate:
		started = o.second != nil || o.cloak != nil || o.anon != nil
	default:
	}
	o.release()
	if err == nil || !started || ctx.Err() != nil || !concurrencyMayCause(err) {
		return obs, tl, "", err
	}
	o.second.finish()
	o.cloak.finish()
	o.anon.finish()
	// The retry is the primary connection now: its spans are the ones
	// findings name.
	cfg.Tracer = o.spans.conn(connPrimary)
	obs2, tl2, err2 := list(ctx, cfg)
	if err2 != nil {
		return obs, tl, "", err
	}
	return obs2, tl2, "the listing failed while another connection to the server was open (" + safetext.Inert(err.Error()) + "); made again alone, it succeeded: the server may not hold two connections at once", nil
}

// concurrencyMayCause reports whether err is a failure another open
// connection can cause.
func concurrencyMayCause(err error) bool {
	if _, ok := errors.AsType[*mcpclient.ConfigError](err); ok {
		return false
	}
	if he, ok := errors.AsType[*mcpclient.HTTPError](err); ok && (he.Status == 401 || he.Status == 403) {
		return false
	}
	if pe, ok := errors.AsType[*mcpclient.ProtocolError](err); ok {
		// A JSON-RPC error is the server's answer, except a session it
		// no longer knows (HTTP 404): the one another session can end.
		return pe.HTTPStatus == 404 && pe.Code != mcpwire.CodeUnsupportedProtocolVersion
	}
	if le, ok := errors.AsType[*mcpclient.LimitError](err); ok && (le.Kind == mcpclient.LimitListBytes || le.Kind == mcpclient.LimitListTools) {
		return false
	}
	return !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// stopAll stops each listing.
func stopAll(ps ...interface{ stop() }) {
	for _, p := range ps {
		p.stop()
	}
}

// secondListing is the outcome of the second connection. It ran beside the
// first; a server that cannot hold two sessions (or two children) at once
// can fail it there, so a failure is retried once, alone, now that the
// first has ended (traced as the second connection of spans). A run whose
// deadline passed is not retried.
func secondListing(ctx context.Context, cfg mcpclient.Config, spans *driftSpans, p *pending[*probe.Observation]) (o *probe.Observation, warning string, err error) {
	_, o, err = p.wait()
	if err == nil || ctx.Err() != nil || !concurrencyMayCause(err) {
		return o, "", err
	}
	cfg.HTTPClient, cfg.Calls = nil, nil
	cfg.Tracer = spans.conn(connSecond)
	_, o, err2 := listNames(ctx, cfg)
	if err2 != nil {
		return nil, "", err
	}
	return o, "the second connection failed while the first was open (" + safetext.Inert(err.Error()) + "); made again after the first had ended, it listed, and was compared", nil
}
