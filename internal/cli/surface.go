package cli

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/mcpdrift/mcpdrift/jcs"
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
	return e.emit(path, b.Bytes())
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
