package frame

import (
	"bufio"
	"bytes"
	"io"
)

// LineReader reads newline-delimited messages (MCP's stdio framing) with a
// bound on the length of a line.
type LineReader struct {
	br  *bufio.Reader
	max int64
	// midLine: the last Next stopped inside a line too long to return.
	midLine bool
	err     error // sticky: the read error that ended the input
	// head and tail: up to maxEnds bytes of the start and of the end of
	// the line too long (SkipEnds).
	head, tail []byte
}

// maxEnds bounds what SkipEnds keeps of each end of a line too long.
const maxEnds = 4096

// NewLineReader returns a reader of r whose lines are at most max bytes,
// the LF that ends each not counted.
func NewLineReader(r io.Reader, max int64) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its LF, in a fresh slice. Nothing
// else is removed: a CR before the LF, blank lines and whitespace are the
// caller's to trim or skip (TrimSpace).
//
// A line longer than the bound is a *LimitError (LimitLine; IsLineTooLong)
// as soon as the bound is passed, with the line read only that far: Skip
// discards the rest of it, or the caller stops reading. At the end of the
// input a last line without LF is returned with io.EOF (it may be empty);
// a read error is returned with the bytes of the line read before it. The
// error that ended the input is returned again by every later call.
func (l *LineReader) Next() ([]byte, error) {
	l.midLine = false
	l.head, l.tail = l.head[:0], l.tail[:0]
	if l.err != nil {
		return nil, l.err
	}
	var line []byte
	for {
		frag, err := l.br.ReadSlice('\n')
		n := len(frag)
		if err == nil {
			n-- // the LF
		}
		if err != nil && err != bufio.ErrBufferFull {
			l.err = err
		}
		if int64(len(line)+n) > l.max {
			l.midLine = err == bufio.ErrBufferFull
			l.head = append(l.head, line[:min(len(line), maxEnds)]...)
			l.head = append(l.head, frag[:min(n, maxEnds-len(l.head))]...)
			if !l.midLine { // the line ends in frag
				l.tail = keepLast(keepLast(l.tail, line), frag[:n])
			}
			return nil, &LimitError{Limit: LimitLine, Max: l.max}
		}
		line = append(line, frag[:n]...)
		switch err {
		case nil:
			return line, nil
		case bufio.ErrBufferFull:
			continue
		}
		return line, err
	}
}

// Skip discards the rest of a line that Next found too long, through its
// LF, without buffering it. It returns nil, or the error that ended the
// input (io.EOF) before the line ended. After any other Next it does
// nothing.
func (l *LineReader) Skip() error {
	if !l.midLine {
		return l.err
	}
	l.midLine = false
	for {
		_, err := l.br.ReadSlice('\n')
		switch err {
		case nil:
			return nil
		case bufio.ErrBufferFull:
			continue
		}
		l.err = err
		return err
	}
}

// SkipEnds is Skip that also returns up to n bytes (at most 4096) of the
// start and of the end of the line too long, the LF not counted: where a
// message's id stands — a server writes it first or last — for a reader
// that does not hold the whole line. The two may overlap. After any other
// Next both are empty. They are the reader's until the next Next.
func (l *LineReader) SkipEnds(n int) (head, tail []byte, err error) {
	if l.midLine {
		l.midLine = false
		for {
			frag, rerr := l.br.ReadSlice('\n')
			if rerr == nil {
				l.tail = keepLast(l.tail, frag[:len(frag)-1])
				break
			}
			l.tail = keepLast(l.tail, frag)
			if rerr != bufio.ErrBufferFull {
				l.err = rerr
				break
			}
		}
	}
	n = max(0, min(n, maxEnds))
	return l.head[:min(n, len(l.head))], l.tail[max(0, len(l.tail)-n):], l.err
}

// keepLast appends b to dst and keeps the last maxEnds bytes.
func keepLast(dst, b []byte) []byte {
	if len(b) >= maxEnds {
		return append(dst[:0], b[len(b)-maxEnds:]...)
	}
	if over := len(dst) + len(b) - maxEnds; over > 0 {
		dst = dst[:copy(dst, dst[over:])]
	}
	return append(dst, b...)
}

// AppendLine appends msg as one newline-delimited message: CR and LF —
// which in valid JSON can only be insignificant whitespace — become
// spaces, and an LF ends the line. Nothing else changes, so a message's
// canonical form (and any digest of it) is unchanged.
func AppendLine(dst, msg []byte) []byte {
	start := len(dst)
	dst = append(dst, msg...)
	for b := dst[start:]; ; {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			break
		}
		b[i] = ' '
		b = b[i+1:]
	}
	return append(dst, '\n')
}

// TrimSpace returns b without the JSON whitespace (space, tab, CR, LF)
// around it.
func TrimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
