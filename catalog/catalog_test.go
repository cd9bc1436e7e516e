package catalog_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/catalog"
)

// The reference page is generated from the catalogue and must be current.
func TestReferencePageIsCurrent(t *testing.T) {
	got, err := os.ReadFile("../docs/reason-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, catalog.Markdown()) {
		t.Fatal("docs/reason-codes.md is stale: run `go run ./cmd/mcpdrift codes --format markdown > docs/reason-codes.md`")
	}
	for _, e := range catalog.All() {
		if !bytes.Contains(got, []byte("## "+e.Code+"\n")) {
			t.Errorf("%s has no section on the page", e.Code)
		}
	}
}

func TestEntriesComplete(t *testing.T) {
	for _, e := range catalog.All() {
		if e.Family == "" || e.Kind == "" || e.Title == "" || e.Explanation == "" || e.Remedy == "" || e.Source == "" {
			t.Errorf("%s: incomplete entry", e.Code)
		}
		if (e.Kind == catalog.Finding || e.Kind == catalog.Change) != (e.Severity != "") {
			t.Errorf("%s: findings and changes, and only they, carry a severity", e.Code)
		}
		if !regexp.MustCompile(`^(?:[a-z][a-z0-9_]*|MCP-(?:DRIFT|CONF|AUTH|SURFACE)-[A-Z0-9-]+)$`).MatchString(e.Code) {
			t.Errorf("%s: neither a snake_case reason code nor an MCP-DRIFT/CONF/AUTH/SURFACE rule id", e.Code)
		}
	}
}

// Every reason code written as a literal in the packages that emit codes
// is catalogued. (Codes built at run time are checked by the gate tests,
// which look up every code a report contains.)
func TestEmittedLiteralsAreCatalogued(t *testing.T) {
	lit := regexp.MustCompile(`"((?:mcp|field|inconclusive|declared|manifest)_[a-z_]*[a-z]|MCP-(?:DRIFT|CONF|AUTH)-[A-Z0-9-]*[A-Z0-9])"`)
	notCodes := map[string]bool{"manifest_digest": true, "field_digests": true, "declared_mcp_manifests": true,
		"manifest_observation_ambiguous": false}
	gateFiles, _ := filepath.Glob("../gate/*.go")
	probeFiles, _ := filepath.Glob("../probe/*.go")
	files := append(gateFiles, probeFiles...)
	if len(gateFiles) == 0 || len(probeFiles) == 0 {
		t.Fatal("no gate or probe sources found")
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
			code := m[1]
			if notCodes[code] {
				continue
			}
			n++
			if _, ok := catalog.Lookup(code); !ok {
				t.Errorf("%s: %s is emitted but not catalogued", f, code)
			}
		}
	}
	if n < 35 {
		t.Errorf("only %d code literals found; the scan is broken", n)
	}
}

func TestGetPanicsOnUnknown(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Get of an uncatalogued code must panic")
		}
	}()
	catalog.Get("no_such_code")
}

// Every change kind schemadiff declares is catalogued as a change.
func TestChangeKindsAreCatalogued(t *testing.T) {
	decl := regexp.MustCompile(`(?m)^\s+([A-Z]\w*)\s*=\s*"([a-z][a-z_]*)"`)
	notKinds := map[string]bool{"Widening": true, "Narrowing": true, "Neutral": true, "Allow": true, "Review": true, "Deny": true}
	n := 0
	for _, f := range []string{"../schemadiff/change.go", "../schemadiff/tool.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			if notKinds[m[1]] {
				continue
			}
			n++
			e, ok := catalog.Lookup(m[2])
			if !ok {
				t.Errorf("%s: kind %s (%s) is not catalogued", f, m[2], m[1])
			} else if e.Kind != catalog.Change {
				t.Errorf("kind %s is catalogued as %s, not change", m[2], e.Kind)
			}
		}
	}
	if n < 35 {
		t.Errorf("only %d kinds found; the scan is broken", n)
	}
}
