package cli

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// extraReports is --report FORMAT=FILE (repeatable): the run's report in
// another format, to another file, from the same observation (lock
// check's SARIF for code scanning and its Markdown for a job summary,
// without observing every server twice). Each is an output like -o
// (written only when the run succeeded, atomically).
type extraReports struct {
	formats []string
	items   [][2]string // format, path
}

func (r *extraReports) String() string {
	var parts []string
	for _, it := range r.items {
		parts = append(parts, it[0]+"="+it[1])
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (r *extraReports) Type() string { return "stringArray" }

// Set takes one FORMAT=FILE.
func (r *extraReports) Set(v string) error {
	f, path, ok := strings.Cut(v, "=")
	if !ok || path == "" {
		return fmt.Errorf("want FORMAT=FILE, one of %s", strings.Join(r.formats, "|"))
	}
	if !slices.Contains(r.formats, f) {
		return fmt.Errorf("format %s: want one of %s", safetext.Quote(f), strings.Join(r.formats, "|"))
	}
	r.items = append(r.items, [2]string{f, path})
	return nil
}

// Append, Replace and GetSlice make it a repeated flag for the settings
// (pflag.SliceValue).
func (r *extraReports) Append(v string) error { return r.Set(v) }
func (r *extraReports) Replace(vs []string) error {
	r.items = nil
	for _, v := range vs {
		if err := r.Set(v); err != nil {
			return err
		}
	}
	return nil
}
func (r *extraReports) GetSlice() []string {
	out := make([]string, 0, len(r.items))
	for _, it := range r.items {
		out = append(out, it[0]+"="+it[1])
	}
	return out
}

// AddFlags adds --report to cmd, for the formats its report has.
func (r *extraReports) AddFlags(cmd *cobra.Command, formats []string) {
	r.formats = formats
	cmd.Flags().Var(r, "report", "also write the report as FORMAT to FILE, from the same run (repeatable; "+strings.Join(formats, "|")+"): --report sarif=mcpdrift.sarif --report markdown=summary.md")
}

// emit queues each extra report, rendered without colour.
func (r *extraReports) emit(e *env, render func(w *bytes.Buffer, format string) error) error {
	for _, it := range r.items {
		var buf bytes.Buffer
		if err := render(&buf, it[0]); err != nil {
			return usageErr("%s", safetext.Inert(err.Error()))
		}
		if err := e.emitAs("the "+it[0]+" report", it[1], buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
