package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Keep is a retention rule (--keep): the newest Scans scans, or the scans
// started within Age; both zero keeps everything.
type Keep struct {
	Scans int
	Age   time.Duration
}

// IsZero reports whether k keeps everything.
func (k Keep) IsZero() bool { return k.Scans <= 0 && k.Age <= 0 }

func (k Keep) String() string {
	switch {
	case k.Scans > 0:
		return strconv.Itoa(k.Scans) + " scans"
	case k.Age > 0:
		return formatAge(k.Age)
	}
	return "everything"
}

func formatAge(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// ParseKeep reads --keep: a number of scans ("30"), or an age: a Go
// duration ("720h") or a number of days or weeks ("90d", "12w").
func ParseKeep(s string) (Keep, error) {
	bad := func(why string) (Keep, error) {
		return Keep{}, fmt.Errorf("--keep %s: %s (give a number of scans such as 30, or an age such as 90d, 12w or 720h)", safetext.Quote(safetext.Clip(s, 64)), why)
	}
	if s == "" {
		return bad("empty")
	}
	if len(s) > 64 || !utf8.ValidString(s) {
		return bad("too long or not UTF-8")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return bad("keep at least 1 scan")
		}
		return Keep{Scans: n}, nil
	}
	d, err := parseAge(s)
	if err != nil {
		return bad(err.Error())
	}
	if d <= 0 {
		return bad("an age must be positive")
	}
	return Keep{Age: d}, nil
}

const maxAge = 100 * 365 * 24 * time.Hour

func parseAge(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok && num != "" && num[0] >= '0' && num[0] <= '9' {
			n, err := strconv.ParseUint(num, 10, 32)
			if err != nil {
				return 0, errors.New("not a whole number of " + map[string]string{"d": "days", "w": "weeks"}[u.suffix])
			}
			if time.Duration(n) > maxAge/u.unit {
				return 0, errors.New("longer than 100 years")
			}
			return time.Duration(n) * u.unit, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("not a count, a duration or a number of days")
	}
	if d > maxAge {
		return 0, errors.New("longer than 100 years")
	}
	return d, nil
}

// ParseSince reads --since: an RFC 3339 time ("2026-11-30T12:00:00Z"), a
// date ("2026-11-30", midnight UTC), or an age before now ("24h", "7d",
// "2w").
func ParseSince(s string, now time.Time) (time.Time, error) {
	bad := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("--since %s: %s (give an RFC 3339 time, a date such as 2026-11-30, or an age such as 24h or 7d)", safetext.Quote(safetext.Clip(s, 64)), why)
	}
	if s == "" {
		return bad("empty")
	}
	if len(s) > 64 || !utf8.ValidString(s) {
		return bad("too long or not UTF-8")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if t.Year() < 1970 || t.Year() > 9999 {
			return bad("out of range")
		}
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if t.Year() < 1970 {
			return bad("out of range")
		}
		return t.UTC(), nil
	}
	d, err := parseAge(s)
	if err != nil {
		return bad(err.Error())
	}
	if d < 0 {
		return bad("an age must not be negative")
	}
	return now.Add(-d).UTC(), nil
}

// PruneResult says what Prune removed.
type PruneResult struct {
	Scans        int64
	Observations int64
	Versions     int64
	Definitions  int64
}

// Prune applies a retention rule: it removes the scans older than what k
// keeps, their observations, tool lists and findings, the tool versions
// not seen since, and the definitions no kept observation uses. The last
// complete observation of each server is always kept (it is the baseline
// of the next scan), and so is its scan. The queue rounds created before
// the oldest kept scan are removed too once drained (a round being swept
// keeps its rows). One transaction.
func (s *Store) Prune(ctx context.Context, k Keep) (PruneResult, error) {
	var res PruneResult
	if k.IsZero() {
		return res, nil
	}
	err := s.retry(ctx, func() error {
		var err error
		res, err = s.prune(ctx, k)
		return err
	})
	return res, err
}

