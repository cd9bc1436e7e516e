package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
)

// Observation is a recorded server observation (ServerResult without the
// tools and findings).
type Observation struct {
	Scan             int64
	Server           string
	Target           string
	ObservedAt       time.Time
	Status           string
	Completeness     string
	ManifestDigest   string
	Identity         manifest.Identity
	ProtocolRevision string
	ErrorClass       string
	ErrorDetail      string
	ToolCount        int
}

// Last is a server's last complete observation and its tools, in the order
// the server listed them, each with its raw definition.
type Last struct {
	Observation
	Tools []Tool
}

// ToolArray returns the tools as one JSON array of their raw definitions
// (the "tool-array" form manifest.ParseToolList reads): the bytes the
// server sent, so every digest recomputes.
func (l *Last) ToolArray() []byte {
	n := 2
	for _, t := range l.Tools {
		n += len(t.Raw) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, t := range l.Tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t.Raw...)
	}
	return append(b, ']')
}

const obsCols = `o.scan_id, o.server, o.target, o.observed_at, o.status, o.completeness, o.manifest_digest, o.endpoint, o.publisher_key,
	o.server_name, o.server_version, o.env_json, o.protocol_revision, o.error_class, o.error_detail, o.tool_count`

type scanner interface{ Scan(dest ...any) error }

func scanObservation(r scanner) (Observation, error) {
	var o Observation
	var server, target, endpoint, pk, sn, sv, env, proto, detail []byte
	var at int64
	err := r.Scan(&o.Scan, &server, &target, &at, &o.Status, &o.Completeness, &o.ManifestDigest, &endpoint, &pk, &sn, &sv, &env, &proto, &o.ErrorClass, &detail, &o.ToolCount)
	if err != nil {
		return o, err
	}
	o.Server, o.Target, o.ObservedAt = string(server), string(target), time.UnixMicro(at).UTC()
	o.Identity = manifest.Identity{Endpoint: string(endpoint), PublisherKey: string(pk), ServerName: string(sn), ServerVersion: string(sv)}
	if env != nil {
		var es []manifest.EnvEntry
		if json.Unmarshal(env, &es) == nil {
			o.Identity.Env = &es
		}
	}
	o.ProtocolRevision, o.ErrorDetail = string(proto), string(detail)
	return o, nil
}

// LastComplete returns the last complete observation of server (the
// baseline a later scan is gated against), or ErrNotFound.
func (s *Store) LastComplete(ctx context.Context, server string) (*Last, error) {
	var last *Last
	err := s.retry(ctx, func() error {
		var err error
		last, err = s.lastComplete(ctx, server)
		return err
	})
	return last, err
}

func (s *Store) lastComplete(ctx context.Context, server string) (*Last, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap("read last observation", err)
	}
	defer tx.Rollback()
	row := tx.QueryRowContext(ctx, s.d.q(`SELECT `+obsCols+` FROM observations o WHERE o.server = ? AND o.complete = 1 ORDER BY o.scan_id DESC LIMIT 1`), []byte(server))
	o, err := scanObservation(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &Error{Store: s.loc.Display, Op: "read last observation", Kind: ErrNotFound, Err: errors.New("no complete observation of this server")}
	}
	if err != nil {
		return nil, s.wrap("read last observation", err)
	}
	rows, err := tx.QueryContext(ctx, s.d.q(`SELECT t.tool, t.tool_digest, d.raw FROM observation_tools t JOIN definitions d ON d.raw_digest = t.raw_digest
		WHERE t.scan_id = ? AND t.server = ? ORDER BY t.position`), o.Scan, []byte(server))
	if err != nil {
		return nil, s.wrap("read last observation", err)
	}
	defer rows.Close()
	l := &Last{Observation: o, Tools: make([]Tool, 0, o.ToolCount)}
	for rows.Next() {
		var name, raw []byte
		var t Tool
		if err := rows.Scan(&name, &t.Digest, &raw); err != nil {
			return nil, s.wrap("read last observation", err)
		}
		t.Name, t.Raw = string(name), raw
		l.Tools = append(l.Tools, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("read last observation", err)
	}
	if len(l.Tools) != o.ToolCount {
		return nil, &Error{Store: s.loc.Display, Op: "read last observation", Kind: ErrCorrupt,
			Err: fmt.Errorf("scan %d recorded %d tools and %d are stored", o.Scan, o.ToolCount, len(l.Tools))}
	}
	return l, nil
}

