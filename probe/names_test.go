package probe

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func namedTools(names ...string) string {
	var parts []string
	for _, n := range names {
		b, _ := json.Marshal(n)
		parts = append(parts, fmt.Sprintf(`{"name":%s,"inputSchema":{"type":"object"}}`, b))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestToolNameRules(t *testing.T) {
	const fake = "d\u0435lete_file"
	served := namedTools("delete_file", fake, "Delete_File", "search", "search_v2")
	r := Evaluate(Input{Target: "stdio:x", TargetClass: ClassStdio, Declared: tools(t, served), Primary: obs(t, served)})
	want := []string{
		"MCP-CONF-TOOL-NAME-UNSAFE WARN " + fake,
		"MCP-CONF-TOOL-NAMES-AMBIGUOUS ERROR Delete_File",
		"MCP-CONF-TOOL-NAMES-AMBIGUOUS ERROR delete_file",
		"MCP-CONF-TOOL-NAMES-AMBIGUOUS ERROR " + fake,
	}
	if got := rules(r); !slices.Equal(got, want) {
		t.Fatalf("rules %q, want %q", got, want)
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Message, fake) || strings.Contains(f.Message, "Delete_File") {
			t.Errorf("%s: the message quotes a name: %q", f.RuleID, f.Message)
		}
		switch f.RuleID {
		case "MCP-CONF-TOOL-NAME-UNSAFE":
			if !strings.Contains(f.Message, "U+0435") {
				t.Errorf("message %q lacks the code point", f.Message)
			}
		case "MCP-CONF-TOOL-NAMES-AMBIGUOUS":
			if !strings.Contains(f.Message, "one of 3 different names") || !strings.Contains(f.Message, "confusable fold") {
				t.Errorf("message %q", f.Message)
			}
		}
	}
	if r.ExitCode != ExitFindings {
		t.Errorf("exit %d", r.ExitCode)
	}
	// An exact duplicate is MCP-CONF-DUPLICATE-TOOL-NAME only.
	dup := namedTools("search", "search")
	r = Evaluate(Input{Target: "stdio:x", TargetClass: ClassStdio, Declared: tools(t, dup), Primary: obs(t, dup)})
	if got := rules(r); !slices.Equal(got, []string{"MCP-CONF-DUPLICATE-TOOL-NAME ERROR search"}) {
		t.Errorf("duplicates: %q", got)
	}
	// Spec-conforming names: nothing.
	ok := namedTools("a.b-c_d", "A1")
	if r := Evaluate(Input{Target: "stdio:x", TargetClass: ClassStdio, Declared: tools(t, ok), Primary: obs(t, ok)}); len(r.Findings) != 0 {
		t.Errorf("findings %q", rules(r))
	}
}
