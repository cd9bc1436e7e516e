// Package clidocs generates what is written from mcpdrift's command tree:
// the CLI reference (docs/cli, Markdown), the man pages (docs/man) and the
// JSON Schema of mcpdrift.yaml (schemas/config.v1.schema.json), whose
// defaults and commands sections name every flag a setting can set.
// scripts/clidocs writes them; a test fails when a committed copy is
// stale. The output depends on the tree only: no date, no machine.
package clidocs

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Dirs of the generated files, relative to the repository's root.
const (
	CLIDir     = "docs/cli"
	ManDir     = "docs/man"
	SchemaFile = "schemas/config.v1.schema.json"
)

// Generate returns every generated file by its path from the repository's
// root.
func Generate(root *cobra.Command) (map[string][]byte, error) {
	disableAutoGen(root)
	out := map[string][]byte{}
	if err := markdown(root, out); err != nil {
		return nil, err
	}
	if err := man(root, out); err != nil {
		return nil, err
	}
	s, err := ConfigSchema(root)
	if err != nil {
		return nil, err
	}
	out[SchemaFile] = s
	return out, nil
}

func disableAutoGen(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, s := range c.Commands() {
		disableAutoGen(s)
	}
}

// documented are the commands the reference shows (cobra/doc's rule).
func documented(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			if c.HasParent() {
				return
			}
		}
		out = append(out, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(c)
	return out
}

func baseName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "_") }

func markdown(root *cobra.Command, out map[string][]byte) error {
	link := func(name string) string { return name } // same directory
	var index bytes.Buffer
	index.WriteString("# mcpdrift command reference\n\n")
	index.WriteString("Generated from the command tree by `go run ./scripts/clidocs`; a test fails when it is stale. ")
	index.WriteString("Every flag can also be set as `MCPDRIFT_<FLAG>` or in `mcpdrift.yaml` (README, *Settings*); flags marked command-line only are not.\n\n")
	for _, c := range documented(root) {
		var b bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &b, link); err != nil {
			return err
		}
		name := baseName(c) + ".md"
		out[path.Join(CLIDir, name)] = b.Bytes()
		fmt.Fprintf(&index, "- [`%s`](%s): %s\n", c.CommandPath(), name, c.Short)
	}
	out[path.Join(CLIDir, "README.md")] = index.Bytes()
	return nil
}

// thLine is the man page's title line; its date is taken out, so that a
// page changes only when its command does.
var thLine = regexp.MustCompile(`(?m)^(\.TH "[^"]*" "[^"]*") "[^"]*"`)

func man(root *cobra.Command, out map[string][]byte) error {
	epoch := time.Unix(0, 0).UTC()
	for _, c := range documented(root) {
		var b bytes.Buffer
		h := &doc.GenManHeader{Section: "1", Date: &epoch, Source: "mcpdrift", Manual: "mcpdrift manual"}
		if err := doc.GenMan(c, h, &b); err != nil {
			return err
		}
		page := thLine.ReplaceAll(b.Bytes(), []byte(`$1 ""`))
		out[path.Join(ManDir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")] = page
	}
	return nil
}

// Names returns the generated files' paths, sorted.
func Names(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Stale returns the generated files that differ from those under root,
// and the files in the generated directories that nothing generates.
func Stale(root string, files map[string][]byte) []string {
	var out []string
	for _, name := range Names(files) {
		cur, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(cur, files[name]) {
			out = append(out, name)
		}
	}
	for _, dir := range []string{CLIDir, ManDir} {
		old, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*"))
		for _, p := range old {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				continue
			}
			if _, ok := files[filepath.ToSlash(rel)]; !ok {
				out = append(out, filepath.ToSlash(rel)+" (not generated)")
			}
		}
	}
	return out
}
