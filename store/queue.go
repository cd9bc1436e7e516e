package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Shard selects a part of a round for one worker (--shard I/N): the
// servers whose name hashes (FNV-1a, 32 bits) to I modulo N. The zero
// Shard selects every server.
type Shard struct{ Index, Count int }

// ParseShard reads --shard I/N (0 <= I < N <= 65536).
func ParseShard(s string) (Shard, error) {
	bad := func(why string) (Shard, error) {
		return Shard{}, fmt.Errorf("--shard %s: %s (give I/N with 0 <= I < N, such as 0/4)", safetext.Quote(safetext.Clip(s, 64)), why)
	}
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return bad("no /")
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return bad("not two whole numbers")
	}
	if n < 1 || n > 65536 || i < 0 || i >= n {
		return bad("out of range")
	}
	return Shard{Index: i, Count: n}, nil
}

// Contains reports whether server belongs to the shard.
func (sh Shard) Contains(server string) bool {
	return sh.Count <= 1 || int(shardHash(server)%uint32(sh.Count)) == sh.Index
}

func shardHash(server string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(server))
	return h.Sum32()
}

// RoundKey names the round that t falls in when a fleet is swept every
// interval: the start of the interval, in UTC (RFC 3339). Every worker
// computes the same key from its own clock, so clocks that agree within
// the interval seed the same round.
func RoundKey(t time.Time, interval time.Duration) string {
	if interval <= 0 {
		return t.UTC().Format(time.RFC3339)
	}
	return t.UTC().Truncate(interval).Format(time.RFC3339)
}

// Claim is a server a worker holds for a round until its lease expires.
type Claim struct {
	Round   string
	Server  string
	Worker  string
	Token   int64 // fences a stale holder: a new claim of the server gets a new token
	Attempt int   // 1 for the first claim; more when a lease expired before
	Expires time.Time
}

// RoundStatus counts a round's servers by state.
type RoundStatus struct {
	Pending, Claimed, Done int
}

const maxRound = 256

// SeedRound inserts the round and its servers, idempotently (INSERT … ON
// CONFLICT DO NOTHING keyed by round and server): every worker may seed the
// same round with the same servers. It returns how many rows this call
// added.
func (s *Store) SeedRound(ctx context.Context, round string, servers []string) (int, error) {
	if !tokenOKRound(round) {
		return 0, invalid("round %s is not 1 to %d printable ASCII characters", safetext.Quote(safetext.Clip(round, 80)), maxRound)
	}
	uniq := make([]string, 0, len(servers))
	seen := make(map[string]bool, len(servers))
	for _, sv := range servers {
		if sv == "" || len(sv) > maxName {
			return 0, invalid("a server name must be 1 to %d bytes", maxName)
		}
		if !seen[sv] {
			seen[sv] = true
			uniq = append(uniq, sv)
		}
	}
	sort.Strings(uniq)
	var added int
	err := s.retry(ctx, func() error {
		added = 0
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return s.wrap("seed round", err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, s.d.q(`INSERT INTO queue_rounds (round, created) VALUES (?, ?) ON CONFLICT (round) DO NOTHING`), round, s.now().UnixMicro()); err != nil {
			return s.wrap("seed round", err)
		}
		for start := 0; start < len(uniq); start += batchRows {
			end := min(start+batchRows, len(uniq))
			var q strings.Builder
			q.WriteString(`INSERT INTO queue_items (round, server, shard_hash, state, worker, token, expires_at, attempts) VALUES `)
			args := make([]any, 0, (end-start)*3)
			for i, sv := range uniq[start:end] {
				if i > 0 {
					q.WriteByte(',')
				}
				q.WriteString(`(?, ?, ?, 'pending', ?, 0, 0, 0)`)
				args = append(args, round, []byte(sv), int64(shardHash(sv)), []byte{})
			}
			q.WriteString(` ON CONFLICT (round, server) DO NOTHING`)
			r, err := tx.ExecContext(ctx, s.d.q(q.String()), args...)
			if err != nil {
				return s.wrap("seed round", err)
			}
			n, _ := r.RowsAffected()
			added += int(n)
		}
		if err := tx.Commit(); err != nil {
			return s.wrap("seed round (commit)", err)
		}
		if s.d.pg && added > 0 {
			// Fresh statistics, or the planner, believing the table
			// nearly empty, plans each claim as a sort of every open row
			// (a claim then costs O(round); with them it reads the
			// partial index in order and stops at the first row).
			if _, err := s.db.ExecContext(ctx, `ANALYZE queue_items`); err != nil {
				return s.wrap("seed round (analyze)", err)
			}
		}
		return nil
	})
	return added, err
}

