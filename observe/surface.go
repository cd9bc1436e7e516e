package observe

import (
	"fmt"
	"strconv"

	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/surface"
)

// SurfaceReflections lists where the model-facing surface a listing read
// (instructions, prompts, resource templates, resources) carries a secret
// of secrets.
func SurfaceReflections(secrets *redact.Set, s *surface.Surface) []probe.Reflection {
	if secrets.Empty() || s == nil {
		return nil
	}
	var out []probe.Reflection
	if in := &s.Instructions; in.Value.Valid() {
		if label, _ := secrets.FindInValue(in.Value); label != "" {
			out = append(out, probe.Reflection{Source: label, Where: "the server's instructions"})
		}
	}
	for _, k := range surface.ListKinds {
		for i, it := range s.List(k).Items {
			if label, ptr := secrets.FindInValue(it.Value); label != "" {
				out = append(out, probe.Reflection{Source: label,
					Where: it.Label() + " (entry " + strconv.Itoa(i) + ") at JSON pointer " + safetext.Quote(ptr)})
			}
		}
	}
	return out
}

// PinnableSurface is the pinned form of an observed surface for a
// snapshot (nil for none), with a warning for each kind that was not
// observed (pinned as such: what a later observation finds there is new);
// a surface that carries a secret of secrets, or cannot be pinned
// (partial, a name twice), is a runerr.Usage error.
func PinnableSurface(target string, s *surface.Surface, secrets *redact.Set) (pinned []byte, warnings []string, err error) {
	if s == nil {
		return nil, nil, nil
	}
	if refl := SurfaceReflections(secrets, s); len(refl) > 0 {
		return nil, nil, runerr.Usagef("refusing to pin %s: the server reflects credentials into %s: it carries %s. Rotate the credential and fix the server", safetext.Quote(target), refl[0].Where, refl[0].Source)
	}
	if err := surface.Pinnable(s); err != nil {
		return nil, nil, runerr.Usagef("refusing to pin %s: %s", safetext.Quote(target), safetext.Inert(err.Error()))
	}
	if in := &s.Instructions; in.State != surface.Observed {
		warnings = append(warnings, fmt.Sprintf("the instructions were not observed (%s): pinned as not observed", safetext.Inert(in.Reason)))
	}
	for _, k := range surface.ListKinds {
		if l := s.List(k); l.State == surface.NotObserved {
			warnings = append(warnings, fmt.Sprintf("the %s were not observed (%s): pinned as not observed", k.Plural(), safetext.Inert(l.Reason)))
		}
	}
	pinned, err = surface.Marshal(s, "  ")
	return pinned, warnings, err
}
