// Package pin promotes a clean, complete observation to a declared
// baseline (assay.declared_mcp_manifest.v0) and keeps the tool
// definitions it pinned in a snapshot beside it: from an observed record
// (Observed: digests only), a saved tools/list (File), or a live server
// (Server: its tools, identity, client capabilities and model-facing
// surface). Every pin refuses an observation that is partial, of unknown
// completeness, ambiguous, empty (unless allowed) or not observed, a list
// that carries a secret the run sent, and tool names that collide unless
// acknowledged.
package pin

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Result is a pin.
type Result struct {
	// Declared is the declared baseline.
	Declared *manifest.Declared
	// Observed is the observed record pinned.
	Observed *manifest.Observed
	// Tools are the tool definitions pinned (nil for a record pinned: it
	// holds digests only), with what their snapshot records beside them.
	Tools           *manifest.ToolList
	Identity        manifest.Identity
	Completeness    manifest.Completeness
	SnapshotOptions manifest.SnapshotOptions
	// Target is the server as recorded (a live pin), else the source.
	Target string
	// Warnings say what was pinned as it is but will be reported later:
	// kinds of the surface that were not observed, numbers the digests
	// cannot tell apart, tools that break the specification's shape.
	Warnings []string
	// Acknowledged say which colliding names the suppression file
	// acknowledged, and why.
	Acknowledged []string
}

// HasSnapshot reports whether the pin has tool definitions to keep.
func (r *Result) HasSnapshot() bool { return r.Tools != nil }

// WriteSnapshot writes the snapshot of the tools pinned
// (mcpdrift.tool_snapshot.v1): the bytes the server sent, its identity,
// the client capabilities and the surface.
func (r *Result) WriteSnapshot(w io.Writer) error {
	if r.Tools == nil {
		return runerr.Usagef("an observed record holds digests, not tool definitions: there is no snapshot to write")
	}
	sw, err := manifest.NewSnapshotWriter(r.Declared.Server.ID, r.Identity, r.Tools, r.Completeness, r.SnapshotOptions)
	if err != nil {
		return err
	}
	_, err = sw.WriteTo(w)
	return err
}

// Side is the pinned tools as the declared side of a comparison (drift,
// diff): the snapshot read back, as a file pinned beside the baseline is.
func (r *Result) Side() (schemadiff.Input, error) {
	var b bytes.Buffer
	if err := r.WriteSnapshot(&b); err != nil {
		return schemadiff.Input{}, err
	}
	snap, err := manifest.ParseSnapshot(b.Bytes(), "the pinned snapshot")
	if err != nil {
		return schemadiff.Input{}, err
	}
	id := snap.Identity
	in := schemadiff.Input{Side: schemadiff.Side{Source: r.Target, Form: "snapshot", ServerID: snap.ServerID, ManifestDigest: snap.ManifestDigest,
		Completeness: string(snap.Completeness), Identity: &id, Surface: snap.Surface}, Tools: snap.Tools}
	in.ToolCount = len(in.Tools)
	return in, nil
}

// ObservedOptions pin an observed record.
type ObservedOptions struct {
	Observed *manifest.Observed
	// Source names the record in messages (its file).
	Source string
	// AllowEmpty pins a server that serves no tools.
	AllowEmpty bool
	// Vouch refuses colliding tool names unless acknowledged (its What and
	// Servers are the pin's).
	Vouch manifest.Vouch
}

// Observed promotes an observed record (digests only) to a declared
// baseline.
func Observed(ctx context.Context, opt ObservedOptions) (*Result, error) {
	if opt.Observed == nil {
		return nil, runerr.Usagef("no observed record to pin")
	}
	r := &Result{Observed: opt.Observed, Target: opt.Source}
	return r, r.pin(opt.Source, opt.AllowEmpty, opt.Vouch, nil)
}

// pin is every pin's last step: the baseline of r.Observed (manifest.Pin,
// whose refusals come first), refused when its names collide and were not
// acknowledged, then the shape warnings of the list checked (checks).
func (r *Result) pin(source string, allowEmpty bool, v manifest.Vouch, checks *checks) error {
	o := r.Observed
	d, err := manifest.Pin(o, manifest.PinOptions{AllowEmpty: allowEmpty})
	if err != nil {
		return runerr.Usagef("%s: %s", safetext.Escape(source), err.Error())
	}
	names := make([]string, len(o.Observed.ToolDigests))
	for i := range o.Observed.ToolDigests {
		names[i] = o.Observed.ToolDigests[i].Name
	}
	v.What, v.Servers = "pin "+safetext.Quote(source), []string{o.Server.ID, source}
	if r.Acknowledged, err = v.Check(names); err != nil {
		return err
	}
	if checks != nil {
		r.Warnings = append(r.Warnings, checks.shapeWarnings()...)
	}
	r.Declared = d
	return nil
}

// refused is the error of a pin refused (runerr.Usage), its arguments
// escaped.
func refused(target, format string, args ...any) error {
	return runerr.Usagef("refusing to pin %s: %s", safetext.Quote(target), fmt.Sprintf(format, args...))
}
