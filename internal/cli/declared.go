package cli

import (
	"bytes"
	"os"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The declared side of a drift is read while the server is listed: the
// listing needs of it only the client capabilities the tools were pinned
// with (they go into initialize), and those are in the head of the
// snapshot, before its tools. startDeclared opens the files and peeks at
// their heads (manifest.PeekHead) at once, and reads the whole of them on
// another goroutine (resolveTools' reading, lean and with the snapshot's
// digests deferred: a snapshot in a regular file is framed, its tools
// hollow on the open file). As pages arrive, a served tool with a
// declared tool's bytes is made to hold them as that tool does
// (hollowServed). Once the listing is done the run settles the declared
// side from the served tools (settle: every digest known, the artifact
// checked) and goes by that reading alone: an error is the run's error
// (exit 2, as before, whatever the listing found), and when the
// capabilities it reads are not those the head predicted (members after
// the tools, in a snapshot not written by mcpdrift), the listing is made
// again with the capabilities read. The tools a comparison diffs get their
// parse back (attachChanged).

// declaredRead is the declared side being read.
type declaredRead struct {
	done chan struct{}
	in   schemadiff.Input
	caps []byte
	err  error
	// predicted are the client capabilities the heads gave (nil: none).
	predicted []byte
	// snap is the snapshot read, unsettled (manifest.ReadOptions.DeferDigests)
	// until settle, read from snapPath; nil when the declared side is not
	// a snapshot.
	snap     *manifest.Snapshot
	snapPath string
	// files are the regular files read, kept open: the declared tools
	// are hollow (manifest.ReadOptions.Source), and what reads a hollow
	// tool's bytes reads them again from its file, checked (close).
	files []*os.File
}

// startDeclared opens path (and, for a declared baseline, the snapshot
// beside it), peeks at their heads, and starts reading the declared tools
// from them. A file that cannot be read is left for that reading, which
// reports it as resolveTools does. A snapshot in a regular file is read
// framed (manifest.ReadSnapshotFramed: scanned in chunks, never parsed
// whole, its tools hollow and settled from the served tools), or when it
// cannot be, one tool at a time (hollow, its digests deferred): neither
// its parse tree nor its bytes are held while the server is listed. The
// caller closes d once the run is done with the declared tools. before,
// when set, runs once the files are open and stdin or a pipe is read, as
// the reading starts on its goroutine.
func startDeclared(e *env, path string, max int64, before func()) *declaredRead {
	d := &declaredRead{done: make(chan struct{})}
	// The files opened now, each handed once to the reading (a regular
	// file is open, not read; stdin or a pipe is read whole).
	type opened struct {
		in  input
		err error
	}
	pre := map[string]opened{}
	first, err := openInput(e, path, max, false)
	pre[path] = opened{first, err}
	head := func(in input) manifest.Head {
		if in.file != nil {
			return manifest.PeekHeadAt(in.file, in.size)
		}
		return manifest.PeekHead(in.bytes)
	}
	if err == nil {
		switch h := head(first); h.Schema {
		case manifest.SnapshotSchemaID:
			d.predicted = h.ClientCapabilities
		case manifest.DeclaredSchemaID:
			// Only the head of the snapshot beside it is read now (when it
			// is a regular file: a pipe is left to the reading).
			if sp := snapshotPathFor(path); path != "-" {
				if st, err := os.Stat(sp); err == nil && st.Mode().IsRegular() {
					side, err := openInput(e, sp, max, false)
					pre[sp] = opened{side, err}
					if sh := head(side); err == nil && sh.Schema == manifest.SnapshotSchemaID {
						d.predicted = sh.ClientCapabilities
					}
				}
			}
		}
	}
	read := func(p string) ([]byte, manifest.ReadOptions, error) {
		opt := manifest.ReadOptions{Lean: true, DeferDigests: true}
		o, ok := pre[p]
		if ok {
			delete(pre, p) // each file is read once, and not held past its reading
		} else {
			o.in, o.err = openInput(e, p, max, false) // a regular file, never stdin
		}
		in, err := o.in, o.err
		if err != nil {
			return nil, opt, err
		}
		if in.file != nil {
			d.files = append(d.files, in.file)
			opt.Source, opt.Size = in.file, in.size
		}
		return in.bytes, opt, nil
	}
	if before != nil {
		before()
	}
	go func() {
		defer close(d.done)
		if testHookDeclaredRead != nil {
			testHookDeclaredRead()
		}
		defer func() {
			for _, o := range pre { // opened, and not read: the reading stopped before it
				if o.in.file != nil {
					o.in.file.Close()
				}
			}
		}()
		tools, viaBaseline, err := resolveToolsWith(path, read)
		if err != nil {
			d.in, d.err = schemadiff.Input{Side: schemadiff.Side{Source: path}}, err
			return
		}
		d.snap, d.snapPath = tools.Snapshot, path
		if viaBaseline {
			d.snapPath = snapshotPathFor(path)
		}
		d.in, d.caps = inputOf(path, tools, viaBaseline)
	}()
	return d
}

// testHookDeclaredRead, when set (by a test), runs as the declared side's
// reading begins.
var testHookDeclaredRead func()

// settle finishes the reading once the server is listed: a declared tool
// whose bytes a served tool of its name has takes that tool's digests
// (computed from the same bytes), every other one is digested from its
// own bytes, and the snapshot's manifest_digest is checked
// (manifest.Snapshot.Settle). served is nil when nothing was listed. An
// error is the run's (exit 2), as any other declared side that cannot be
// read.
func (d *declaredRead) settle(served []manifest.Tool) error {
	<-d.done
	if d.err != nil || d.snap == nil {
		return d.err
	}
	if err := d.snap.Settle(served); err != nil {
		d.err = toolsErr(d.snapPath, err)
		return d.err
	}
	d.in.ManifestDigest = d.snap.ManifestDigest
	return nil
}

// close closes the files the declared tools were read from, once the
// reading is done.
func (d *declaredRead) close() {
	if d == nil {
		return
	}
	<-d.done
	for _, f := range d.files {
		f.Close()
	}
	d.files = nil
}

// ready returns what the reading found once it is done; ok is false
// while it runs, or when it failed (the run reports that once the listing
// is done).
func (d *declaredRead) ready() (in schemadiff.Input, ok bool) {
	select {
	case <-d.done:
		return d.in, d.err == nil
	default:
		return in, false
	}
}

// hollowServed makes each lean served tool that holds the bytes of a
// declared tool hold them as that tool does (manifest.Tool.ShareBytesOf:
// hollow on its file, or its bytes when it keeps them), and gives every
// other one its own copy of its bytes: an unchanged tool's bytes are then
// held once, or by neither side, and a page of the listing is not kept
// alive by the few tools of it that changed. declared maps the SHA-256 of
// their bytes to the declared tools (bySum: a framed declared tool has no
// name until it is settled).
func hollowServed(declared map[[32]byte]*manifest.Tool, served []manifest.Tool) {
	for i := range served {
		st := &served[i]
		if !st.IsLean() || st.IsHollow() {
			continue
		}
		if !st.ShareBytesOf(declared[st.RawSum()]) {
			st.OwnBytes()
		}
	}
}

// bySum maps the SHA-256 of their bytes to the lean tools of ts (the
// first of each): hollow ones, and those that keep their bytes (a
// declared side read from stdin or a pipe, whose bytes a served tool of
// the same bytes then shares, ShareBytesOf).
func bySum(ts []manifest.Tool) map[[32]byte]*manifest.Tool {
	m := make(map[[32]byte]*manifest.Tool, len(ts))
	for i := range ts {
		if t := &ts[i]; t.IsLean() {
			if k := t.RawSum(); m[k] == nil {
				m[k] = t
			}
		}
	}
	return m
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
	return attach(changedTools(declared, served))
}

// attach gives each of tools its parse again (manifest.Tool.Attach).
func attach(tools []*manifest.Tool) error {
	for _, t := range tools {
		if err := t.Attach(nil); err != nil {
			return err
		}
	}
	return nil
}

// changedTools are the tools attachChanged parses again, in its order
// (a tool may be named twice: Attach leaves an attached tool as it is).
func changedTools(declared, served []manifest.Tool) []*manifest.Tool {
	var out []*manifest.Tool
	byName := manifest.FirstByName(served)
	isDeclared := make(map[string]bool, len(declared))
	for i := range declared {
		dt := &declared[i]
		isDeclared[dt.Name] = true
		st := byName[dt.Name]
		if st != nil && dt.SameBytes(st) {
			continue
		}
		out = append(out, dt)
		if st != nil {
			out = append(out, st)
		}
	}
	for i := range served {
		if st := &served[i]; !isDeclared[st.Name] {
			out = append(out, st)
		}
	}
	return out
}

// attachAll gives every lean tool of declared and served its parse again,
// shared between a declared and a served tool of one name and the same
// bytes.
func attachAll(declared, served []manifest.Tool) error {
	sb := manifest.FirstByName(served)
	for i := range declared {
		if err := declared[i].Attach(sb[declared[i].Name]); err != nil {
			return err
		}
	}
	db := manifest.FirstByName(declared)
	for i := range served {
		if err := served[i].Attach(db[served[i].Name]); err != nil {
			return err
		}
	}
	return nil
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
