package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Options is a gateway run: its configuration, where its downstream is
// served, and where a new baseline comes from.
type Options struct {
	Config Config
	// Listen, when set, serves the downstream over Streamable HTTP at
	// Listen's /mcp (port 0: a free port), bounded by HTTP; otherwise the
	// downstream is one stdio session on Stdin and Stdout.
	Listen        string
	HTTP          HTTPOptions
	Stdin         io.Reader
	Stdout        io.Writer
	MetricsListen string // when set, Config.Metrics is served at its /metrics
	// Reload, when set, is asked for the baseline again each time Reloads
	// gives a reason. A baseline it cannot give (an error) is put in force
	// as an invalid one: the server is withheld until a valid one is
	// loaded (fail-closed: the operator replaced the approvals).
	Reload  func() (*decide.Baseline, error)
	Reloads <-chan string
	// OnReload is told what each reload put in force, and why it ran.
	OnReload func(why string, b *decide.Baseline)
	// OnListening is told each address once the gateway listens on it:
	// "mcp" (the downstream's /mcp) and "metrics".
	OnListening func(what string, addr net.Addr)
}

// Run runs the gateway until ctx ends (or, over stdio, until the
// downstream closes): it reloads the baseline when asked, serves the
// metrics and the downstream, and shuts the HTTP server down gracefully
// (5 s). A configuration the gateway refuses, or an address it cannot
// listen on, is a runerr.Usage error; a server that stops serving for
// another reason, runerr.Inconclusive.
func Run(ctx context.Context, opt Options) error {
	g, err := New(opt.Config)
	if err != nil {
		return runerr.Usagef("%s", safetext.Inert(err.Error()))
	}
	defer g.Close()
	if opt.Reload != nil && opt.Reloads != nil {
		go g.reloadOn(ctx, opt.Reloads, opt.Reload, opt.OnReload)
	}
	if opt.MetricsListen != "" {
		ln, err := net.Listen("tcp", opt.MetricsListen)
		if err != nil {
			return runerr.Usagef("--metrics-listen: %s", safetext.Inert(err.Error()))
		}
		ms := &http.Server{Handler: opt.Config.Metrics.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go ms.Serve(ln)
		defer ms.Close()
		listening(opt, "metrics", ln.Addr())
	}
	if opt.Listen == "" {
		return g.ServeStdio(ctx, opt.Stdin, opt.Stdout)
	}
	ln, err := net.Listen("tcp", opt.Listen)
	if err != nil {
		return runerr.Usagef("--listen: %s", safetext.Inert(err.Error()))
	}
	hs := g.Server(opt.HTTP)
	// Ready (/healthz) without waiting for an agent: a readiness probe
	// keeps an unready replica from its agents.
	go g.Observe(ctx)
	listening(opt, "mcp", ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return runerr.Inconclusivef("mcpdrift proxy: %s", safetext.Inert(err.Error()))
	}
	return nil
}

func listening(opt Options, what string, addr net.Addr) {
	if opt.OnListening != nil {
		opt.OnListening(what, addr)
	}
}

// reloadOn puts in force the baseline load gives each time reloads gives
// a reason, until ctx ends; a baseline load cannot give withholds the
// server (InvalidBaseline).
func (g *Gateway) reloadOn(ctx context.Context, reloads <-chan string, load func() (*decide.Baseline, error), told func(string, *decide.Baseline)) {
	for {
		select {
		case <-ctx.Done():
			return
		case why := <-reloads:
			b, err := load()
			if err != nil {
				b = decide.InvalidBaseline(g.cfg.ServerID, "it cannot be read: "+safetext.Inert(err.Error()))
			}
			_ = g.Reload(b) // an invalid one too: it withholds the server
			if told != nil {
				told(why, b)
			}
		}
	}
}
