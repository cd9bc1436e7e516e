package drift

import (
	"sync"

	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/surface"
)

// pinnedOnce is the surface a drift's declared side pins, read once.
type pinnedOnce struct {
	once sync.Once
	s    *surface.Surface
	err  error
}

// pinnedSurface is the surface the declared side pins (nil: none), from
// the declared side read with the tools served known (Reading.WaitKnown)
// when it is not read yet.
func (r *run) pinnedSurface(served *manifest.ToolList) (*surface.Surface, error) {
	r.pinned.once.Do(func() {
		in := r.declared
		if r.reading != nil {
			var err error
			if in, _, err = r.reading.WaitKnown(served); err != nil {
				return // the run reports the declared side's error
			}
		}
		r.pinned.s, r.pinned.err = diff.PinnedSurface(in.Source, in.Surface)
	})
	return r.pinned.s, r.pinned.err
}

// withSurface is cfg observing the surface: resources when the declared
// side pins them (decided when they would be listed, after the tools:
// listed are the tools the listing read).
func (r *run) withSurface(cfg mcpclient.Config, listed func() *manifest.ToolList) mcpclient.Config {
	cfg.Surface = &mcpclient.SurfaceOptions{ResourcesIf: func() bool {
		s, _ := r.pinnedSurface(listed())
		return s != nil && s.Resources.State == surface.Observed
	}}
	return cfg
}

// surfaceCheck is the surface to compare: the pinned one and the one the
// run observed, and their reflections of a secret the run sent.
func (r *run) surfaceCheck(obs *mcpclient.Observation) (*probe.SurfaceCheck, error) {
	pinned, err := r.pinnedSurface(nil) // the declared side is read by now
	if err != nil {
		return nil, err
	}
	return &probe.SurfaceCheck{Pinned: pinned, Now: obs.Surface, Reflected: observe.SurfaceReflections(r.opt.Secrets, obs.Surface)}, nil
}

// surfaceEvidence is the record of an observed surface (a surface in which
// nothing was observed when s is nil).
func surfaceEvidence(serverID string, s *surface.Surface) *surface.Evidence {
	if s == nil {
		s = surface.New(surface.NotObserved, "the server could not be observed")
	}
	return surface.NewEvidence(serverID, s)
}
