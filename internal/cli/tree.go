package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// CommandTree returns mcpdrift's command tree as its reference shows it
// (docs/cli, docs/man and the schema of mcpdrift.yaml, which
// scripts/clidocs generates from it): cobra's help and completion
// commands included, and the version a release stamps in shown as
// VERSION, so that the pages do not change with the build. It runs
// nothing; it is not safe to call concurrently with a run.
func CommandTree() *cobra.Command {
	saved := Version
	Version = "VERSION"
	defer func() { Version = saved }()
	root := newRoot(newEnv(strings.NewReader(""), io.Discard, io.Discard))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}
