package mockserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// ServeStdio serves newline-delimited JSON-RPC (one message per line) read
// from r, writing responses to w, with the same semantics as HTTP minus
// headers and sessions: a modern request needs params._meta (-32602) with
// a supported version (-32022); a legacy client must initialize first
// (-32000 "Server not initialized"), then send notifications/initialized.
// Notifications get no reply; responses are ignored. Lines longer than
// MaxBodyBytes are refused (-32600) and skipped.
//
// It returns nil when r ends or the server is closed, ctx.Err() when ctx
// ends, or the write error. The goroutine reading r stays blocked in Read
// until r returns (os.Stdin cannot be interrupted).
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	st := &stdioState{conn: int(s.connSeq.Add(1)), w: bufio.NewWriter(w)}
	lines := make(chan stdioLine)
	stop := make(chan struct{})
	defer close(stop)
	go readLines(r, s.cfg.MaxBodyBytes, lines, stop)
	var notes chan []byte
	if s.cfg.ListChanged {
		id, ch := s.subscribe()
		defer s.unsubscribe(id)
		notes = ch
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return nil
		case b := <-notes:
			if err := st.writeLine(b); err != nil {
				return err
			}
		case l := <-lines:
			if l.err != nil {
				if errors.Is(l.err, io.EOF) {
					return nil
				}
				return l.err
			}
			if err := s.handleStdio(ctx, st, l); err != nil {
				return err
			}
		}
	}
}

type stdioState struct {
	conn        int
	caps        []string // declared by initialize
	w           *bufio.Writer
	buf         []byte // the line being written
	initialized bool   // initialize answered
	ready       bool   // notifications/initialized received
	version     string // negotiated legacy version
	session     int    // legacy session number
}

type stdioLine struct {
	b       []byte
	tooLong bool
	err     error
}

// readLines reads r's lines (frame.LineReader) and sends them to out. A
// line longer than the bound is skipped without being buffered and sent
// as tooLong. The bound has always left room for a CRLF beyond max: a line
// of up to max+1 bytes before its LF, or max+2 at the end of the input.
func readLines(r io.Reader, max int64, out chan<- stdioLine, stop <-chan struct{}) {
	lr := frame.NewLineReader(r, max+2)
	send := func(l stdioLine) bool {
		select {
		case out <- l:
			return true
		case <-stop:
			return false
		}
	}
	for {
		line, err := lr.Next()
		tooLong := false
		switch {
		case frame.IsLineTooLong(err):
			tooLong, line, err = true, nil, lr.Skip()
		case err == nil && int64(len(line)) > max+1:
			tooLong, line = true, nil
		}
		if err != nil {
			if (len(line) > 0 || tooLong) && !send(stdioLine{b: line, tooLong: tooLong}) {
				return
			}
			send(stdioLine{err: err})
			return
		}
		if !send(stdioLine{b: line, tooLong: tooLong}) {
			return
		}
	}
}

