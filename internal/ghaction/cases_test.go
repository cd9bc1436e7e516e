package ghaction_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestActionDriftedLock runs the action on a pull request whose lock's
// server drifted: the archive is checked and installed, lock check runs
// once, the SARIF validates against both SARIF 2.1.0 schemas and names
// the server and the OWASP risk, the job summary has the Markdown report,
// the pull request gets one comment (updated, not repeated, on the next
// run), the job fails with the findings, and the token is nowhere but in
// the API's Authorization header.
func TestActionDriftedLock(t *testing.T) {
	needJQ(t)
	rel := makeRelease(t)
	api := &fakeAPI{}
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()
	s, ts := mock(t, toolsV1)
	lock := filepath.Join(t.TempDir(), "mcpdrift.lock")
	lockOf(t, lock, [2]string{"files", ts.URL + "/mcp"})
	if err := s.SetTools(toolsV2); err != nil {
		t.Fatal(err)
	}
	token := newToken(t)
	r := newRun(t, rel, apiSrv.URL, lock, map[string]string{"token": token})
	r.steps()
	log := r.log.String()
	if r.failed != "verdict" || r.exit != 1 {
		t.Fatalf("failed step %q exit %d, want the verdict step, exit 1:\n%s", r.failed, r.exit, log)
	}
	if o := r.outputs["run"]; o["result"] != "fail" || o["exit-code"] != "1" {
		t.Errorf("run outputs %v", o)
	}
	for _, want := range []string{
		"matches checksums.txt", "cosign is not on the runner", // install
		"mcpdrift " + rel.version, // mcpdrift version from the archive
		"::stop-commands::",       // the report cannot issue workflow commands
		"::error title=mcpdrift::findings need review",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log has no %q:\n%s", want, log)
		}
	}
	if got := r.outputs["install"]["version"]; got != rel.version {
		t.Errorf("installed version %q, want %q", got, rel.version)
	}

	// The SARIF: schema-valid, a run for the server, its findings related
	// to the OWASP MCP Top 10.
	sarifPath := filepath.Join(r.workspace, "mcpdrift.sarif")
	if r.outputs["run"]["sarif"] != "mcpdrift.sarif" {
		t.Errorf("sarif output %q", r.outputs["run"]["sarif"])
	}
	raw, err := os.ReadFile(sarifPath)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	for i, sch := range sarifSchemas(t) {
		if err := sch.Validate(inst); err != nil {
			t.Errorf("SARIF invalid against schema %d: %v", i, err)
		}
	}
	checkSARIF(t, raw)

	// The job summary.
	summary, err := os.ReadFile(getenv(r.env, "GITHUB_STEP_SUMMARY"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"files", `write\_file`, "mcp\\_tool\\_description\\_changed"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("the job summary has no %q:\n%.600s", want, summary)
		}
	}

	// The comment: one POST to the pull request, with the token.
	var posts []apiRequest
	for _, q := range api.requests {
		if q.auth != "Bearer "+token {
			t.Errorf("%s %s with Authorization %q", q.method, q.path, q.auth)
		}
		if q.method == "POST" {
			posts = append(posts, q)
		}
	}
	if len(posts) != 1 || posts[0].path != "/repos/acme/agents/issues/7/comments" {
		t.Fatalf("API requests %+v, want one POST of a comment on #7", api.requests)
	}
	var body struct{ Body string }
	if err := json.Unmarshal([]byte(posts[0].body), &body); err != nil || !strings.HasPrefix(body.Body, "<!-- mcpdrift-action -->") || !strings.Contains(body.Body, `write\_file`) {
		t.Errorf("comment body %q (%v)", posts[0].body, err)
	}
	noSecret(t, r, token)

	// The next run updates that comment.
	api.requests = nil
	api.existing = `[{"id":41,"body":"lgtm"},{"id":42,"body":"<!-- mcpdrift-action -->\nold"}]`
	r2 := newRun(t, rel, apiSrv.URL, lock, map[string]string{"token": token})
	r2.steps()
	var patched bool
	for _, q := range api.requests {
		patched = patched || q.method == "PATCH" && q.path == "/repos/acme/agents/issues/comments/42"
		if q.method == "POST" {
			t.Errorf("a second comment was posted: %+v", q)
		}
	}
	if !patched {
		t.Errorf("the comment was not updated: %+v", api.requests)
	}
	noSecret(t, r2, token)
}

