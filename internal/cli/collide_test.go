package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// namesList is a tools/list response of tools with these names.
func namesList(names ...string) string {
	var ts []string
	for _, n := range names {
		b, _ := json.Marshal(n)
		ts = append(ts, `{"name":`+string(b)+`,"description":"Delete a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`)
	}
	return `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + strings.Join(ts, ",") + `]}}`
}

// ackFile writes a suppression file acknowledging each name until expires.
func ackFile(t *testing.T, dir, expires string, names ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\nsuppressions:\n")
	for _, n := range names {
		q, _ := json.Marshal(n)
		fmt.Fprintf(&b, "  - rule: mcp_tool_names_ambiguous\n    tool: %s\n    reason: both names are the vendor's, reviewed in SEC-42\n    expires: %s\n", q, expires)
	}
	return writeFile(t, dir, "ack-"+expires+".yaml", []byte(b.String()))
}

// Issue 30, item 7: pin, lock add and approve refuse names that collide
// after NFC, case folding (full and compatibility forms) or the confusable
// skeleton (exit 2, the names escaped), unless each is acknowledged in the
// suppression file with a reason (and an expiry, after which they are
// refused again); without it gate, drift and the gateway report the
// collision. Before, pin exited 0 without a word, and gate passed the
// names with a warning ("the baseline vouches for them").
func TestCollidingNamesNeedAcknowledgement(t *testing.T) {
	for _, c := range []struct {
		name    string
		names   []string
		escaped string
	}{
		{"case", []string{"Delete_File", "delete_file"}, `"Delete_File", "delete_file"`},
		{"nfc", []string{"caf\u00e9", "cafe\u0301"}, `"caf\u00e9", "cafe\u0301"`},
		{"compatibility", []string{"\ufb01le_read", "file_read"}, `"\ufb01le_read", "file_read"`},
		{"confusable", []string{"re\u0430d_file", "read_file"}, `"re\u0430d_file", "read_file"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			list := writeFile(t, dir, "list.json", []byte(namesList(c.names...)))
			decl := filepath.Join(dir, "d.json")
			code, _, stderr := run(t, "", "pin", "--input", list, "--server-id", "srv", "-o", decl, "--no-suppressions")
			if code != 2 || !strings.Contains(stderr, c.escaped) || !strings.Contains(stderr, "mcp_tool_names_ambiguous") {
				t.Fatalf("pin: exit %d: %s", code, stderr)
			}
			if _, err := os.Stat(decl); err == nil {
				t.Fatal("a refused pin wrote its baseline")
			}
			if _, err := os.Stat(snapshotPathFor(decl)); err == nil {
				t.Fatal("a refused pin wrote its snapshot")
			}
			expired := ackFile(t, dir, "2020-01-01", c.names...)
			if code, _, stderr := run(t, "", "pin", "--input", list, "--server-id", "srv", "-o", decl, "--suppressions", expired); code != 2 || !strings.Contains(stderr, "acknowledged until") {
				t.Fatalf("pin, acknowledgement expired: exit %d: %s", code, stderr)
			}
			ack := ackFile(t, dir, "2099-12-31", c.names...)
			if code, _, stderr := run(t, "", "pin", "--input", list, "--server-id", "srv", "-o", decl, "--suppressions", ack); code != 0 || !strings.Contains(stderr, "SEC-42") {
				t.Fatalf("pin, acknowledged: exit %d: %s", code, stderr)
			}

			// gate: a finding for each name, until acknowledged.
			obs := filepath.Join(dir, "o.json")
			if code, _, stderr := run(t, "", "observe", "--input", list, "--server-id", "srv", "-o", obs); code != 0 {
				t.Fatalf("observe: %d %s", code, stderr)
			}
			code, out, _ := run(t, "", "gate", "--observed", obs, "--declared", decl, "--no-suppressions", "--format", "json")
			if code != 1 || strings.Count(out, `"reason_code": "mcp_tool_names_ambiguous"`) != 2 {
				t.Errorf("gate: exit %d\n%s", code, out)
			}
			if code, out, _ := run(t, "", "gate", "--observed", obs, "--declared", decl, "--suppressions", ack, "--format", "json"); code != 0 {
				t.Errorf("gate, acknowledged: exit %d\n%s", code, out)
			}

			// drift: the same acknowledgement accepts its finding.
			_, url := mock(t, mockserver.Config{}, list)
			code, d, stderr := runDrift(t, decl, "--url", url, "--no-suppressions")
			if code != 1 || !strings.Contains(strings.Join(d.rules(), "\n"), "MCP-CONF-TOOL-NAMES-AMBIGUOUS") {
				t.Errorf("drift: exit %d %v %s", code, d.rules(), stderr)
			}
			code, d, stderr = runDrift(t, decl, "--url", url, "--suppressions", ack)
			if strings.Contains(strings.Join(d.rules(), "\n"), "MCP-CONF-TOOL-NAMES-AMBIGUOUS") {
				t.Errorf("drift, acknowledged: exit %d %v %s", code, d.rules(), stderr)
			}

			// The gateway: the colliding tools are hidden unless
			// acknowledged.
			sf := &suppressionFlags{none: true}
			e := &env{stderr: &strings.Builder{}}
			served := readSnapshot(t, snapshotPathFor(decl))
			for _, x := range []struct {
				sf    *suppressionFlags
				serve bool
			}{{sf, false}, {&suppressionFlags{file: ack}, true}} {
				b, _, err := loadBaseline(e, decl, "", x.sf)
				if err != nil {
					t.Fatal(err)
				}
				l := decide.DecideList(b, &decide.Served{Tools: served.Tools, Completeness: manifest.Complete, Identity: served.Identity}, decide.Options{})
				for _, tl := range l.Tools {
					if tl.Serve != x.serve || (!x.serve && tl.Reason != decide.ReasonNamesCollide) {
						t.Errorf("gateway (acknowledged %v): %s serve %v %s %q", x.serve, tl.Name, tl.Serve, tl.Reason, l.Notes)
					}
				}
			}

			// lock add refuses the list, unless acknowledged.
			lp := filepath.Join(dir, "mcpdrift.lock")
			if code, _, stderr := run(t, "", "lock", "add", "srv", "--lock", lp, "--url", url, "--by", "a@example.com", "--no-suppressions"); code != 2 || !strings.Contains(stderr, c.escaped) {
				t.Errorf("lock add: exit %d: %s", code, stderr)
			}
			if code, _, stderr := run(t, "", "lock", "add", "srv", "--lock", lp, "--url", url, "--by", "a@example.com", "--suppressions", ack); code != 0 {
				t.Errorf("lock add, acknowledged: exit %d: %s", code, stderr)
			}
		})
	}
}

