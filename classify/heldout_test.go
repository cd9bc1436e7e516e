package classify

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// heldOutName is one row of testdata/heldout_names.txt: a real tool name
// that is not in realNames, labelled by hand. The rule table is not tuned on
// these names (see README.md, "How good is it?").
type heldOutName struct {
	file   string
	line   int
	server string
	name   string
	priv   bool
	why    string
}

// issueNamed are the tools issue 9 names as missed. They are in the
// held-out files, but the issue's list of verbs and nouns was written from
// them, so the blind figures leave them out.
var issueNamed = map[string]bool{
	"firecrawl_interact":        true,
	"kubectl_generic":           true,
	"node_management":           true,
	"firecrawl_browser_execute": true,
	"delete_entities":           true,
	"firecrawl_monitor_delete":  true,
}

func readHeldOut(t *testing.T, path string) []heldOutName {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []heldOutName
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "|")
		if len(parts) != 4 || parts[1] == "" || (parts[2] != "P" && parts[2] != "-") || strings.TrimSpace(parts[3]) == "" {
			t.Fatalf("%s:%d: want server|name|P or -|reason, have %q", path, n, line)
		}
		out = append(out, heldOutName{file: path, line: n, server: parts[0], name: parts[1], priv: parts[2] == "P", why: parts[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// confusion counts a classifier's answers against the labels.
type confusion struct{ tp, fp, fn, tn int }

func (c confusion) precision() float64 {
	if c.tp+c.fp == 0 {
		return 1
	}
	return float64(c.tp) / float64(c.tp+c.fp)
}

func (c confusion) recall() float64 {
	if c.tp+c.fn == 0 {
		return 1
	}
	return float64(c.tp) / float64(c.tp+c.fn)
}

func (c *confusion) add(want, got bool) {
	switch {
	case want && got:
		c.tp++
	case !want && got:
		c.fp++
	case want && !got:
		c.fn++
	default:
		c.tn++
	}
}

// heldOutSets are the held-out files, with the lowest precision and recall
// the built-in table may score on each (without the issue's named tools).
// The bounds sit a little under today's figures (README.md), so a rule
// change that loses held-out names fails here.
var heldOutSets = []struct {
	file                    string
	minPrecision, minRecall float64
}{
	// Set A: its failures led to rules after it was first measured, so it
	// is in-sample now (0.956 / 0.837 today).
	{"testdata/heldout_names.txt", 0.93, 0.80},
	// Set B: sealed until the table was final; the blind figure (0.871 /
	// 0.730 today).
	{"testdata/heldout_names_b.txt", 0.84, 0.70},
}

func TestHeldOutNames(t *testing.T) {
	train := map[string]bool{}
	for _, rn := range realNames {
		train[rn.name] = true
	}
	seen := map[string]string{}
	c := Default()
	for _, set := range heldOutSets {
		rows := readHeldOut(t, set.file)
		var all, blind confusion
		for _, r := range rows {
			if train[r.name] {
				t.Errorf("%s:%d: %q is in the training set (realNames); a held-out name must not be", r.file, r.line, r.name)
			}
			if prev, ok := seen[r.name]; ok {
				t.Errorf("%s:%d: %q is already listed in %s", r.file, r.line, r.name, prev)
			}
			seen[r.name] = set.file
			got := c.Classify(r.name).Privileged
			all.add(r.priv, got)
			if !issueNamed[r.name] {
				blind.add(r.priv, got)
			}
			if got != r.priv && testing.Verbose() {
				t.Logf("disagree: %s %q labelled %v (%s), classified %v %q", r.server, r.name, r.priv, r.why, got, c.Classify(r.name).ActionClass)
			}
		}
		for _, x := range []struct {
			label string
			c     confusion
		}{{"all", all}, {"without the issue's named tools", blind}} {
			t.Logf("%s (%s): %d names (%d privileged), TP=%d FP=%d FN=%d TN=%d, precision=%.3f recall=%.3f",
				set.file, x.label, x.c.tp+x.c.fp+x.c.fn+x.c.tn, x.c.tp+x.c.fn, x.c.tp, x.c.fp, x.c.fn, x.c.tn, x.c.precision(), x.c.recall())
		}
		if p := blind.precision(); p < set.minPrecision {
			t.Errorf("%s: precision %.3f is below the floor %.2f", set.file, p, set.minPrecision)
		}
		if r := blind.recall(); r < set.minRecall {
			t.Errorf("%s: recall %.3f is below the floor %.2f", set.file, r, set.minRecall)
		}
	}
}

// TestBroadTools pins the names issue 9 reports missed, and names beside
// them that must stay unprivileged.
func TestBroadTools(t *testing.T) {
	c := Default()
	for name, class := range map[string]string{
		"firecrawl_interact":               "interactive_session",
		"kubectl_generic":                  "generic_dispatch",
		"node_management":                  "broad_management",
		"firecrawl_browser_execute":        "generic_execute",
		"delete_entities":                  "data_delete",
		"firecrawl_monitor_delete":         "data_delete",
		"call_aws":                         "generic_dispatch",
		"callCloudApi":                     "generic_dispatch",
		"manageEnv":                        "broad_management",
		"netlify-project-services-updater": "broad_management",
		"kubectl_cordon":                   "infra_delete",
		"taint_node":                       "infra_change",
		"reboot_instance":                  "infra_change",
		"kubectl_context":                  "infra_change",
		"remove_observations":              "data_delete",
		"purge_queue":                      "data_delete",
		"approve_merge_request":            "pull_request_merge",
		"create_commit_status":             "commit_status_write",
		"git_clean":                        "file_delete",
	} {
		if got := c.Classify(name); !got.Privileged || got.ActionClass != class {
			t.Errorf("%q: got %+v, want privileged %s; tokens %q", name, got, class, Normalize(name))
		}
	}
	for _, name := range []string{
		"search_nodes", "open_nodes", "read_graph", "get_environment_info", "list_nodes", "kubectl_get",
		"firecrawl_interact_stop", "get_interaction_history", "manage_notification_subscription", "manage_gmail_label",
		"delete_issue_emoji_reaction", "remove_reaction", "jira_remove_issue_link", "cf_purge_cache",
		"doks-get-cluster-upgrades", "db-cluster-stop-online-migration", "list_instances", "deployPlan",
		"netlify-deploy-services-reader", "genai-model-eval-get-run", "execute_readonly_query", "get_execution_status",
		"generate_report",
	} {
		if got := c.Classify(name); got.Privileged {
			t.Errorf("%q: got %+v, want unprivileged; tokens %q", name, got, Normalize(name))
		}
	}
}
