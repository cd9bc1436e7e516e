package peers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as a stdio MCP server: when envChild is set it
// serves the named peer on stdin/stdout instead of running the tests. The
// stdio tests start it through mcpdrift (--stdio -- <test binary>) and hand
// these variables over with --pass-env.
const (
	envChild   = "MCPDRIFT_PEERS_CHILD"   // "gosdk" or "mcpgo"
	envVariant = "MCPDRIFT_PEERS_VARIANT" // "" (the pinned tool set) or variantChanged
)

func TestMain(m *testing.M) {
	if kind := os.Getenv(envChild); kind != "" {
		os.Exit(serveStdioChild(kind, os.Getenv(envVariant)))
	}
	start := time.Now()
	code := m.Run()
	removeBuilt()
	printMatrix()
	printTimings(time.Since(start))
	os.Exit(code)
}

// serveStdioChild serves one peer on stdin/stdout until stdin closes or a
// signal arrives. Nothing but MCP messages may go to stdout.
func serveStdioChild(kind, variant string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch kind {
	case "gosdk":
		err = newGoSDKServer(variant).Run(ctx, &mcp.StdioTransport{})
	case "mcpgo":
		err = server.ServeStdio(newMCPGoServer(variant))
	case "mcpgo-smuggle":
		err = server.ServeStdio(newMCPGoSmuggle(&execLog{path: os.Getenv(envCallLog)}))
	default:
		fmt.Fprintf(os.Stderr, "peers child: unknown %s %q\n", envChild, kind)
		return 2
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "peers child %s: %v\n", kind, err)
		return 1
	}
	return 0
}

// Timings of the steps worth knowing about (installs, peer startups, whole
// peer tests), printed after the run (visible with go test -v).
var timings struct {
	sync.Mutex
	lines []string
}

func recordTiming(what string, d time.Duration) {
	timings.Lock()
	defer timings.Unlock()
	timings.lines = append(timings.lines, fmt.Sprintf("  %-58s %8.3fs", what, d.Seconds()))
}

func printTimings(total time.Duration) {
	timings.Lock()
	defer timings.Unlock()
	if len(timings.lines) == 0 {
		return
	}
	slices.Sort(timings.lines)
	fmt.Printf("peers timings (whole package %.3fs):\n", total.Seconds())
	for _, l := range timings.lines {
		fmt.Println(l)
	}
}
