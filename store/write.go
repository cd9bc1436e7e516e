package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Tool is one tool of an observation: its name, its tool_digest and the
// tool object exactly as the server sent it (kept content-addressed by the
// SHA-256 of those bytes, so a later scan can diff against it).
type Tool struct {
	Name   string
	Digest string // tool_digest, "sha256:" and 64 hex digits
	Raw    []byte // the tool object's bytes as received
}

// Finding is one finding of a server in a scan.
type Finding struct {
	RuleID         string // a catalogue code: [A-Za-z0-9_.-]{1,128}
	Severity       string // [A-Za-z0-9_.-]{0,32}
	Tool           string // the tool it is about; "" for the server
	Message        string // as the producer wrote it (mcpdrift messages are escaped already)
	ObservedDigest string // "" or a digest
	DeclaredDigest string // "" or a digest
}

// ServerResult is what a scan learnt about one server.
type ServerResult struct {
	Server string // the server's name in the lock or inventory
	// Target is how it was reached: a URL (stored with its user info and
	// query values removed) or "stdio:" and the command as typed. Never a
	// header or env value.
	Target     string
	ObservedAt time.Time // zero: now
	// Status is manifest.StatusObserved, StatusNotObserved or
	// StatusAmbiguous.
	Status string
	// Completeness is "complete", "partial" or "unknown".
	Completeness   string
	ManifestDigest string // "" when not observed or ambiguous
	Identity       manifest.Identity
	// ProtocolRevision is the negotiated MCP revision ("" when unknown).
	ProtocolRevision string
	// ErrorClass says why a server was not observed, as a fixed class
	// ([a-z0-9_.-]{0,64}: timeout, refused, protocol, limit, ...);
	// ErrorDetail is the message (escaped by its producer).
	ErrorClass  string
	ErrorDetail string
	Tools       []Tool
	Findings    []Finding
}

// Complete reports whether r can be the baseline of a later scan: observed,
// complete, with a manifest digest.
func (r *ServerResult) Complete() bool {
	return r.Status == manifest.StatusObserved && r.Completeness == string(manifest.Complete) && r.ManifestDigest != ""
}

const (
	maxName  = 64 << 10 // a server or tool name
	maxText  = 1 << 20  // a message, target, identity field
	maxTools = 1 << 20
)

func tokenOK(s string, min, max int, lower bool) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		case !lower && c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	return true
}

func invalid(format string, args ...any) error {
	return &Error{Op: "record", Kind: ErrInvalid, Err: fmt.Errorf(format, args...)}
}

func digestOK(d string) bool { return d == "" || manifest.ValidDigest(d) }

func (r *ServerResult) validate() error {
	if r.Server == "" || len(r.Server) > maxName {
		return invalid("a server name must be 1 to %d bytes", maxName)
	}
	switch r.Status {
	case manifest.StatusObserved, manifest.StatusNotObserved, manifest.StatusAmbiguous:
	default:
		return invalid("status %s is not observed, not_observed or ambiguous", safetext.Quote(r.Status))
	}
	if _, err := manifest.ParseCompleteness(r.Completeness); err != nil {
		return invalid("%s", err.Error())
	}
	if !digestOK(r.ManifestDigest) {
		return invalid("manifest digest %s is not sha256: and 64 hex digits", safetext.Quote(safetext.Clip(r.ManifestDigest, 80)))
	}
	if !tokenOK(r.ErrorClass, 0, 64, true) {
		return invalid("error class %s is not [a-z0-9_.-]{0,64}", safetext.Quote(safetext.Clip(r.ErrorClass, 80)))
	}
	for _, t := range []string{r.Target, r.ErrorDetail, r.ProtocolRevision, r.Identity.Endpoint, r.Identity.PublisherKey, r.Identity.ServerName, r.Identity.ServerVersion} {
		if len(t) > maxText {
			return invalid("a text field is longer than %d bytes", maxText)
		}
	}
	if r.Status == manifest.StatusNotObserved && len(r.Tools) > 0 {
		return invalid("a server that was not observed has no tools")
	}
	if len(r.Tools) > maxTools {
		return invalid("more than %d tools", maxTools)
	}
	for i, t := range r.Tools {
		if len(t.Name) > maxName {
			return invalid("tool %d: a name longer than %d bytes", i, maxName)
		}
		if !manifest.ValidDigest(t.Digest) {
			return invalid("tool %d: digest %s is not sha256: and 64 hex digits", i, safetext.Quote(safetext.Clip(t.Digest, 80)))
		}
		if len(t.Raw) == 0 {
			return invalid("tool %d: no raw definition", i)
		}
	}
	for i, f := range r.Findings {
		if !tokenOK(f.RuleID, 1, 128, false) {
			return invalid("finding %d: rule id %s is not [A-Za-z0-9_.-]{1,128}", i, safetext.Quote(safetext.Clip(f.RuleID, 80)))
		}
		if !tokenOK(f.Severity, 0, 32, false) {
			return invalid("finding %d: severity %s is not [A-Za-z0-9_.-]{0,32}", i, safetext.Quote(safetext.Clip(f.Severity, 80)))
		}
		if !digestOK(f.ObservedDigest) || !digestOK(f.DeclaredDigest) {
			return invalid("finding %d: a digest is not sha256: and 64 hex digits", i)
		}
		if len(f.Tool) > maxName || len(f.Message) > maxText {
			return invalid("finding %d: a tool name or message too long", i)
		}
	}
	return nil
}

