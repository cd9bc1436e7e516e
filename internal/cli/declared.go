package cli

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
// snapshot, before its tools. startDeclared reads the files whole at once,
// each once (what is parsed is what was read), peeks at their heads
// (manifest.PeekHead), and parses them on another goroutine
// (resolveTools' reading). Once the listing is done the run goes by that
// reading alone: an error is the run's error (exit 2, as before, whatever
// the listing found), and when the capabilities it reads are not those the
// head predicted (members after the tools, in a snapshot not written by
// mcpdrift), the listing is made again with the capabilities read.

// declaredRead is the declared side being read.
type declaredRead struct {
	done chan struct{}
	in   schemadiff.Input
	caps []byte
	err  error
	// predicted are the client capabilities the heads gave (nil: none).
	predicted []byte
}

// startDeclared reads path (and, for a declared baseline, the snapshot
// beside it), peeks at their heads, and starts parsing the declared tools.
// A file that cannot be read is left for that parse, which reports it as
// resolveTools does. before, when set, runs once the files are read, as
// the parse starts on its goroutine.
func startDeclared(e *env, path string, max int64, before func()) *declaredRead {
	d := &declaredRead{done: make(chan struct{})}
	type read struct {
		b   []byte
		err error
	}
	pre := map[string]read{}
	src, err := readInput(e, path, max)
	pre[path] = read{src, err}
	if err == nil {
		switch h := manifest.PeekHead(src); h.Schema {
		case manifest.SnapshotSchemaID:
			d.predicted = h.ClientCapabilities
		case manifest.DeclaredSchemaID:
			// The snapshot beside it, when it is a regular file (a pipe
			// is left to the parse, which reads it as resolveTools does).
			if sp := snapshotPathFor(path); path != "-" {
				if st, err := os.Stat(sp); err == nil && st.Mode().IsRegular() {
					b, err := readInput(e, sp, max)
					pre[sp] = read{b, err}
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
			return readInput(e, p, max) // a regular file, never stdin
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

// wait returns what the reading found.
func (d *declaredRead) wait() (schemadiff.Input, []byte, error) {
	<-d.done
	return d.in, d.caps, d.err
}

// mispredicted reports whether the capabilities read are not those the
// listing was started with.
func (d *declaredRead) mispredicted() bool {
	<-d.done
	return d.err == nil && !bytes.Equal(d.caps, d.predicted)
}
