package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// The acceptance test of issue 9: "pin then drift d.json on an unchanged
// server exits 0, for every server in the corpus". Every tools/list the
// real-world corpus (testdata/realworld, captured from published servers by
// scripts/capture-npm-servers) holds is served, byte for byte, by the strict
// mock server, once in the era the server spoke (the legacy initialize era
// at the revision it answered, 2024-11-05 or 2025-06-18) and once in the
// modern stateless era; against each:
//
//	mcpdrift pin --url URL --server-id ID -o d.json   exits 0
//	mcpdrift drift d.json --url URL               exits 0 (nothing changed)
//	mcpdrift diff d.json d.json                        exits 0
//
// A failure is a bug in mcpdrift (the server did not change between pin and
// drift), never a reason to loosen this test: each failing run is reported
// with the findings it shows.

const realworldDir = "../../testdata/realworld"

type realworldCapture struct {
	server, version string
	toolsList       string // path of <version>.tools-list.json
	protocol        string // the protocolVersion the server answered
}

func realworldCaptures(t *testing.T) []realworldCapture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(realworldDir, "*", "*.tools-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []realworldCapture
	for _, f := range files {
		version := strings.TrimSuffix(filepath.Base(f), ".tools-list.json")
		c := realworldCapture{server: filepath.Base(filepath.Dir(f)), version: version, toolsList: f}
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(f), version+".server-info.json"))
		if err != nil {
			t.Fatalf("%s: %v (every capture has its server-info file)", f, err)
		}
		var info struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if err := json.Unmarshal(raw, &info); err != nil {
			t.Fatalf("%s: server-info: %v", f, err)
		}
		if !slices.Contains(mcpwire.LegacyRevisions, info.ProtocolVersion) {
			t.Fatalf("%s: the server answered protocolVersion %q, which is no legacy revision this test knows", f, info.ProtocolVersion)
		}
		c.protocol = info.ProtocolVersion
		out = append(out, c)
	}
	// The corpus as issue 9 grew it: at least sixteen servers at two
	// versions each.
	if len(out) < 32 {
		t.Fatalf("the real-world corpus has %d captures, want at least 32", len(out))
	}
	return out
}