func trimLine(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// writeLine writes one message as one line (frame.AppendLine: CR and LF,
// insignificant whitespace in valid JSON, become spaces) and flushes.
func (st *stdioState) writeLine(b []byte) error {
	st.buf = frame.AppendLine(st.buf[:0], b)
	if _, err := st.w.Write(st.buf); err != nil {
		return err
	}
	return st.w.Flush()
}

func (s *Server) handleStdio(ctx context.Context, st *stdioState, l stdioLine) error {
	line := trimLine(l.b)
	if !l.tooLong && isBlank(line) {
		return nil
	}
	entry := LogEntry{Time: time.Now(), Transport: "stdio", Conn: st.conn}
	defer func() { s.record(entry) }()
	if l.tooLong {
		e := frame.Errorf(0, mcpwire.CodeInvalidRequest, "Invalid Request: message longer than %d bytes", s.cfg.MaxBodyBytes)
		entry.Code, entry.Reason = e.Code, e.Message
		return st.writeLine(frame.AppendError(nil, nil, e))
	}
	m, perr := frame.FromClient(line)
	if m != nil {
		entry.Method, entry.ID = m.Method, string(m.IDRaw())
	}
	if perr != nil {
		entry.Code, entry.Reason = perr.Code, perr.Message
		if m != nil && m.Kind == frame.Notification {
			return nil
		}
		var id []byte
		if m != nil {
			id = m.IDRaw()
		}
		return st.writeLine(frame.AppendError(nil, id, perr))
	}
	if m.Kind.IsResponse() {
		entry.Reason = "ignored: a response (this server sends no requests)"
		if s.cfg.ServerRequest != "" {
			entry.Reason = answerReason(m)
		}
		return nil
	}
	modern := len(s.modernVersions) > 0 && (len(s.legacyVersions) == 0 || modernIntent(m))
	x := &exchange{modern: modern, entry: &entry}
	if modern {
		entry.Era = "modern"
		x.conn = st.conn
		if m.Kind == frame.Notification {
			entry.Passed = true
			return nil
		}
		if m.Method == "initialize" && len(s.legacyVersions) == 0 && !modernIntent(m) {
			e := frame.Errorf(0, mcpwire.CodeMethodNotFound, "Method not found: initialize (this server speaks only stateless revisions)")
			e.Data = s.unsupportedVersion(initializeVersion(m)).Data
			return s.stdioReply(ctx, st, x, m, nil, e)
		}
		if e := s.checkModernRequest(nil, m, x); e != nil {
			return s.stdioReply(ctx, st, x, m, nil, e)
		}
		x.tools = s.toolsFor(x.conn, false, x.caps)
		entry.Passed = true
		res, e := s.dispatch(x, m)
		return s.stdioReply(ctx, st, x, m, res, e)
	}

	entry.Era = "legacy"
	x.version, x.conn = st.version, st.session
	entry.ProtocolVersion, entry.Conn = st.version, st.session
	if m.Kind == frame.Notification {
		if m.Method == "notifications/initialized" && st.initialized {
			st.ready = true
			entry.Passed = true
		}
		return nil
	}
	switch m.Method {
	case "initialize":
		if st.initialized {
			return s.stdioReply(ctx, st, x, m, nil, frame.Errorf(0, mcpwire.CodeInvalidRequest, "Invalid Request: already initialized"))
		}
		version, e := s.checkInitialize(m, &entry)
		if e != nil {
			return s.stdioReply(ctx, st, x, m, nil, e)
		}
		st.initialized, st.version, st.session = true, version, int(s.sessionSeq.Add(1))
		st.caps = initializeCaps(m, &entry)
		x.version, x.conn = version, st.session
		entry.ProtocolVersion, entry.Conn, entry.Passed = version, st.session, true
		return s.stdioReply(ctx, st, x, m, s.initializeResult(version), nil)
	case "ping":
		entry.Passed = true
		return s.stdioReply(ctx, st, x, m, []byte(`{}`), nil)
	case "tools/list", "tools/call":
	default:
		if !surfaceMethods[m.Method] {
			return s.stdioReply(ctx, st, x, m, nil, frame.Errorf(0, mcpwire.CodeMethodNotFound, "Method not found"))
		}
	}
	if !st.initialized || !st.ready {
		return s.stdioReply(ctx, st, x, m, nil, frame.Errorf(0, codeBadRequest, "Server not initialized"))
	}
	x.tools, x.caps = s.toolsFor(x.conn, false, st.caps), st.caps
	entry.Passed = true
	res, e := s.dispatch(x, m)
	return s.stdioReply(ctx, st, x, m, res, e)
}

func (s *Server) stdioReply(ctx context.Context, st *stdioState, x *exchange, m *message, result []byte, e *frame.Error) error {
	s.sleep(ctx, s.cfg.Slow)
	if e != nil {
		x.entry.Code, x.entry.Reason = e.Code, e.Message
		return st.writeLine(frame.AppendError(nil, m.IDRaw(), e))
	}
	if s.hostile[m.Method] {
		if s.cfg.NeverEndingSSE {
			x.entry.Reason = "never answered (NeverEndingSSE)"
			return nil
		}
		if s.cfg.Oversized != 0 {
			x.entry.Reason = "oversized"
			return s.stdioOversized(ctx, st, x, m)
		}
	}
	if token := progressToken(m); token != nil {
		p := append([]byte(`{"progressToken":`), token...)
		p = append(p, `,"progress":1,"total":2,"message":"mock progress"}`...)
		if err := st.writeLine(frame.AppendNotification(nil, "notifications/progress", p)); err != nil {
			return err
		}
	}
	if s.wantsServerRequest(m) {
		if err := st.writeLine(s.serverRequestBytes()); err != nil {
			return err
		}
	}
	if hb, ok := s.hostileBody(m.IDRaw(), m.Method); ok {
		return st.writeLine(hb)
	}
	return st.writeLine(responseBytes(s.respID(m.IDRaw(), m.Method), result))
}

func (s *Server) stdioOversized(ctx context.Context, st *stdioState, x *exchange, m *message) error {
	head, chunk, tail := s.oversizedParts(x, m)
	if _, err := st.w.Write(head); err != nil {
		return err
	}
	written := int64(len(head))
	for s.cfg.Oversized < 0 || written < s.cfg.Oversized {
		select {
		case <-ctx.Done():
			return st.w.Flush()
		case <-s.done:
			return st.w.Flush()
		default:
		}
		if _, err := st.w.Write(chunk); err != nil {
			return err
		}
		written += int64(len(chunk))
	}
	return st.writeLine(tail)
}
