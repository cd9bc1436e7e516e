package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// writingBack is f as a writer that asks the kernel to start writing
// each chunk of writebackChunk bytes to disk once it is written
// (sync_file_range, SYNC_FILE_RANGE_WRITE: it starts the writeback and
// does not wait for it), so that the staged file's fsync, which commit
// waits for before anything is replaced, finds most of it on disk
// already instead of writing 172 MB then. It changes no byte and no
// guarantee: the file is still synced whole before it is renamed.
func writingBack(f *os.File) io.Writer { return &writeback{f: f} }

type writeback struct {
	f         *os.File
	off, mark int64 // bytes written; the end of the range last started
}

// writebackChunk is how much of a staged file is written before the
// kernel is asked to start writing it to disk, and the most written at
// once.
const writebackChunk = 8 << 20

// Write writes p in pieces of at most writebackChunk bytes, starting the
// writeback of each chunk completed.
func (w *writeback) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n, err := w.f.Write(p[:min(len(p), writebackChunk)])
		written += n
		w.off += int64(n)
		if w.off-w.mark >= writebackChunk {
			// Best effort: an error only means the fsync does it all.
			_ = unix.SyncFileRange(int(w.f.Fd()), w.mark, w.off-w.mark, unix.SYNC_FILE_RANGE_WRITE)
			w.mark = w.off
		}
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}