// Query selects History. Zero fields select everything.
type Query struct {
	Server string    // exact server name; "" for every server
	Tool   string    // exact tool name; "" for every tool
	Since  time.Time // versions last seen at or after Since
	Limit  int       // at most this many versions (0: 10,000)
}

// Version is one digest of one tool of one server: the period it was seen
// in (first and last seen, and the scans), and the findings raised against
// that digest. A digest that comes back after another is one Version whose
// period spans the other's.
type Version struct {
	Server    string
	Tool      string
	Digest    string
	FirstSeen time.Time
	LastSeen  time.Time
	FirstScan int64
	LastScan  int64
	Findings  []FindingRecord
}

// FindingRecord is a stored finding with the scan that raised it.
type FindingRecord struct {
	Scan int64
	Finding
}

// maxFindingsPerVersion bounds the findings History returns per version.
const maxFindingsPerVersion = 100

// History returns tool versions, ordered by server, tool and first seen,
// with their findings (at most 100 per version, the newest).
func (s *Store) History(ctx context.Context, q Query) ([]Version, error) {
	var out []Version
	err := s.retry(ctx, func() error {
		var err error
		out, err = s.history(ctx, q)
		return err
	})
	return out, err
}

func (s *Store) history(ctx context.Context, q Query) ([]Version, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 10000
	}
	var where []string
	var args []any
	if q.Server != "" {
		where = append(where, "server = ?")
		args = append(args, []byte(q.Server))
	}
	if q.Tool != "" {
		where = append(where, "tool = ?")
		args = append(args, []byte(q.Tool))
	}
	if !q.Since.IsZero() {
		where = append(where, "last_seen >= ?")
		args = append(args, q.Since.UnixMicro())
	}
	query := `SELECT server, tool, tool_digest, first_seen, last_seen, first_scan, last_scan FROM tool_versions`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += ` ORDER BY server, tool, first_seen, tool_digest LIMIT ?`
	args = append(args, limit)
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap("read history", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, s.d.q(query), args...)
	if err != nil {
		return nil, s.wrap("read history", err)
	}
	var out []Version
	for rows.Next() {
		var v Version
		var server, tool []byte
		var fs, ls int64
		if err := rows.Scan(&server, &tool, &v.Digest, &fs, &ls, &v.FirstScan, &v.LastScan); err != nil {
			rows.Close()
			return nil, s.wrap("read history", err)
		}
		v.Server, v.Tool = string(server), string(tool)
		v.FirstSeen, v.LastSeen = time.UnixMicro(fs).UTC(), time.UnixMicro(ls).UTC()
		out = append(out, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.wrap("read history", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	// The findings of every selected version, in one query: the same
	// selection as a row-value IN (findings_tool serves each lookup).
	fq := `SELECT f.server, f.tool, f.observed_digest, f.scan_id, f.rule_id, f.severity, f.message, f.declared_digest FROM findings f
		WHERE (f.server, f.tool, f.observed_digest) IN (SELECT server, tool, tool_digest FROM (` + query + `) sel)
		ORDER BY f.server, f.tool, f.observed_digest, f.scan_id DESC, f.id`
	fq = strings.Replace(fq, `SELECT server, tool, tool_digest, first_seen, last_seen, first_scan, last_scan FROM tool_versions`, `SELECT server, tool, tool_digest, first_seen FROM tool_versions`, 1)
	type vkey struct{ server, tool, digest string }
	index := make(map[vkey]int, len(out))
	for i := range out {
		index[vkey{out[i].Server, out[i].Tool, out[i].Digest}] = i
	}
	frows, err := tx.QueryContext(ctx, s.d.q(fq), args...)
	if err != nil {
		return nil, s.wrap("read history", err)
	}
	defer frows.Close()
	for frows.Next() {
		var f FindingRecord
		var server, tool, msg []byte
		var od string
		if err := frows.Scan(&server, &tool, &od, &f.Scan, &f.RuleID, &f.Severity, &msg, &f.DeclaredDigest); err != nil {
			return nil, s.wrap("read history", err)
		}
		i, ok := index[vkey{string(server), string(tool), od}]
		if !ok || len(out[i].Findings) >= maxFindingsPerVersion {
			continue
		}
		f.Tool, f.Message, f.ObservedDigest = string(tool), string(msg), od
		out[i].Findings = append(out[i].Findings, f)
	}
	if err := frows.Err(); err != nil {
		return nil, s.wrap("read history", err)
	}
	return out, nil
}

// Scan is a recorded scan run.
type Scan struct {
	ID       int64
	Started  time.Time
	Finished time.Time // zero: the scan did not finish (killed, or running)
	Source   string
	Exit     *int
}

// Scans returns the scans, newest first, at most limit (0: 100).
func (s *Store) Scans(ctx context.Context, limit int) ([]Scan, error) {
	if limit <= 0 {
		limit = 100
	}
	var out []Scan
	err := s.retry(ctx, func() error {
		out = out[:0]
		rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT id, started, finished, source, exit_code FROM scans ORDER BY id DESC LIMIT ?`), limit)
		if err != nil {
			return s.wrap("read scans", err)
		}
		defer rows.Close()
		for rows.Next() {
			var sc Scan
			var st int64
			var fin sql.NullInt64
			var src []byte
			var exit sql.NullInt64
			if err := rows.Scan(&sc.ID, &st, &fin, &src, &exit); err != nil {
				return s.wrap("read scans", err)
			}
			sc.Started, sc.Source = time.UnixMicro(st).UTC(), string(src)
			if fin.Valid {
				sc.Finished = time.UnixMicro(fin.Int64).UTC()
			}
			if exit.Valid {
				e := int(exit.Int64)
				sc.Exit = &e
			}
			out = append(out, sc)
		}
		return s.wrap("read scans", rows.Err())
	})
	return out, err
}

// Observations returns the observations recorded in scan, by server name.
func (s *Store) Observations(ctx context.Context, scan int64) ([]Observation, error) {
	var out []Observation
	err := s.retry(ctx, func() error {
		out = out[:0]
		rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT `+obsCols+` FROM observations o WHERE o.scan_id = ? ORDER BY o.server`), scan)
		if err != nil {
			return s.wrap("read observations", err)
		}
		defer rows.Close()
		for rows.Next() {
			o, err := scanObservation(rows)
			if err != nil {
				return s.wrap("read observations", err)
			}
			out = append(out, o)
		}
		return s.wrap("read observations", rows.Err())
	})
	return out, err
}

