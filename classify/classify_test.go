package classify

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/mcpdrift/mcpdrift/safetext"
)

func TestSpecExamples(t *testing.T) {
	c := Default()
	tests := []struct {
		name string
		want string // "" = unclassified
	}{
		// The three names the spec fixes exactly.
		{"github.add_deploy_key", "github_deploy_key"},
		{"slack.add_member", "slack_add_member"},
		{"workspace.set_admin", "workspace_admin"},
		{"admin.users.promote", "workspace_admin"},
		{"admin.users.setAdmin", "workspace_admin"},

		// Name shapes from the brief.
		{"add-deploy-key", "github_deploy_key"},
		{"addDeployKey", "github_deploy_key"},
		{"AddDeployKey", "github_deploy_key"},
		{"mcp__github__add_deploy_key", "github_deploy_key"},
		{"github/add_deploy_key", "github_deploy_key"},
		{"github:add deploy key", "github_deploy_key"},
		{"delete_deploy_keys", "github_deploy_key"},
		{"create_or_update_file", "file_write"},
		{"slack_post_message", "send_message"},
		{"chat.postMessage", "send_message"},
		{"execute_command", "shell_exec"},
		{"run_shell", "shell_exec"},
		{"write_file", "file_write"},
		{"delete_branch_protection", "branch_protection_change"},
		{"mcp__github__create_repository", ""},
		{"mcp__github__delete_repository", "repo_delete"},
		{"read_file", ""},
		{"list_directory", ""},

		// One representative per built-in family/class.
		{"create_repository_secret", "secret_write"},
		{"rotate_api_key", "secret_write"},
		{"createApiKey", "secret_write"},
		{"get_secret_value", "secret_read"},
		{"delete_org_secret", "secret_delete"},
		{"revoke_token", "secret_delete"},
		{"reset_password", "secret_write"},
		{"add_collaborator", "membership_change"},
		{"remove_team_member", "membership_change"},
		{"assign_role", "permission_change"},
		{"set_iam_policy", "permission_change"},
		{"grant_access", "permission_change"},
		{"transfer_ownership", "ownership_transfer"},
		{"create_payment", "payment_create"},
		{"create_charge", "payment_create"},
		{"create_transfer", "payment_transfer"},
		{"create_payout", "payment_transfer"},
		{"send_invoice", "invoice_write"},
		{"refund_payment", "payment_refund"},
		{"send_email", "send_email"},
		{"reply_to_email", "send_email"},
		{"send_message", "send_message"},
		{"create_dns_record", "dns_change"},
		{"dns_record_delete", "dns_change"},
		{"update_firewall_rules", "firewall_change"},
		{"authorize_security_group_ingress", "firewall_change"},
		{"create_route", "route_change"},
		{"update_branch_protection", "branch_protection_change"},
		{"transfer_repository", "repo_transfer"},
		{"archive_repository", "repo_settings_change"},
		{"set_repository_visibility", "repo_settings_change"},
		{"merge_pull_request", "pull_request_merge"},
		{"git_push", "git_push"},
		{"drop_table", "database_drop"},
		{"truncate_table", "database_drop"},
		{"insert_rows", "database_write"},
		{"update_records", "database_write"},
		{"delete_rows", "database_write"},
		{"execute_sql", "sql_execute"},
		{"run_sql", "sql_execute"},
		{"create_table", "database_schema_change"},
		{"alter_table", "database_schema_change"},
		{"run_migration", "database_schema_change"},
		{"migrate", "database_schema_change"},
		{"exec", "shell_exec"},
		{"bash", "shell_exec"},
		{"terminal", "shell_exec"},
		{"eval", "code_eval"},
		{"run_python", "code_eval"},
		{"execute_javascript", "code_eval"},
		{"run_workflow", "ci_run"},
		{"delete_file", "file_delete"},
		{"ＤＥＬＥＴＥ＿ＦＩＬＥ", "file_delete"},
		{"rm", "file_delete"},
		{"edit_file", "file_write"},
		{"push_files", "file_write"},
		{"apply_patch", "file_write"},
		{"kubectl_apply", "infra_deploy"},
		{"terminate_instance", "infra_delete"},
		{"delete_bucket", "infra_delete"},

		// Things that must stay unclassified.
		{"", ""},
		{"___", ""},
		{"get_file_contents", ""},
		{"read_multiple_files", ""},
		{"get_secret_scanning_alert", ""},
		{"list_secrets", ""},
		{"list_deploy_keys", ""},
		{"count_tokens", ""},
		{"get_token_balance", ""},
		{"list_workflow_runs", ""},
		{"set_time_zone", ""},
		{"browser_console_messages", ""},
		{"read_terminal_output", ""},
		{"create_user_story", ""},
		{"draft_email", ""},
		{"drag_and_drop", ""},
		{"list_refunds", ""},
		{"get_route", ""},
		{"query", ""},
		{"search", ""},
	}
	for _, tt := range tests {
		got := c.Classify(tt.name)
		if got.ActionClass != tt.want {
			t.Errorf("Classify(%q) = %+v, want action class %q (tokens %q)", tt.name, got, tt.want, Normalize(tt.name))
		}
	}
}

