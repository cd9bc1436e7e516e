// Command mcpdrift pins what an MCP server's tool list was approved as,
// observes what it serves, and says what drifted. See README.md.
package main

import (
	"os"

	"github.com/mcpdrift/mcpdrift/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
