package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/discover"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// discoverOptions are discover's flags.
type discoverOptions struct {
	includeHome bool
	format, out string
	maxFile     int64
}

func (o *discoverOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.includeHome, "include-home", false, "also read the user's own configuration files (home directory, APPDATA, XDG_CONFIG_HOME, CODEX_HOME, CLAUDE_CONFIG_DIR)")
	f.StringVar(&o.format, "format", "text", "text, or json (the inventory scan and lock add --from-inventory read)")
	f.StringVarP(&o.out, "output", "o", "", "write the inventory to FILE (atomically) instead of stdout")
	f.Int64Var(&o.maxFile, "max-file-bytes", discover.DefaultMaxFileSize, "the largest configuration file read")
}

func newDiscover(e *env) *cobra.Command {
	o := &discoverOptions{}
	cmd := &cobra.Command{
		Use:   "discover [--include-home] [DIR...] [--format text|json] [-o FILE]",
		Short: "List the MCP servers that the clients' configuration files name (nothing is run)",
		Long: `discover reads the MCP server entries of Claude Desktop, Claude Code,
Cursor, VS Code, Windsurf, Zed, Gemini CLI, Codex and Continue: the
project files of each DIR (the current directory when none is given) and,
with --include-home, the user's own files at this platform's paths. It
prints them as text; --format json writes the inventory
(mcpdrift.inventory.v1) that scan and lock add --from-inventory take.

Nothing is run and nothing is sent: a stdio server is listed, never
started. Values are never written: env and header values appear by name
only, URLs lose their user info and query values, and args that look like
secrets are replaced (the server is then marked redacted).

A file that cannot be used (malformed, duplicate keys, too large, too
deep, unreadable, a symlink out of its tree) is listed in errors[] and on
stderr, one line each; the rest are still read. Exit 0 when discovery
ran, 2 on bad usage.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := o.options(args)
			if err != nil {
				return err
			}
			inv, err := discover.Discover(opt)
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			data, what := inv.Text(), "the server list"
			if o.format == "json" {
				if data, err = inv.Marshal(); err != nil {
					return err
				}
				what = "the inventory"
			}
			if err := e.emitAs(what, o.out, data); err != nil {
				return err
			}
			for _, fe := range inv.Errors {
				fmt.Fprintf(e.stderr, "mcpdrift: discover: %s\n", fe.Line())
			}
			return nil
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// options are discover.Options of the flags and DIRs (the current
// directory when none is given).
func (o *discoverOptions) options(dirs []string) (discover.Options, error) {
	opt := discover.Options{Platform: runtime.GOOS, Getenv: os.Getenv, MaxFileSize: o.maxFile}
	if o.format != "json" && o.format != "text" {
		return opt, usageErr("--format must be json or text")
	}
	if o.maxFile < 1 {
		return opt, usageErr("--max-file-bytes must be at least 1")
	}
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	for _, a := range dirs {
		abs, err := filepath.Abs(a)
		if err != nil {
			return opt, usageErr("%s: %s", safetext.Quote(a), safetext.Inert(err.Error()))
		}
		opt.Dirs = append(opt.Dirs, abs)
	}
	if o.includeHome {
		home, err := os.UserHomeDir()
		if err != nil {
			return opt, usageErr("--include-home: %s", safetext.Inert(err.Error()))
		}
		opt.Home = home
	}
	return opt, nil
}
