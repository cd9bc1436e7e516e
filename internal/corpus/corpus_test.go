package corpus

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

func mustValid(t *testing.T, what string, doc []byte) *jcs.Doc {
	t.Helper()
	if !json.Valid(doc) {
		t.Fatalf("%s: encoding/json says invalid JSON", what)
	}
	// jcs.Parse is strict: it also rejects duplicate member names at any
	// depth, invalid UTF-8, lone surrogates and out-of-range numbers.
	d, err := jcs.Parse(doc)
	if err != nil {
		t.Fatalf("%s: jcs.Parse: %v", what, err)
	}
	return d
}

func TestToolsValid(t *testing.T) {
	for _, seed := range []uint64{0, 1, 2, 3, 42, 1 << 40, ^uint64(0)} {
		for _, n := range []int{0, 1, 7, 200} {
			doc := Tools(n, seed)
			d := mustValid(t, "Tools", doc)
			root := d.Root()
			if root.Kind() != jcs.Array || root.Len() != n {
				t.Fatalf("Tools(%d, %d): root is %v with %d elements", n, seed, root.Kind(), root.Len())
			}
			for i := range n {
				tool := root.Index(i)
				for _, k := range []string{"name", "description", "inputSchema"} {
					if _, ok := tool.Get(k); !ok {
						t.Fatalf("Tools(%d, %d)[%d]: no %q", n, seed, i, k)
					}
				}
				is, _ := tool.Get("inputSchema")
				if typ, _ := is.Get("type"); !typ.StrEqual("object") {
					t.Fatalf("Tools(%d, %d)[%d]: inputSchema.type is not \"object\"", n, seed, i)
				}
			}
		}
	}
}

