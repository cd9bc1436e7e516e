package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// mockServerOptions are mock-server's flags: what it serves, how, and
// where.
type mockServerOptions struct {
	listen, manifestPath, versions, token, anonManifest string
	pageSize                                            int
	ttlMs                                               int64
	legacyOnly, modernOnly, sse, noChallenge            bool
	omitCache, emptyCursor, cursorCycle, admin, stdio   bool
	allowNonLoopback, legacySSE                         bool
}

func (o *mockServerOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to listen on (loopback unless --allow-non-loopback)")
	f.BoolVar(&o.allowNonLoopback, "allow-non-loopback", false, "allow a --listen address beyond this machine")
	f.StringVar(&o.manifestPath, "manifest", "", "tools to serve: a saved tools/list in any form observe reads (SIGHUP reloads it)")
	f.IntVar(&o.pageSize, "page-size", 0, "tools per tools/list page (0: all in one page)")
	f.StringVar(&o.versions, "versions", "", "comma-separated protocol versions, newest first (default "+strings.Join(mockserver.DefaultVersions, ",")+")")
	f.BoolVar(&o.legacyOnly, "legacy-only", false, "speak only the initialize-era revisions (no server/discover)")
	f.BoolVar(&o.modernOnly, "modern-only", false, "speak only the stateless revisions (no initialize)")
	f.BoolVar(&o.sse, "sse", false, "answer with text/event-stream instead of application/json (one compacted data: line per event)")
	f.BoolVar(&o.legacySSE, "legacy-sse", false, "also serve the deprecated HTTP+SSE transport (2024-11-05) at /sse")
	f.StringVar(&o.token, "require-token", "", "require Authorization: Bearer TOKEN (visible in the process list: for tests)")
	f.BoolVar(&o.noChallenge, "no-challenge", false, "answer 401 without WWW-Authenticate")
	f.StringVar(&o.anonManifest, "anonymous-manifest", "", "tools served to requests without credentials, instead of 401")
	f.BoolVar(&o.omitCache, "omit-cache-fields", false, "leave ttlMs and cacheScope out of modern results (non-conformant)")
	f.Int64Var(&o.ttlMs, "ttl-ms", 0, "ttlMs of cacheable modern results")
	f.BoolVar(&o.emptyCursor, "empty-cursor", false, "use \"\" as the cursor of the second page (modern era)")
	f.BoolVar(&o.cursorCycle, "cursor-cycle", false, "make the last page's nextCursor point back at the first page, forever")
	f.BoolVar(&o.admin, "admin", false, "enable POST /admin/tools (loopback callers only) to swap the served tools")
	f.BoolVar(&o.stdio, "stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
}

func newMockServer(e *env) *cobra.Command {
	o := &mockServerOptions{}
	cmd := &cobra.Command{
		Use:   "mock-server [--listen ADDR | --stdio] [--manifest FILE] [flags]",
		Short: "Run the strict mock MCP server (both eras, pagination, auth, live tool swaps) for tests and demos",
		Long: `Serves the tools of --manifest (any form observe reads; the tool bytes are served
exactly) as a strict MCP server: it refuses requests a conformant client would not
send, with the status and JSON-RPC error the specification gives. A manifest that
is a tools/list result may also hold "instructions", "prompts", "resourceTemplates"
and "resources": they are served too (the prompts and resources capabilities
advertised for what is there), byte for byte.

Over HTTP the endpoint is /mcp; the URL is printed on stderr. --legacy-sse also
serves the deprecated HTTP+SSE transport (2024-11-05) at /sse: GET for the stream,
POST to the endpoint its first event names. --listen must be a
loopback address unless --allow-non-loopback. --admin adds POST /admin/tools on
the same listener (loopback callers only): POST a manifest to swap the served
tools and the rest live. SIGHUP reloads --manifest (a rug pull, live). --stdio serves
newline-delimited JSON-RPC on stdin/stdout instead.

Runs until SIGINT/SIGTERM (or, with --stdio, the end of stdin); exit 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := o.config(e, cmd)
			if err != nil {
				return err
			}
			s, err := mockserver.New(cfg)
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			defer s.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go o.reloadOnHUP(ctx, e, s)
			if o.stdio {
				fmt.Fprintf(e.stderr, "mcpdrift: mock-server serving %d tools on stdio (%s)\n", len(s.Tools()), strings.Join(s.SupportedVersions(), ", "))
				if err := s.ServeStdio(ctx, e.stdin, e.stdout); err != nil && !errors.Is(err, context.Canceled) {
					return &exitError{ExitUsage, "mock-server: " + safetext.Inert(err.Error())}
				}
				return nil
			}
			return o.serveHTTP(ctx, e, s)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// config is the mock server's configuration from the flags, its tools
// read from --manifest (and --anonymous-manifest).
func (o *mockServerOptions) config(e *env, cmd *cobra.Command) (mockserver.Config, error) {
	var cfg mockserver.Config
	f := cmd.Flags()
	if o.legacyOnly && o.modernOnly {
		return cfg, usageErr("--legacy-only and --modern-only exclude each other")
	}
	if o.stdio {
		for _, name := range []string{"listen", "admin", "require-token", "sse", "legacy-sse", "allow-non-loopback", "no-challenge", "anonymous-manifest"} {
			if f.Changed(name) {
				return cfg, usageErr("--%s is for HTTP; it cannot be used with --stdio", name)
			}
		}
	}
	if o.token == "" && (o.noChallenge || o.anonManifest != "") {
		return cfg, usageErr("--no-challenge and --anonymous-manifest need --require-token")
	}
	cfg = mockserver.Config{PageSize: o.pageSize, EmptyStringCursor: o.emptyCursor, CursorCycle: o.cursorCycle, OmitCacheFields: o.omitCache,
		TTLMs: o.ttlMs, RequireAuth: o.token, NoChallenge: o.noChallenge, ServerVersion: version()}
	switch {
	case o.legacyOnly:
		cfg.Era = mockserver.LegacyOnly
	case o.modernOnly:
		cfg.Era = mockserver.ModernOnly
	}
	if o.sse {
		cfg.Response = mockserver.SSEResponses
	}
	for _, v := range strings.Split(o.versions, ",") {
		if v = strings.TrimSpace(v); v != "" {
			cfg.SupportedVersions = append(cfg.SupportedVersions, v)
		}
	}
	var err error
	if cfg.Tools, cfg.Surface, err = readMockManifest(e, o.manifestPath); err != nil {
		return cfg, err
	}
	cfg.AnonymousTools, _, err = readMockManifest(e, o.anonManifest)
	return cfg, err
}

// readMockManifest reads the tools of a manifest file, and the surface
// beside them ("": none).
func readMockManifest(e *env, path string) ([]json.RawMessage, *mockserver.Surface, error) {
	switch path {
	case "":
		return nil, nil, nil
	case "-":
		return nil, nil, usageErr("a manifest must be a file (SIGHUP reloads it)")
	}
	src, err := readInput(e, path, DefaultMaxInput)
	if err != nil {
		return nil, nil, err
	}
	tools, sf, err := mockserver.LoadManifest(src)
	if err != nil {
		return nil, nil, inputErr(path, err)
	}
	return tools, sf, nil
}

// reloadOnHUP reloads --manifest on SIGHUP (a rug pull, live) until ctx
// ends.
func (o *mockServerOptions) reloadOnHUP(ctx context.Context, e *env, s *mockserver.Server) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if o.manifestPath == "" {
				fmt.Fprintf(e.stderr, "mcpdrift: SIGHUP: no --manifest to reload\n")
				continue
			}
			if n, err := s.ReloadFile(o.manifestPath); err != nil {
				fmt.Fprintf(e.stderr, "mcpdrift: SIGHUP: reload failed, still serving the previous tools: %s\n", safetext.Inert(err.Error()))
			} else {
				fmt.Fprintf(e.stderr, "mcpdrift: SIGHUP: reloaded %s: now serving %d tools\n", safetext.Escape(o.manifestPath), n)
			}
		}
	}
}

// serveHTTP serves /mcp (and /sse, /admin/tools) on --listen until ctx
// ends.
func (o *mockServerOptions) serveHTTP(ctx context.Context, e *env, s *mockserver.Server) error {
	if !o.allowNonLoopback && !loopbackListen(o.listen) {
		return usageErr("--listen %s is not a loopback address; pass --allow-non-loopback to serve beyond this machine", safetext.Quote(o.listen))
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageErr("--listen: %s", safetext.Inert(err.Error()))
	}
	if !o.allowNonLoopback && !loopbackListen(ln.Addr().String()) {
		ln.Close()
		return usageErr("--listen %s resolved to %s, not a loopback address", safetext.Quote(o.listen), ln.Addr())
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", s)
	if o.legacySSE {
		mux.Handle("/sse", s.LegacySSEHandler())
	}
	if o.admin {
		mux.Handle("/admin/tools", s.AdminHandler())
	}
	srv := &http.Server{Handler: mux, ConnContext: s.ConnContext, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, ErrorLog: log.New(io.Discard, "", 0)}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(e.stderr, "mcpdrift: mock-server serving %d tools at %s/mcp (%s)\n", len(s.Tools()), base, strings.Join(s.SupportedVersions(), ", "))
	if o.legacySSE {
		fmt.Fprintf(e.stderr, "mcpdrift: HTTP+SSE (deprecated) at %s/sse\n", base)
	}
	if o.admin {
		fmt.Fprintf(e.stderr, "mcpdrift: admin: POST a manifest (Content-Type: application/json) to %s/admin/tools to swap the tools\n", base)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return &exitError{ExitUsage, "mock-server: " + safetext.Inert(err.Error())}
		}
	}
	s.Close() // ends never-ending streams so that Shutdown can finish
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	fmt.Fprintf(e.stderr, "mcpdrift: mock-server stopped\n")
	return nil
}

// loopbackListen: an IP literal on the loopback network, or localhost.
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
