package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// testdata/installmoved: @modelcontextprotocol/server-everything 2026.7.4
// and 2026.8.18, installed by npx and pinned through their
// node_modules/.bin links (see its README). They serve byte-identical
// tools; only the npx cache path moved.
const installMovedDir = "../../testdata/installmoved"

func init() {
	// A fake npx install's package file (installMovedLayout): serves the
	// tools it names, as the server it stands for.
	if p := os.Getenv("MCPDRIFT_TEST_NPX_TOOLS"); p != "" {
		tools, err := mockserver.LoadToolsFile(p)
		if err != nil {
			os.Exit(5)
		}
		s := mockserver.MustNew(mockserver.Config{Tools: tools, ServerName: os.Getenv("MCPDRIFT_TEST_NPX_NAME"), ServerVersion: os.Getenv("MCPDRIFT_TEST_NPX_VERSION")})
		s.ServeStdio(context.Background(), os.Stdin, os.Stdout)
		os.Exit(0)
	}
}

// installMovedLayout lays out an npx install of pkg under dir as npx does
// (<dir>/_npx/<hash>/node_modules/.bin/<bin> → ../<pkg>/dist/index.js),
// the package's file a script that starts this test binary serving the
// tools of toolsFile under the server name and version given (the script
// sets its own environment: nothing is passed, so the recorded env is as
// npx's). It returns the bin link's path.
func installMovedLayout(t *testing.T, dir, hash, pkg, bin, toolsFile, name, version string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(toolsFile)
	if err != nil {
		t.Fatal(err)
	}
	nm := filepath.Join(dir, "_npx", hash, "node_modules")
	pkgDir := filepath.Join(nm, filepath.FromSlash(pkg), "dist")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nMCPDRIFT_TEST_NPX_TOOLS='%s' MCPDRIFT_TEST_NPX_NAME='%s' MCPDRIFT_TEST_NPX_VERSION='%s' exec '%s' \"$@\"\n", abs, name, version, exe)
	if err := os.WriteFile(filepath.Join(pkgDir, "index.js"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(nm, ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(nm, ".bin", bin)
	if err := os.Symlink(filepath.Join("..", filepath.FromSlash(pkg), "dist", "index.js"), link); err != nil {
		t.Fatal(err)
	}
	return link
}

// gatewayDecision is what the gateway does with the upstream new in front
// of the baseline old: withheld, and why (or the notes it logs).
func gatewayDecision(old, new *manifest.Snapshot, prof *schemadiff.DecisionProfile) (bool, string) {
	l := decide.DecideList(decide.NewBaseline(old.ServerID, old.Identity, old.Tools),
		&decide.Served{Tools: new.Tools, Completeness: new.Completeness, Identity: new.Identity}, decide.Options{Profile: prof})
	if l.Withheld {
		return true, l.Detail
	}
	return false, strings.Join(l.Notes, "; ")
}

// lockCheckDecision is lock check of the server new serves against a lock
// entry pinned from old under prof: its exit code and why it is withheld.
func lockCheckDecision(t *testing.T, old, new *manifest.Snapshot, prof string) (int, string) {
	t.Helper()
	c := classify.Default()
	s, err := lock.NewServer(old.ServerID, lock.Source{Stdio: []string{"mcp-server-everything", "stdio"}}, prof, old.Identity, old.ClientCapabilities, old.Tools, c, lock.Approval{By: "test", At: "2026-12-07"})
	if err != nil {
		t.Fatal(err)
	}
	tl := &manifest.ToolList{Tools: new.Tools, Completeness: new.Completeness}
	res, err := s.Check(&lock.Served{Observed: manifest.BuildObserved(old.ServerID, tl, new.Completeness, c), Tools: new.Tools, Identity: new.Identity}, lock.CheckOptions{Classifier: c, Today: "2026-12-07"})
	if err != nil {
		t.Fatal(err)
	}
	return res.ExitCode, res.WithheldDetail
}

// diffDecision is mcpdrift diff of two snapshot files under prof: its
// exit code and report.
func diffDecision(t *testing.T, old, new, prof string) (int, schemadiff.Report) {
	t.Helper()
	code, out, stderr := run(t, "", "diff", "--format", "json", "--profile", prof, old, new)
	var r schemadiff.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("diff: exit %d: %v\n%s", code, err, stderr)
	}
	return code, r
}

// Issue 30, item 4: server-everything 2026.7.4 and 2026.8.18 serve
// byte-identical tools, and npx installed them at two cache paths. diff,
// drift, lock check and the gateway make one decision on the pair: under
// review the moved install is information (exit 0, served, a note naming
// the package "@modelcontextprotocol/server-everything", never ".bin");
// under fail-closed it is part of the identity tuple (exit 1, withheld,
// the reason naming the endpoint). diff said REVIEW (exit 1, package
// ".bin") and drift said nothing under either profile before.
func TestInstallMovedOneDecision(t *testing.T) {
	oldBase := filepath.Join(installMovedDir, "everything-2026.7.4.json")
	oldPath := filepath.Join(installMovedDir, "everything-2026.7.4.snapshot.json")
	newPath := filepath.Join(installMovedDir, "everything-2026.8.18.snapshot.json")

	// drift of the 2026.7.4 baseline against 2026.8.18's tools, served from
	// an npx install at another cache path; the same run pins that server
	// so that diff, lock check and the gateway judge the very same pair.
	dir := t.TempDir()
	bin := installMovedLayout(t, dir, "8e0cca058af2537c", "@modelcontextprotocol/server-everything", "mcp-server-everything",
		filepath.Join(installMovedDir, "everything-2026.8.18.tools-list.json"), "mcp-servers/everything", "2.0.0")
	live := filepath.Join(dir, "live.json")
	if code, _, stderr := run(t, "", "pin", "--server-id", "everything", "-o", live, "--stdio", "--", bin, "stdio"); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	liveSnap := filepath.Join(dir, "live.snapshot.json")
	if s := readSnapshot(t, liveSnap); !strings.Contains(s.Identity.ResolvedEndpoint, "/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio") {
		t.Fatalf("the bin link's target is not recorded: %+v", s.Identity)
	}
	old := readSnapshot(t, oldPath)
	for _, pair := range []struct{ name, newPath string }{{"captured pair", newPath}, {"live npx layout", liveSnap}} {
		nw := readSnapshot(t, pair.newPath)
		for _, prof := range []*schemadiff.DecisionProfile{schemadiff.ReviewProfile, schemadiff.FailClosedProfile} {
			t.Run(pair.name+"/"+prof.Name, func(t *testing.T) {
				failClosed := prof == schemadiff.FailClosedProfile
				wantExit := map[bool]int{false: 0, true: 1}[failClosed]
				dcode, r := diffDecision(t, oldPath, pair.newPath, prof.Name)
				if dcode != wantExit || len(r.Changes) != 1 || r.Changes[0].Kind != schemadiff.ServerInstallMoved {
					t.Fatalf("diff: exit %d, %s, %+v", dcode, r.Decision, r.Changes)
				}
				detail := r.Changes[0].Detail
				if !strings.Contains(detail, `of package "@modelcontextprotocol/server-everything"`) || strings.Contains(detail, `".bin"`) {
					t.Errorf("diff names the package wrong: %s", detail)
				}
				if failClosed != (r.Decision == schemadiff.Deny) || (!failClosed && (r.Decision != schemadiff.Allow || r.Changes[0].Info == "")) {
					t.Errorf("diff decision %s (%s), info %q", r.Decision, r.DecisionReason, r.Changes[0].Info)
				}
				withheld, why := gatewayDecision(old, nw, prof)
				if withheld != failClosed || !strings.Contains(why, "@modelcontextprotocol/server-everything") {
					t.Errorf("gateway: withheld %v: %s", withheld, why)
				}
				if failClosed && !strings.Contains(why, "the endpoint is ") {
					t.Errorf("gateway: the reason does not name the endpoint: %s", why)
				}
				lcode, lwhy := lockCheckDecision(t, old, nw, prof.Name)
				if lcode != wantExit || (failClosed && lwhy != why) {
					t.Errorf("lock check: exit %d: %s (gateway: %s)", lcode, lwhy, why)
				}
				if pair.newPath != liveSnap {
					return
				}
				code, d, stderr := runDrift(t, "--profile", prof.Name, oldBase, "--stdio", "--", bin, "stdio")
				identity := 0
				for _, f := range d.Findings {
					if f.RuleID == "MCP-DRIFT-IDENTITY" {
						identity++
						if f.Message != why+": the gateway would withhold every tool of this server" {
							t.Errorf("drift says %s, the gateway %s", f.Message, why)
						}
					}
				}
				if code != wantExit || identity != map[bool]int{false: 0, true: 1}[failClosed] {
					t.Errorf("drift: exit %d, %d identity finding(s): %+v %s", code, identity, d.Findings, stderr)
				}
				if !failClosed && !strings.Contains(strings.Join(d.Notes, "\n"), `of package "@modelcontextprotocol/server-everything"`) {
					t.Errorf("drift notes %q", d.Notes)
				}
			})
		}
	}
}