// checkSARIF: one run, for the server "files", with results, at least one
// related to an OWASP MCP Top 10 risk.
func checkSARIF(t *testing.T, raw []byte) {
	t.Helper()
	var l struct {
		Runs []struct {
			AutomationDetails struct{ ID string } `json:"automationDetails"`
			Taxonomies        []struct{ Name string }
			Tool              struct {
				Driver struct {
					Rules []struct {
						ID            string
						Relationships []struct{ Target struct{ ID string } }
					}
				}
			}
			Results []struct{ RuleIndex int }
		}
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 1 || l.Runs[0].AutomationDetails.ID != "mcpdrift/gate/files/" {
		t.Fatalf("SARIF runs: %d, automation id %+v", len(l.Runs), l.Runs)
	}
	run := l.Runs[0]
	if len(run.Taxonomies) != 1 || run.Taxonomies[0].Name != "OWASP MCP Top 10" {
		t.Errorf("taxonomies %+v", run.Taxonomies)
	}
	related := false
	for _, res := range run.Results {
		rule := run.Tool.Driver.Rules[res.RuleIndex]
		related = related || len(rule.Relationships) > 0
	}
	if len(run.Results) == 0 || !related {
		t.Errorf("%d results, none related to an OWASP MCP Top 10 risk", len(run.Results))
	}
}

// TestActionVerdicts: a clean lock passes; a server that cannot be
// reached is inconclusive, which fails the job unless
// fail-on-inconclusive is false; without a token nothing is commented.
func TestActionVerdicts(t *testing.T) {
	rel := makeRelease(t)
	api := &fakeAPI{}
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()
	_, ts := mock(t, toolsV1)
	clean := filepath.Join(t.TempDir(), "clean.lock")
	lockOf(t, clean, [2]string{"files", ts.URL + "/mcp"})
	r := newRun(t, rel, apiSrv.URL, clean, nil)
	r.steps()
	if r.failed != "" || r.outputs["run"]["result"] != "pass" || !strings.Contains(r.log.String(), "no token: no pull request comment") {
		t.Errorf("clean lock: failed %q, outputs %v:\n%s", r.failed, r.outputs["run"], r.log.String())
	}

	_, gone := mock(t, toolsV1)
	dead := filepath.Join(t.TempDir(), "dead.lock")
	lockOf(t, dead, [2]string{"gone", gone.URL + "/mcp"})
	gone.Close()
	args := map[string]string{"args": "--timeout\n5s"}
	r = newRun(t, rel, apiSrv.URL, dead, args)
	r.steps()
	if r.failed != "verdict" || r.outputs["run"]["result"] != "inconclusive" || r.outputs["run"]["exit-code"] != "3" {
		t.Errorf("unreachable server: failed %q, outputs %v:\n%s", r.failed, r.outputs["run"], r.log.String())
	}
	args["fail-on-inconclusive"] = "false"
	r = newRun(t, rel, apiSrv.URL, dead, args)
	r.steps()
	if r.failed != "" || r.outputs["run"]["result"] != "inconclusive" || !strings.Contains(r.log.String(), "passing because fail-on-inconclusive is false") {
		t.Errorf("unreachable server, fail-on-inconclusive false: failed %q:\n%s", r.failed, r.log.String())
	}
	if len(api.requests) != 0 {
		t.Errorf("API requests without a token: %+v", api.requests)
	}
}

// TestActionInstallRefuses: an archive that does not match checksums.txt
// is refused; with cosign on the runner the signature is checked against
// the release workflow's identity and a failing check is refused; with
// require-signature and no cosign, the install fails.
func TestActionInstallRefuses(t *testing.T) {
	rel := makeRelease(t)
	_, ts := mock(t, toolsV1)
	lock := filepath.Join(t.TempDir(), "mcpdrift.lock")
	lockOf(t, lock, [2]string{"files", ts.URL + "/mcp"})

	bad := release{t.TempDir(), rel.version}
	entries, _ := os.ReadDir(rel.dir)
	for _, e := range entries {
		copyFile(t, filepath.Join(rel.dir, e.Name()), filepath.Join(bad.dir, e.Name()))
	}
	sums, _ := os.ReadFile(filepath.Join(bad.dir, "checksums.txt"))
	var tampered []string
	for _, l := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		tampered = append(tampered, strings.Repeat("0", 64)+l[64:])
	}
	if err := os.WriteFile(filepath.Join(bad.dir, "checksums.txt"), []byte(strings.Join(tampered, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRun(t, bad, "http://127.0.0.1:1", lock, nil)
	r.steps()
	if r.failed != "install" || !strings.Contains(r.log.String(), "checksums.txt says "+strings.Repeat("0", 64)) {
		t.Errorf("tampered checksum: failed %q:\n%s", r.failed, r.log.String())
	}

	// A cosign on the PATH that records its arguments.
	if err := os.WriteFile(filepath.Join(rel.dir, "checksums.txt.sigstore.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		exit string
		ok   bool
	}{{"0", true}, {"1", false}} {
		bin := t.TempDir()
		argsFile := filepath.Join(bin, "args")
		script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\nexit " + c.exit + "\n"
		if err := os.WriteFile(filepath.Join(bin, "cosign"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		r := newRun(t, rel, "http://127.0.0.1:1", lock, map[string]string{"require-signature": "true"})
		for i, e := range r.env {
			if strings.HasPrefix(e, "PATH=") {
				r.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(e, "PATH=")
			}
		}
		r.steps()
		got, _ := os.ReadFile(argsFile)
		wantArgs := "verify-blob\n" + filepath.Join(getenv(r.env, "RUNNER_TEMP"), "mcpdrift-"+rel.version+"-linux-"+goarch(t)) + "/checksums.txt\n--bundle\n"
		if !strings.HasPrefix(string(got), wantArgs) ||
			!strings.Contains(string(got), "--certificate-identity\nhttps://github.com/mcpdrift/mcpdrift/.github/workflows/release.yml@refs/tags/v"+rel.version+"\n") ||
			!strings.Contains(string(got), "--certificate-oidc-issuer\nhttps://token.actions.githubusercontent.com\n") {
			t.Errorf("cosign was called with:\n%s", got)
		}
		if c.ok && r.failed != "" || !c.ok && (r.failed != "install" || !strings.Contains(r.log.String(), "signature of checksums.txt does not verify")) {
			t.Errorf("cosign exit %s: failed step %q:\n%s", c.exit, r.failed, r.log.String())
		}
	}
	r = newRun(t, rel, "http://127.0.0.1:1", lock, map[string]string{"require-signature": "true"})
	r.steps()
	if r.failed != "install" || !strings.Contains(r.log.String(), "cosign is not on the runner") {
		t.Errorf("require-signature without cosign: failed %q:\n%s", r.failed, r.log.String())
	}
}

func goarch(t *testing.T) string {
	_, arch, _ := platform(t)
	return arch
}

// TestActionInputsDocumented: every input and output has a description,
// and docs/github-action.md names each input.
func TestActionInputsDocumented(t *testing.T) {
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs/github-action.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range a.Inputs {
		if strings.TrimSpace(in.Description) == "" {
			t.Errorf("input %s has no description", name)
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/github-action.md does not name input %s", name)
		}
	}
	if len(a.Outputs) == 0 {
		t.Error("no outputs")
	}
}
