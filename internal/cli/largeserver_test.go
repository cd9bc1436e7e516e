package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// The test binary doubles as the large server of the benchmarks (an
// official Go SDK server serving corpus.LeanTools) when envLargeServer is
// set, so that the mcpdrift binary can be measured against it from outside
// (wall time, peak RSS with /usr/bin/time):
//
//	go test -c -o /tmp/cli.test ./internal/cli
//	MCPDRIFT_LARGE_SERVER=tools=10000,page=100,listen=127.0.0.1:8931 /tmp/cli.test &
//	/usr/bin/time -v mcpdrift pin --url http://127.0.0.1:8931/mcp --server-id big -o big.json
//	MCPDRIFT_LARGE_SERVER=tools=10000,page=100 mcpdrift drift big.json --pass-env MCPDRIFT_LARGE_SERVER --stdio -- /tmp/cli.test
//
// Without listen= it serves stdio. stateless=1 selects the SDK's stateless
// Streamable HTTP handler (2026-07-28, server/discover) instead of its
// default stateful one (initialize).
const envLargeServer = "MCPDRIFT_LARGE_SERVER"

// envAsCLI makes the test binary the mcpdrift command itself (Main over
// its arguments), so that the cost tests can measure a run as a process of
// its own: its CPU time, and its peak RSS, which it writes at exit to the
// file named by envPeakRSS (cost_linux_test.go).
const (
	envAsCLI   = "MCPDRIFT_TEST_AS_CLI"
	envPeakRSS = "MCPDRIFT_TEST_PEAK_RSS_FILE"
	// envRunBinary makes the test binary a runner of that binary: it runs
	// it over its arguments and writes to the envPeakRSS file what the run
	// cost (cost_linux_test.go: the cost curve measures the mcpdrift
	// binary users run, not this test binary).
	envRunBinary = "MCPDRIFT_TEST_RUN_BINARY"
)

func TestMain(m *testing.M) {
	if bin := os.Getenv(envRunBinary); bin != "" {
		os.Exit(runBinaryMeasured(bin, os.Args[1:], os.Getenv(envPeakRSS)))
	}
	if os.Getenv(envAsCLI) == "1" {
		stop := startProfiles()
		code := Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		if p := os.Getenv(envPeakRSS); p != "" {
			writePeakRSS(p)
		}
		os.Exit(code)
	}
	if spec := os.Getenv(envLargeServer); spec != "" {
		if err := serveLargeServer(spec); err != nil {
			fmt.Fprintf(os.Stderr, "large server: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// largeSpec is a parsed envLargeServer value.
type largeSpec struct {
	tools, page int
	listen      string
	stateless   bool
}

func parseLargeSpec(spec string) (largeSpec, error) {
	s := largeSpec{tools: 10000, page: 1000}
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "tools":
			s.tools, err = strconv.Atoi(v)
		case "page":
			s.page, err = strconv.Atoi(v)
		case "listen":
			s.listen = v
		case "stateless":
			s.stateless = v == "1"
		case "1", "":
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return s, fmt.Errorf("%s: %v", envLargeServer, err)
		}
	}
	return s, nil
}

// leanTool is a corpus tool as the go-sdk server takes it: its schemas
// kept as raw JSON (the SDK sends a json.RawMessage as it is).
type leanTool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title"`
	Description  string               `json:"description"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema"`
	Annotations  *mcp.ToolAnnotations `json:"annotations"`
}

// newLargeGoSDKServer builds an official Go SDK server serving
// corpus.LeanTools(n, 1) in pages of page.
func newLargeGoSDKServer(n, page int) (*mcp.Server, error) {
	var tools []leanTool
	if err := json.Unmarshal(corpus.LeanTools(n, 1), &tools); err != nil {
		return nil, err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpdrift-large-gosdk", Version: "1.0.0"},
		&mcp.ServerOptions{PageSize: page, Logger: slog.New(slog.DiscardHandler)})
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	for _, lt := range tools {
		t := &mcp.Tool{Name: lt.Name, Title: lt.Title, Description: lt.Description, InputSchema: lt.InputSchema, Annotations: lt.Annotations}
		if lt.OutputSchema != nil {
			t.OutputSchema = lt.OutputSchema
		}
		s.AddTool(t, handler)
	}
	return s, nil
}

// largeHandler is the Streamable HTTP handler of a large server.
func largeHandler(s *mcp.Server, stateless bool) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

func serveLargeServer(spec string) error {
	sp, err := parseLargeSpec(spec)
	if err != nil {
		return err
	}
	srv, err := newLargeGoSDKServer(sp.tools, sp.page)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if sp.listen == "" {
		err := srv.Run(ctx, &mcp.StdioTransport{})
		if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	ln, err := net.Listen("tcp", sp.listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: largeHandler(srv, sp.stateless)}
	go func() { <-ctx.Done(); hs.Close() }()
	fmt.Fprintf(os.Stderr, "large server: %d tools in pages of %d on http://%s/mcp\n", sp.tools, sp.page, ln.Addr())
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