// approve refuses to vouch for a new tool whose name collides with an
// approved one, unless acknowledged; nothing is written then.
func TestApproveRefusesACollidingName(t *testing.T) {
	dir := t.TempDir()
	list := writeFile(t, dir, "one.json", []byte(namesList("read_file")))
	s, url := mock(t, mockserver.Config{}, list)
	lp := filepath.Join(dir, "mcpdrift.lock")
	if code, _, stderr := run(t, "", "lock", "add", "srv", "--lock", lp, "--url", url, "--by", "a@example.com"); code != 0 {
		t.Fatalf("lock add: %d %s", code, stderr)
	}
	tools, err := mockserver.LoadTools([]byte(namesList("read_file", "re\u0430d_file")))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetTools(tools); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(lp)
	code, _, stderr := run(t, "", "approve", "srv", "re\u0430d_file", "--lock", lp, "--by", "b@example.com", "--no-suppressions")
	if code != 2 || !strings.Contains(stderr, `"re\u0430d_file", "read_file"`) && !strings.Contains(stderr, `"read_file", "re\u0430d_file"`) {
		t.Fatalf("approve: exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(lp); string(after) != string(before) {
		t.Fatal("a refused approval changed the lock")
	}
	ack := ackFile(t, dir, "2099-12-31", "read_file", "re\u0430d_file")
	if code, _, stderr := run(t, "", "approve", "srv", "re\u0430d_file", "--lock", lp, "--by", "b@example.com", "--suppressions", ack); code != 0 {
		t.Fatalf("approve, acknowledged: exit %d: %s", code, stderr)
	}
	// lock check with the acknowledgement: clean; without: a finding.
	if code, out, _ := run(t, "", "lock", "check", "--lock", lp, "--suppressions", ack); code != 0 {
		t.Errorf("lock check, acknowledged: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "", "lock", "check", "--lock", lp, "--no-suppressions"); code != 1 || !strings.Contains(out, "mcp_tool_names_ambiguous") {
		t.Errorf("lock check: exit %d\n%s", code, out)
	}
}
