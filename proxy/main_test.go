package proxy_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// The test binary is also a stdio MCP server: with
// MCPDRIFT_PROXY_TEST_STDIO=MANIFEST it serves the strict mock on stdin
// and stdout, and with MCPDRIFT_PROXY_TEST_DIE_ON_CALL=1 it exits at its
// first tools/call (an upstream that dies mid-call).
func TestMain(m *testing.M) {
	if path := os.Getenv("MCPDRIFT_PROXY_TEST_STDIO"); path != "" {
		os.Exit(serveStdioMock(path))
	}
	os.Exit(m.Run())
}

func serveStdioMock(path string) int {
	tools, err := mockserver.LoadToolsFile(path)
	if err != nil {
		return 2
	}
	s, err := mockserver.New(mockserver.Config{Tools: tools, PageSize: 2, ServerName: "acme-github", ServerVersion: "1.0.0"})
	if err != nil {
		return 2
	}
	if h := os.Getenv("MCPDRIFT_PROXY_TEST_HOSTILE"); h != "" {
		return serveHostileStdio(s, h, os.Getenv("MCPDRIFT_PROXY_TEST_LOG"))
	}
	var in io.Reader = os.Stdin
	if os.Getenv("MCPDRIFT_PROXY_TEST_DIE_ON_CALL") == "1" {
		pr, pw := io.Pipe()
		go func() {
			sc := bufio.NewScanner(os.Stdin)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				if strings.Contains(sc.Text(), `"tools/call"`) {
					os.Exit(3)
				}
				pw.Write(append(sc.Bytes(), '\n'))
			}
			pw.Close()
		}()
		in = pr
	}
	if err := s.ServeStdio(context.Background(), in, os.Stdout); err != nil {
		return 1
	}
	return 0
}
