package store

import (
	"context"
	"fmt"
	"strings"
)

// Synthesize fills an empty store with synthetic history, in bulk (SQL
// that generates the rows in the database, not one statement per row),
// for benchmarks and tests of stores at scale: digests scans, each seeing
// servers servers of tools tools, every tool with a new digest in every
// scan, so there are servers×tools×digests tool versions; every tenth
// version has a finding. Only the last scan's tool lists and definitions
// are written (LastComplete reads those; the older ones would be pruned
// by any retention, and history does not read them). Servers are
// named server-0000…, tools tool-000…, digests are sha256: and the row
// number in hex. It is not part of the stable API.
func Synthesize(ctx context.Context, url string, servers, tools, digests int) error {
	s, err := Open(ctx, url, Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.wrap("synthesize", err)
	}
	defer conn.Close()
	if !s.d.pg {
		// a large page cache, and no per-row foreign key checks (the
		// generated rows satisfy them by construction)
		for _, p := range []string{`PRAGMA cache_size = -262144`, `PRAGMA foreign_keys = OFF`} {
			if _, err := conn.ExecContext(ctx, p); err != nil {
				return s.wrap("synthesize", err)
			}
		}
		defer conn.ExecContext(context.Background(), `PRAGMA foreign_keys = ON`)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("synthesize", err)
	}
	defer tx.Rollback()
	if s.d.pg {
		// no per-row foreign key triggers (needs a superuser; without it
		// the rows are checked, only slower)
		tx.ExecContext(ctx, `SAVEPOINT rr`)
		if _, err := tx.ExecContext(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
			tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT rr`)
		}
		tx.ExecContext(ctx, `SET LOCAL maintenance_work_mem = '256MB'`)
	}
	// Secondary indexes are dropped and built again after the rows are in
	// (one sort each instead of a million random inserts).
	var indexes []string
	for _, st := range splitSQL(s.d.ddl(migrations[0])) {
		if strings.HasPrefix(st, "CREATE INDEX ") {
			indexes = append(indexes, st)
			name := strings.Fields(st)[2]
			if _, err := tx.ExecContext(ctx, `DROP INDEX `+name); err != nil {
				return s.wrap("synthesize", err)
			}
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM scans`).Scan(&n); err != nil || n > 0 {
		return fmt.Errorf("synthesize: the store is not empty (%d scans, %v)", n, err)
	}
	if !s.d.pg {
		// SQLite has no generate_series: a table of 0…999 joined with
		// itself counts to a million (a recursive CTE is slower).
		for _, q := range []string{`CREATE TEMP TABLE synth_d (i INTEGER PRIMARY KEY)`,
			`INSERT INTO synth_d WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < 999) SELECT i FROM g`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return s.wrap("synthesize", err)
			}
		}
		defer conn.ExecContext(context.Background(), `DROP TABLE IF EXISTS temp.synth_d`)
	}
	stmts := synthStatements(s, servers, tools, digests)
	stmts = append(stmts, indexes...)
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return s.wrap("synthesize", err)
		}
	}
	if s.d.pg {
		if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('scans', 'id'), (SELECT max(id) FROM scans))`); err != nil {
			return s.wrap("synthesize", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.wrap("synthesize", err)
	}
	_, err = s.db.ExecContext(ctx, `ANALYZE`)
	return s.wrap("synthesize", err)
}

// synthStatements are the statements that insert Synthesize's rows, in
// the store's SQL dialect.
func synthStatements(s *Store, servers, tools, digests int) []string {
	total := servers * tools * digests
	const base = int64(1764547200000000) // 2025-12-01, microseconds
	const day = int64(86400000000)
	// series(i) for i in [0, k); fmt(x) formats as bytes.
	// seriesOf(k, f): rows i = f(j) for j in [0, k)
	seriesOf := func(k int, f string) string {
		if s.d.pg {
			return fmt.Sprintf(`(SELECT %s AS i FROM generate_series(0, %d) AS s(j)) AS g`, strings.ReplaceAll(f, "j", "s.j"), k-1)
		}
		if k > 1000*1000*1000 {
			panic("synthesize: too many rows")
		}
		j := `(c.i * 1000000 + b.i * 1000 + a.i)`
		return fmt.Sprintf(`(SELECT %s AS i FROM synth_d c CROSS JOIN synth_d b CROSS JOIN synth_d a WHERE c.i <= %d AND %s < %d) AS g`,
			strings.ReplaceAll(f, "j", j), (k-1)/1000000, j, k)
	}
	series := func(k int) string { return seriesOf(k, "j") }
	name := func(prefix, width, expr string) string {
		if s.d.pg {
			return fmt.Sprintf(`convert_to('%s' || lpad((%s)::text, %s, '0'), 'UTF8')`, prefix, expr, width)
		}
		return fmt.Sprintf(`CAST(printf('%s%%0%sd', %s) AS BLOB)`, prefix, width, expr)
	}
	digest := func(expr string) string {
		if s.d.pg {
			return fmt.Sprintf(`'sha256:' || lpad(to_hex(%s), 64, '0')`, expr)
		}
		return fmt.Sprintf(`printf('sha256:%%064x', %s)`, expr)
	}
	// i enumerates (server, tool, digest): d = i % D, t = (i / D) % T, sv = i / (D*T)
	D, T := digests, tools
	sv := fmt.Sprintf("(i / %d)", D*T)
	tl := fmt.Sprintf("((i / %d) %% %d)", D, T)
	dg := fmt.Sprintf("(i %% %d)", D)
	lastScan := seriesOf(servers*tools, fmt.Sprintf("(j * %d + %d)", D, D-1))
	return []string{
		fmt.Sprintf(`INSERT INTO scans (id, started, finished, source, exit_code) SELECT i + 1, %d + i * %d, %d + i * %d + 60000000, %s, 0 FROM %s`,
			base, day, base, day, map[bool]string{true: `convert_to('synthetic', 'UTF8')`, false: `CAST('synthetic' AS BLOB)`}[s.d.pg], series(D)),
		fmt.Sprintf(`INSERT INTO observations (scan_id, server, target, observed_at, status, complete, completeness, manifest_digest, endpoint, publisher_key,
			server_name, server_version, env_json, protocol_revision, error_class, error_detail, tool_count)
			SELECT (i %% %d) + 1, %s, %s, %d + (i %% %d) * %d, 'observed', 1, 'complete', %s, %s, %s, %s, %s, NULL, %s, '', %s, %d FROM %s`,
			D, name("server-", "4", fmt.Sprintf("i / %d", D)), blobLit(s, "https://example.test/mcp"), base, D, day, digest("i"),
			blobLit(s, "https://example.test/mcp"), blobLit(s, ""), blobLit(s, "synthetic"), blobLit(s, "1.0"), blobLit(s, "2025-06-18"), blobLit(s, ""), T, series(servers*D)),
		fmt.Sprintf(`INSERT INTO tool_versions (server, tool, tool_digest, first_seen, last_seen, first_scan, last_scan)
			SELECT %s, %s, %s, %d + %s * %d, %d + %s * %d, %s + 1, %s + 1 FROM %s`,
			name("server-", "4", sv), name("tool-", "3", tl), digest("i"), base, dg, day, base, dg, day, dg, dg, series(total)),
		fmt.Sprintf(`INSERT INTO observation_tools (scan_id, server, position, tool, tool_digest, raw_digest)
			SELECT %s + 1, %s, %s, %s, %s, %s FROM %s`,
			dg, name("server-", "4", sv), tl, name("tool-", "3", tl), digest("i"), digest("i"), lastScan),
		// the raw definitions of the last scan's tools (so LastComplete works)
		fmt.Sprintf(`INSERT INTO definitions (raw_digest, tool_digest, raw) SELECT %s, %s, %s FROM %s`,
			digest("i"), digest("i"), rawExpr(s, tl), lastScan),
		fmt.Sprintf(`INSERT INTO findings (scan_id, server, rule_id, severity, tool, message, observed_digest, declared_digest)
			SELECT %s + 1, %s, 'MCP-DRIFT-TOOL-CHANGED', 'high', %s, %s, %s, '' FROM %s`,
			dg, name("server-", "4", sv), name("tool-", "3", tl), blobLit(s, "the tool changed"), digest("i"), seriesOf(total/10, "(j * 10 + 9)")),
	}
}

func blobLit(s *Store, v string) string {
	if s.d.pg {
		return fmt.Sprintf(`convert_to('%s', 'UTF8')`, v)
	}
	return fmt.Sprintf(`CAST('%s' AS BLOB)`, v)
}

func rawExpr(s *Store, tl string) string {
	if s.d.pg {
		return fmt.Sprintf(`convert_to('{"name":"tool-' || lpad((%s)::text, 3, '0') || '"}', 'UTF8')`, tl)
	}
	return fmt.Sprintf(`CAST(printf('{"name":"tool-%%03d"}', %s) AS BLOB)`, tl)
}
