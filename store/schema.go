package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// migrations are the schema, one step per version, never edited once
// released: a change is a new step. {{pk}}, {{blob}} are the types that
// differ between SQLite and PostgreSQL. Times are Unix microseconds
// (BIGINT), the same on both. Free text is {{blob}}: it may hold any
// byte.
var migrations = []string{
	// 1: history and the work queue.
	`
CREATE TABLE scans (
	id {{pk}},
	started BIGINT NOT NULL,
	finished BIGINT,
	source {{blob}} NOT NULL,
	exit_code INTEGER
);
CREATE TABLE observations (
	scan_id BIGINT NOT NULL REFERENCES scans(id),
	server {{blob}} NOT NULL,
	target {{blob}} NOT NULL,
	observed_at BIGINT NOT NULL,
	status TEXT NOT NULL,
	complete INTEGER NOT NULL,
	completeness TEXT NOT NULL,
	manifest_digest TEXT NOT NULL,
	endpoint {{blob}} NOT NULL,
	publisher_key {{blob}} NOT NULL,
	server_name {{blob}} NOT NULL,
	server_version {{blob}} NOT NULL,
	env_json {{blob}},
	protocol_revision {{blob}} NOT NULL,
	error_class TEXT NOT NULL,
	error_detail {{blob}} NOT NULL,
	tool_count INTEGER NOT NULL,
	PRIMARY KEY (scan_id, server)
);
CREATE INDEX observations_complete ON observations (server, complete, scan_id);
CREATE TABLE definitions (
	raw_digest TEXT PRIMARY KEY,
	tool_digest TEXT NOT NULL,
	raw {{blob}} NOT NULL
);
CREATE TABLE observation_tools (
	scan_id BIGINT NOT NULL,
	server {{blob}} NOT NULL,
	position INTEGER NOT NULL,
	tool {{blob}} NOT NULL,
	tool_digest TEXT NOT NULL,
	raw_digest TEXT NOT NULL,
	PRIMARY KEY (scan_id, server, position),
	FOREIGN KEY (scan_id, server) REFERENCES observations(scan_id, server)
);
CREATE INDEX observation_tools_version ON observation_tools (server, tool, tool_digest);
CREATE TABLE tool_versions (
	server {{blob}} NOT NULL,
	tool {{blob}} NOT NULL,
	tool_digest TEXT NOT NULL,
	first_seen BIGINT NOT NULL,
	last_seen BIGINT NOT NULL,
	first_scan BIGINT NOT NULL,
	last_scan BIGINT NOT NULL,
	PRIMARY KEY (server, tool, tool_digest)
){{norowid}};
CREATE INDEX tool_versions_tool ON tool_versions (tool, first_seen);
CREATE TABLE findings (
	id {{pk}},
	scan_id BIGINT NOT NULL,
	server {{blob}} NOT NULL,
	rule_id TEXT NOT NULL,
	severity TEXT NOT NULL,
	tool {{blob}} NOT NULL,
	message {{blob}} NOT NULL,
	observed_digest TEXT NOT NULL,
	declared_digest TEXT NOT NULL,
	FOREIGN KEY (scan_id, server) REFERENCES observations(scan_id, server)
);
CREATE INDEX findings_scan ON findings (scan_id, server);
CREATE INDEX findings_tool ON findings (server, tool, observed_digest);
CREATE TABLE queue_rounds (
	round TEXT PRIMARY KEY,
	created BIGINT NOT NULL
);
CREATE TABLE queue_items (
	round TEXT NOT NULL REFERENCES queue_rounds(round),
	server {{blob}} NOT NULL,
	shard_hash BIGINT NOT NULL,
	state TEXT NOT NULL,
	worker {{blob}} NOT NULL,
	token BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	attempts INTEGER NOT NULL,
	completed_at BIGINT,
	scan_id BIGINT,
	PRIMARY KEY (round, server)
);
CREATE INDEX queue_items_open ON queue_items (round, server) WHERE state <> 'done';
`,
}