// BeginScan records the start of a scan run. source says what was scanned
// (for example "scan --inventory fleet.json"; config-controlled, stored as
// bytes). It returns the scan's id.
func (s *Store) BeginScan(ctx context.Context, source string) (int64, error) {
	if len(source) > maxText {
		return 0, invalid("source longer than %d bytes", maxText)
	}
	if label := s.opt.Secrets.Find(source); label != "" {
		return 0, &Error{Store: s.loc.Display, Op: "begin scan", Kind: ErrSecret, Err: fmt.Errorf("%s is in the source", label)}
	}
	var id int64
	err := s.retry(ctx, func() error {
		return s.wrap("begin scan", s.db.QueryRowContext(ctx, s.d.q(`INSERT INTO scans (started, source) VALUES (?, ?) RETURNING id`),
			s.now().UnixMicro(), []byte(source)).Scan(&id))
	})
	return id, err
}

// FinishScan records the end of a scan and its exit code.
func (s *Store) FinishScan(ctx context.Context, scan int64, exit int) error {
	return s.retry(ctx, func() error {
		res, err := s.db.ExecContext(ctx, s.d.q(`UPDATE scans SET finished = ?, exit_code = ? WHERE id = ?`), s.now().UnixMicro(), exit, scan)
		if err != nil {
			return s.wrap("finish scan", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &Error{Store: s.loc.Display, Op: "finish scan", Kind: ErrNotFound, Err: fmt.Errorf("no scan %d", scan)}
		}
		return nil
	})
}

// sanitizeTarget removes credentials from a URL target.
func sanitizeTarget(t string) string {
	if i := strings.Index(t, "://"); i > 0 && !strings.HasPrefix(t, "stdio:") {
		return redact.SanitizeURL(t)
	}
	return t
}

// RawDigest is the content address of a raw tool definition.
func RawDigest(raw []byte) string {
	h := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(h[:])
}

// RecordServer records one server's result in scan, in one transaction.
// Recording the same (scan, server) again changes nothing and returns nil
// (so a retry after a lost connection is safe).
func (s *Store) RecordServer(ctx context.Context, scan int64, r ServerResult) error {
	if err := r.validate(); err != nil {
		return err
	}
	if err := s.refuseSecrets(&r); err != nil {
		return err
	}
	if r.ObservedAt.IsZero() {
		r.ObservedAt = s.now()
	}
	return s.retry(ctx, func() error { return s.recordServer(ctx, scan, &r) })
}

func (s *Store) recordServer(ctx context.Context, scan int64, r *ServerResult) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("record server", err)
	}
	defer tx.Rollback()
	server := []byte(r.Server)
	var one int
	err = tx.QueryRowContext(ctx, s.d.q(`SELECT 1 FROM observations WHERE scan_id = ? AND server = ?`), scan, server).Scan(&one)
	if err == nil {
		return nil // recorded already (a retry whose first commit succeeded)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return s.wrap("record server", err)
	}
	if err := tx.QueryRowContext(ctx, s.d.q(`SELECT 1 FROM scans WHERE id = ?`), scan).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return &Error{Store: s.loc.Display, Op: "record server", Kind: ErrNotFound, Err: fmt.Errorf("no scan %d", scan)}
		}
		return s.wrap("record server", err)
	}
	var env []byte
	if r.Identity.Env != nil {
		env, _ = json.Marshal(*r.Identity.Env)
	}
	complete := 0
	if r.Complete() {
		complete = 1
	}
	at := r.ObservedAt.UnixMicro()
	_, err = tx.ExecContext(ctx, s.d.q(`INSERT INTO observations (scan_id, server, target, observed_at, status, complete, completeness, manifest_digest,
		endpoint, publisher_key, server_name, server_version, env_json, protocol_revision, error_class, error_detail, tool_count)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		scan, server, []byte(sanitizeTarget(r.Target)), at, r.Status, complete, r.Completeness, r.ManifestDigest,
		[]byte(sanitizeTarget(r.Identity.Endpoint)), []byte(r.Identity.PublisherKey), []byte(r.Identity.ServerName), []byte(r.Identity.ServerVersion),
		env, []byte(r.ProtocolRevision), r.ErrorClass, []byte(r.ErrorDetail), len(r.Tools))
	if err != nil {
		return s.wrap("record server", err)
	}
	if len(r.Tools) > 0 {
		if err := s.recordTools(ctx, tx, scan, server, at, r.Tools); err != nil {
			return err
		}
	}
	if len(r.Findings) > 0 {
		b := newBatch(s, `INSERT INTO findings (scan_id, server, rule_id, severity, tool, message, observed_digest, declared_digest)`, 8, "")
		for _, f := range r.Findings {
			if err := b.add(ctx, tx, scan, server, f.RuleID, f.Severity, []byte(f.Tool), []byte(f.Message), f.ObservedDigest, f.DeclaredDigest); err != nil {
				return err
			}
		}
		if err := b.flush(ctx, tx); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return s.wrap("record server (commit)", err)
	}
	return nil
}

func (s *Store) recordTools(ctx context.Context, tx *sql.Tx, scan int64, server []byte, at int64, tools []Tool) error {
	raws := make([]string, len(tools))
	defs := newBatch(s, `INSERT INTO definitions (raw_digest, tool_digest, raw)`, 3, ` ON CONFLICT (raw_digest) DO NOTHING`)
	seenRaw := make(map[string]bool, len(tools))
	for i, t := range tools {
		rd := RawDigest(t.Raw)
		raws[i] = rd
		if seenRaw[rd] {
			continue
		}
		seenRaw[rd] = true
		if err := defs.add(ctx, tx, rd, t.Digest, t.Raw); err != nil {
			return err
		}
	}
	if err := defs.flush(ctx, tx); err != nil {
		return err
	}
	ot := newBatch(s, `INSERT INTO observation_tools (scan_id, server, position, tool, tool_digest, raw_digest)`, 6, "")
	for i, t := range tools {
		if err := ot.add(ctx, tx, scan, server, i, []byte(t.Name), t.Digest, raws[i]); err != nil {
			return err
		}
	}
	if err := ot.flush(ctx, tx); err != nil {
		return err
	}
	// One row per (tool, digest), in a fixed order so that two writers on
	// PostgreSQL take the row locks in the same order (no deadlock).
	type key struct{ name, digest string }
	ks := make([]key, 0, len(tools))
	seen := make(map[key]bool, len(tools))
	for _, t := range tools {
		k := key{t.Name, t.Digest}
		if !seen[k] {
			seen[k] = true
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].name != ks[j].name {
			return ks[i].name < ks[j].name
		}
		return ks[i].digest < ks[j].digest
	})
	tv := newBatch(s, `INSERT INTO tool_versions (server, tool, tool_digest, first_seen, last_seen, first_scan, last_scan)`, 7, s.d.ddl(`
		ON CONFLICT (server, tool, tool_digest) DO UPDATE SET
		first_scan = CASE WHEN excluded.first_seen < tool_versions.first_seen THEN excluded.first_scan ELSE tool_versions.first_scan END,
		first_seen = {{min}}(tool_versions.first_seen, excluded.first_seen),
		last_scan = CASE WHEN excluded.last_seen >= tool_versions.last_seen THEN excluded.last_scan ELSE tool_versions.last_scan END,
		last_seen = {{max}}(tool_versions.last_seen, excluded.last_seen)`))
	for _, k := range ks {
		if err := tv.add(ctx, tx, server, []byte(k.name), k.digest, at, at, scan, scan); err != nil {
			return err
		}
	}
	return tv.flush(ctx, tx)
}

// batch is a multi-row INSERT: one statement per up to batchRows rows,
// the same on both backends.
type batch struct {
	s      *Store
	head   string
	cols   int
	suffix string
	args   []any
	rows   int
}

const batchRows = 400

func newBatch(s *Store, head string, cols int, suffix string) *batch {
	return &batch{s: s, head: head, cols: cols, suffix: suffix}
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (b *batch) add(ctx context.Context, x execer, args ...any) error {
	b.args = append(b.args, args...)
	b.rows++
	if b.rows >= batchRows {
		return b.flush(ctx, x)
	}
	return nil
}

func (b *batch) flush(ctx context.Context, x execer) error {
	if b.rows == 0 {
		return nil
	}
	var q strings.Builder
	q.Grow(len(b.head) + b.rows*(b.cols*2+3) + len(b.suffix) + 8)
	q.WriteString(b.head)
	q.WriteString(" VALUES ")
	for i := 0; i < b.rows; i++ {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteByte('(')
		for j := 0; j < b.cols; j++ {
			if j > 0 {
				q.WriteByte(',')
			}
			q.WriteByte('?')
		}
		q.WriteByte(')')
	}
	q.WriteString(b.suffix)
	_, err := x.ExecContext(ctx, b.s.d.q(q.String()), b.args...)
	b.args = b.args[:0]
	b.rows = 0
	if err != nil {
		return b.s.wrap("record server", err)
	}
	return nil
}

// refuseSecrets refuses a result that holds a secret of the run anywhere
// it would be stored. A raw definition is searched as bytes and, when it
// holds an escape, as the JSON values it decodes to.
func (s *Store) refuseSecrets(r *ServerResult) error {
	set := s.opt.Secrets
	if set.Empty() {
		return nil
	}
	hit := func(field, label string) error {
		return &Error{Store: s.loc.Display, Op: "record server", Kind: ErrSecret, Err: fmt.Errorf("%s is in %s", label, field)}
	}
	for _, f := range []struct{ name, text string }{
		{"the server name", r.Server}, {"the target", sanitizeTarget(r.Target)}, {"the error detail", r.ErrorDetail},
		{"the protocol revision", r.ProtocolRevision}, {"the endpoint", sanitizeTarget(r.Identity.Endpoint)},
		{"the publisher key", r.Identity.PublisherKey}, {"the server's name", r.Identity.ServerName}, {"the server's version", r.Identity.ServerVersion},
	} {
		if label := set.Find(f.text); label != "" {
			return hit(f.name, label)
		}
	}
	for i, t := range r.Tools {
		if label := set.Find(t.Name); label != "" {
			return hit(fmt.Sprintf("the name of tool %d", i), label)
		}
		if label := set.Find(string(t.Raw)); label != "" {
			return hit(fmt.Sprintf("the definition of tool %d", i), label)
		}
		// Decoded too, whatever the bytes: an escape, percent-encoding
		// (%74 for a "t") or a secret cut before an ellipsis is found in
		// the values, not in the bytes.
		doc, err := jcs.Parse(t.Raw)
		if err != nil {
			return invalid("tool %d: the raw definition is not JSON", i)
		}
		if label, ptr := set.FindInValue(doc.Root()); label != "" {
			return hit(fmt.Sprintf("the definition of tool %d at %s", i, safetext.Quote(set.String(ptr))), label)
		}
	}
	for i, f := range r.Findings {
		if label := set.Find(f.Tool + "\x00" + f.Message); label != "" {
			return hit(fmt.Sprintf("finding %d", i), label)
		}
	}
	return nil
}
