package discover

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// largeClaudeJSON is a ~/.claude.json of the size users report (it keeps
// per-project state): n projects, each with a history of prompts and two
// servers.
func largeClaudeJSON(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"numStartups":812,"mcpServers":{"sentry":{"type":"http","url":"https://mcp.sentry.dev/mcp","headers":{"Authorization":"Bearer x"}}},"projects":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/home/dev/src/p%d":{"allowedTools":[],"history":[`, i)
		for j := range 40 {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"display":"fix the failing test in package %d and explain why it failed %d times","pastedContents":{}}`, i, j)
		}
		fmt.Fprintf(&b, `],"mcpServers":{"db%d":{"type":"stdio","command":"npx","args":["-y","server-postgres","postgresql://app:pw@db/%d"],"env":{"PGPASSWORD":"pw"}},"docs%d":{"type":"sse","url":"https://docs.example/%d/sse?token=t"}},"hasTrustDialogAccepted":true}`, i, i, i, i)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// BenchmarkDiscoverLargeClaudeJSON reads a 20 MB ~/.claude.json with
// 4,000 projects (8,001 servers); the baseline is jcs.Parse of the same
// bytes alone (BenchmarkParseOnlyLargeClaudeJSON), what any strict read
// costs.
func BenchmarkDiscoverLargeClaudeJSON(b *testing.B) {
	home := b.TempDir()
	src := largeClaudeJSON(4000)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), src, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		inv, err := Discover(Options{Home: home, Platform: Linux})
		if err != nil || len(inv.Servers) != 8001 {
			b.Fatalf("%v %d %+v", err, len(inv.Servers), inv.Errors)
		}
	}
}

func BenchmarkParseOnlyLargeClaudeJSON(b *testing.B) {
	src := largeClaudeJSON(4000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jcs.Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}
