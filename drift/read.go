package drift

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The declared side of a drift is read once the server is listed: the
// listing needs of it only the client capabilities the tools were pinned
// with (they go into initialize), and those are in the head of the
// snapshot, before its tools. Read peeks at the heads (manifest.PeekHead,
// of at most manifest.PeekLimit bytes of each file), and the declared side
// is read when the run first needs it: after the listing, with the tools
// just listed known (manifest.ReadToolsKnown: a snapshot of the same bytes
// is split, not parsed, and the run holds one copy of those bytes, not
// two), or without them when something needs it before. Whatever the
// listing found, a declared side that cannot be read is the run's error,
// and when the capabilities it reads are not those the head predicted
// (members after the tools, in a snapshot not written by mcpdrift), the
// listing is made again with the capabilities read.

// Reading is the declared side, peeked at and read when first needed.
type Reading struct {
	once sync.Once
	read func(*manifest.Known)
	in   schemadiff.Input
	caps []byte
	err  error
	// predicted are the client capabilities the heads gave (nil: none).
	predicted []byte
}

// Read peeks at path (and, for a declared baseline, the snapshot beside
// it) through read: a regular file's first manifest.PeekLimit bytes, and
// any other file (stdin, a pipe) whole, kept for the reading. A file that
// cannot be read is left for the reading, which reports it. before, when
// set, runs once the heads are peeked at.
func Read(path string, read diff.FileReader, before func()) *Reading {
	d := &Reading{}
	type file struct {
		b   []byte
		err error
	}
	pre := map[string]file{}
	peek := func(p string) manifest.Head {
		if b, ok := headOf(p); ok {
			return manifest.PeekHead(b)
		}
		b, err := read(p)
		pre[p] = file{b, err}
		if err != nil {
			return manifest.Head{}
		}
		return manifest.PeekHead(b)
	}
	switch h := peek(path); h.Schema {
	case manifest.SnapshotSchemaID:
		d.predicted = h.ClientCapabilities
	case manifest.DeclaredSchemaID:
		// The snapshot beside it, when it is a regular file (a pipe is
		// left to the reading).
		if sp := diff.SnapshotPathFor(path); path != "-" {
			if b, ok := headOf(sp); ok {
				if sh := manifest.PeekHead(b); sh.Schema == manifest.SnapshotSchemaID {
					d.predicted = sh.ClientCapabilities
				}
			}
		}
	}
	get := func(p string) ([]byte, error) {
		r, ok := pre[p]
		if !ok {
			return read(p)
		}
		delete(pre, p) // not held past the reading
		return r.b, r.err
	}
	d.read = func(known *manifest.Known) {
		tools, viaBaseline, err := diff.ResolveKnown(path, get, known)
		if err != nil {
			d.in, d.err = schemadiff.Input{Side: schemadiff.Side{Source: path}}, err
			return
		}
		d.in, d.caps = diff.InputOf(path, tools, viaBaseline)
	}
	if before != nil {
		before()
	}
	return d
}

// headOf is the first manifest.PeekLimit bytes of the regular file at
// path (false: it is not one, or cannot be read).
func headOf(path string) ([]byte, bool) {
	if path == "-" {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, manifest.PeekLimit))
	return b, err == nil
}

// Wait reads the declared side, once (ReadKnown), and returns what it
// found: the declared side, the client capabilities its snapshot records,
// or why it cannot be read.
func (d *Reading) Wait() (schemadiff.Input, []byte, error) { return d.WaitKnown(nil) }

// WaitKnown is Wait with the tools just listed known: when it is the first
// to read the declared side, a snapshot's tools of the same bytes are
// theirs (manifest.ReadToolsKnown). What it returns is what Wait returns.
func (d *Reading) WaitKnown(served []manifest.Tool) (schemadiff.Input, []byte, error) {
	d.once.Do(func() { d.read(manifest.NewKnown(served)) })
	return d.in, d.caps, d.err
}

// mispredicted reports whether the capabilities read are not those the
// listing was started with.
func (d *Reading) mispredicted() bool {
	_, caps, err := d.Wait()
	return err == nil && !bytes.Equal(caps, d.predicted)
}
