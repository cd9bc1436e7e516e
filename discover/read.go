package discover

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxDirFiles bounds the files of one directory of configurations
// (Continue's mcpServers/).
const maxDirFiles = 1000

// file is one configuration file read (or why it could not be).
type file struct {
	path string
	src  []byte
	err  error
}

// candidate is where one client's configuration may be: the file rel
// below root (the tree it must not leave), or with glob every file below
// rel whose name ends in one of glob.
type candidate struct {
	client  string
	scope   string
	root    string
	rel     string
	glob    []string
	format  *format
	entries func(*node) ([]found, error)
	// formats, when set, picks the format by file extension (glob).
	formats map[string]*format
}

// found is one entry of a file, or why it could not be read.
type found struct {
	project string
	name    string
	entry   *Entry
	err     error
}

// files reads the candidate's files; a file that does not exist is not
// an error.
func (c candidate) files(max int64) []file {
	full := filepath.Join(c.root, c.rel)
	r, err := os.OpenRoot(c.root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return []file{{path: full, err: errors.New(reason(err))}}
	}
	defer r.Close()
	if c.glob == nil {
		f := readIn(r, c.root, c.rel, max)
		if f.err != nil && errors.Is(f.err, fs.ErrNotExist) {
			return nil
		}
		return []file{f}
	}
	st, err := r.Stat(c.rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return []file{{path: full, err: errors.New(outOfTree(c.root, c.rel, err))}}
	case !st.IsDir():
		return []file{{path: full, err: errors.New("is not a directory")}}
	}
	d, err := r.Open(c.rel)
	if err != nil {
		return []file{{path: full, err: errors.New(outOfTree(c.root, c.rel, err))}}
	}
	ents, err := d.ReadDir(maxDirFiles + 1)
	d.Close()
	if err != nil && err != io.EOF {
		return []file{{path: full, err: errors.New(reason(err))}}
	}
	if len(ents) > maxDirFiles {
		return []file{{path: full, err: fmt.Errorf("holds more than %d files; none was read", maxDirFiles)}}
	}
	var names []string
	for _, e := range ents {
		if slices.ContainsFunc(c.glob, func(ext string) bool { return strings.HasSuffix(e.Name(), ext) }) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var out []file
	for _, n := range names {
		f := readIn(r, c.root, filepath.Join(c.rel, n), max)
		if f.err != nil && errors.Is(f.err, fs.ErrNotExist) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// readIn reads rel below the root r (rootDir is its path, for messages):
// a regular file of at most max bytes.
func readIn(r *os.Root, rootDir, rel string, max int64) file {
	f := file{path: filepath.Join(rootDir, rel)}
	st, err := r.Stat(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// A dangling symlink is as absent as a missing file, unless
			// it points out of the tree.
			if lst, lerr := r.Lstat(rel); lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
				if t, err := os.Readlink(f.path); err == nil && !inside(rootDir, resolveLink(f.path, t)) {
					f.err = fmt.Errorf("is a symlink out of %s (to %s)", rootDir, t)
					return f
				}
			}
			f.err = err
			return f
		}
		f.err = errors.New(outOfTree(rootDir, rel, err))
		return f
	}
	if st.IsDir() {
		f.err = errors.New("is a directory, not a file")
		return f
	}
	if !st.Mode().IsRegular() {
		f.err = errors.New("is not a regular file")
		return f
	}
	if st.Size() > max {
		f.err = fmt.Errorf("is %d bytes, larger than the %d bytes a configuration may have", st.Size(), max)
		return f
	}
	h, err := r.OpenFile(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		f.err = errors.New(outOfTree(rootDir, rel, err))
		return f
	}
	defer h.Close()
	if st, err := h.Stat(); err != nil || !st.Mode().IsRegular() {
		f.err = errors.New("is not a regular file")
		return f
	}
	var buf bytes.Buffer
	buf.Grow(int(min(st.Size(), max) + 1))
	_, err = buf.ReadFrom(io.LimitReader(h, max+1))
	b := buf.Bytes()
	if err != nil {
		f.err = errors.New("cannot be read: " + reason(err))
		return f
	}
	if int64(len(b)) > max {
		f.err = fmt.Errorf("is larger than the %d bytes a configuration may have", max)
		return f
	}
	f.src = b
	return f
}

// outOfTree says why rel could not be opened below root: a symlink (or a
// "..") that leads out of the tree, or the system's reason.
func outOfTree(root, rel string, err error) string {
	full := filepath.Join(root, rel)
	if real, rerr := filepath.EvalSymlinks(full); rerr == nil {
		if !inside(root, real) {
			return fmt.Sprintf("is a symlink out of %s (to %s)", root, real)
		}
	}
	if strings.Contains(err.Error(), "escapes") {
		return fmt.Sprintf("leads out of %s through a symlink", root)
	}
	return reason(err)
}

// inside reports whether path is root or below it, both with symlinks
// resolved where they can be.
func inside(root, path string) bool {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return within(root, path)
}

// within reports whether path is root or below it, lexically.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func resolveLink(link, target string) string {
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(link), target)
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(target)); err == nil {
		return filepath.Join(r, filepath.Base(target))
	}
	return target
}

// reason is an error's text without the path (the inventory names it).
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// checkDir refuses a project directory that is not one.
func checkDir(d string) error {
	st, err := os.Stat(d)
	if err != nil {
		return errors.New(reason(err))
	}
	if !st.IsDir() {
		return ErrNoDir
	}
	return nil
}
