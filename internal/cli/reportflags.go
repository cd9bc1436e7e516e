package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// reportFlags are the flags of a command that writes a report: its format
// (text by default), where it goes (-o) and whether text is coloured.
type reportFlags struct {
	format, out, color string
	formats            []string
}

// AddFlags registers --format (one of formats, text by default), -o and
// --color.
func (r *reportFlags) AddFlags(cmd *cobra.Command, formats []string) {
	r.formats = formats
	f := cmd.Flags()
	f.StringVar(&r.format, "format", "text", "report format: "+strings.Join(formats, "|"))
	f.StringVarP(&r.out, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	f.StringVar(&r.color, "color", "auto", "colour in text output: auto|always|never (auto: only on a terminal, and never with NO_COLOR)")
}

// check refuses a format or a colour mode the command does not have.
func (r *reportFlags) check() error {
	if !contains(r.formats, r.format) {
		return usageErr("--format must be one of %s", strings.Join(r.formats, ", "))
	}
	return checkColor(r.color)
}

// options are the renderer's options of this run (artifact: the file the
// report is about, for SARIF).
func (r *reportFlags) options(e *env, artifact string) report.Options {
	return report.Options{ToolVersion: version(), ArtifactURI: artifact, Color: useColor(e, r.out, r.color)}
}

// emit queues the rendered report; a renderer's error is a usage error.
func (r *reportFlags) emit(e *env, data []byte, renderErr error) error {
	if renderErr != nil {
		return usageErr("%s", safetext.Inert(renderErr.Error()))
	}
	return e.emitAs("the report", r.out, data)
}

// useColor says whether text output to out is coloured: always, never,
// or (auto) only on a terminal and never with NO_COLOR.
func useColor(e *env, out, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if out != "" && out != "-" {
		return false
	}
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	return e.tty
}

// checkColor validates --color.
func checkColor(mode string) error {
	if mode != "auto" && mode != "always" && mode != "never" {
		return usageErr("--color must be auto, always or never")
	}
	return nil
}
