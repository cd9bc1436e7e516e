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
	"github.com/mcpdrift/mcpdrift/drift"
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

// demoOptions are demo's flags.
type demoOptions struct {
	keep, format, color string
	noLive              bool
}

func (o *demoOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.noLive, "no-live", false, "skip the live part (the bundled mock server on loopback)")
	f.StringVar(&o.keep, "keep", "", "also write the demo's artifacts (observed, declared, policy) to DIR")
	f.StringVar(&o.format, "format", "text", "report format: "+strings.Join(report.DriftFormats(), "|"))
	f.StringVar(&o.color, "color", "auto", "auto|always|never")
}

func newDemo(e *env) *cobra.Command {
	o := &demoOptions{}
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
			if !contains(report.DriftFormats(), o.format) {
				return usageErr("--format must be one of %s", strings.Join(report.DriftFormats(), ", "))
			}
			if err := checkColor(o.color); err != nil {
				return err
			}
			if o.keep != "" {
				if st, err := os.Stat(o.keep); err == nil && !st.IsDir() {
					return usageErr("--keep %s is not a directory", safetext.Quote(o.keep))
				}
			}
			d, err := demoFiles(e)
			if err != nil {
				return err
			}
			if o.keep != "" {
				if err := d.keep(e, o.keep); err != nil {
					return err
				}
			}
			var live *probe.Report
			var liveDeltas []delta.Tool
			if !o.noLive {
				if live, liveDeltas, err = demoLive(e); err != nil {
					return err
				}
			}
			return o.render(e, d, live, liveDeltas)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// demoServer is the server id of the demo's artifacts.
const demoServer = "acme-github"

// demoArtifacts are the demo's file steps: the two lists observed, the
// baseline pinned, and the granular gate's report.
type demoArtifacts struct {
	tl1, tl2 *manifest.ToolList
	o1, o2   *manifest.Observed
	declared *manifest.Declared
	report   *gate.Report
}

// demoFiles observes the approved list, pins it, observes the rug-pulled
// one, and gates it (coarse, then granular with the structural diff),
// saying each step on stderr.
func demoFiles(e *env) (*demoArtifacts, error) {
	say := func(format string, a ...any) { fmt.Fprintf(e.stderr, format, a...) }
	say("1. observe the approved tools/list (examples/acme-github.v1.tools-list.json)\n")
	d := &demoArtifacts{}
	var err error
	if d.tl1, err = manifest.ParseToolList(examples.V1); err != nil {
		return nil, err
	}
	d.o1 = manifest.BuildObserved(demoServer, d.tl1, d.tl1.Completeness, nil)
	say("   %d tools, completeness %s, manifest_digest %s\n", len(d.tl1.Tools), d.tl1.Completeness, *d.o1.Observed.ManifestDigest)
	say("2. pin it as the declared baseline\n")
	if d.declared, err = manifest.Pin(d.o1, manifest.PinOptions{}); err != nil {
		return nil, err
	}
	say("3. observe the server again, after a rug pull (examples/acme-github.v2-rugpull.tools-list.json)\n")
	if d.tl2, err = manifest.ParseToolList(examples.V2RugPull); err != nil {
		return nil, err
	}
	d.o2 = manifest.BuildObserved(demoServer, d.tl2, d.tl2.Completeness, nil)
	say("   %d tools, manifest_digest %s\n", len(d.tl2.Tools), *d.o2.Observed.ManifestDigest)
	pol := &manifest.Policy{DeclaredMCPManifests: map[string]manifest.PolicyManifest{demoServer: {ManifestDigest: d.declared.ManifestDigest}}}
	coarse, err := gate.Evaluate(gate.Input{Observed: d.o2, Policy: pol})
	if err != nil {
		return nil, err
	}
	say("4. coarse gate (policy map): verdict %s\n", coarse.Verdict)
	say("5. granular gate (declared baseline with field digests), with the structural diff of the snapshots\n")
	if d.report, err = gate.Evaluate(gate.Input{Observed: d.o2, Declared: d.declared, Policy: pol}); err != nil {
		return nil, err
	}
	// The snapshots kept beside the baseline and the observation say how
	// each tool changed, and the review profile decides on each (as gate
	// --declared-snapshot --observed-snapshot does).
	decisions, changes := decide.DecideAndDiff(
		schemadiff.Input{Side: schemadiff.Side{Completeness: string(d.tl1.Completeness)}, Tools: d.tl1.Tools},
		schemadiff.Input{Side: schemadiff.Side{Completeness: string(d.tl2.Completeness)}, Tools: d.tl2.Tools},
		decide.Options{Profile: schemadiff.ReviewProfile})
	d.report.StructuralChanges = changes
	for _, x := range decisions {
		d.report.Tools = append(d.report.Tools, x.Verdict())
	}
	d.report.DecisionProfile = schemadiff.ReviewProfile.Name
	return d, nil
}

// keep queues the demo's artifacts into dir.
func (d *demoArtifacts) keep(e *env, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErr("--keep: %s", safetext.Inert(err.Error()))
	}
	s1, err := manifest.MarshalSnapshot(demoServer, manifest.Identity{}, d.tl1, d.tl1.Completeness)
	if err != nil {
		return err
	}
	s2, err := manifest.MarshalSnapshot(demoServer, manifest.Identity{}, d.tl2, d.tl2.Completeness)
	if err != nil {
		return err
	}
	if err := e.emitMany("the declared snapshot", "demo artifacts", filepath.Join(dir, "declared.snapshot.json"), s1); err != nil {
		return err
	}
	if err := e.emitMany("the observed snapshot", "demo artifacts", filepath.Join(dir, "observed.v2.snapshot.json"), s2); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"observed.v1.json", d.o1}, {"declared.json", d.declared}, {"observed.v2.json", d.o2}} {
		b, err := manifest.MarshalArtifact(f.v)
		if err != nil {
			return err
		}
		if err := e.emitMany(f.name, "demo artifacts", filepath.Join(dir, f.name), b); err != nil {
			return err
		}
	}
	pb := []byte("declared_mcp_manifests:\n  " + demoServer + ":\n    manifest_digest: \"" + d.declared.ManifestDigest + "\"\n")
	if err := e.emitMany("the policy", "demo artifacts", filepath.Join(dir, "policy.yaml"), pb); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "   artifacts will be written to %s\n", safetext.Escape(dir))
	return nil
}

