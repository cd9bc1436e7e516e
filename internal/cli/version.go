package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/report"
)

// Commit and Date are stamped in by the release build (.goreleaser.yaml's
// ldflags, beside Version): the full commit hash and the commit's date
// (RFC 3339), which is also every file's timestamp in the archives. A
// build without them reads what the Go toolchain recorded (vcs.revision,
// vcs.time), else says "unknown".
var (
	Commit = ""
	Date   = ""
)

// buildInfo is what mcpdrift version prints.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readBuildInfo gathers the version, the commit and its date, the Go
// version and the platform of this binary.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version(), Commit: Commit, Date: Date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				b.Modified = Commit == "" && s.Value == "true"
			}
		}
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	if b.Date == "" {
		b.Date = "unknown"
	}
	return b
}

func newVersion(e *env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version [--format text|json]",
		Short: "Print the version, commit, build date, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := readBuildInfo()
			switch format {
			case "json":
				var buf strings.Builder
				if err := report.WriteJSON(&buf, b); err != nil {
					return err
				}
				return e.emit("-", []byte(buf.String()))
			case "text":
				commit := b.Commit
				if b.Modified {
					commit += " (modified)"
				}
				return e.emit("-", fmt.Appendf(nil, "mcpdrift %s\ncommit:   %s\nbuilt:    %s\ngo:       %s\nplatform: %s\n", b.Version, commit, b.Date, b.Go, b.Platform))
			}
			return usageErr("--format must be text or json")
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text|json")
	return cmd
}
