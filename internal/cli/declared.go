package cli

import (
	"bytes"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The declared side of a drift is read while the server is listed: the
// listing needs of it only the client capabilities the tools were pinned
// with (they go into initialize), and those are in the head of the
// snapshot, before its tools. startDeclared reads the files' bytes and
// their heads (manifest.PeekHead) at once, and reads and checks the whole
// of them (loadToolsCaps: every digest recomputed, the artifact validated)
// on another goroutine, from the same bytes. Once the listing is done the
// run waits for that reading and goes by it alone: an error is the run's
// error (exit 2, as before, whatever the listing found), and when the
// capabilities it reads are not those the head predicted (members after
// the tools, in a snapshot not written by mcpdrift), the listing is made
// again with the capabilities read. While the server is listed the
// declared tools are held lean (their bytes and digests); once it is
// listed they get their parse back (attach).

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
// beside it) and starts reading the declared tools from those bytes. A
// file that cannot be read is left for that reading, which reports it as
// resolveTools does.
func startDeclared(e *env, path string, max int64) *declaredRead {
	pre := map[string][]byte{}
	var preErr error
	if src, err := readInput(e, path, max); err != nil {
		preErr = err
	} else {
		pre[path] = src
	}
	d := &declaredRead{done: make(chan struct{})}
	if src, ok := pre[path]; ok {
		h := manifest.PeekHead(src)
		switch h.Schema {
		case manifest.SnapshotSchemaID:
			d.predicted = h.ClientCapabilities
		case manifest.DeclaredSchemaID:
			if path != "-" {
				sp := snapshotPathFor(path)
				if b, err := readInput(e, sp, max); err == nil {
					pre[sp] = b
					if sh := manifest.PeekHead(b); sh.Schema == manifest.SnapshotSchemaID {
						d.predicted = sh.ClientCapabilities
					}
				}
			}
		}
	}
	read := func(p string) ([]byte, error) {
		if b, ok := pre[p]; ok {
			delete(pre, p) // each file is read once: not held past its reading
			return b, nil
		}
		if p == path && preErr != nil {
			return nil, preErr
		}
		return readInput(e, p, max) // a regular file, never stdin
	}
	go func() {
		defer close(d.done)
		d.in, d.caps, d.err = loadToolsCapsWith(path, read)
		// Held lean while the server is listed: the declared tools' bytes
		// and digests, not their parse (attach gives it back).
		for i := range d.in.Tools {
			d.in.Tools[i].Lean()
		}
	}()
	return d
}

// attachChanged gives their parse again to the tools a comparison reads
// the parse of, declared and served: a declared tool and the served tool
// of its name whose bytes are the same stay lean (their digests and the
// checks of every tool are all that is read of them); any other declared
// tool, the served tool of its name, and every served tool not declared
// (its definition is what a new tool is judged by) is parsed again from
// its bytes. A tool that was never lean is left as it is. served is nil
// when nothing was listed.
func attachChanged(declared, served []manifest.Tool) error {
	byName := firstByName(served)
	isDeclared := make(map[string]bool, len(declared))
	for i := range declared {
		dt := &declared[i]
		isDeclared[dt.Name] = true
		st := byName[dt.Name]
		if st != nil && bytes.Equal(dt.Raw(), st.Raw()) {
			continue
		}
		if err := dt.Attach(nil); err != nil {
			return err
		}
		if st != nil {
			if err := st.Attach(nil); err != nil {
				return err
			}
		}
	}
	for i := range served {
		if st := &served[i]; !isDeclared[st.Name] {
			if err := st.Attach(nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// attachAll gives every lean tool of declared and served its parse again,
// shared between a declared and a served tool of one name and the same
// bytes.
func attachAll(declared, served []manifest.Tool) error {
	sb := firstByName(served)
	for i := range declared {
		if err := declared[i].Attach(sb[declared[i].Name]); err != nil {
			return err
		}
	}
	db := firstByName(declared)
	for i := range served {
		if err := served[i].Attach(db[served[i].Name]); err != nil {
			return err
		}
	}
	return nil
}

// firstByName maps each name to the first tool of that name.
func firstByName(ts []manifest.Tool) map[string]*manifest.Tool {
	m := make(map[string]*manifest.Tool, len(ts))
	for i := range ts {
		if _, dup := m[ts[i].Name]; !dup {
			m[ts[i].Name] = &ts[i]
		}
	}
	return m
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
