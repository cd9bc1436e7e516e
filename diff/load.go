package diff

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// A FileReader reads one input file whole: the bytes of path (the command
// line also reads "-" as stdin).
type FileReader func(path string) ([]byte, error)

// ReadFile is the FileReader of a program: path read whole, refused when
// it is not a regular file or is larger than max bytes.
func ReadFile(max int64) FileReader {
	return func(path string) ([]byte, error) {
		f, err := regularFile(path, max)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, max+1))
		if err == nil && int64(len(b)) > max {
			err = fmt.Errorf("%s is larger than %d bytes", safetext.Quote(path), max)
		}
		return b, err
	}
}

// OpenFile is the FileOpener of a program, beside ReadFile(max): a regular
// file of at most max bytes is opened (its reading fails should it grow
// past max); any other is left to the FileReader, which reads or refuses
// it. "-" is left to the FileReader too (the command line reads it as
// stdin).
func OpenFile(max int64) FileOpener {
	return func(path string) (io.ReadCloser, bool, error) {
		if path == "-" {
			return nil, false, nil
		}
		f, err := regularFile(path, max)
		if err != nil {
			return nil, false, nil // the FileReader says why
		}
		return struct {
			io.Reader
			io.Closer
		}{&within{f, max}, f}, true, nil
	}
}

// regularFile opens the regular file at path, of at most max bytes, or
// says why not. A file of another kind is not opened: a named pipe opened
// and closed would lose its writer.
func regularFile(path string, max int64) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", safetext.Quote(path))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
	case !st.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file", safetext.Quote(path))
	case st.Size() > max:
		err = fmt.Errorf("%s: %d bytes is larger than %d", safetext.Quote(path), st.Size(), max)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// within reads r and fails once r has given more than left bytes.
type within struct {
	r    io.Reader
	left int64
}

func (w *within) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if w.left -= int64(n); w.left < 0 {
		return n, errors.New("the file grew past its bound while it was read")
	}
	return n, err
}

// SnapshotPathFor is where the snapshot pinned beside an artifact is:
// declared.json → declared.snapshot.json.
func SnapshotPathFor(path string) string {
	if strings.HasSuffix(path, ".json") {
		return strings.TrimSuffix(path, ".json") + ".snapshot.json"
	}
	return path + ".snapshot.json"
}

// Resolve reads the tools at path through read: a manifest in any form
// observe accepts, a snapshot, or a declared baseline, whose tools are in
// the snapshot pinned beside it (SnapshotPathFor), which is read instead
// and must belong to the baseline (the same server id and manifest
// digest). The result holds a List or a Snapshot; viaBaseline says the
// snapshot was found through a baseline. A document that cannot be read
// as one of these is a runerr.Usage error naming the file; read's own
// errors are returned as they are.
func Resolve(path string, read FileReader) (tools *manifest.Tools, viaBaseline bool, err error) {
	return ResolveKnown(path, read, nil, nil)
}

// FileOpener opens a regular file to be read as it is cut into parts
// (manifest.ReadSnapshotKnown), within the bound its FileReader keeps. ok
// is false for a file that is not opened so (stdin, a pipe): the
// FileReader reads it.
type FileOpener func(path string) (f io.ReadCloser, ok bool, err error)

// ResolveKnown is Resolve of a side whose tools may be among those known:
// a snapshot that open opens is read in parts as it is read, never whole
// (manifest.ReadSnapshotKnown), and any other, or one laid out otherwise,
// as Resolve reads it. What it returns is what Resolve returns.
func ResolveKnown(path string, read FileReader, open FileOpener, known *manifest.Known) (tools *manifest.Tools, viaBaseline bool, err error) {
	tools, err = readTools(read, open, path, known)
	if err != nil {
		return nil, false, err
	}
	d := tools.Declared
	if d == nil {
		return tools, false, nil
	}
	// What the snapshot is checked against; the baseline's entries are
	// not held while the snapshot is read.
	serverID, manifestDigest := d.Server.ID, d.ManifestDigest
	tools, d = nil, nil
	if tools, err = PairedSnapshot(path, read, open, known, serverID, manifestDigest); err != nil {
		return nil, false, err
	}
	return tools, true, nil
}

// PairedSnapshot reads the snapshot pinned beside the declared baseline at
// path (as ResolveKnown reads a snapshot) and checks that it belongs with
// the baseline: serverID and manifestDigest are the baseline's.
func PairedSnapshot(path string, read FileReader, open FileOpener, known *manifest.Known, serverID, manifestDigest string) (*manifest.Tools, error) {
	st, snapPath, err := snapshotBeside(path, read, open, known)
	if err != nil {
		return nil, err
	}
	if err := st.Snapshot.CheckPair(snapPath, "the baseline "+safetext.Quote(path), serverID, manifestDigest); err != nil {
		return nil, runerr.Usagef("%s", err.Error())
	}
	return st, nil
}