func TestResultFields(t *testing.T) {
	c := Default()
	r := c.Classify("github.add_deploy_key")
	want := Result{Privileged: true, Classification: Classified, ActionClass: "github_deploy_key", Family: FamilyCredentials}
	if r != want {
		t.Errorf("got %+v, want %+v", r, want)
	}
	r = c.Classify("read_file")
	if r != (Result{Classification: Unclassified}) {
		t.Errorf("got %+v, want unclassified", r)
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"github.add_deploy_key", []string{"github", "add", "deploy", "key"}},
		{"add-deploy-key", []string{"add", "deploy", "key"}},
		{"addDeployKey", []string{"add", "deploy", "key"}},
		{"APIKey", []string{"api", "key"}},
		{"getURLs", []string{"get", "url"}},
		{"listIDs", []string{"list", "ids"}},
		{"R2Bucket", []string{"r2", "bucket"}},
		{"r2_buckets_list", []string{"r2", "bucket", "list"}},
		{"disable_2FA", []string{"disable", "2fa"}},
		{"disable2FA", []string{"disable2fa"}}, // letters followed by digits never split
		{"mcp__github__create_repository", []string{"mcp", "github", "create", "repository"}},
		{"a/b:c d\te", []string{"a", "b", "c", "d", "e"}},
		{"policies", []string{"policy"}},
		{"branches", []string{"branch"}},
		{"processes", []string{"process"}},
		{"dns", []string{"dns"}},
		{"access", []string{"access"}},
		{"status", []string{"status"}},
		{"redis", []string{"redis"}},
		{"delete\u200bfile", []string{"deletefile"}},      // zero-width space is invisible, not a separator
		{"del\u200bete_file", []string{"delete", "file"}}, // ... so it cannot split a word
		{"de\u0301lete", []string{"delete"}},              // nor can a combining mark
		{"read|file", []string{"read|file"}},              // "|" folds to "l": read as a letter
		{"ÜBER_Größe", []string{"über", "größe"}},
		{"\xff\xfeexec", []string{"exec"}},
		{"ＤＥＬＥＴＥ＿ＦＩＬＥ", []string{"delete", "file"}},
		{"dеlete_file", []string{"dеlete", "file"}}, // Cyrillic е: shown as written, matched by its fold
		{"𝐃𝐞𝐥𝐞𝐭𝐞𝐅𝐢𝐥𝐞", []string{"𝐃𝐞𝐥𝐞𝐭𝐞", "𝐅𝐢𝐥𝐞"}}, // mathematical capitals still split camelCase (they have no lower case)
		{"", nil},
		{"--", nil},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPatternSyntax(t *testing.T) {
	good := []struct {
		pattern string
		match   []string
		nomatch []string
	}{
		{"*deploy_key*", []string{"add_deploy_key", "deploy-keys", "DeployKey", "x.deploy.key.y"}, []string{"deploykey", "deploy", "key_deploy"}},
		{"delete_file", []string{"delete_file", "deleteFiles", "DELETE-FILE"}, []string{"delete_file_x", "x_delete_file"}},
		{"* {add,create} ? key", []string{"add_ssh_key", "x_create_api_key"}, []string{"add_key", "add_a_b_key"}},
		{"* {,force} push", []string{"push", "git_push", "force_push"}, []string{"push_files"}},
		{"exec*", []string{"exec", "exec_in_pod", "execCommand"}, []string{"pods_exec"}},
		{"{execute,run}", []string{"execute", "run", "Run"}, []string{"run_it"}},
	}
	for _, g := range good {
		c, err := New([]byte("version: 1\nrules:\n  - action_class: t\n    family: execution\n    match: ['"+g.pattern+"']\ndisable: "+allFamiliesYAML()+"\n"), "p.yaml")
		if err != nil {
			t.Fatalf("pattern %q: %v", g.pattern, err)
		}
		for _, n := range g.match {
			if got := c.Classify(n).ActionClass; got != "t" {
				t.Errorf("pattern %q should match %q (tokens %q)", g.pattern, n, Normalize(n))
			}
		}
		for _, n := range g.nomatch {
			if got := c.Classify(n).ActionClass; got != "" {
				t.Errorf("pattern %q should not match %q", g.pattern, n)
			}
		}
	}

	bad := []string{
		"",
		"   ",
		"*",
		"* ? *",
		"{,a}",
		"{a,b",
		"a}",
		"a,b",
		"{}",
		"{,}",
		"{a,{b}}",
		"{a,b*}",
		"{deploy_key}",
		"{apiKey}",
		"delete[file]",
		"delete|file",
		"re.*gex$",
		"delete\xfffile",
		strings.Repeat("a_", 60),
		strings.Repeat("x", 2000),
	}
	for _, p := range bad {
		if _, err := parsePattern(p); err == nil {
			t.Errorf("parsePattern(%q) succeeded, want error", p)
		}
	}
}

func allFamiliesYAML() string {
	return "[" + strings.Join(families, ", ") + "]"
}

const userExtension = `version: 1
rules:
  - action_class: vault_unseal
    family: credentials
    description: Unseal a HashiCorp Vault.
    match:
      - "* vault * unseal *"
`

func TestUserRulesExtension(t *testing.T) {
	c, err := New([]byte(userExtension), "ext.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify("vault_operator_unseal"); got.ActionClass != "vault_unseal" || !got.Privileged || got.Family != FamilyCredentials {
		t.Errorf("user rule not applied: %+v", got)
	}
	// Built-ins still apply.
	if got := c.Classify("github.add_deploy_key"); got.ActionClass != "github_deploy_key" {
		t.Errorf("built-in lost: %+v", got)
	}
	rules := c.Rules()
	if rules[0].ActionClass != "vault_unseal" || rules[0].Source != "ext.yaml" || rules[0].Line != 3 {
		t.Errorf("user rule should come first with its source and line, got %+v", rules[0])
	}
	if len(rules) != len(Default().Rules())+1 {
		t.Errorf("got %d rules, want built-ins + 1", len(rules))
	}
	// Default is unaffected.
	if got := Default().Classify("vault_operator_unseal"); got.Privileged {
		t.Errorf("Default changed by New: %+v", got)
	}
}

func TestUserRulesOverride(t *testing.T) {
	// write_file is file_write built-in; a user rule with a different class wins.
	c, err := New([]byte(`version: 1
rules:
  - action_class: workspace_file_write
    family: filesystem
    match: ["write_file", "* notebook * write *"]
`), "override.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify("write_file"); got.ActionClass != "workspace_file_write" {
		t.Errorf("user rule did not win over built-in: %+v", got)
	}
	if got := c.Classify("edit_file"); got.ActionClass != "file_write" {
		t.Errorf("built-in should still classify other names: %+v", got)
	}
	// A user rule may reuse a built-in class name; it is just a label.
	c, err = New([]byte(`version: 1
rules:
  - action_class: sql_execute
    family: database
    match: ["* d1 * query"]
`), "reuse.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify("d1_database_query"); got.ActionClass != "sql_execute" {
		t.Errorf("got %+v", got)
	}
	if got := c.Classify("execute_sql"); got.ActionClass != "sql_execute" {
		t.Errorf("built-in sql_execute lost: %+v", got)
	}
}

func TestUserRulesNotPrivileged(t *testing.T) {
	c, err := New([]byte(`version: 1
rules:
  - action_class: sandboxed_shell
    family: execution
    description: Our shell server runs in a throwaway VM.
    privileged: false
    match: ["* sandbox * {execute,run} * command *"]
`), "allow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := c.Classify("sandbox_execute_command")
	if got != (Result{Classification: Unclassified}) {
		t.Errorf("privileged:false should yield unclassified, got %+v", got)
	}
	rule, ok := c.Explain("sandbox_execute_command")
	if !ok || rule.ActionClass != "sandboxed_shell" || rule.Privileged {
		t.Errorf("Explain = %+v, %v", rule, ok)
	}
	if got := c.Classify("execute_command"); got.ActionClass != "shell_exec" {
		t.Errorf("other names keep the built-in class: %+v", got)
	}
	if _, ok := c.Explain("read_file"); ok {
		t.Errorf("Explain(read_file) should find no rule")
	}
}

func TestUserRulesDisable(t *testing.T) {
	c, err := New([]byte("version: 1\ndisable: [payments, github_deploy_key]\n"), "disable.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"create_refund", "create_payment_link", "finalize_invoice", "cancel_subscription", "create_payout"} {
		if got := c.Classify(n); got.Privileged {
			t.Errorf("%s should be unclassified with payments disabled, got %+v", n, got)
		}
		if got := Default().Classify(n); got.Family != FamilyPayments {
			t.Errorf("%s should be payments by default, got %+v", n, got)
		}
	}
	// Disabling the deploy-key class lets the generic credential rules see the name.
	if got := c.Classify("add_deploy_key"); got.ActionClass == "github_deploy_key" {
		t.Errorf("disabled class still applied: %+v", got)
	}
	for _, r := range c.Rules() {
		if r.Family == FamilyPayments || r.ActionClass == "github_deploy_key" {
			t.Errorf("disabled rule still listed: %+v", r)
		}
	}
	if got := c.Classify("write_file"); got.ActionClass != "file_write" {
		t.Errorf("other families unaffected: %+v", got)
	}

	// Disabling does not touch the user's own rules.
	c, err = New([]byte(`version: 1
disable: [payments]
rules:
  - action_class: wire_money
    family: payments
    match: ["* wire *"]
`), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify("wire_funds"); got.ActionClass != "wire_money" {
		t.Errorf("user payments rule should survive disabling built-in payments: %+v", got)
	}
}

func TestUserRulesErrors(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantLine int
		wantMsg  string
	}{
		{"empty file", "", 0, "empty"},
		{"whitespace only", "  \n\n", 0, "empty"},
		{"comments only", "# nothing here\n", 0, "no YAML document"},
		{"null document", "~\n", 1, "missing required key \"version\""},
		{"missing version", "rules: []\n", 1, "missing required key \"version\""},
		{"version mismatch", "version: 2\nrules: []\n", 1, "unsupported rules version 2"},
		{"version zero", "# header\nversion: 0\n", 2, "unsupported rules version 0"},
		{"version string", "version: one\n", 1, "cannot unmarshal"},
		{"unknown top-level key", "version: 1\nrulez: []\n", 2, `unknown key "rulez"`},
		{"unknown rule key", "version: 1\nrules:\n  - action_class: x\n    family: iam\n    match: [a]\n    priority: 3\n", 6, `unknown key "priority"`},
		{"duplicate top-level key", "version: 1\nversion: 1\n", 2, "duplicate key"},
		{"duplicate rule key", "version: 1\nrules:\n  - action_class: x\n    family: iam\n    match: [a]\n    match: [b]\n", 6, "duplicate key"},
		{"bad pattern", "version: 1\nrules:\n  - action_class: x\n    family: iam\n    match:\n      - ok_pattern\n      - \"bad[pattern\"\n", 7, "invalid character \"[\""},
		{"bad exclude pattern", "version: 1\nrules:\n  - action_class: x\n    family: iam\n    match: [a]\n    exclude: ['{a,']\n", 6, "unclosed"},
		{"wildcard only", "version: 1\nrules:\n  - action_class: x\n    family: iam\n    match: ['*']\n", 5, "at least one required word"},
		{"missing action_class", "version: 1\nrules:\n  - family: iam\n    match: [a]\n", 3, `missing required key "action_class"`},
		{"bad action_class", "version: 1\nrules:\n  - action_class: Deploy-Key\n    family: iam\n    match: [a]\n", 3, "snake_case"},
		{"missing family", "version: 1\nrules:\n  - action_class: x\n    match: [a]\n", 3, `missing required key "family"`},
		{"unknown family", "version: 1\nrules:\n  - action_class: x\n    family: wizardry\n    match: [a]\n", 4, `unknown family "wizardry"`},
		{"no patterns", "version: 1\nrules:\n  - action_class: x\n    family: iam\n", 3, "at least one pattern"},
		{"duplicate action_class", "version: 1\nrules:\n  - action_class: x\n    family: iam\n    match: [a]\n  - action_class: x\n    family: iam\n    match: [b]\n", 6, "already defined at line 3"},
		{"unknown disable", "version: 1\ndisable:\n  - payments\n  - bitcoin\n", 4, `"bitcoin" is neither`},
		{"rules not a list", "version: 1\nrules: {a: b}\n", 2, "cannot unmarshal"},
		{"top-level list", "- version: 1\n", 1, "cannot unmarshal"},
		{"syntax error", "version: 1\nrules: [\n", 2, "invalid YAML"},
		{"two documents", "version: 1\n---\nversion: 1\n", 2, "single YAML document"},
		{"privileged not bool", "version: 1\nrules:\n  - action_class: x\n    family: iam\n    privileged: maybe\n    match: [a]\n", 5, "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New([]byte(tt.yaml), "user-rules.yaml")
			if err == nil {
				t.Fatalf("New succeeded, want error containing %q", tt.wantMsg)
			}
			var re *RuleError
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v is not a *RuleError", err, err)
			}
			if re.Source != "user-rules.yaml" || !strings.HasPrefix(err.Error(), "user-rules.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
			if re.Line != tt.wantLine {
				t.Errorf("error %q: line %d, want %d", err, re.Line, tt.wantLine)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestUserRulesYAMLFeatures(t *testing.T) {
	// Anchors, aliases and merge keys are ordinary YAML and keep working.
	c, err := New([]byte(`version: 1
rules:
  - &base
    action_class: a_one
    family: messaging
    match: &pats ["* pager * {send,trigger} *"]
  - <<: *base
    action_class: a_two
    match: *pats
    privileged: false
`), "anchors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify("pager_send_alert"); got.ActionClass != "a_one" {
		t.Errorf("got %+v", got)
	}
	if r := c.Rules(); r[1].ActionClass != "a_two" || r[1].Privileged || r[1].Line != 7 {
		t.Errorf("merged rule = %+v", r[1])
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(path, []byte(userExtension), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify("vault.unseal"); got.ActionClass != "vault_unseal" {
		t.Errorf("got %+v", got)
	}
	if r := c.Rules()[0]; r.Source != path {
		t.Errorf("source = %q, want %q", r.Source, path)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nrules:\n  - action_class: x\n    family: iam\n    match: [a]\n    oops: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if err == nil || !strings.Contains(err.Error(), bad+":6:") {
		t.Errorf("Load error %v should name %s:6", err, bad)
	}

	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("version: 1\n#"+strings.Repeat("x", maxRulesFileSize)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized file: %v", err)
	}
}

func TestBuiltinTable(t *testing.T) {
	rules := Default().Rules()
	required := []string{
		"github_deploy_key", "slack_add_member", "workspace_admin",
		"secret_read", "secret_write", "secret_delete",
		"shell_exec", "code_eval",
		"file_write", "file_delete",
		"permission_change", "membership_change",
		"payment_create", "payment_refund", "payment_transfer", "invoice_write",
		"send_email", "send_message",
		"dns_change", "firewall_change", "route_change",
		"repo_delete", "branch_protection_change", "repo_transfer", "repo_settings_change", "pull_request_merge",
		"database_write", "database_drop", "database_schema_change", "sql_execute",
	}
	have := map[string]Rule{}
	famSeen := map[string]bool{}
	for _, r := range rules {
		if _, dup := have[r.ActionClass]; dup {
			t.Errorf("duplicate built-in class %q", r.ActionClass)
		}
		have[r.ActionClass] = r
		famSeen[r.Family] = true
		if r.Source != BuiltinSource || r.Line == 0 || !r.Privileged || r.Description == "" || len(r.Match) == 0 {
			t.Errorf("built-in rule %+v is incomplete", r)
		}
	}
	for _, c := range required {
		if _, ok := have[c]; !ok {
			t.Errorf("built-in table lacks %q", c)
		}
	}
	for _, f := range Families() {
		if !famSeen[f] {
			t.Errorf("family %q has no built-in rule", f)
		}
	}
	// Rules returns copies.
	rules[0].Match[0] = "mutated"
	if Default().Rules()[0].Match[0] == "mutated" {
		t.Error("Rules() exposes internal state")
	}
}

func TestConcurrentUse(t *testing.T) {
	c := Default()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				for _, rn := range realNames[:40] {
					c.Classify(rn.name)
				}
			}
		}()
	}
	wg.Wait()
}

func TestLongNamesStayLinear(t *testing.T) {
	c := Default()
	// A hostile server could pad a name to hide a privileged verb/object
	// pair; the classifier must still see it and must not blow up.
	name := strings.Repeat("noise_", 20000) + "delete_file"
	if got := c.Classify(name); got.ActionClass != "file_delete" {
		t.Errorf("padded name: %+v", got)
	}
	name = strings.Repeat("delete_", 20000) + "x"
	_ = c.Classify(name)
}

func TestNoAllocs(t *testing.T) {
	c := Default()
	allocs := testing.AllocsPerRun(100, func() {
		c.Classify("mcp__github__create_or_update_file")
		c.Classify("read_multiple_files")
	})
	if allocs > 0 {
		t.Errorf("Classify allocates %.1f times per call", allocs)
	}
}

// A disguised name classifies as the ASCII name it shows: look-alikes from
// other scripts, compatibility forms, combining marks, invisible characters
// and case, across privileged verbs and objects.
func TestDisguisedNames(t *testing.T) {
	c := Default()
	cases := []struct{ ascii, disguised string }{
		{"delete_file", "d\u0435lete_file"},                   // Cyrillic е
		{"delete_file", "del\u200bete_file"},                  // zero-width space
		{"delete_file", "ＤＥＬＥＴＥ_file"},                        // fullwidth
		{"delete_file", "𝐝𝐞𝐥𝐞𝐭𝐞_file"},                        // mathematical bold
		{"delete_file", "𝙙𝙚𝙡𝙚𝙩𝙚_𝙛𝙞𝙡𝙚"},                        // sans-serif bold italic
		{"delete_file", "delete_\ufb01le"},                    // ﬁ ligature
		{"delete_file", "de\u0301lete_fi\u0323le"},            // combining marks
		{"delete_file", "d\u00e8lete_file"},                   // precomposed accent
		{"delete_file", "de|ete_file"},                        // "|" for "l"
		{"delete_file", "de1ete_fi1e"},                        // "1" for "l"
		{"delete_file", "\u202edelete_file"},                  // bidi override
		{"execute_command", "\u0435x\u0435cut\u0435_command"}, // Cyrillic е
		{"execute_command", "exec\u00adute_comm\u00adand"},    // soft hyphens
		{"run_shell", "run_sh\u0435ll"},
		{"run_shell", "𝚛𝚞𝚗_𝚜𝚑𝚎𝚕𝚕"}, // monospace
		{"run_shell", "ⓡⓤⓝ_ⓢⓗⓔⓛⓛ"}, // circled
		{"send_email", "s\u0435nd_\u0435mail"},
		{"send_email", "send\u2060_email"},                                    // word joiner
		{"transfer_ownership", "tr\u0430nsf\u0435r_\u043ewn\u0435rshi\u0440"}, // Cyrillic а е о р
		{"grant_access", "gr\u03b1nt_\u03b1ccess"},                            // Greek alpha
		{"create_payment", "cre\u0430te_p\u0430yment"},
		{"remove_team_member", "remove_team_m\u0435mber"},
		{"add_deploy_key", "add_d\u0435ploy_k\u0435y"},
		{"addDeployKey", "addD\u0435ployK\u0435y"},                   // camelCase with a homoglyph
		{"get_secret_value", "get_s\u0435cr\u0435t\U000E0041_value"}, // tag character
		{"drop_table", "dr\u03bfp_table"},                            // Greek omicron
		{"merge_pull_request", "merge_pull_request\ufe0f"},           // variation selector
		{"git_push", "GIT_PUSH"},
		{"write_file", "wr\u0456te_f\u0456le"}, // Cyrillic і
	}
	for _, tc := range cases {
		want := c.Classify(tc.ascii)
		if !want.Privileged {
			t.Fatalf("%q should be privileged", tc.ascii)
		}
		if got := c.Classify(tc.disguised); got != want {
			t.Errorf("Classify(%q) = %+v, want %+v as for %q (tokens %q)", tc.disguised, got, want, tc.ascii, Normalize(tc.disguised))
		}
	}
	// Folding does not make ordinary names privileged.
	for _, n := range []string{"read_file", "list_directory", "search", "get_route", "d\u0435scribe_table", "r\u0435ad_file"} {
		if r := c.Classify(n); r.Privileged {
			t.Errorf("Classify(%q) = %+v, want unclassified", n, r)
		}
	}
}

// Invisible characters between words are read both ways: they can never
// make a name less privileged than the name with them removed or with them
// as separators.
func TestInvisibleCharactersReadBothWays(t *testing.T) {
	c := Default()
	for _, n := range []string{"delete\u200bfile", "delete\u200dfile", "run\u00adshell", "send\u2060email"} {
		r := c.Classify(n)
		if !r.Privileged {
			t.Errorf("Classify(%q) = %+v, want privileged", n, r)
		}
		if rule, ok := c.Explain(n); !ok || rule.ActionClass != r.ActionClass {
			t.Errorf("Explain(%q) = %+v, %v; Classify says %q", n, rule, ok, r.ActionClass)
		}
	}
	if r := c.Classify("deletefile"); r.Privileged {
		t.Errorf("concatenated words are not split: %+v", r)
	}
}

// Rule patterns are folded like names: a pattern written with a homoglyph
// or in fullwidth means the ASCII word.
func TestPatternsAreFolded(t *testing.T) {
	c, err := New([]byte("version: 1\nrules:\n  - action_class: vault_unseal\n    family: credentials\n    match: ['* v\u0430ult * ＵＮＳＥＡＬ *']\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"vault_unseal", "VAULT.UNSEAL", "v\u0430ult_uns\u0435al"} {
		if got := c.Classify(n).ActionClass; got != "vault_unseal" {
			t.Errorf("Classify(%q) = %q", n, got)
		}
	}
}

// Classify of an ASCII name does not allocate.
func TestClassifyASCIIAllocs(t *testing.T) {
	c := Default()
	n := testing.AllocsPerRun(100, func() {
		c.Classify("mcp__github__remove_team_members")
		c.Classify("createMergeRequest")
	})
	if n != 0 {
		t.Errorf("Classify allocates %v times per ASCII name", n)
	}
}

// kindOf skips exactly the letters and digits whose confusable fold is
// empty (besides the invisible runes it skips anyway).
func TestEmptyFoldLetters(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue
		}
		if empty := safetext.Fold(string(r)) == ""; empty != (kindOf(r) == kindSkip) {
			t.Errorf("%U: fold empty %v, kind %d", r, empty, kindOf(r))
		}
	}
}