// render writes the reports as one document.
func (o *demoOptions) render(e *env, d *demoArtifacts, live *probe.Report, liveDeltas []delta.Tool) error {
	var buf bytes.Buffer
	var err error
	if o.format == "html" {
		// The page of both reports, each card with its readable delta
		// (report.RenderDemo has the reports alone).
		sections := []report.Section{report.GateSection(d.report, delta.Build(d.tl1.Tools, d.tl2.Tools, d.report.StructuralChanges, d.report.Tools))}
		if live != nil {
			sections = append(sections, report.DriftSection(live, liveDeltas))
		}
		err = writeHTML(&buf, "mcpdrift demo", sections...)
	} else {
		err = report.RenderDemo(&buf, d.report, live, o.format, report.Options{ToolVersion: version(), Color: useColor(e, "", o.color), ArtifactURI: "observed.v2.json"})
	}
	if err != nil {
		return usageErr("%s", safetext.Inert(err.Error()))
	}
	return e.emit("-", buf.Bytes())
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
	obs, tl, err := observe.List(ctx, pcfg)
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
	res, err := drift.Run(ctx, drift.Options{Server: cfg, Declared: declared, Profile: schemadiff.ReviewProfile, Secrets: e.secrets, Today: today()})
	if err != nil {
		return nil, nil, err
	}
	deltas, err := driftDeltas(declared.Tools, res.Served, res.Report, schemadiff.ReviewProfile, res.Classifier)
	if err != nil {
		return nil, nil, err
	}
	if err := demoGateway(ctx, e, url, tl, obs.Surface); err != nil {
		return nil, nil, err
	}
	return res.Report, deltas, nil
}
