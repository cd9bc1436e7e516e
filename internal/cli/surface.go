package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
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

// surfaceOptionsFor are the options of a listing compared with a pinned
// surface: resources are asked for when they were pinned.
func surfaceOptionsFor(pinned *surface.Surface) *mcpclient.SurfaceOptions {
	return surfaceOptions(pinned != nil && pinned.Resources.State == surface.Observed)
}

// surfaceReflections lists where the surface carries a secret this run
// sent.
func surfaceReflections(e *env, s *surface.Surface) []probe.Reflection {
	if e.secrets.Empty() || s == nil {
		return nil
	}
	var out []probe.Reflection
	if in := &s.Instructions; in.Value.Valid() {
		if label, _ := e.secrets.FindInValue(in.Value); label != "" {
			out = append(out, probe.Reflection{Source: label, Where: "the server's instructions"})
		}
	}
	for _, k := range surface.ListKinds {
		for i, it := range s.List(k).Items {
			if label, ptr := e.secrets.FindInValue(it.Value); label != "" {
				out = append(out, probe.Reflection{Source: label,
					Where: it.Label() + " (entry " + strconv.Itoa(i) + ") at JSON pointer " + safetext.Quote(ptr)})
			}
		}
	}
	return out
}

// pinSurface is the pinned form of an observed surface for a snapshot,
// or why it cannot be pinned. A kind that was not observed is pinned as
// such, with a warning: what a later observation finds there is new.
func pinSurface(e *env, target string, s *surface.Surface) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	if refl := surfaceReflections(e, s); len(refl) > 0 {
		return nil, &exitError{ExitUsage, fmt.Sprintf("refusing to pin %s: the server reflects credentials into %s: it carries %s. Rotate the credential and fix the server", safetext.Quote(target), refl[0].Where, refl[0].Source)}
	}
	if err := surface.Pinnable(s); err != nil {
		return nil, &exitError{ExitUsage, fmt.Sprintf("refusing to pin %s: %s", safetext.Quote(target), safetext.Inert(err.Error()))}
	}
	if in := &s.Instructions; in.State != surface.Observed {
		fmt.Fprintf(e.stderr, "mcpdrift: warning: the instructions were not observed (%s): pinned as not observed\n", safetext.Inert(in.Reason))
	}
	for _, k := range surface.ListKinds {
		if l := s.List(k); l.State == surface.NotObserved {
			fmt.Fprintf(e.stderr, "mcpdrift: warning: the %s were not observed (%s): pinned as not observed\n", k.Plural(), safetext.Inert(l.Reason))
		}
	}
	return surface.Marshal(s, "  ")
}

// pinnedSurface reads the surface a snapshot pins (nil, nil when it pins
// none).
func pinnedSurface(file string, raw []byte) (*surface.Surface, error) {
	if raw == nil {
		return nil, nil
	}
	doc, err := jcs.Parse(raw)
	if err != nil {
		return nil, usageErr("%s: %s", safetext.Quote(file), safetext.Inert(err.Error()))
	}
	s, err := surface.Parse(doc.Root())
	if err != nil {
		return nil, usageErr("%s: %s", safetext.Quote(file), safetext.Inert(err.Error()))
	}
	return s, nil
}

// pinnedOnce is the surface a drift's declared side pins, read once.
type pinnedOnce struct {
	once sync.Once
	s    *surface.Surface
	err  error
}

// pinnedSurface is the surface the declared side pins (nil: none), read
// once it is read (the declared side is read beside the listing).
func (d *driftRun) pinnedSurface() (*surface.Surface, error) {
	d.pinned.once.Do(func() {
		in := d.declared
		if d.declaredRead != nil {
			var err error
			if in, _, err = d.declaredRead.wait(); err != nil {
				return // the run reports the declared side's error
			}
		}
		d.pinned.s, d.pinned.err = pinnedSurface(in.Source, in.Surface)
	})
	return d.pinned.s, d.pinned.err
}

// withSurface is cfg observing the surface: resources when the declared
// side pins them (decided when they would be listed, the declared side
// being read meanwhile).
func (d *driftRun) withSurface(cfg mcpclient.Config) mcpclient.Config {
	cfg.Surface = &mcpclient.SurfaceOptions{ResourcesIf: func() bool {
		s, _ := d.pinnedSurface()
		return s != nil && s.Resources.State == surface.Observed
	}}
	return cfg
}

// surfaceCheck is the surface to compare: the pinned one and the one the
// run observed, and their reflections of a secret into the run's.
func (d *driftRun) surfaceCheck(e *env, obs *mcpclient.Observation) (*probe.SurfaceCheck, error) {
	pinned, err := d.pinnedSurface()
	if err != nil {
		return nil, err
	}
	return &probe.SurfaceCheck{Pinned: pinned, Now: obs.Surface, Reflected: surfaceReflections(e, obs.Surface)}, nil
}