func (s *Store) prune(ctx context.Context, k Keep) (PruneResult, error) {
	var res PruneResult
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return res, s.wrap("prune", err)
	}
	defer tx.Rollback()
	// cutoff: the id of the oldest scan kept.
	var cutoff sql.NullInt64
	if k.Scans > 0 {
		err = tx.QueryRowContext(ctx, s.d.q(`SELECT id FROM scans ORDER BY id DESC LIMIT 1 OFFSET ?`), k.Scans-1).Scan(&cutoff)
	} else {
		err = tx.QueryRowContext(ctx, s.d.q(`SELECT min(id) FROM scans WHERE started >= ?`), s.now().Add(-k.Age).UnixMicro()).Scan(&cutoff)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return res, nil // fewer scans than kept
	}
	if err != nil {
		return res, s.wrap("prune", err)
	}
	c := cutoff.Int64
	if !cutoff.Valid { // no scan inside the age: all are older
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM scans`).Scan(&c); err != nil {
			return res, s.wrap("prune", err)
		}
	}
	// Observations to remove: before the cutoff and not the last complete
	// observation of their server.
	keepLast := `NOT (o.complete = 1 AND o.scan_id = (SELECT max(o2.scan_id) FROM observations o2 WHERE o2.server = o.server AND o2.complete = 1))`
	steps := []struct {
		q string
		n *int64
	}{
		{`DELETE FROM findings WHERE scan_id < ? AND EXISTS (SELECT 1 FROM observations o WHERE o.scan_id = findings.scan_id AND o.server = findings.server AND ` + keepLast + `)`, nil},
		{`DELETE FROM observation_tools WHERE scan_id < ? AND EXISTS (SELECT 1 FROM observations o WHERE o.scan_id = observation_tools.scan_id AND o.server = observation_tools.server AND ` + keepLast + `)`, nil},
		{`DELETE FROM observations WHERE scan_id < ? AND NOT (complete = 1 AND scan_id = (SELECT max(o2.scan_id) FROM observations o2 WHERE o2.server = observations.server AND o2.complete = 1))`, &res.Observations},
		{`DELETE FROM scans WHERE id < ? AND NOT EXISTS (SELECT 1 FROM observations o WHERE o.scan_id = scans.id)`, &res.Scans},
		{`DELETE FROM tool_versions WHERE last_scan < ? AND NOT EXISTS (SELECT 1 FROM observation_tools t WHERE t.server = tool_versions.server AND t.tool = tool_versions.tool AND t.tool_digest = tool_versions.tool_digest)`, &res.Versions},
	}
	for _, st := range steps {
		r, err := tx.ExecContext(ctx, s.d.q(st.q), c)
		if err != nil {
			return res, s.wrap("prune", err)
		}
		if st.n != nil {
			*st.n, _ = r.RowsAffected()
		}
	}
	r, err := tx.ExecContext(ctx, `DELETE FROM definitions WHERE raw_digest NOT IN (SELECT raw_digest FROM observation_tools)`)
	if err != nil {
		return res, s.wrap("prune", err)
	}
	res.Definitions, _ = r.RowsAffected()
	var oldest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT min(started) FROM scans`).Scan(&oldest); err != nil {
		return res, s.wrap("prune", err)
	}
	if oldest.Valid {
		// Only drained rounds: a round still being swept keeps its rows,
		// or its workers would seed it again and scan servers twice.
		old := `SELECT round FROM queue_rounds r WHERE r.created < ? AND NOT EXISTS (SELECT 1 FROM queue_items q WHERE q.round = r.round AND q.state <> 'done')`
		if _, err := tx.ExecContext(ctx, s.d.q(`DELETE FROM queue_items WHERE round IN (`+old+`)`), oldest.Int64); err != nil {
			return res, s.wrap("prune", err)
		}
		if _, err := tx.ExecContext(ctx, s.d.q(`DELETE FROM queue_rounds WHERE round IN (`+old+`)`), oldest.Int64); err != nil {
			return res, s.wrap("prune", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return res, s.wrap("prune (commit)", err)
	}
	return res, nil
}
