package ghaction_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, b)
	}
	return string(b)
}

// TestApproveAction runs approve/action.yml in a clone whose lock's server
// drifted: the named tool is approved on a new branch, which is pushed
// with the changed lock only, and a pull request is opened from it into
// main; the gate (action.yml) then passes on that branch's lock.
func TestApproveAction(t *testing.T) {
	needJQ(t)
	if _, err := exec.LookPath("git"); err != nil {
		skipOrFail(t, "no git")
	}
	rel := makeRelease(t)
	api := &fakeAPI{}
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()
	s, ts := mock(t, toolsV1)

	origin := filepath.Join(t.TempDir(), "origin.git")
	git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	ws := filepath.Join(t.TempDir(), "ws")
	git(t, filepath.Dir(ws), "clone", "-q", origin, ws)
	lockOf(t, filepath.Join(ws, "mcpdrift.lock"), [2]string{"files", ts.URL + "/mcp"})
	git(t, ws, "checkout", "-q", "-b", "main")
	git(t, ws, "add", "mcpdrift.lock")
	git(t, ws, "commit", "-q", "-m", "lock")
	git(t, ws, "push", "-q", "origin", "main")
	if err := s.SetTools(toolsV2); err != nil {
		t.Fatal(err)
	}

	token := newToken(t)
	lock := filepath.Join(ws, "mcpdrift.lock")
	r := newRun(t, rel, apiSrv.URL, lock, map[string]string{"server": "files", "tools": "write_file", "token": token, "note": "reviewed in #7"})
	root, _ := filepath.Abs(repoRoot)
	r.act = loadAction(t, filepath.Join(root, "approve/action.yml"))
	r.actionDir = filepath.Join(root, "approve")
	r.workspace = ws
	r.env = append(r.env, "GITHUB_WORKSPACE="+ws)
	r.steps()
	if r.failed != "" {
		t.Fatalf("step %s failed (exit %d):\n%s", r.failed, r.exit, r.log.String())
	}
	const branch = "mcpdrift/approve-files-4242"
	if o := r.outputs["approve"]; o["branch"] != branch || o["pull-request"] != "https://github.com/acme/agents/pull/8" {
		t.Errorf("outputs %v", o)
	}
	files := git(t, origin, "diff", "--name-only", "main", branch)
	if strings.TrimSpace(files) != "mcpdrift.lock" {
		t.Errorf("the branch changes %q, want the lock only", files)
	}
	approved := git(t, origin, "show", branch+":mcpdrift.lock")
	if !strings.Contains(approved, "octocat") || !strings.Contains(approved, "reviewed in #7") {
		t.Errorf("the approved lock does not record octocat and the note:\n%.800s", approved)
	}
	var pulls []apiRequest
	for _, q := range api.requests {
		if q.auth != "Bearer "+token {
			t.Errorf("%s %s with Authorization %q", q.method, q.path, q.auth)
		}
		if q.method == "POST" && q.path == "/repos/acme/agents/pulls" {
			pulls = append(pulls, q)
		}
	}
	if len(pulls) != 1 {
		t.Fatalf("API requests %+v, want one pull request", api.requests)
	}
	var pr struct{ Head, Base, Title string }
	if err := json.Unmarshal([]byte(pulls[0].body), &pr); err != nil || pr.Head != branch || pr.Base != "main" || !strings.Contains(pr.Title, "files") {
		t.Errorf("pull request %q (%v)", pulls[0].body, err)
	}
	noSecret(t, r, token)

	// The gate passes on the approved lock.
	approvedLock := filepath.Join(t.TempDir(), "mcpdrift.lock")
	if err := os.WriteFile(approvedLock, []byte(approved), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newRun(t, rel, apiSrv.URL, approvedLock, nil)
	g.steps()
	if g.failed != "" || g.outputs["run"]["result"] != "pass" {
		t.Errorf("the gate on the approved lock: failed %q, result %q:\n%s", g.failed, g.outputs["run"]["result"], g.log.String())
	}
}