// SnapshotBeside reads the snapshot pinned beside the declared baseline
// at path, and its path.
func SnapshotBeside(path string, read FileReader) (*manifest.Tools, string, error) {
	return snapshotBeside(path, read, nil, nil)
}

func snapshotBeside(path string, read FileReader, open FileOpener, known *manifest.Known) (*manifest.Tools, string, error) {
	snapPath := SnapshotPathFor(path)
	if path == "-" {
		return nil, snapPath, runerr.Usagef("%s: a declared baseline read from stdin holds digests only, and its snapshot cannot be found beside it: pass the snapshot (NAME.snapshot.json) instead", safetext.Escape(path))
	}
	if _, err := os.Stat(snapPath); errors.Is(err, fs.ErrNotExist) {
		return nil, snapPath, runerr.Usagef("%s is a declared baseline: it holds digests, not tool definitions, and the snapshot pinned beside it (%s) is not there. Pass the snapshot, or pin again with --input, --url or --stdio (without --no-snapshot) to write one", safetext.Quote(path), safetext.Quote(snapPath))
	}
	st, err := readTools(read, open, snapPath, known)
	if err != nil {
		return nil, snapPath, err
	}
	if st.Snapshot == nil {
		return nil, snapPath, runerr.Usagef("%s, beside the baseline %s, is not a snapshot", safetext.Quote(snapPath), safetext.Quote(path))
	}
	return st, snapPath, nil
}

// ReadTools is manifest.ReadTools of path read with read: an artifact's
// error names the file already, any other is given its name
// (runerr.Usage).
func ReadTools(read FileReader, path string) (*manifest.Tools, error) {
	return readTools(read, nil, path, nil)
}

func readTools(read FileReader, open FileOpener, path string, known *manifest.Known) (*manifest.Tools, error) {
	if known != nil && open != nil {
		f, ok, err := open(path)
		if err != nil {
			return nil, err
		}
		if ok {
			s, err, done := manifest.ReadSnapshotKnown(f, path, known)
			f.Close()
			if done {
				if err != nil {
					return nil, toolsErr(path, err)
				}
				return &manifest.Tools{Snapshot: s}, nil
			}
		}
	}
	src, err := read(path)
	if err != nil {
		return nil, err
	}
	t, err := manifest.ReadToolsKnown(src, path, known)
	if err != nil {
		return nil, toolsErr(path, err)
	}
	return t, nil
}

// toolsErr is the error of reading path's tools: an artifact's names the
// file already, any other is given its name (runerr.Usage).
func toolsErr(path string, err error) error {
	if _, ok := errors.AsType[*manifest.ArtifactError](err); ok {
		return runerr.Usagef("%s", err.Error())
	}
	return runerr.Usagef("%s: %s", safetext.Escape(path), err.Error())
}

// ToolList is a resolved document as a list (what observe and pin take).
func ToolList(t *manifest.Tools) *manifest.ToolList {
	if t.Snapshot != nil {
		return t.Snapshot.ToolList()
	}
	return t.List
}

// Load reads one side of a comparison from path (Resolve), and the client
// capabilities its snapshot records the tools were observed with (nil
// when not recorded).
func Load(path string, read FileReader) (in schemadiff.Input, caps []byte, err error) {
	tools, viaBaseline, err := Resolve(path, read)
	if err != nil {
		return schemadiff.Input{Side: schemadiff.Side{Source: path}}, nil, err
	}
	in, caps = InputOf(path, tools, viaBaseline)
	return in, caps, nil
}

// InputOf is one side of a comparison resolved from path, and the client
// capabilities its snapshot records.
func InputOf(path string, tools *manifest.Tools, viaBaseline bool) (in schemadiff.Input, caps []byte) {
	in = schemadiff.Input{Side: schemadiff.Side{Source: path}}
	switch {
	case tools.Snapshot != nil:
		snap := tools.Snapshot
		caps = snap.ClientCapabilities
		in.Form = "snapshot"
		if viaBaseline {
			in.Form = "declared baseline + snapshot"
		}
		in.ServerID = snap.ServerID
		in.ManifestDigest = snap.ManifestDigest
		in.Completeness = string(snap.Completeness)
		id := snap.Identity
		in.Identity = &id
		in.Tools = snap.Tools
		in.Surface = snap.Surface
	default:
		tl := tools.List
		in.Form = tl.Form
		in.Completeness = string(tl.Completeness)
		in.Tools = tl.Tools
		in.ManifestDigest, _ = manifest.ManifestDigestOf(tl.Tools)
	}
	in.ToolCount = len(in.Tools)
	return in, caps
}