// surfaceEvidence is the record of an observed surface (a surface in which
// nothing was observed when s is nil).
func surfaceEvidence(serverID string, s *surface.Surface) *surface.Evidence {
	if s == nil {
		s = surface.New(surface.NotObserved, "the server could not be observed")
	}
	return surface.NewEvidence(serverID, s)
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

// diffSurface compares the surfaces two sides of a diff pin (when either
// pins one) into r: a change of the surface needs review, or is denied
// when the profile denies its code (instructions under fail-closed), and
// makes the diff exit 1.
func diffSurface(r *schemadiff.Report, old, nw schemadiff.Input, prof *schemadiff.DecisionProfile) error {
	if old.Surface == nil && nw.Surface == nil {
		return nil
	}
	po, err := pinnedSurface(old.Source, old.Surface)
	if err != nil {
		return err
	}
	pn, err := pinnedSurface(nw.Source, nw.Surface)
	if err != nil {
		return err
	}
	if pn == nil {
		r.Warnings = append(r.Warnings, "the new side pins no surface (instructions, prompts, resource templates), so the surfaces were not compared")
		return nil
	}
	res := surface.Compare(po, pn)
	r.Surface = &res
	for _, c := range res.Changes {
		if _, deny := prof.Deny[c.Code]; deny {
			r.Decision = schemadiff.Deny
			if !slices.Contains(r.DeniedBy, c.Code) {
				r.DeniedBy = append(r.DeniedBy, c.Code)
			}
		} else if r.Decision == schemadiff.Allow {
			r.Decision = schemadiff.Review
		}
		r.DecisionReason = ""
		r.ExitCode = schemadiff.ExitChanged
	}
	slices.Sort(r.DeniedBy)
	return nil
}

// pinLockSurface pins the surface a lock add observed into s, every item
// approved with a, after the checks pin makes (a kind not observed is
// pinned as such, with a warning).
func pinLockSurface(e *env, s *lock.Server, o *observation, a lock.Approval) error {
	if o.obs.Surface == nil {
		return nil
	}
	if _, err := pinSurface(e, o.target, o.obs.Surface); err != nil {
		return err
	}
	return s.PinSurface(o.obs.Surface, a)
}

// surfaceApproveFlags name the items of the surface approve approves.
type surfaceApproveFlags struct {
	instructions                  bool
	prompts, templates, resources []string
}

func (f *surfaceApproveFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.instructions, "instructions", false, "approve the server's instructions as served now (or their absence)")
	fs.StringArrayVar(&f.prompts, "prompt", nil, "approve the prompt of this name as served now: changed, added, or its removal (repeatable)")
	fs.StringArrayVar(&f.templates, "template", nil, "approve the resource template of this uriTemplate as served now (repeatable)")
	fs.StringArrayVar(&f.resources, "resource", nil, "approve the resource of this uri as listed now, when resources are pinned (repeatable)")
}

func (f *surfaceApproveFlags) empty() bool {
	return !f.instructions && len(f.prompts)+len(f.templates)+len(f.resources) == 0
}

// refs are the items named, or with all every item a check found changed.
func (f *surfaceApproveFlags) refs(all bool, st *reviewState) []lock.SurfaceRef {
	if all {
		if st.res.Surface == nil {
			return nil
		}
		return lock.SurfaceRefs(st.res.Surface.Changes)
	}
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

// surfaceDenied says which of refs the server's profile denies (changed
// instructions under fail-closed), for the explicit re-consent.
func surfaceDenied(st *reviewState, refs []lock.SurfaceRef) []string {
	prof, err := schemadiff.DecisionProfileByName(st.s.Profile)
	if err != nil || st.res.Surface == nil {
		return nil
	}
	var out []string
	for _, c := range st.res.Surface.Changes {
		if _, deny := prof.Deny[c.Code]; deny && slices.Contains(refs, lock.SurfaceRef{Kind: c.Kind, Key: c.Key}) {
			out = append(out, lock.SurfaceRef{Kind: c.Kind, Key: c.Key}.Label()+" (denied by "+c.Code+")")
		}
	}
	return out
}

// applySurface approves refs into the server; it returns how many events
// it recorded.
func (st *reviewState) applySurface(e *env, refs []lock.SurfaceRef, a lock.Approval) (int, error) {
	if len(refs) == 0 {
		return 0, nil
	}
	ev, err := st.s.ApproveSurface(st.o.served.Surface, refs, a)
	if err != nil {
		return 0, usageErr("%s (nothing was approved)", safetext.Inert(err.Error()))
	}
	for _, x := range ev {
		fmt.Fprintf(e.stderr, "mcpdrift: approved %s (%s)\n", lock.SurfaceRef{Kind: x.Kind, Key: x.Tool}.Label(), x.Action)
	}
	return len(ev), nil
}

// surfaceReview writes the surface's changes of a review: each with its
// severity, and the word diffs of the texts.
func surfaceReview(b *bytes.Buffer, st *reviewState, ropt report.Options) {
	if st.res.Surface == nil {
		return
	}
	for _, c := range st.res.Surface.Changes {
		b.WriteString("\n")
		b.Write(report.SurfaceChangeText(c, ropt))
	}
	for _, n := range st.res.Surface.Notes {
		fmt.Fprintf(b, "\nnote: %s\n", safetext.Inert(n))
	}
}

// askSurface asks for each item of the surface a check found changed, as
// askEach asks for each tool; it returns the items approved, and quit
// when the reviewer quit.
func askSurface(e *env, st *reviewState, in *bufio.Reader, ropt report.Options) (approved []lock.SurfaceRef, quit bool) {
	if st.res.Surface == nil {
		return nil, false
	}
	refs := lock.SurfaceRefs(st.res.Surface.Changes)
	for i, ref := range refs {
		fmt.Fprintf(e.stdout, "\n(surface %d/%d)\n", i+1, len(refs))
		for _, c := range st.res.Surface.Changes {
			if c.Kind == ref.Kind && c.Key == ref.Key {
				e.stdout.Write(report.SurfaceChangeText(c, ropt))
			}
		}
		denied := surfaceDenied(st, []lock.SurfaceRef{ref})
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
					fmt.Fprintf(e.stdout, "The %s profile denies this change (%s). Type yes to approve it anyway: ", st.s.Profile, strings.Join(denied, ", "))
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
