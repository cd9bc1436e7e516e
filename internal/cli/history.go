package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/store"
)

// HistorySchemaID identifies the JSON form of `mcpdrift history`.
const HistorySchemaID = "mcpdrift.history.v1"

// historyOptions are history's flags.
type historyOptions struct {
	toolName, since, storeURL, format, keep string
	limit                                   int
}

func (o *historyOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.toolName, "tool", "", "only this tool (exact name)")
	f.StringVar(&o.since, "since", "", "only versions seen since this time: RFC 3339, a date, or an age (24h, 7d)")
	f.StringVar(&o.storeURL, "store", "", "the history store: sqlite:PATH or postgres://… (default sqlite:$XDG_STATE_HOME/mcpdrift/history.db)")
	f.StringVar(&o.format, "format", "text", "text|json")
	f.StringVar(&o.keep, "keep", "", "apply retention first: keep the newest N scans, or those within an age (90d, 12w, 720h)")
	f.IntVar(&o.limit, "limit", 10000, "at most this many versions")
}

func newHistory(e *env) *cobra.Command {
	o := &historyOptions{}
	cmd := &cobra.Command{
		Use:   "history [SERVER] [--tool NAME] [--since T] [--store URL] [--format text|json] [--keep N|AGE]",
		Short: "Show when each tool's digest changed, which scans saw it and what was found",
		Long: `history reads the store that scan writes and prints a timeline: for each server and tool, each
tool digest it was seen with, from its first to its last sighting (time and scan), and the findings
raised against that digest. It answers "was this tool ever different?" in one command:

  mcpdrift history github --tool create_issue

--since takes an RFC 3339 time, a date (2026-11-30) or an age (24h, 7d, 2w) and keeps the versions
seen since then. --store is sqlite:PATH or postgres://… (default sqlite:$XDG_STATE_HOME/mcpdrift/history.db,
else ~/.local/state/mcpdrift/history.db). --keep N|AGE first applies retention as scan --keep does
(the newest N scans, or those within AGE; each server's last complete observation is always kept)
and says on stderr what it removed. Without --keep the store is opened read-only.

Every server-controlled string is escaped. Exit 0, or 2 when the store cannot be read (missing,
damaged, locked, newer than this mcpdrift) or on bad usage.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, k, err := o.query(args)
			if err != nil {
				return err
			}
			ctx := e.context()
			s, err := openStore(e, ctx, o.storeURL, o.keep == "")
			if err != nil {
				return err
			}
			defer s.Close()
			if o.keep != "" {
				res, err := s.Prune(ctx, k)
				if err != nil {
					return storeErr(err)
				}
				fmt.Fprintf(e.stderr, "mcpdrift: kept %s: removed %d scans, %d observations, %d tool versions, %d definitions\n",
					k, res.Scans, res.Observations, res.Versions, res.Definitions)
			}
			vs, err := s.History(ctx, q)
			if err != nil {
				return storeErr(err)
			}
			truncated := len(vs) > o.limit
			if truncated {
				vs = vs[:o.limit]
			}
			out := timelineText(s.String(), q, vs, truncated)
			if o.format == "json" {
				if out, err = timelineJSON(s.String(), q, vs, truncated); err != nil {
					return err
				}
			}
			return e.emit("-", out)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// query is the store's query of the flags (and SERVER), and the
// retention --keep asks for.
func (o *historyOptions) query(args []string) (store.Query, store.Keep, error) {
	var k store.Keep
	if o.format != "text" && o.format != "json" {
		return store.Query{}, k, usageErr("--format must be text or json")
	}
	if o.limit < 1 || o.limit > 1000000 {
		return store.Query{}, k, usageErr("--limit must be 1 to 1000000")
	}
	q := store.Query{Tool: o.toolName, Limit: o.limit + 1}
	if len(args) == 1 {
		q.Server = args[0]
	}
	if o.since != "" {
		t, err := store.ParseSince(o.since, time.Now())
		if err != nil {
			return q, k, usageErr("%s", err.Error())
		}
		q.Since = t
	}
	if o.keep != "" {
		var err error
		if k, err = store.ParseKeep(o.keep); err != nil {
			return q, k, usageErr("%s", err.Error())
		}
	}
	return q, k, nil
}

// openStore opens the store a command was given (default: the user's),
// registering the secrets of its URL with the run's redaction first.
// Errors are exit 2 with the store's own clear message.
func openStore(e *env, ctx context.Context, url string, readOnly bool) (*store.Store, error) {
	if url == "" {
		u, err := store.DefaultURL()
		if err != nil {
			return nil, storeErr(err)
		}
		url = u
	}
	loc, err := store.ParseURL(url)
	if err != nil {
		return nil, usageErr("--store: %s", err.Error())
	}
	for _, sec := range loc.Secrets {
		e.secrets.Add("store password", sec)
	}
	s, err := store.Open(ctx, url, store.Options{ReadOnly: readOnly})
	if err != nil {
		return nil, storeErr(err)
	}
	return s, nil
}

// storeErr is a store failure as the CLI reports it: exit 2 (the store is
// an input that cannot be read or written), with the store's message
// (composed with safetext).
func storeErr(err error) error {
	var xe *exitError
	if errors.As(err, &xe) {
		return err
	}
	return &exitError{ExitUsage, safetext.Inert(err.Error())}
}

func timelineDigest(d string) string {
	if len(d) > 7+12 {
		return d[:7+12]
	}
	return d
}

func timelineStamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func timelineText(storeName string, q store.Query, vs []store.Version, truncated bool) []byte {
	var b bytes.Buffer
	if len(vs) == 0 {
		b.WriteString("no history")
		if q.Server != "" {
			b.WriteString(" for server " + safetext.Quote(q.Server))
		}
		if q.Tool != "" {
			b.WriteString(" for tool " + safetext.QuoteASCII(q.Tool))
		}
		if !q.Since.IsZero() {
			b.WriteString(" since " + timelineStamp(q.Since))
		}
		b.WriteString(" in " + safetext.Quote(storeName) + "\n")
		return b.Bytes()
	}
	tools, changed := 0, 0
	for i := 0; i < len(vs); {
		j := i
		for j < len(vs) && vs[j].Server == vs[i].Server && vs[j].Tool == vs[i].Tool {
			j++
		}
		tools++
		if j-i > 1 {
			changed++
		}
		v := vs[i]
		fmt.Fprintf(&b, "%s %s", safetext.Quote(v.Server), safetext.QuoteASCII(v.Tool))
		if j-i > 1 {
			fmt.Fprintf(&b, "  — %d digests", j-i)
		}
		b.WriteByte('\n')
		for k := i; k < j; k++ {
			v := vs[k]
			scans := fmt.Sprintf("scan %d", v.FirstScan)
			if v.LastScan != v.FirstScan {
				scans = fmt.Sprintf("scans %d–%d", v.FirstScan, v.LastScan)
			}
			fmt.Fprintf(&b, "  %s  %s … %s  %s\n", timelineDigest(v.Digest), timelineStamp(v.FirstSeen), timelineStamp(v.LastSeen), scans)
			for _, f := range v.Findings {
				sev := f.Severity
				if sev == "" {
					sev = "-"
				}
				fmt.Fprintf(&b, "      %s %s (scan %d)", safetext.Escape(f.RuleID), safetext.Escape(sev), f.Scan)
				if f.Message != "" {
					b.WriteString(": " + safetext.Inert(safetext.ClipEscaped(f.Message, 300)))
				}
				b.WriteByte('\n')
			}
		}
		i = j
	}
	fmt.Fprintf(&b, "%d tools, %d with more than one digest", tools, changed)
	if truncated {
		fmt.Fprintf(&b, " (truncated at --limit %d versions)", len(vs))
	}
	b.WriteString("\n")
	return b.Bytes()
}

type timelineDoc struct {
	Schema    string            `json:"schema"`
	Store     string            `json:"store"`
	Server    string            `json:"server,omitempty"`
	Tool      string            `json:"tool,omitempty"`
	Since     string            `json:"since,omitempty"`
	Truncated bool              `json:"truncated"`
	Versions  []timelineVersion `json:"versions"`
}

type timelineVersion struct {
	Server    string            `json:"server"`
	Tool      string            `json:"tool"`
	Digest    string            `json:"tool_digest"`
	FirstSeen string            `json:"first_seen"`
	LastSeen  string            `json:"last_seen"`
	FirstScan int64             `json:"first_scan"`
	LastScan  int64             `json:"last_scan"`
	Findings  []timelineFinding `json:"findings"`
}

type timelineFinding struct {
	Scan           int64  `json:"scan"`
	RuleID         string `json:"rule_id"`
	Severity       string `json:"severity"`
	Message        string `json:"message"`
	DeclaredDigest string `json:"declared_digest,omitempty"`
}

// timelineJSON is the JSON form: server, tool and message strings are
// escaped with safetext (lossless and inert: any byte a server sent is
// shown as an escape, never raw).
func timelineJSON(storeName string, q store.Query, vs []store.Version, truncated bool) ([]byte, error) {
	doc := timelineDoc{Schema: HistorySchemaID, Store: safetext.Escape(storeName), Server: safetext.Escape(q.Server), Tool: safetext.Escape(q.Tool),
		Truncated: truncated, Versions: make([]timelineVersion, 0, len(vs))}
	if !q.Since.IsZero() {
		doc.Since = timelineStamp(q.Since)
	}
	for _, v := range vs {
		hv := timelineVersion{Server: safetext.Escape(v.Server), Tool: safetext.Escape(v.Tool), Digest: v.Digest,
			FirstSeen: timelineStamp(v.FirstSeen), LastSeen: timelineStamp(v.LastSeen), FirstScan: v.FirstScan, LastScan: v.LastScan,
			Findings: make([]timelineFinding, 0, len(v.Findings))}
		for _, f := range v.Findings {
			hv.Findings = append(hv.Findings, timelineFinding{Scan: f.Scan, RuleID: f.RuleID, Severity: f.Severity, Message: safetext.Inert(f.Message), DeclaredDigest: f.DeclaredDigest})
		}
		doc.Versions = append(doc.Versions, hv)
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
