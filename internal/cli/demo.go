package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

func newDemo(e *env) *cobra.Command {
	var keep, format, color string
	cmd := &cobra.Command{
		Use:   "demo [--keep DIR] [--format text|json|markdown|sarif]",
		Short: "Observe a bundled manifest, pin it, observe a rug-pulled version, and show what drifted (no network)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			const server = "acme-github"
			say := func(format string, a ...any) { fmt.Fprintf(e.stderr, format, a...) }
			say("1. observe the approved tools/list (examples/acme-github.v1.tools-list.json)\n")
			tl1, err := manifest.ParseToolList(examples.V1)
			if err != nil {
				return err
			}
			o1 := manifest.BuildObserved(server, tl1, tl1.Completeness, nil)
			say("   %d tools, completeness %s, manifest_digest %s\n", len(tl1.Tools), tl1.Completeness, *o1.Observed.ManifestDigest)
			say("2. pin it as the declared baseline\n")
			d, err := manifest.Pin(o1, manifest.PinOptions{})
			if err != nil {
				return err
			}
			say("3. observe the server again, after a rug pull (examples/acme-github.v2-rugpull.tools-list.json)\n")
			tl2, err := manifest.ParseToolList(examples.V2RugPull)
			if err != nil {
				return err
			}
			o2 := manifest.BuildObserved(server, tl2, tl2.Completeness, nil)
			say("   %d tools, manifest_digest %s\n", len(tl2.Tools), *o2.Observed.ManifestDigest)
			pol := &manifest.Policy{DeclaredMCPManifests: map[string]manifest.PolicyManifest{server: {ManifestDigest: d.ManifestDigest}}}
			coarse, err := gate.Run(gate.Input{Observed: o2, Policy: pol})
			if err != nil {
				return err
			}
			say("4. coarse gate (policy map): verdict %s\n", coarse.Verdict)
			say("5. granular gate (declared baseline with field digests), with the structural diff of the snapshots:\n\n")
			r, err := gate.Run(gate.Input{Observed: o2, Declared: d, Policy: pol})
			if err != nil {
				return err
			}
			// The snapshots kept beside the baseline and the observation say
			// how each tool changed.
			r.StructuralChanges = schemadiff.Compare(
				schemadiff.Input{Side: schemadiff.Side{Completeness: string(tl1.Completeness)}, Tools: tl1.Tools},
				schemadiff.Input{Side: schemadiff.Side{Completeness: string(tl2.Completeness)}, Tools: tl2.Tools},
				nil, schemadiff.ToolOptions{}).Changes
			if keep != "" {
				if err := os.MkdirAll(keep, 0o755); err != nil {
					return usageErr("--keep: %s", safetext.Escape(err.Error()))
				}
				s1, err := manifest.MarshalSnapshot(server, manifest.Identity{}, tl1, tl1.Completeness)
				if err != nil {
					return err
				}
				s2, err := manifest.MarshalSnapshot(server, manifest.Identity{}, tl2, tl2.Completeness)
				if err != nil {
					return err
				}
				if err := writeOutput(e, filepath.Join(keep, "declared.snapshot.json"), s1); err != nil {
					return err
				}
				if err := writeOutput(e, filepath.Join(keep, "observed.v2.snapshot.json"), s2); err != nil {
					return err
				}
				files := map[string]any{"observed.v1.json": o1, "declared.json": d, "observed.v2.json": o2}
				for name, v := range files {
					b, err := manifest.MarshalArtifact(v)
					if err != nil {
						return err
					}
					if err := writeOutput(e, filepath.Join(keep, name), b); err != nil {
						return err
					}
				}
				pb := []byte("declared_mcp_manifests:\n  " + server + ":\n    manifest_digest: \"" + d.ManifestDigest + "\"\n")
				if err := writeOutput(e, filepath.Join(keep, "policy.yaml"), pb); err != nil {
					return err
				}
				say("   artifacts written to %s\n\n", safetext.Escape(keep))
			}
			var buf bytes.Buffer
			if err := report.Render(&buf, r, format, report.Options{ToolVersion: version(), Color: useColor(e, "", color), ArtifactURI: "observed.v2.json"}); err != nil {
				return usageErr("%s", safetext.Escape(err.Error()))
			}
			_, err = e.stdout.Write(buf.Bytes())
			return err
		},
	}
	cmd.Flags().StringVar(&keep, "keep", "", "also write the demo's artifacts (observed, declared, policy) to DIR")
	cmd.Flags().StringVar(&format, "format", "text", "report format")
	cmd.Flags().StringVar(&color, "color", "auto", "auto|always|never")
	return cmd
}