func tokenOKRound(r string) bool {
	if r == "" || len(r) > maxRound {
		return false
	}
	for i := 0; i < len(r); i++ {
		if r[i] < 0x21 || r[i] > 0x7e {
			return false
		}
	}
	return true
}

// clock is the lease clock, in Unix microseconds: the database server's on
// PostgreSQL (workers on several machines share it), the process's on
// SQLite.
func (s *Store) clockExpr() string {
	if s.d.pg {
		return `(extract(epoch from clock_timestamp()) * 1000000)::bigint`
	}
	return `?`
}

func (s *Store) clockArgs() []any {
	if s.d.pg {
		return nil
	}
	return []any{s.now().UnixMicro()}
}

// ClaimNext claims one server of round that is pending, or whose lease
// expired, for worker, with a lease of the given length (FOR UPDATE SKIP
// LOCKED on PostgreSQL, so concurrent workers never wait for or take one
// another's rows). It returns ErrRoundDrained when every server of the
// round (in the shard) is done, and ErrNoneClaimable when the others are
// held by live leases.
func (s *Store) ClaimNext(ctx context.Context, round, worker string, lease time.Duration, shard Shard) (*Claim, error) {
	if lease <= 0 {
		return nil, invalid("a lease must be positive")
	}
	if len(worker) > maxName {
		return nil, invalid("a worker name longer than %d bytes", maxName)
	}
	var c *Claim
	err := s.retry(ctx, func() error {
		var err error
		c, err = s.claimNext(ctx, round, worker, lease, shard)
		return err
	})
	return c, err
}

func (s *Store) claimNext(ctx context.Context, round, worker string, lease time.Duration, shard Shard) (*Claim, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.wrap("claim", err)
	}
	defer tx.Rollback()
	shardCond := ""
	var shardArgs []any
	if shard.Count > 1 {
		shardCond = ` AND shard_hash % ? = ?`
		shardArgs = []any{int64(shard.Count), int64(shard.Index)}
	}
	now := s.clockExpr()
	lock := ""
	if s.d.pg {
		lock = ` FOR UPDATE SKIP LOCKED`
	}
	args := []any{round}
	args = append(args, s.clockArgs()...)
	args = append(args, shardArgs...)
	var server []byte
	// state <> 'done' selects the partial index of open rows, so a claim
	// never walks the servers already done (it did: quadratic in a round).
	err = tx.QueryRowContext(ctx, s.d.q(`SELECT server FROM queue_items WHERE round = ? AND state <> 'done' AND (state = 'pending' OR (state = 'claimed' AND expires_at < `+now+`))`+shardCond+` ORDER BY server LIMIT 1`+lock), args...).Scan(&server)
	if errors.Is(err, sql.ErrNoRows) {
		var left int
		a := append([]any{round}, shardArgs...)
		if err := tx.QueryRowContext(ctx, s.d.q(`SELECT count(*) FROM queue_items WHERE round = ? AND state <> 'done'`+shardCond), a...).Scan(&left); err != nil {
			return nil, s.wrap("claim", err)
		}
		var exists int
		if err := tx.QueryRowContext(ctx, s.d.q(`SELECT count(*) FROM queue_rounds WHERE round = ?`), round).Scan(&exists); err != nil {
			return nil, s.wrap("claim", err)
		}
		if exists == 0 {
			return nil, &Error{Store: s.loc.Display, Op: "claim", Kind: ErrNotFound, Err: fmt.Errorf("no round %s (seed it first)", safetext.Quote(round))}
		}
		if left == 0 {
			return nil, ErrRoundDrained
		}
		return nil, ErrNoneClaimable
	}
	if err != nil {
		return nil, s.wrap("claim", err)
	}
	ua := append([]any{}, s.clockArgs()...)
	ua = append(ua, lease.Microseconds(), []byte(worker), round, server)
	c := &Claim{Round: round, Server: string(server), Worker: worker}
	var exp int64
	err = tx.QueryRowContext(ctx, s.d.q(`UPDATE queue_items SET state = 'claimed', expires_at = `+now+` + ?, worker = ?, token = token + 1, attempts = attempts + 1
		WHERE round = ? AND server = ? RETURNING token, attempts, expires_at`), ua...).Scan(&c.Token, &c.Attempt, &exp)
	if err != nil {
		return nil, s.wrap("claim", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, s.wrap("claim (commit)", err)
	}
	c.Expires = time.UnixMicro(exp).UTC()
	return c, nil
}

