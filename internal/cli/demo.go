package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
)

func newDemo(e *env) *cobra.Command {
	var keep, format, color string
	var noLive bool
	cmd := &cobra.Command{
		Use:   "demo [--keep DIR] [--format text|json|markdown|sarif|html] [--no-live]",
		Short: "Observe a bundled manifest, pin it, observe a rug-pulled version, and show what drifted (loopback only: the live part starts the bundled mock server on 127.0.0.1)",
		Long: `Runs the whole pipeline on bundled example data: observe, pin, the coarse and
granular gates with the structural diff, then (unless --no-live) a live part:
the bundled strict mock MCP server is started on 127.0.0.1, pinned over the
wire (its tools, instructions, prompts and resource templates), rug-pulled while
it runs (its instructions poisoned too), drifted, and put behind the gateway,
which withholds the poisoned instructions. Nothing leaves this machine.
The reports go to stdout as one document (one JSON object, one SARIF log with
two runs, or the two reports one after the other); the steps go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Every flag is checked before anything is done or printed.
			if !contains(report.DriftFormats(), format) {
				return usageErr("--format must be one of %s", strings.Join(report.DriftFormats(), ", "))
			}
			if err := checkColor(color); err != nil {
				return err
			}
			if keep != "" {
				if st, err := os.Stat(keep); err == nil && !st.IsDir() {
					return usageErr("--keep %s is not a directory", safetext.Quote(keep))
				}
			}
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
			coarse, err := gate.Evaluate(gate.Input{Observed: o2, Policy: pol})
			if err != nil {
				return err
			}
			say("4. coarse gate (policy map): verdict %s\n", coarse.Verdict)
			say("5. granular gate (declared baseline with field digests), with the structural diff of the snapshots\n")
			r, err := gate.Evaluate(gate.Input{Observed: o2, Declared: d, Policy: pol})
			if err != nil {
				return err
			}
			// The snapshots kept beside the baseline and the observation say
			// how each tool changed, and the review profile decides on each
			// (as gate --declared-snapshot --observed-snapshot does).
			decisions, changes := decide.DecideAndDiff(
				schemadiff.Input{Side: schemadiff.Side{Completeness: string(tl1.Completeness)}, Tools: tl1.Tools},
				schemadiff.Input{Side: schemadiff.Side{Completeness: string(tl2.Completeness)}, Tools: tl2.Tools},
				decide.Options{Profile: schemadiff.ReviewProfile})
			r.StructuralChanges = changes
			for _, d := range decisions {
				r.Tools = append(r.Tools, d.Verdict())
			}
			r.DecisionProfile = schemadiff.ReviewProfile.Name
			if keep != "" {
				if err := os.MkdirAll(keep, 0o755); err != nil {
					return usageErr("--keep: %s", safetext.Inert(err.Error()))
				}
				s1, err := manifest.MarshalSnapshot(server, manifest.Identity{}, tl1, tl1.Completeness)
				if err != nil {
					return err
				}
				s2, err := manifest.MarshalSnapshot(server, manifest.Identity{}, tl2, tl2.Completeness)
				if err != nil {
					return err
				}
				if err := e.emitMany("the declared snapshot", "demo artifacts", filepath.Join(keep, "declared.snapshot.json"), s1); err != nil {
					return err
				}
				if err := e.emitMany("the observed snapshot", "demo artifacts", filepath.Join(keep, "observed.v2.snapshot.json"), s2); err != nil {
					return err
				}
				for _, f := range []struct {
					name string
					v    any
				}{{"observed.v1.json", o1}, {"declared.json", d}, {"observed.v2.json", o2}} {
					b, err := manifest.MarshalArtifact(f.v)
					if err != nil {
						return err
					}
					if err := e.emitMany(f.name, "demo artifacts", filepath.Join(keep, f.name), b); err != nil {
						return err
					}
				}
				pb := []byte("declared_mcp_manifests:\n  " + server + ":\n    manifest_digest: \"" + d.ManifestDigest + "\"\n")
				if err := e.emitMany("the policy", "demo artifacts", filepath.Join(keep, "policy.yaml"), pb); err != nil {
					return err
				}
				say("   artifacts will be written to %s\n", safetext.Escape(keep))
			}
			var live *probe.Report
			var liveDeltas []delta.Tool
			if !noLive {
				if live, liveDeltas, err = demoLive(e); err != nil {
					return err
				}
			}
			var buf bytes.Buffer
			if format == "html" {
				// The page of both reports, each card with its readable
				// delta (report.RenderDemo has the reports alone).
				sections := []report.Section{report.GateSection(r, delta.Build(tl1.Tools, tl2.Tools, r.StructuralChanges, r.Tools))}
				if live != nil {
					sections = append(sections, report.DriftSection(live, liveDeltas))
				}
				err = writeHTML(&buf, "mcpdrift demo", sections...)
			} else {
				err = report.RenderDemo(&buf, r, live, format, report.Options{ToolVersion: version(), Color: useColor(e, "", color), ArtifactURI: "observed.v2.json"})
			}
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			return e.emit("-", buf.Bytes())
		},
	}
	cmd.Flags().BoolVar(&noLive, "no-live", false, "skip the live part (the bundled mock server on loopback)")
	cmd.Flags().StringVar(&keep, "keep", "", "also write the demo's artifacts (observed, declared, policy) to DIR")
	cmd.Flags().StringVar(&format, "format", "text", "report format: "+strings.Join(report.DriftFormats(), "|"))
	cmd.Flags().StringVar(&color, "color", "auto", "auto|always|never")
	return cmd
}

// demoLive serves the approved list from the bundled strict mock server on
// loopback, pins it over the wire, swaps the tools while the server runs (a
// live rug pull) and drifts the server against the pinned manifest.
// demoLive runs the live part and returns its drift report and readable
// deltas.
func demoLive(e *env) (*probe.Report, []delta.Tool, error) {
	say := func(format string, a ...any) { fmt.Fprintf(e.stderr, format, a...) }
	v1, err := mockserver.LoadTools(examples.V1)
	if err != nil {
		return nil, nil, err
	}
	v2, err := mockserver.LoadTools(examples.V2RugPull)
	if err != nil {
		return nil, nil, err
	}
	sv1, sv2, err := demoSurfaces()
	if err != nil {
		return nil, nil, err
	}
	srv, err := mockserver.New(mockserver.Config{Tools: v1, PageSize: 2, ServerName: "acme-github", ServerVersion: "1.0.0", Surface: sv1})
	if err != nil {
		return nil, nil, err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, &exitError{ExitInconclusive, "demo: cannot listen on loopback: " + safetext.Inert(err.Error())}
	}
	hs := &http.Server{Handler: srv, ConnContext: srv.ConnContext, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/mcp"
	say("6. live: the bundled strict mock serves the approved list at %s (2 tools a page, 2026-07-28), with its instructions, prompts and resource templates\n", url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := mcpclient.Config{BaseURL: url, ClientName: "mcpdrift", ClientVersion: version()}
	pcfg := cfg
	pcfg.Surface = surfaceOptions(false)
	obs, tl, err := observeLive(ctx, pcfg)
	if err != nil {
		return nil, nil, observe.Failed(url, err)
	}
	o := manifest.BuildObserved("acme-github", tl, manifest.Completeness(obs.Completeness), nil)
	say("   pinned over the wire: %d tools in %d pages, %s, manifest_digest %s\n", len(tl.Tools), obs.Pages, obs.Completeness, *o.Observed.ManifestDigest)
	pinned, err := surface.Marshal(obs.Surface, "  ")
	if err != nil {
		return nil, nil, err
	}
	say("   and its instructions (%s), %d prompt(s) and %d resource template(s)\n", shortDigest(obs.Surface.Instructions.Digest), len(obs.Surface.Prompts.Items), len(obs.Surface.Templates.Items))
	if err := srv.SetTools(v2); err != nil {
		return nil, nil, err
	}
	if err := srv.SetSurface(sv2); err != nil {
		return nil, nil, err
	}
	say("7. the server swaps its tools and poisons its instructions while it runs (a rug pull); drift it against the approved manifest\n\n")
	declared := schemadiff.Input{Side: schemadiff.Side{Source: "approved.tools-list.json", Form: tl.Form, Completeness: string(tl.Completeness), Surface: pinned}, Tools: tl.Tools}
	declared.ManifestDigest, _ = manifest.ManifestDigestOf(tl.Tools)
	declared.ToolCount = len(tl.Tools)
	res, err := liveDrift(ctx, e, &driftRun{cfg: cfg, manifestPath: "approved.tools-list.json", declared: declared, profile: schemadiff.ReviewProfile})
	if err != nil {
		return nil, nil, err
	}
	deltas, err := driftDeltas(declared.Tools, res.served, res.rep, schemadiff.ReviewProfile, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := demoGateway(ctx, e, url, tl, obs.Surface); err != nil {
		return nil, nil, err
	}
	return res.rep, deltas, nil
}
