package cli

import (
	"bytes"
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// resolveTools reads a manifest in any form observe accepts, a snapshot,
// or a declared baseline, whose tools are in the snapshot pinned beside it
// (declared.json → declared.snapshot.json): that snapshot is read instead,
// and it must belong to the baseline (same server id and manifest
// digest). The result holds a List or a Snapshot; viaBaseline says the
// snapshot was found through a baseline.
func resolveTools(e *env, path string, max int64) (tools *manifest.Tools, viaBaseline bool, err error) {
	return resolveToolsWith(path, plainReader(e, max))
}

// resolveToolsWith is resolveTools reading each file with read.
func resolveToolsWith(path string, read fileReader) (tools *manifest.Tools, viaBaseline bool, err error) {
	tools, err = readToolsWith(read, path)
	if err != nil {
		return nil, false, err
	}
	d := tools.Declared
	if d == nil {
		return tools, false, nil
	}
	// What the snapshot is checked against; the baseline's entries are
	// not held while the snapshot is read.
	serverID, manifestDigest := d.Server.ID, d.ManifestDigest
	tools, d = nil, nil
	st, snapPath, err := snapshotBeside(path, read)
	if err != nil {
		return nil, false, err
	}
	if err := st.Snapshot.CheckPair(snapPath, "the baseline "+safetext.Quote(path), serverID, manifestDigest); err != nil {
		return nil, false, &exitError{ExitUsage, err.Error()}
	}
	return st, true, nil
}

// snapshotBeside reads the snapshot pinned beside the declared baseline
// at path (declared.json → declared.snapshot.json), and its path.
func snapshotBeside(path string, read fileReader) (*manifest.Tools, string, error) {
	snapPath := snapshotPathFor(path)
	if path == "-" {
		return nil, snapPath, usageErr("%s: a declared baseline read from stdin holds digests only, and its snapshot cannot be found beside it: pass the snapshot (NAME.snapshot.json) instead", safetext.Escape(path))
	}
	if _, err := os.Stat(snapPath); err != nil {
		return nil, snapPath, usageErr("%s is a declared baseline: it holds digests, not tool definitions, and the snapshot pinned beside it (%s) is not there. Pass the snapshot, or pin again with --input, --url or --stdio (without --no-snapshot) to write one", safetext.Quote(path), safetext.Quote(snapPath))
	}
	st, err := readToolsWith(read, snapPath)
	if err != nil {
		return nil, snapPath, err
	}
	if st.Snapshot == nil {
		return nil, snapPath, usageErr("%s, beside the baseline %s, is not a snapshot", safetext.Quote(snapPath), safetext.Quote(path))
	}
	return st, snapPath, nil
}

// toolList is a resolved document as a ToolList (what observe and pin
// take).
func toolList(t *manifest.Tools) *manifest.ToolList {
	if t.Snapshot != nil {
		return t.Snapshot.ToolList()
	}
	return t.List
}

// loadTools reads one side of a comparison (see resolveTools).
func loadTools(e *env, path string, max int64) (schemadiff.Input, error) {
	in, _, err := loadToolsCaps(e, path, max)
	return in, err
}

// loadToolsCaps is loadTools that also returns the client capabilities a
// snapshot records the tools were observed with (nil when not recorded).
func loadToolsCaps(e *env, path string, max int64) (in schemadiff.Input, caps []byte, err error) {
	tools, viaBaseline, err := resolveTools(e, path, max)
	if err != nil {
		return schemadiff.Input{Side: schemadiff.Side{Source: path}}, nil, err
	}
	in, caps = inputOf(path, tools, viaBaseline)
	return in, caps, nil
}

// inputOf is one side of a comparison read from path (resolveTools), and
// the client capabilities its snapshot records.
func inputOf(path string, tools *manifest.Tools, viaBaseline bool) (in schemadiff.Input, caps []byte) {
	in = schemadiff.Input{Side: schemadiff.Side{Source: path}}
	switch {
	case tools.Snapshot != nil:
		snap := tools.Snapshot
		caps = snap.ClientCapabilities
		in.Form = "snapshot"
		if viaBaseline {
			in.Form = "declared baseline + snapshot"
		}
		in.ServerID = snap.ServerID
		in.ManifestDigest = snap.ManifestDigest
		in.Completeness = string(snap.Completeness)
		id := snap.Identity
		in.Identity = &id
		in.Tools = snap.Tools
		in.Surface = snap.Surface
	default:
		tl := tools.List
		in.Form = tl.Form
		in.Completeness = string(tl.Completeness)
		in.Tools = tl.Tools
		in.ManifestDigest, _ = manifest.ManifestDigestOf(tl.Tools)
	}
	in.ToolCount = len(in.Tools)
	return in, caps
}

// fileReader reads one input file.
type fileReader func(path string) ([]byte, error)

// plainReader reads with readInput.
func plainReader(e *env, max int64) fileReader {
	return func(p string) ([]byte, error) { return readInput(e, p, max) }
}

// readToolsWith is manifest.ReadTools of path read with read.
func readToolsWith(read fileReader, path string) (*manifest.Tools, error) {
	src, err := read(path)
	if err != nil {
		return nil, err
	}
	t, err := manifest.ReadTools(src, path)
	if err != nil {
		return nil, toolsErr(path, err)
	}
	return t, nil
}

// toolsErr is the error of reading the tools of path (exit 2): an
// artifact's error names the file already, any other is given its name.
func toolsErr(path string, err error) error {
	if _, ok := errors.AsType[*manifest.ArtifactError](err); ok {
		return &exitError{ExitUsage, err.Error()}
	}
	return inputErr(path, err)
}

func newDiff(e *env) *cobra.Command {
	var format, profile, out, color, rules string
	var maxInput int64
	cmd := &cobra.Command{
		Use:   "diff OLD NEW [--format json|text|markdown|html] [--profile review|fail-closed] [-o FILE]",
		Short: "Say how tools changed between two manifests or snapshots; exit 0 nothing changed (or notation only), 1 changed, 2 bad input, 3 new list partial",
		Long: `OLD and NEW are saved tools/list manifests in any form observe accepts,
snapshots (mcpdrift.tool_snapshot.v1), or declared baselines (read through the
snapshot beside them). Changes are graded by direction (widening, narrowing,
neutral) and severity; the profile decides: review (default) makes every change
reviewable; fail-closed denies schema drift under a stable description, external
$refs, endpoint or publisher churn, and new optional parameters. Under both, a
tool whose every change is notation (schemas that accept the same instances) is
allowed ("notation only"), and a partial NEW list is never allowed. When both
sides are snapshots with identities, the endpoint, publisher key, server
name/version and a stdio server's environment are compared too, and when they
pin the server's instructions, prompts and resource templates (docs/surface.md),
those too: a change needs review, changed instructions are denied under
fail-closed.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !contains(report.DiffFormats(), format) {
				return usageErr("--format must be one of %s", strings.Join(report.DiffFormats(), ", "))
			}
			prof, err := schemadiff.DecisionProfileByName(profile)
			if err != nil {
				return usageErr("--profile: %s", safetext.Inert(err.Error()))
			}
			c, err := loadClassifier(rules)
			if err != nil {
				return err
			}
			old, err := loadTools(e, args[0], maxInput)
			if err != nil {
				return err
			}
			nw, err := loadTools(e, args[1], maxInput)
			if err != nil {
				return err
			}
			r := schemadiff.Compare(old, nw, prof, schemadiff.ToolOptions{Classifier: c})
			if err := diffSurface(r, old, nw, prof); err != nil {
				return err
			}
			var buf bytes.Buffer
			if format == "html" {
				err = writeHTML(&buf, "mcpdrift diff", report.DiffSection(r, delta.Build(old.Tools, nw.Tools, r.Changes, r.Tools)))
			} else {
				err = report.RenderDiff(&buf, r, format, report.Options{Color: useColor(e, out, color), ToolVersion: version()})
			}
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			if err := e.emitAs("the report", out, buf.Bytes()); err != nil {
				return err
			}
			e.code = r.ExitCode
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "json|text|markdown|html")
	f.StringVar(&profile, "profile", "review", "decision profile: review|fail-closed")
	f.StringVarP(&out, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	f.StringVar(&color, "color", "auto", "auto|always|never")
	f.StringVar(&rules, "rules", "", "YAML privilege rules (grades added and removed tools)")
	f.Int64Var(&maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	return cmd
}
