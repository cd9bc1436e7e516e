package proxy

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// LogSchema versions the decision log's records (a contract).
const LogSchema = "mcpdrift.proxy_decision.v1"

// Record is one line of the decision log: what the gateway decided about
// one tool or one call. It never holds arguments, results or header
// values; tool names are escaped (safetext), and every secret the gateway
// sent or saw is redacted.
type Record struct {
	Schema   string    `json:"schema"`
	Time     time.Time `json:"time"`
	ServerID string    `json:"server_id"`
	Session  string    `json:"session,omitempty"`
	Mode     string    `json:"mode,omitempty"`
	Event    string    `json:"event,omitempty"`
	Method   string    `json:"method,omitempty"`
	Tool     string    `json:"tool,omitempty"`
	Decision string    `json:"decision,omitempty"`
	// ToolDecision is a listed tool's decision (allow, review, deny): the
	// one diff, drift and the gate give the same change.
	ToolDecision string   `json:"tool_decision,omitempty"`
	Reasons      []string `json:"reasons,omitempty"`
	ToolDigest   string   `json:"tool_digest,omitempty"`
	// Note says what was learnt without changing a decision (escaped).
	Note string `json:"note,omitempty"`
}

// DecisionLog writes records as NDJSON, one Write per line.
type DecisionLog struct {
	mu sync.Mutex
	w  io.Writer
}

// NewDecisionLog writes to w.
func NewDecisionLog(w io.Writer) *DecisionLog { return &DecisionLog{w: w} }

func (l *DecisionLog) write(secrets *redact.Set, r Record) {
	if l == nil {
		return
	}
	r.Schema = LogSchema
	r.Tool = safetext.Escape(r.Tool)
	r.Method = safetext.Escape(safetext.Clip(r.Method, 256))
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	b = append(secrets.JSON(b), '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(b)
}
