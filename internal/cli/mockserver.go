package cli

import (
	"context"
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

func newMockServer(e *env) *cobra.Command {
	var (
		listen, manifestPath, versions, token, anonManifest string
		pageSize                                            int
		ttlMs                                               int64
		legacyOnly, modernOnly, sse, noChallenge            bool
		omitCache, emptyCursor, cursorCycle, admin, stdio   bool
		allowNonLoopback, legacySSE                         bool
	)
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
			f := cmd.Flags()
			if legacyOnly && modernOnly {
				return usageErr("--legacy-only and --modern-only exclude each other")
			}
			if stdio {
				for _, name := range []string{"listen", "admin", "require-token", "sse", "legacy-sse", "allow-non-loopback", "no-challenge", "anonymous-manifest"} {
					if f.Changed(name) {
						return usageErr("--%s is for HTTP; it cannot be used with --stdio", name)
					}
				}
			}
			if token == "" && (noChallenge || anonManifest != "") {
				return usageErr("--no-challenge and --anonymous-manifest need --require-token")
			}
			cfg := mockserver.Config{
				PageSize:          pageSize,
				EmptyStringCursor: emptyCursor,
				CursorCycle:       cursorCycle,
				OmitCacheFields:   omitCache,
				TTLMs:             ttlMs,
				RequireAuth:       token,
				NoChallenge:       noChallenge,
				ServerVersion:     version(),
			}
			switch {
			case legacyOnly:
				cfg.Era = mockserver.LegacyOnly
			case modernOnly:
				cfg.Era = mockserver.ModernOnly
			}
			if sse {
				cfg.Response = mockserver.SSEResponses
			}
			if versions != "" {
				for _, v := range strings.Split(versions, ",") {
					if v = strings.TrimSpace(v); v != "" {
						cfg.SupportedVersions = append(cfg.SupportedVersions, v)
					}
				}
			}
			load := func(path string) ([]byte, error) {
				if path == "-" {
					return nil, usageErr("a manifest must be a file (SIGHUP reloads it)")
				}
				return readInput(e, path, DefaultMaxInput)
			}
			if manifestPath != "" {
				src, err := load(manifestPath)
				if err != nil {
					return err
				}
				if cfg.Tools, cfg.Surface, err = mockserver.LoadManifest(src); err != nil {
					return inputErr(manifestPath, err)
				}
			}
			if anonManifest != "" {
				src, err := load(anonManifest)
				if err != nil {
					return err
				}
				if cfg.AnonymousTools, err = mockserver.LoadTools(src); err != nil {
					return inputErr(anonManifest, err)
				}
			}
			s, err := mockserver.New(cfg)
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			defer s.Close()

			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-hup:
						if manifestPath == "" {
							fmt.Fprintf(e.stderr, "mcpdrift: SIGHUP: no --manifest to reload\n")
							continue
						}
						if n, err := s.ReloadFile(manifestPath); err != nil {
							fmt.Fprintf(e.stderr, "mcpdrift: SIGHUP: reload failed, still serving the previous tools: %s\n", safetext.Inert(err.Error()))
						} else {
							fmt.Fprintf(e.stderr, "mcpdrift: SIGHUP: reloaded %s: now serving %d tools\n", safetext.Escape(manifestPath), n)
						}
					}
				}
			}()

			ntools := len(s.Tools())
			if stdio {
				fmt.Fprintf(e.stderr, "mcpdrift: mock-server serving %d tools on stdio (%s)\n", ntools, strings.Join(s.SupportedVersions(), ", "))
				if err := s.ServeStdio(ctx, e.stdin, e.stdout); err != nil && !errors.Is(err, context.Canceled) {
					return &exitError{ExitUsage, "mock-server: " + safetext.Inert(err.Error())}
				}
				return nil
			}

			if !allowNonLoopback && !loopbackListen(listen) {
				return usageErr("--listen %s is not a loopback address; pass --allow-non-loopback to serve beyond this machine", safetext.Quote(listen))
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return usageErr("--listen: %s", safetext.Inert(err.Error()))
			}
			if !allowNonLoopback && !loopbackListen(ln.Addr().String()) {
				ln.Close()
				return usageErr("--listen %s resolved to %s, not a loopback address", safetext.Quote(listen), ln.Addr())
			}
			mux := http.NewServeMux()
			mux.Handle("/mcp", s)
			if legacySSE {
				mux.Handle("/sse", s.LegacySSEHandler())
			}
			if admin {
				mux.Handle("/admin/tools", s.AdminHandler())
			}
			srv := &http.Server{
				Handler:           mux,
				ConnContext:       s.ConnContext,
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       30 * time.Second,
				IdleTimeout:       2 * time.Minute,
				MaxHeaderBytes:    64 << 10,
				ErrorLog:          log.New(io.Discard, "", 0),
			}
			base := "http://" + ln.Addr().String()
			fmt.Fprintf(e.stderr, "mcpdrift: mock-server serving %d tools at %s/mcp (%s)\n", ntools, base, strings.Join(s.SupportedVersions(), ", "))
			if legacySSE {
				fmt.Fprintf(e.stderr, "mcpdrift: HTTP+SSE (deprecated) at %s/sse\n", base)
			}
			if admin {
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
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:0", "address to listen on (loopback unless --allow-non-loopback)")
	f.BoolVar(&allowNonLoopback, "allow-non-loopback", false, "allow a --listen address beyond this machine")
	f.StringVar(&manifestPath, "manifest", "", "tools to serve: a saved tools/list in any form observe reads (SIGHUP reloads it)")
	f.IntVar(&pageSize, "page-size", 0, "tools per tools/list page (0: all in one page)")
	f.StringVar(&versions, "versions", "", "comma-separated protocol versions, newest first (default "+strings.Join(mockserver.DefaultVersions, ",")+")")
	f.BoolVar(&legacyOnly, "legacy-only", false, "speak only the initialize-era revisions (no server/discover)")
	f.BoolVar(&modernOnly, "modern-only", false, "speak only the stateless revisions (no initialize)")
	f.BoolVar(&sse, "sse", false, "answer with text/event-stream instead of application/json (one compacted data: line per event)")
	f.BoolVar(&legacySSE, "legacy-sse", false, "also serve the deprecated HTTP+SSE transport (2024-11-05) at /sse")
	f.StringVar(&token, "require-token", "", "require Authorization: Bearer TOKEN (visible in the process list: for tests)")
	f.BoolVar(&noChallenge, "no-challenge", false, "answer 401 without WWW-Authenticate")
	f.StringVar(&anonManifest, "anonymous-manifest", "", "tools served to requests without credentials, instead of 401")
	f.BoolVar(&omitCache, "omit-cache-fields", false, "leave ttlMs and cacheScope out of modern results (non-conformant)")
	f.Int64Var(&ttlMs, "ttl-ms", 0, "ttlMs of cacheable modern results")
	f.BoolVar(&emptyCursor, "empty-cursor", false, "use \"\" as the cursor of the second page (modern era)")
	f.BoolVar(&cursorCycle, "cursor-cycle", false, "make the last page's nextCursor point back at the first page, forever")
	f.BoolVar(&admin, "admin", false, "enable POST /admin/tools (loopback callers only) to swap the served tools")
	f.BoolVar(&stdio, "stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	return cmd
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