// Findings returns the findings recorded for server in scan.
func (s *Store) Findings(ctx context.Context, scan int64, server string) ([]Finding, error) {
	var out []Finding
	err := s.retry(ctx, func() error {
		out = out[:0]
		rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT rule_id, severity, tool, message, observed_digest, declared_digest FROM findings WHERE scan_id = ? AND server = ? ORDER BY id`), scan, []byte(server))
		if err != nil {
			return s.wrap("read findings", err)
		}
		defer rows.Close()
		for rows.Next() {
			var f Finding
			var tool, msg []byte
			if err := rows.Scan(&f.RuleID, &f.Severity, &tool, &msg, &f.ObservedDigest, &f.DeclaredDigest); err != nil {
				return s.wrap("read findings", err)
			}
			f.Tool, f.Message = string(tool), string(msg)
			out = append(out, f)
		}
		return s.wrap("read findings", rows.Err())
	})
	return out, err
}

// Check verifies the store: SQLite's integrity_check (it reads every
// page: seconds for a large store), or a query on PostgreSQL. A damaged
// SQLite file is ErrCorrupt.
func (s *Store) Check(ctx context.Context) error {
	if s.d.pg {
		var n int
		return s.wrap("check", s.db.QueryRowContext(ctx, `SELECT count(*) FROM scans`).Scan(&n))
	}
	rows, err := s.db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return s.wrap("check", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return s.wrap("check", err)
		}
		if m != "ok" && len(msgs) < 5 {
			msgs = append(msgs, m)
		}
	}
	if err := rows.Err(); err != nil {
		return s.wrap("check", err)
	}
	if len(msgs) > 0 {
		return &Error{Store: s.loc.Display, Op: "check", Kind: ErrCorrupt, Err: errors.New(strings.Join(msgs, "; "))}
	}
	return nil
}
