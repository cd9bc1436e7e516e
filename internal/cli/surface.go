package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/surface"
)

// The model-facing surface in the commands (docs/surface.md): pin keeps
// it in the snapshot, drift, diff, lock check, review and approve compare
// it, the gateway enforces it.

// surfaceOptions are the options of a listing that observes the surface
// beside the tools: resources/list when resources are pinned (or
// --pin-resources asks for them).
func surfaceOptions(resources bool) *mcpclient.SurfaceOptions {
	return &mcpclient.SurfaceOptions{Resources: resources}
}

// emitEvidence writes the surface record to path ("" : nothing).
func emitEvidence(e *env, path string, ev *surface.Evidence) error {
	if path == "" || ev == nil {
		return nil
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, ev); err != nil {
		return err
	}
	return e.emitAs("the surface evidence", path, b.Bytes())
}

// surfaceApproveFlags name the items of the surface approve approves.
type surfaceApproveFlags struct {
	instructions                  bool
	prompts, templates, resources []string
}

func (f *surfaceApproveFlags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.instructions, "instructions", false, "approve the server's instructions as served now (or their absence)")
	fs.StringArrayVar(&f.prompts, "prompt", nil, "approve the prompt of this name as served now: changed, added, or its removal (repeatable)")
	fs.StringArrayVar(&f.templates, "template", nil, "approve the resource template of this uriTemplate as served now (repeatable)")
	fs.StringArrayVar(&f.resources, "resource", nil, "approve the resource of this uri as listed now, when resources are pinned (repeatable)")
}

func (f *surfaceApproveFlags) empty() bool {
	return !f.instructions && len(f.prompts)+len(f.templates)+len(f.resources) == 0
}

// refs are the items named (--all's are every item the check found
// changed: lockrun.Approve).
func (f *surfaceApproveFlags) refs() []lock.SurfaceRef {
	var out []lock.SurfaceRef
	if f.instructions {
		out = append(out, lock.SurfaceRef{Kind: surface.Instructions})
	}
	for _, x := range []struct {
		k    surface.Kind
		keys []string
	}{{surface.Prompt, f.prompts}, {surface.Template, f.templates}, {surface.Resource, f.resources}} {
		for _, key := range x.keys {
			out = append(out, lock.SurfaceRef{Kind: x.k, Key: key})
		}
	}
	return out
}

// saySurfaceApproved says on stderr which items of the surface were
// approved.
func saySurfaceApproved(e *env, ev []lock.Event) {
	for _, x := range ev {
		fmt.Fprintf(e.stderr, "mcpdrift: approved %s (%s)\n", lock.SurfaceRef{Kind: x.Kind, Key: x.Tool}.Label(), x.Action)
	}
}

// surfaceReview writes the surface's changes of a review: each with its
// severity, and the word diffs of the texts.
func surfaceReview(b *bytes.Buffer, st *lockrun.Review, ropt report.Options) {
	if st.Result.Surface == nil {
		return
	}
	for _, c := range st.Result.Surface.Changes {
		b.WriteString("\n")
		b.Write(report.SurfaceChangeText(c, ropt))
	}
	for _, n := range st.Result.Surface.Notes {
		fmt.Fprintf(b, "\nnote: %s\n", safetext.Inert(n))
	}
}

// askSurface asks for each item of the surface a check found changed, as
// askEach asks for each tool; it returns the items approved, and quit
// when the reviewer quit.
func askSurface(e *env, st *lockrun.Review, in *bufio.Reader, ropt report.Options) (approved []lock.SurfaceRef, quit bool) {
	if st.Result.Surface == nil {
		return nil, false
	}
	refs := st.ChangedSurface()
	for i, ref := range refs {
		fmt.Fprintf(e.stdout, "\n(surface %d/%d)\n", i+1, len(refs))
		for _, c := range st.Result.Surface.Changes {
			if c.Kind == ref.Kind && c.Key == ref.Key {
				e.stdout.Write(report.SurfaceChangeText(c, ropt))
			}
		}
		denied := st.SurfaceDenied([]lock.SurfaceRef{ref})
	ask:
		for {
			fmt.Fprintf(e.stdout, "(surface %d/%d) Approve %s as served now [y,n,q,?]? ", i+1, len(refs), ref.Label())
			ans, err := readAnswer(in)
			if err != nil {
				fmt.Fprintln(e.stdout)
				return approved, true
			}
			switch ans {
			case "y", "yes":
				if len(denied) > 0 {
					fmt.Fprintf(e.stdout, "The %s profile denies this change (%s). Type yes to approve it anyway: ", st.Server.Profile, strings.Join(denied, ", "))
					if again, err := readAnswer(in); err != nil || again != "yes" {
						fmt.Fprintln(e.stdout, "not approved")
						break ask
					}
				}
				approved = append(approved, ref)
				break ask
			case "n", "no":
				break ask
			case "q", "quit":
				return approved, true
			default:
				io.WriteString(e.stdout, reviewHelp)
			}
		}
	}
	return approved, false
}
