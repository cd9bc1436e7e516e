package drift

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The declared side of a drift is read around the listing: the listing
// needs of it only the client capabilities the tools were pinned with
// (they go into initialize), and those are in the head of the snapshot,
// before its tools. Read peeks at the heads (manifest.PeekHead, of at most
// manifest.PeekLimit bytes of each file) and starts reading a declared
// baseline, while the run holds little. The snapshot is read when the run
// first needs it: after the listing, with the tools just listed known
// (diff.ResolveKnown: a snapshot of the same bytes is cut as it is read,
// not parsed, and the run holds one copy of those bytes, not two), or
// without them when something needs it before. Whatever the listing
// found, a declared side that cannot be read is the run's error, and when
// the capabilities it reads are not those the head predicted (members
// after the tools, in a snapshot not written by mcpdrift), the listing is
// made again with the capabilities read.

// Reading is the declared side, peeked at and read when first needed.
type Reading struct {
	once sync.Once
	read func(*manifest.Known) (*manifest.Tools, bool, error)
	path string
	in   schemadiff.Input
	caps []byte
	err  error
	// predicted are the client capabilities the heads gave (nil: none).
	predicted []byte
}

// Read peeks at path (and, for a declared baseline, the snapshot beside
// it): a regular file as far as its head goes, and any other file
// (stdin, a pipe) whole through read, kept for the reading. A baseline is
// read at once, on a goroutine of its own; a snapshot that open opens is
// read as it is cut (open nil: every file whole through read). A file
// that cannot be read is left for the reading, which reports it. before,
// when set, runs once the heads are peeked at.
func Read(path string, read diff.FileReader, open diff.FileOpener, before func()) *Reading {
	f := &files{read: read, open: open, pre: map[string]file{}}
	d := &Reading{path: path, read: func(known *manifest.Known) (*manifest.Tools, bool, error) {
		return diff.ResolveKnown(path, f.get, f.opener, known)
	}}
	switch h := f.peek(path); h.Schema {
	case manifest.SnapshotSchemaID:
		d.predicted = h.ClientCapabilities
	case manifest.DeclaredSchemaID:
		// The snapshot beside it, when it is a regular file (a pipe is
		// left to the reading).
		if sh, ok := headOf(diff.SnapshotPathFor(path)); ok && path != "-" && sh.Schema == manifest.SnapshotSchemaID {
			d.predicted = sh.ClientCapabilities
		}
		d.read = f.baseline(path)
	}
	if before != nil {
		before()
	}
	return d
}

// files are the files of a reading: those read whole to be peeked at
// (pre) are read from there, once.
type files struct {
	read diff.FileReader
	open diff.FileOpener
	pre  map[string]file
}

type file struct {
	b   []byte
	err error
}

// peek is the head of the file at p: of a regular file's first bytes, or
// of the whole of any other, kept.
func (f *files) peek(p string) manifest.Head {
	if h, ok := headOf(p); ok {
		return h
	}
	b, err := f.read(p)
	f.pre[p] = file{b, err}
	if err != nil {
		return manifest.Head{}
	}
	return manifest.PeekHead(b)
}

// get reads p: kept, or read now.
func (f *files) get(p string) ([]byte, error) {
	r, ok := f.pre[p]
	if !ok {
		return f.read(p)
	}
	delete(f.pre, p) // not held past the reading
	return r.b, r.err
}

// opener opens p to be read as it is cut, unless it is kept (read) or
// there is no open.
func (f *files) opener(p string) (io.ReadCloser, bool, error) {
	if _, ok := f.pre[p]; ok || f.open == nil {
		return nil, false, nil
	}
	return f.open(p)
}

// baseline starts reading the declared baseline at path, and returns what
// reads the declared side: the snapshot beside it, checked against it. Of
// the baseline only what the snapshot is checked against is kept (its
// entries are not held while the snapshot is read); a file that is no
// baseline after all is what it is.
func (f *files) baseline(path string) func(*manifest.Known) (*manifest.Tools, bool, error) {
	type base struct {
		tools                    *manifest.Tools // not a baseline after all
		serverID, manifestDigest string
		err                      error
	}
	wait := par.Go(func() base {
		t, err := diff.ReadTools(f.get, path)
		if err != nil || t.Declared == nil {
			return base{tools: t, err: err}
		}
		return base{serverID: t.Declared.Server.ID, manifestDigest: t.Declared.ManifestDigest}
	})
	return func(known *manifest.Known) (*manifest.Tools, bool, error) {
		switch b := wait(); {
		case b.err != nil:
			return nil, false, b.err
		case b.tools != nil:
			return b.tools, false, nil
		default:
			st, err := diff.PairedSnapshot(path, f.get, f.opener, known, b.serverID, b.manifestDigest)
			return st, true, err
		}
	}
}

// headOf is the head of the regular file at path, read no further than
// it needs (false: it is not one, or cannot be opened). Another file is
// not opened (a named pipe opened and closed would lose its writer).
func headOf(path string) (manifest.Head, bool) {
	if st, err := os.Stat(path); path == "-" || err != nil || !st.Mode().IsRegular() {
		return manifest.Head{}, false
	}
	f, err := os.Open(path)
	if err != nil {
		return manifest.Head{}, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return manifest.Head{}, false
	}
	return manifest.PeekHeadFrom(f), true
}

// Wait reads the declared side, once, and returns what it found: the
// declared side, the client capabilities its snapshot records, or why it
// cannot be read.
func (d *Reading) Wait() (schemadiff.Input, []byte, error) { return d.WaitKnown(nil) }

// WaitKnown is Wait with the tools just listed known (served, nil: none):
// when it is the first to read the declared side, a snapshot's tools of
// the same bytes are theirs (diff.ResolveKnown). What it returns is what
// Wait returns.
func (d *Reading) WaitKnown(served *manifest.ToolList) (schemadiff.Input, []byte, error) {
	d.once.Do(func() {
		tools, viaBaseline, err := d.read(manifest.NewKnown(served))
		if err != nil {
			d.in, d.err = schemadiff.Input{Side: schemadiff.Side{Source: d.path}}, err
			return
		}
		d.in, d.caps = diff.InputOf(d.path, tools, viaBaseline)
	})
	return d.in, d.caps, d.err
}

// mispredicted reports whether the capabilities read are not those the
// listing was started with.
func (d *Reading) mispredicted() bool {
	_, caps, err := d.Wait()
	return err == nil && !bytes.Equal(caps, d.predicted)
}
