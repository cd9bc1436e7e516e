package drift

import (
	"bytes"
	"os"

	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The declared side of a drift is read while the server is listed: the
// listing needs of it only the client capabilities the tools were pinned
// with (they go into initialize), and those are in the head of the
// snapshot, before its tools. Read reads the files whole at once, each
// once (what is parsed is what was read), peeks at their heads
// (manifest.PeekHead), and parses them on another goroutine. Once the
// listing is done the run goes by that reading alone: an error is the
// run's error, whatever the listing found, and when the capabilities it
// reads are not those the head predicted (members after the tools, in a
// snapshot not written by mcpdrift), the listing is made again with the
// capabilities read.

// Reading is the declared side being read.
type Reading struct {
	done chan struct{}
	in   schemadiff.Input
	caps []byte
	err  error
	// predicted are the client capabilities the heads gave (nil: none).
	predicted []byte
}

// Read reads path (and, for a declared baseline, the snapshot beside it)
// through read, peeks at their heads, and starts parsing the declared
// tools (diff.Resolve). A file that cannot be read is left for that
// parse, which reports it. before, when set, runs once the files are
// read, as the parse starts on its goroutine.
func Read(path string, read diff.FileReader, before func()) *Reading {
	d := &Reading{done: make(chan struct{})}
	type file struct {
		b   []byte
		err error
	}
	pre := map[string]file{}
	src, err := read(path)
	pre[path] = file{src, err}
	if err == nil {
		switch h := manifest.PeekHead(src); h.Schema {
		case manifest.SnapshotSchemaID:
			d.predicted = h.ClientCapabilities
		case manifest.DeclaredSchemaID:
			// The snapshot beside it, when it is a regular file (a pipe
			// is left to the parse).
			if sp := diff.SnapshotPathFor(path); path != "-" {
				if st, err := os.Stat(sp); err == nil && st.Mode().IsRegular() {
					b, err := read(sp)
					pre[sp] = file{b, err}
					if sh := manifest.PeekHead(b); err == nil && sh.Schema == manifest.SnapshotSchemaID {
						d.predicted = sh.ClientCapabilities
					}
				}
			}
		}
	}
	get := func(p string) ([]byte, error) {
		r, ok := pre[p]
		if !ok {
			return read(p) // a regular file, never stdin
		}
		delete(pre, p) // not held past its parse
		return r.b, r.err
	}
	if before != nil {
		before()
	}
	go func() {
		defer close(d.done)
		tools, viaBaseline, err := diff.Resolve(path, get)
		if err != nil {
			d.in, d.err = schemadiff.Input{Side: schemadiff.Side{Source: path}}, err
			return
		}
		d.in, d.caps = diff.InputOf(path, tools, viaBaseline)
	}()
	return d
}

// Wait returns what the reading found: the declared side, the client
// capabilities its snapshot records, or why it cannot be read.
func (d *Reading) Wait() (schemadiff.Input, []byte, error) {
	<-d.done
	return d.in, d.caps, d.err
}

// mispredicted reports whether the capabilities read are not those the
// listing was started with.
func (d *Reading) mispredicted() bool {
	<-d.done
	return d.err == nil && !bytes.Equal(d.caps, d.predicted)
}