// SchemaVersion is the schema version this binary writes.
var SchemaVersion = len(migrations)

const metaDDL = `CREATE TABLE IF NOT EXISTS mcpdrift_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`

// pgMigrationLock is the advisory lock key that serialises migrations
// between PostgreSQL clients ("mcpdrift" in ASCII, truncated).
const pgMigrationLock = 0x6d637064726966

func (s *Store) migrate(ctx context.Context) error {
	if s.opt.ReadOnly {
		v, err := s.readVersion(ctx, s.db)
		if err != nil {
			return s.wrap("read the schema version", err)
		}
		if v > SchemaVersion {
			return s.tooNew(v)
		}
		if v < SchemaVersion {
			return &Error{Store: s.loc.Display, Op: "open read-only", Kind: ErrReadOnly,
				Err: fmt.Errorf("its schema version %d is older than this mcpdrift's %d and cannot be migrated read-only; run a scan with write access first", v, SchemaVersion)}
		}
		s.version = v
		return nil
	}
	return s.retry(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return s.wrap("migrate", err)
		}
		defer tx.Rollback()
		if s.d.pg {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgMigrationLock)); err != nil {
				return s.wrap("migrate (lock)", err)
			}
		}
		v, err := s.readVersion(ctx, tx)
		if err != nil {
			return s.wrap("read the schema version", err)
		}
		if _, err := tx.ExecContext(ctx, metaDDL); err != nil {
			return s.wrap("migrate", err)
		}
		if v > SchemaVersion {
			return s.tooNew(v)
		}
		for i := v; i < SchemaVersion; i++ {
			for _, stmt := range splitSQL(s.d.ddl(migrations[i])) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return s.wrap(fmt.Sprintf("migrate to version %d", i+1), err)
				}
			}
		}
		if v != SchemaVersion {
			if _, err := tx.ExecContext(ctx, s.d.q(`DELETE FROM mcpdrift_meta WHERE key = 'schema_version'`)); err != nil {
				return s.wrap("migrate", err)
			}
			if _, err := tx.ExecContext(ctx, s.d.q(`INSERT INTO mcpdrift_meta (key, value) VALUES ('schema_version', ?)`), strconv.Itoa(SchemaVersion)); err != nil {
				return s.wrap("migrate", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return s.wrap("migrate (commit)", err)
		}
		s.version = SchemaVersion
		return nil
	})
}

func (s *Store) tooNew(v int) error {
	return &Error{Store: s.loc.Display, Op: "open", Kind: ErrTooNew,
		Err: fmt.Errorf("its schema version is %d and this mcpdrift knows versions up to %d: upgrade mcpdrift to read it (it was not changed)", v, SchemaVersion)}
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readVersion reads the schema version: 0 for a new (empty) store. A
// database with tables but no mcpdrift_meta is not a store of ours.
func (s *Store) readVersion(ctx context.Context, q querier) (int, error) {
	var exists int
	var err error
	if s.d.pg {
		err = q.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'mcpdrift_meta'`).Scan(&exists)
	} else {
		err = q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'mcpdrift_meta'`).Scan(&exists)
	}
	if err != nil {
		return 0, err
	}
	if exists == 0 {
		if !s.d.pg {
			// An SQLite file that holds tables but not ours is some other
			// program's database: never add tables to it.
			var n int
			if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
				return 0, err
			}
			if n > 0 {
				return 0, &Error{Store: s.loc.Display, Op: "open", Kind: ErrCorrupt, Err: errors.New("an SQLite database of another program (it has tables and no mcpdrift_meta)")}
			}
		}
		return 0, nil
	}
	var val string
	err = q.QueryRowContext(ctx, `SELECT value FROM mcpdrift_meta WHERE key = 'schema_version'`).Scan(&val)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(val)
	if err != nil || v < 0 {
		return 0, &Error{Store: s.loc.Display, Op: "read the schema version", Kind: ErrCorrupt, Err: fmt.Errorf("schema_version is not a number")}
	}
	return v, nil
}

func splitSQL(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
