package watch

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// SchemaID identifies an event (schemas/watch_event.v1.schema.json).
const SchemaID = "mcpdrift.watch_event.v1"

// Kinds of event.
const (
	KindObserved     = "observed"     // the first observation of the server
	KindChanged      = "changed"      // the manifest digest differs from the last observation
	KindUnreachable  = "unreachable"  // the first failed observation of a streak
	KindInconclusive = "inconclusive" // the listing was partial: nothing can be compared
	KindRecovered    = "recovered"    // observed again after a failure
)

// Triggers: why an observation ran.
const (
	TriggerStart       = "start"
	TriggerTTL         = "ttl"          // the ttlMs the server sent expired
	TriggerInterval    = "interval"     // no ttlMs: the default interval
	TriggerListChanged = "list_changed" // notifications/tools/list_changed
	TriggerRetry       = "retry"        // after a failure, with backoff
	// TriggerStreamEnded: the server's list_changed stream, which was
	// open, ended: what it would have said since is unknown.
	TriggerStreamEnded = "stream_ended"
)

// Baselines a decision is made against.
const (
	BaselineLock     = "lock"
	BaselinePrevious = "previous"
)

// maxNameBytes bounds a tool name in an event (before escaping).
const maxNameBytes = 256

// Event is one line of the watch's NDJSON stream. It holds names and
// digests, never a tool's text or an argument value; tool names are
// escaped (safetext.EscapeASCII), the server name and the error too.
type Event struct {
	Schema         string        `json:"schema"`
	Seq            int64         `json:"seq"`
	Time           string        `json:"time"`
	Server         string        `json:"server"`
	Kind           string        `json:"kind"`
	Trigger        string        `json:"trigger"`
	ManifestDigest *DigestPair   `json:"manifest_digest,omitempty"`
	Tools          *ToolChanges  `json:"tools,omitempty"`
	ToolCount      *int          `json:"tool_count,omitempty"`
	Decision       string        `json:"decision,omitempty"`
	Baseline       string        `json:"baseline,omitempty"`
	Decisions      []ToolVerdict `json:"decisions,omitempty"`
	Error          string        `json:"error,omitempty"`
	Failures       int           `json:"failures,omitempty"`
	NextInMs       *int64        `json:"next_in_ms,omitempty"`
	TTLMs          *int64        `json:"ttl_ms,omitempty"`
}

// DigestPair is a manifest digest before and after.
type DigestPair struct {
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// ToolChanges are the tools added, removed and changed against the last
// observation, by name.
type ToolChanges struct {
	Added   []NamedDigest `json:"added"`
	Removed []NamedDigest `json:"removed"`
	Changed []ChangedTool `json:"changed"`
}

// NamedDigest is a tool's escaped name and its tool digest.
type NamedDigest struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// ChangedTool is a tool whose digest changed.
type ChangedTool struct {
	Name string `json:"name"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// ToolVerdict is a tool the decision core did not allow.
type ToolVerdict struct {
	Name     string `json:"name"`
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

// Line is the event as one NDJSON line (with its newline).
func (e *Event) Line() []byte {
	b, err := json.Marshal(e)
	if err != nil {
		// Strings, integers and slices of them: this cannot fail.
		panic("watch: encoding an event: " + err.Error())
	}
	return append(b, '\n')
}

// toolName is how an event shows a tool name.
func toolName(n string) string { return safetext.EscapeASCII(safetext.Clip(n, maxNameBytes)) }

// Compare lists the tools added, removed and changed from old to new, by
// name (each list sorted by name).
func Compare(old, new []manifest.Tool) *ToolChanges {
	c := &ToolChanges{Added: []NamedDigest{}, Removed: []NamedDigest{}, Changed: []ChangedTool{}}
	before := make(map[string]string, len(old))
	for i := range old {
		before[old[i].Name] = old[i].ToolDigest()
	}
	seen := make(map[string]bool, len(new))
	for i := range new {
		n, d := new[i].Name, new[i].ToolDigest()
		if seen[n] {
			continue
		}
		seen[n] = true
		switch od, ok := before[n]; {
		case !ok:
			c.Added = append(c.Added, NamedDigest{toolName(n), d})
		case od != d:
			c.Changed = append(c.Changed, ChangedTool{toolName(n), od, d})
		}
	}
	for i := range old {
		if n := old[i].Name; !seen[n] {
			seen[n] = true
			c.Removed = append(c.Removed, NamedDigest{toolName(n), before[n]})
		}
	}
	slices.SortFunc(c.Added, func(a, b NamedDigest) int { return compareStr(a.Name, b.Name) })
	slices.SortFunc(c.Removed, func(a, b NamedDigest) int { return compareStr(a.Name, b.Name) })
	slices.SortFunc(c.Changed, func(a, b ChangedTool) int { return compareStr(a.Name, b.Name) })
	return c
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Verdict is the decision core's verdict on served against baseline: the
// worst tool decision (allow, review, deny) and the tools not allowed.
func Verdict(baseline, served []manifest.Tool, opt decide.Options) (string, []ToolVerdict) {
	worst := decide.Allow
	var out []ToolVerdict
	for _, d := range decide.DecideTools(baseline, served, opt) {
		if d.Decision == decide.Allow {
			continue
		}
		out = append(out, ToolVerdict{Name: toolName(d.Name), Decision: d.Decision, Reason: d.Reason})
		if d.Decision == decide.Deny || worst == decide.Allow {
			worst = d.Decision
		}
	}
	return worst, out
}

// stamp is the event time format.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
