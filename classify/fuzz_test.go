package classify

import (
	"strings"
	"testing"
)

// fuzzUserRules includes a privileged:false rule, so FuzzClassify also
// exercises the "declared not privileged" path.
const fuzzUserRules = `version: 1
disable: [payments]
rules:
  - action_class: sandboxed_exec
    family: execution
    privileged: false
    match: ["* sandbox *"]
  - action_class: custom_deploy
    family: infrastructure
    match: ["* ship {,it} *"]
    exclude: ["* dry run *"]
`

func checkResult(t *testing.T, c *Classifier, name string) Result {
	t.Helper()
	r := c.Classify(name)
	if r2 := c.Classify(name); r2 != r {
		t.Fatalf("Classify(%q) not deterministic: %+v then %+v", name, r, r2)
	}
	switch r.Classification {
	case Classified:
		if !r.Privileged || r.ActionClass == "" || !isFamily(r.Family) {
			t.Fatalf("Classify(%q) = %+v: classified results must be privileged with a class and a family", name, r)
		}
	case Unclassified:
		if r.Privileged || r.ActionClass != "" || r.Family != "" {
			t.Fatalf("Classify(%q) = %+v: unclassified results must be empty", name, r)
		}
	default:
		t.Fatalf("Classify(%q) = %+v: bad Classification", name, r)
	}
	rule, ok := c.Explain(name)
	switch {
	case !ok && r.Privileged:
		t.Fatalf("Classify(%q) = %+v but Explain finds no rule", name, r)
	case ok && rule.Privileged != r.Privileged:
		t.Fatalf("Classify(%q) = %+v but Explain gives %+v", name, r, rule)
	case ok && rule.Privileged && rule.ActionClass != r.ActionClass:
		t.Fatalf("Classify(%q) = %+v but Explain gives %+v", name, r, rule)
	case ok && !rule.Privileged && rule.Source == BuiltinSource:
		t.Fatalf("built-in rules are all privileged, got %+v", rule)
	}
	return r
}

func FuzzClassify(f *testing.F) {
	for _, rn := range realNames {
		f.Add(rn.name)
	}
	for _, s := range []string{
		"", "_", "github.add_deploy_key", "slack.add_member", "workspace.set_admin",
		"admin.users.promote", "APIKey", "sandbox_execute_command", "ship_it_dry_run",
		"\xff\xfe", "dele\u200bte_file", "000000000000000000000000\u03d2", "ＤＥＬＥＴＥ＿ＦＩＬＥ", strings.Repeat("a_", 100),
		"d\u0435lete_file", "𝐝𝐞𝐥𝐞𝐭𝐞_file", "delete\u200bfile", "de|ete_file", "de\u0301lete", "³", "\uff9e", "\u3164run_shell",
	} {
		f.Add(s)
	}
	user, err := New([]byte(fuzzUserRules), "fuzz.yaml")
	if err != nil {
		f.Fatal(err)
	}
	def := Default()
	f.Fuzz(func(t *testing.T, name string) {
		r := checkResult(t, def, name)
		ur := checkResult(t, user, name)

		// Only the name's word tokens matter: swapping one separator for
		// another, or adding separators at the ends, changes nothing.
		for _, variant := range []string{
			strings.ReplaceAll(name, "_", "."),
			strings.ReplaceAll(name, "-", " "),
			"__" + name + "::",
		} {
			if got := def.Classify(variant); got != r {
				t.Fatalf("Classify(%q) = %+v but Classify(%q) = %+v", name, r, variant, got)
			}
		}

		// Normalised tokens are non-empty runs of word runes (letters,
		// digits and look-alikes of them) that lower-casing leaves alone
		// (some upper-case letters, like U+03D2, have no lower-case form),
		// with nothing invisible left in them.
		for _, tok := range Normalize(name) {
			if tok == "" || strings.ToLower(tok) != tok {
				t.Fatalf("Normalize(%q) produced token %q", name, tok)
			}
			for _, c := range tok {
				if !kindOf(c).word() {
					t.Fatalf("Normalize(%q) produced token %q", name, tok)
				}
			}
		}

		// Invisible characters change nothing they do not hide: adding a
		// zero-width space inside a word, or a combining grapheme joiner
		// anywhere, never makes a privileged name unprivileged.
		if r.Privileged {
			for _, variant := range []string{"\u200b" + name, name + "\u2060", strings.Replace(name, "_", "_\u00ad", 1)} {
				if got := def.Classify(variant); !got.Privileged {
					t.Fatalf("Classify(%q) = %+v but Classify(%q) = %+v", name, r, variant, got)
				}
			}
		}

		// The user classifier differs from the default only through its
		// own rules and the disabled payments family.
		if rule, ok := user.Explain(name); !ok || rule.Source == BuiltinSource {
			if r.Family != FamilyPayments && ur != r {
				t.Fatalf("%q: default %+v, user %+v, but no user rule applies", name, r, ur)
			}
			if r.Family == FamilyPayments && ur.Family == FamilyPayments {
				t.Fatalf("%q: payments disabled but got %+v", name, ur)
			}
		} else if !rule.Privileged && ur.Privileged {
			t.Fatalf("%q: privileged:false rule %q applies but result is %+v", name, rule.ActionClass, ur)
		}
	})
}

func FuzzLoadRules(f *testing.F) {
	f.Add([]byte(fuzzUserRules))
	f.Add([]byte(userExtension))
	f.Add(builtinYAML)
	for _, s := range []string{
		"", "version: 1\n", "version: 2\n", "version: 1\ndisable: [payments]\n",
		"version: 1\nrules:\n  - action_class: x\n    family: iam\n    match: ['{a,b} * c']\n",
		"version: 1\nrules:\n  - action_class: x\n    family: iam\n    match: ['{']\n",
		"version: 1\nversion: 1\n", "version: 1\nfoo: bar\n", "&a [*a]\n", "- - - -\n",
		"version: 1\nrules: &r\n  - *r\n", "version: 1\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := New(data, "fuzz.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the source", err)
			}
			return
		}
		rules := c.Rules()
		if len(rules) == 0 && len(Default().Rules()) > 0 {
			// Everything disabled and no user rules is allowed; just make
			// sure classification still works.
			if c.Classify("delete_file").Privileged {
				t.Fatal("no rules but a privileged result")
			}
		}
		for _, r := range rules {
			if !validActionClass(r.ActionClass) || !isFamily(r.Family) || len(r.Match) == 0 {
				t.Fatalf("loaded an invalid rule %+v", r)
			}
		}
		for _, n := range []string{"", "delete_file", "github.add_deploy_key", string(data)} {
			checkResult(t, c, n)
		}
	})
}