func TestNamesUnique(t *testing.T) {
	all := make(map[string]bool)
	for _, seed := range []uint64{1, 2, 9} {
		var tools []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(Tools(3000, seed), &tools); err != nil {
			t.Fatal(err)
		}
		seen := make(map[string]bool)
		for _, tl := range tools {
			if seen[tl.Name] {
				t.Fatalf("seed %d: duplicate tool name %q", seed, tl.Name)
			}
			seen[tl.Name] = true
			all[tl.Name] = true
		}
	}
	for _, want := range []string{"read_file", "github.create_issue", "slack_post_message", "mcp__db__query",
		"getWeatherForecast", "k8s-get-pods", "read_file_2"} {
		if !all[want] {
			t.Errorf("no tool named %q", want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, b := Tools(300, 7), Tools(300, 7)
	if !bytes.Equal(a, b) {
		t.Fatal("Tools(300, 7) differs between calls")
	}
	if bytes.Equal(a, Tools(300, 8)) {
		t.Fatal("Tools(300, 7) == Tools(300, 8)")
	}
	// A prefix of the tool stream does not depend on n.
	short := Tools(10, 7)
	if !bytes.HasPrefix(a, short[:len(short)-1]) {
		t.Fatal("Tools(10, 7) is not a prefix of Tools(300, 7)")
	}
	if !bytes.Equal(ToolsListResponse(40, 3), ToolsListResponse(40, 3)) {
		t.Fatal("ToolsListResponse not deterministic")
	}
	if !bytes.Equal(Pages(40, 7, 3), Pages(40, 7, 3)) {
		t.Fatal("Pages not deterministic")
	}
}

// TestRealWork checks the corpus gives a canonicalizer something to do:
// unsorted members, non-canonical numbers, escapes of every style.
func TestRealWork(t *testing.T) {
	doc := Tools(172, 1)
	canon, err := jcs.Canonicalize(doc)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(doc, canon) {
		t.Fatal("corpus is already canonical")
	}
	s := string(doc)
	for _, want := range []string{
		`1E3`, `4.50`, `2e-3`, `-5e20`, `1e-7`, `12.50`, `9223372036854775807`, `1.7976931348623157e308`,
		`\u003cIMPORTANT\u003e`, `<IMPORTANT>`, `\ud83d`, `\u00e9`, `\/`, `\"`, `\n`, `\t`,
		"\u2028", `\u2028`, "é", "日本語", "🚀", `"$ref":"#/$defs/`, `"$ref":"#/definitions/`,
		`"anyOf":[`, `"oneOf":[`, `"enum":[`, `"additionalProperties":false`, `"format":"date-time"`,
		`"pattern":"`, `"outputSchema":{`, `"annotations":{`, `"readOnlyHint":true`, `"_meta":{`, `"icons":[`,
		`"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"$schema":"http://json-schema.org/draft-07/schema#"`,
		`"title":"`, `"default":`, `"minimum":`, `"maximum":`, `"required":[`, `"items":{`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("Tools(172, 1) lacks %s", want)
		}
	}
	// Key order must not be sorted: the first tool's keys should differ
	// from their canonical order somewhere in the document.
	if bytes.Count(doc, []byte(`{"type":`)) == bytes.Count(canon, []byte(`{"type":`)) &&
		bytes.Count(doc, []byte(`{"description":`)) == bytes.Count(canon, []byte(`{"description":`)) {
		t.Error("member order looks sorted")
	}
}

// TestSizes pins the sizes documented on the package. If you change the
// generator on purpose, update the figures in the package comment too:
// benchmark results are only comparable on the same corpus.
func TestSizes(t *testing.T) {
	want := map[int]int{100: 608821, 172: 1003375, 1000: 5793324, 1720: 9938060, 10000: 58563557}
	for _, n := range []int{100, 172, 1000, 1720, 10000} {
		if n == 10000 && testing.Short() {
			continue
		}
		got := len(Tools(n, 1))
		t.Logf("Tools(%d, 1) = %d bytes (%.0f bytes/tool)", n, got, float64(got)/float64(n))
		if got != want[n] {
			t.Errorf("Tools(%d, 1) = %d bytes, documented as %d", n, got, want[n])
		}
	}
}

// TestLeanSizes pins the sizes documented on LeanTools, and that its tools
// are valid, with unique names.
func TestLeanSizes(t *testing.T) {
	want := map[int]int{100: 181820, 1000: 1700010, 10000: 17070788, 100000: 172094506}
	for _, n := range []int{100, 1000, 10000, 100000} {
		if n >= 10000 && testing.Short() {
			continue
		}
		doc := LeanTools(n, 1)
		if got := len(doc); got != want[n] {
			t.Errorf("LeanTools(%d, 1) = %d bytes, documented as %d", n, got, want[n])
		}
		if n <= 10000 {
			d := mustValid(t, "LeanTools", doc)
			seen := map[string]bool{}
			for i := range d.Root().Len() {
				name, _ := d.Root().Index(i).Get("name")
				if seen[name.Str()] {
					t.Fatalf("LeanTools(%d): name %q twice", n, name.Str())
				}
				seen[name.Str()] = true
			}
		}
	}
}

// TestManySeeds looks for rare generator bugs (duplicate member names,
// invalid escapes) across many seeds.
func TestManySeeds(t *testing.T) {
	seeds := 64
	if testing.Short() {
		seeds = 8
	}
	for seed := range uint64(seeds) {
		doc := Tools(60, seed*0x9e3779b97f4a7c15)
		mustValid(t, "Tools(60, seed "+strconv.FormatUint(seed, 10)+")", doc)
	}
}

func TestToolsListResponse(t *testing.T) {
	doc := ToolsListResponse(25, 5)
	mustValid(t, "ToolsListResponse", doc)
	var resp struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Result  struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(doc, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.JSONRPC != "2.0" || resp.ID != 1 || len(resp.Result.Tools) != 25 {
		t.Fatalf("bad response envelope: %+v", resp)
	}
	if !bytes.Contains(doc, Tools(25, 5)) {
		t.Fatal("response does not carry Tools(25, 5)")
	}
}

func TestPages(t *testing.T) {
	for _, c := range []struct{ n, size, pages int }{
		{0, 10, 1}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {95, 10, 10}, {30, 0, 1}, {5, 1, 5},
	} {
		doc := Pages(c.n, c.size, 11)
		mustValid(t, "Pages", doc)
		var pages []struct {
			JSONRPC string `json:"jsonrpc"`
			ID      int    `json:"id"`
			Result  struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor *string           `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(doc, &pages); err != nil {
			t.Fatal(err)
		}
		if len(pages) != c.pages {
			t.Fatalf("Pages(%d, %d): %d pages, want %d", c.n, c.size, len(pages), c.pages)
		}
		var all []json.RawMessage
		cursors := map[string]bool{}
		for i, p := range pages {
			if p.JSONRPC != "2.0" || p.ID != i+1 {
				t.Fatalf("Pages(%d, %d)[%d]: bad envelope", c.n, c.size, i)
			}
			last := i == len(pages)-1
			if (p.Result.NextCursor == nil) != last {
				t.Fatalf("Pages(%d, %d)[%d]: nextCursor present=%v on last=%v", c.n, c.size, i, p.Result.NextCursor != nil, last)
			}
			if p.Result.NextCursor != nil {
				if cursors[*p.Result.NextCursor] {
					t.Fatalf("repeated cursor")
				}
				cursors[*p.Result.NextCursor] = true
			}
			all = append(all, p.Result.Tools...)
		}
		var want []json.RawMessage
		if err := json.Unmarshal(Tools(c.n, 11), &want); err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(all, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatalf("Pages(%d, %d) tools differ from Tools(%d)", c.n, c.size, c.n)
		}
	}
}
