package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stdio server that answers with a hostile response id: drift's
// Markdown must keep the server's text inside code elements, and the
// text report must show the id's quotes as they are. The id's JSON text
// goes through Escape (mcpclient idText), whose doubled backslash (\\")
// makes mdMsg end the code span early.
func TestResponseIDMarkdown(t *testing.T) {
	dir := t.TempDir()
	srv := filepath.Join(dir, "srv.sh")
	script := "#!/bin/sh\nread line\nprintf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":\"x\\\" @org/security #1 \\\"\",\"result\":{}}'\nsleep 1\n"
	if err := os.WriteFile(srv, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := run(t, "", "drift", acmeV1, "--format", "markdown", "--skip-second-connection", "--stdio", "--", srv)
	o := stdout
	for {
		i := strings.Index(o, "<code>")
		if i < 0 {
			break
		}
		j := strings.Index(o[i:], "</code>")
		o = o[:i] + o[i+j+len("</code>"):]
	}
	if strings.Contains(o, "org/security") {
		t.Errorf("the server's text is outside a code element:\n%s", stdout)
	}
}