// driftFindings renders the findings of a drift report for a failure
// message: rule, level, tool and message, one a line.
func driftFindings(out string) string {
	var rep struct {
		Findings []struct {
			RuleID  string `json:"rule_id"`
			Level   string `json:"level"`
			Tool    string `json:"tool"`
			Message string `json:"message"`
		} `json:"findings"`
		ExitCode int `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return fmt.Sprintf("(report is not JSON: %v)\n%s", err, clip(out, 2000))
	}
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "\n    %s %s", f.RuleID, f.Level)
		if f.Tool != "" {
			fmt.Fprintf(&b, " %q", f.Tool)
		}
		fmt.Fprintf(&b, ": %s", clip(f.Message, 300))
	}
	if b.Len() == 0 {
		return fmt.Sprintf("(no findings, report exit_code %d)", rep.ExitCode)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func TestRealworldPinThenDriftUnchanged(t *testing.T) {
	for _, c := range realworldCaptures(t) {
		eras := []struct {
			name          string
			cfg           mockserver.Config
			era, revision string // what the drift report must say was spoken
		}{
			{"legacy-" + c.protocol, mockserver.Config{Era: mockserver.LegacyOnly, SupportedVersions: []string{c.protocol}}, "legacy", c.protocol},
			{"modern", mockserver.Config{Era: mockserver.ModernOnly}, "modern", mcpwire.Rev20260728},
		}
		for _, era := range eras {
			t.Run(c.server+"/"+c.version+"/"+era.name, func(t *testing.T) {
				t.Parallel()
				_, url := mock(t, era.cfg, c.toolsList)
				d := filepath.Join(t.TempDir(), "d.json")
				id := "rw-" + c.server

				code, out, stderr := run(t, "", "pin", "--url", url, "--server-id", id, "-o", d)
				if code != 0 {
					t.Errorf("pin --url: exit %d, want 0\nstdout: %s\nstderr: %s", code, clip(out, 2000), clip(stderr, 2000))
					return
				}

				code, out, stderr = run(t, "", "drift", d, "--url", url, "--format", "json")
				if code != 0 {
					t.Errorf("drift d.json on the unchanged server: exit %d, want 0; findings:%s\nstderr: %s", code, driftFindings(out), clip(stderr, 2000))
				}
				// The run spoke the era it was meant to: the modern revision,
				// or a legacy session at the revision the server answered.
				var rep struct {
					Protocol struct {
						Era           string `json:"era"`
						Revision      string `json:"protocol_revision"`
						LegacyVersion string `json:"legacy_session_version"`
					} `json:"protocol"`
					Served *struct {
						ToolCount int `json:"tool_count"`
					} `json:"served"`
				}
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Errorf("drift --format json: not JSON: %v", err)
				} else {
					spoke := rep.Protocol.Revision
					if era.era == "legacy" {
						spoke = rep.Protocol.LegacyVersion
					}
					if rep.Protocol.Era != era.era || spoke != era.revision || rep.Served == nil {
						t.Errorf("drift spoke era %q at %q (protocol_revision %q; served list: %v), want %q at %q",
							rep.Protocol.Era, spoke, rep.Protocol.Revision, rep.Served != nil, era.era, era.revision)
					}
				}

				code, out, stderr = run(t, "", "diff", d, d)
				if code != 0 {
					t.Errorf("diff d.json d.json: exit %d, want 0\nstdout: %s\nstderr: %s", code, clip(out, 2000), clip(stderr, 2000))
				}
			})
		}
	}
}

// The control: the same commands see a real change. Each server's older
// capture is pinned and its newer one served; drift must report at least
// one finding (every pair in the corpus differs), so a clean run above is
// not a run that compared nothing. The exit code is 1, or 0 where every
// change is notation only (issue 9: a notation-only change keeps its digest
// finding and needs no review; mcp-go v0.40.0 → v1.2.1 is such a pair).
func TestRealworldPinThenDriftChanged(t *testing.T) {
	byServer := map[string][]realworldCapture{}
	for _, c := range realworldCaptures(t) {
		byServer[c.server] = append(byServer[c.server], c)
	}
	for server, cs := range byServer {
		if len(cs) != 2 {
			t.Errorf("%s: %d captures, want two", server, len(cs))
			continue
		}
		slices.SortFunc(cs, func(a, b realworldCapture) int { return compareDotted(a.version, b.version) })
		old, nw := cs[0], cs[1]
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			_, oldURL := mock(t, mockserver.Config{Era: mockserver.ModernOnly}, old.toolsList)
			_, newURL := mock(t, mockserver.Config{Era: mockserver.ModernOnly}, nw.toolsList)
			d := filepath.Join(t.TempDir(), "d.json")
			if code, out, stderr := run(t, "", "pin", "--url", oldURL, "--server-id", "rw-"+server, "-o", d); code != 0 {
				t.Fatalf("pin %s: exit %d\n%s\n%s", old.version, code, clip(out, 2000), clip(stderr, 2000))
			}
			code, d2, stderr := runDrift(t, d, "--url", newURL)
			if (code != 0 && code != 1) || len(d2.Findings) == 0 {
				t.Errorf("drift of %s pinned against %s served: exit %d with %d finding(s), want exit 1 (or 0, notation only) with findings\n%s",
					old.version, nw.version, code, len(d2.Findings), clip(stderr, 2000))
			}
			t.Logf("%s → %s: exit %d, %d finding(s): %s", old.version, nw.version, code, len(d2.Findings), strings.Join(d2.rules(), ", "))
		})
	}
}

// compareDotted orders versions like 2025.1.14 < 2026.8.31 and
// v0.40.0 < v1.2.1: numerically part by part, a leading "v" ignored.
func compareDotted(a, b string) int {
	as := strings.Split(strings.TrimPrefix(a, "v"), ".")
	bs := strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		var x, y int
		_, errx := fmt.Sscanf(as[i], "%d", &x)
		_, erry := fmt.Sscanf(bs[i], "%d", &y)
		if errx == nil && erry == nil && x != y {
			return x - y
		}
		if errx != nil || erry != nil {
			if c := strings.Compare(as[i], bs[i]); c != 0 {
				return c
			}
		}
	}
	return len(as) - len(bs)
}