// Renew extends c's lease to lease from now. ErrLeaseLost: another worker
// claimed the server after c's lease expired, or it is done.
func (s *Store) Renew(ctx context.Context, c *Claim, lease time.Duration) error {
	if lease <= 0 {
		return invalid("a lease must be positive")
	}
	return s.retry(ctx, func() error {
		a := append([]any{}, s.clockArgs()...)
		a = append(a, lease.Microseconds(), c.Round, []byte(c.Server), c.Token)
		var exp int64
		err := s.db.QueryRowContext(ctx, s.d.q(`UPDATE queue_items SET expires_at = `+s.clockExpr()+` + ?
			WHERE round = ? AND server = ? AND token = ? AND state = 'claimed' RETURNING expires_at`), a...).Scan(&exp)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return s.wrap("renew", err)
		}
		c.Expires = time.UnixMicro(exp).UTC()
		return nil
	})
}

// Complete marks c's server done in its round, recording the scan that
// observed it (0: none). ErrLeaseLost: another worker claimed it after
// c's lease expired, so this worker's result must not count for the
// round (its RecordServer is still history).
func (s *Store) Complete(ctx context.Context, c *Claim, scan int64) error {
	return s.retry(ctx, func() error {
		var sc any
		if scan > 0 {
			sc = scan
		}
		r, err := s.db.ExecContext(ctx, s.d.q(`UPDATE queue_items SET state = 'done', completed_at = ?, scan_id = ?
			WHERE round = ? AND server = ? AND token = ? AND state = 'claimed'`), s.now().UnixMicro(), sc, c.Round, []byte(c.Server), c.Token)
		if err != nil {
			return s.wrap("complete", err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			// A retry whose first commit succeeded: done with our token.
			var state string
			var tok int64
			err := s.db.QueryRowContext(ctx, s.d.q(`SELECT state, token FROM queue_items WHERE round = ? AND server = ?`), c.Round, []byte(c.Server)).Scan(&state, &tok)
			if err == nil && state == "done" && tok == c.Token {
				return nil
			}
			return ErrLeaseLost
		}
		return nil
	})
}

// Status counts the servers of round by state.
func (s *Store) Status(ctx context.Context, round string) (RoundStatus, error) {
	var st RoundStatus
	err := s.retry(ctx, func() error {
		st = RoundStatus{}
		rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT state, count(*) FROM queue_items WHERE round = ? GROUP BY state`), round)
		if err != nil {
			return s.wrap("round status", err)
		}
		defer rows.Close()
		for rows.Next() {
			var state string
			var n int
			if err := rows.Scan(&state, &n); err != nil {
				return s.wrap("round status", err)
			}
			switch state {
			case "pending":
				st.Pending = n
			case "claimed":
				st.Claimed = n
			case "done":
				st.Done = n
			}
		}
		return s.wrap("round status", rows.Err())
	})
	return st, err
}
