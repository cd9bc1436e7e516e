package cli

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpclient"
)

// TestTargetBehindGateway: a command that is mcpdrift's gateway in front
// of a server records the server behind it (the drop-in client
// configuration observes the same server as the pin did); any other
// command is recorded as it is.
func TestTargetBehindGateway(t *testing.T) {
	e := &env{}
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/local/bin/mcpdrift", "proxy", "--declared", "d.json", "--upstream-stdio", "--", "npx", "-y", "server"}, "stdio:npx -y server"},
		{[]string{"mcpdrift", "proxy", "--declared", "d.json", "--upstream-url", "https://mcp.example/mcp?key=x"}, "https://mcp.example/mcp?key="},
		{[]string{"mcpdrift", "proxy", "--upstream-url=https://mcp.example/mcp"}, "https://mcp.example/mcp"},
		{[]string{"mcpdrift", "proxy", "--lock", "l", "--server", "s"}, "stdio:mcpdrift proxy --lock l --server s"},
		{[]string{"mcpdrift", "drift", "--upstream-stdio", "--", "x"}, "stdio:mcpdrift drift --upstream-stdio -- x"},
		{[]string{"/opt/evil/mcpdrift-wrapper", "proxy", "--upstream-stdio", "--", "x"}, "stdio:/opt/evil/mcpdrift-wrapper proxy --upstream-stdio -- x"},
		{[]string{"mcpdrift", "proxy", "--", "--upstream-url", "https://x"}, "stdio:mcpdrift proxy -- --upstream-url https://x"},
	} {
		if _, got := e.targetOf(mcpclient.Config{Command: c.argv}); got != c.want {
			t.Errorf("%q: %q, want %q", c.argv, got, c.want)
		}
	}
}
