package toolname_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/toolname"
)

func TestUnsafe(t *testing.T) {
	names := []string{"search", "d\u0435lete_file", "github/add", "search", "caf\u00e9 menu", "", strings.Repeat("a", 129), "ok-1.2_x", "d\u0435lete_file"}
	r := toolname.Check(names)
	var got []string
	for _, u := range r.Unsafe {
		got = append(got, fmt.Sprintf("%d %s %q %d", u.Index, u.Escaped, string(u.Outside), u.Length))
	}
	want := []string{
		`1 d\u0435lete_file "е" 11`,
		`2 github\u002fadd "/" 10`,
		`4 caf\u00e9\u0020menu "é " 9`,
		`5  "" 0`,
		"6 " + strings.Repeat("a", 129) + ` "" 129`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("unsafe:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func groups(r toolname.Result) []string {
	var out []string
	for _, g := range r.Ambiguous {
		var esc []string
		for _, n := range g.Names {
			esc = append(esc, safetext.EscapeName(n))
		}
		out = append(out, string(g.Fold)+": "+strings.Join(esc, " "))
	}
	return out
}

func TestAmbiguous(t *testing.T) {
	cases := []struct {
		name  string
		names []string
		want  []string
	}{
		{"nfc", []string{"caf\u00e9", "cafe\u0301"}, []string{`nfc: caf\u00e9 cafe\u0301`}},
		{"case", []string{"Delete_File", "x", "delete_file"}, []string{"case_fold: Delete_File delete_file"}},
		{"german sharp s", []string{"STRASSE", "stra\u00dfe"}, []string{`case_fold: STRASSE stra\u00dfe`}},
		{"cyrillic", []string{"delete_file", "d\u0435lete_file"}, []string{`confusable: delete_file d\u0435lete_file`}},
		{"invisible", []string{"del\u200bete_file", "delete_file"}, []string{`confusable: del\u200bete_file delete_file`}},
		{"fullwidth and math", []string{"ＤＥＬＥＴＥ_file", "𝐝𝐞𝐥𝐞𝐭𝐞_file", "read"}, []string{`confusable: \uff24\uff25\uff2c\uff25\uff34\uff25_file \U0001d41d\U0001d41e\U0001d425\U0001d41e\U0001d42d\U0001d41e_file`}},
		{"combining mark", []string{"delete", "de\u0301lete"}, []string{`confusable: delete de\u0301lete`}},
		{"ascii look-alikes", []string{"r00t", "root", "rn", "m"}, []string{"confusable: r00t root", "confusable: rn m"}},
		// The case-sensitive skeleton catches an upper-case I for l.
		{"I for l", []string{"delete_file", "deIete_file"}, []string{"confusable: delete_file deIete_file"}},
		// One group per set of look-alikes, labelled with the finest fold
		// that unites all of it; exact duplicates are not names of their own.
		{"mixed", []string{"delete_file", "Delete_File", "delete_file", "d\u0435lete_file"}, []string{`confusable: delete_file Delete_File d\u0435lete_file`}},
		{"exact duplicates only", []string{"a", "a", "b"}, nil},
		{"distinct", []string{"delete_file", "delete-file", "delete.file", "deletefile", "delete_files", "read_file"}, nil},
		{"order", []string{"b", "A", "B", "a"}, []string{"case_fold: b B", "case_fold: A a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := groups(toolname.Check(c.names)); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// Real tool lists (the real-world corpus) and the generated corpus have no
// look-alike names: the fold does not make ordinary names collide.
func TestNoGroupsInRealLists(t *testing.T) {
	files, err := filepath.Glob("../testdata/realworld/*/*.tools-list.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no real-world lists: %v", err)
	}
	total := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tl, err := manifest.ParseToolList(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var names []string
		for _, tool := range tl.Tools {
			names = append(names, tool.Name)
		}
		total += len(names)
		if r := toolname.Check(names); !r.Empty() {
			t.Errorf("%s: %+v", f, r)
		}
	}
	names := corpusNames(t, 2000)
	if r := toolname.Check(names); len(r.Ambiguous) > 0 || len(r.Unsafe) > 0 {
		t.Errorf("generated corpus: %v, %d unsafe", groups(r), len(r.Unsafe))
	}
	t.Logf("%d real names in %d lists and %d generated names: no issue", total, len(files), len(names))
}

var corpusCache = map[int][]string{}
var corpusMu sync.Mutex

func corpusNames(tb testing.TB, n int) []string {
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if c, ok := corpusCache[n]; ok {
		return c
	}
	var ts []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(corpus.Tools(n, 1), &ts); err != nil {
		tb.Fatal(err)
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	corpusCache[n] = out
	return out
}

// benchNames is 10,000 realistic names, every 50th disguised in one of the
// ways the check knows, so both the fast and the general paths run.
func benchNames(tb testing.TB, n int) []string {
	base := corpusNames(tb, n)
	out := slices.Clone(base)
	disguises := []func(string) string{
		func(s string) string { return strings.Replace(s, "e", "\u0435", 1) },
		func(s string) string { return strings.ToUpper(s) },
		func(s string) string { return s[:1] + "\u200b" + s[1:] },
		func(s string) string { return strings.Replace(s, "a", "\U0001D41A", 1) },
	}
	for i := 0; i < len(out); i += 50 {
		out[i] = disguises[(i/50)%len(disguises)](base[(i+25)%len(base)])
	}
	return out
}

func BenchmarkCheck10k(b *testing.B) {
	names := benchNames(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	var r toolname.Result
	for b.Loop() {
		r = toolname.Check(names)
	}
	b.ReportMetric(float64(len(r.Ambiguous)), "groups")
	b.ReportMetric(float64(len(r.Unsafe)), "unsafe")
}

// BenchmarkCheck scales the list: the time per name stays flat (no
// pairwise comparison).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1000, 10000, 40000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("server%d_tool_%d", i%97, i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				toolname.Check(names)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/name")
		})
	}
}

// A list in which every name collides with every other is one group, found
// in linear time (a pairwise check would do 50 million comparisons).
func TestOneBigGroup(t *testing.T) {
	var names []string
	for i := 0; i < 10000; i++ {
		var b strings.Builder
		for j := 0; j < 14; j++ {
			if i&(1<<j) != 0 {
				b.WriteString("A")
			} else {
				b.WriteString("a")
			}
		}
		names = append(names, b.String())
	}
	r := toolname.Check(names)
	if len(r.Ambiguous) != 1 || len(r.Ambiguous[0].Names) != 10000 || r.Ambiguous[0].Fold != toolname.FoldCase {
		t.Fatalf("got %d groups", len(r.Ambiguous))
	}
}

// Long names are reported as unsafe, briefly, and are left out of grouping.
func TestLongNames(t *testing.T) {
	long := strings.Repeat("\ufdfa", 100000) // each expands to 18 characters under NFKD
	r := toolname.Check([]string{long, long + "x", "a"})
	if len(r.Unsafe) != 2 || len(r.Ambiguous) != 0 {
		t.Fatalf("%d unsafe, %d groups", len(r.Unsafe), len(r.Ambiguous))
	}
	if u := r.Unsafe[0]; len(u.Escaped) > toolname.MaxEscaped*10 || !strings.HasSuffix(u.Escaped, "...") || len(u.Outside) != 1 || u.Length != 100000 {
		t.Errorf("escaped %d bytes, outside %q, length %d", len(u.Escaped), string(u.Outside), u.Length)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("delete_file", "d\u0435lete_file", "Delete_File")
	f.Add("caf\u00e9", "cafe\u0301", "CAFE")
	f.Add("a", "a", "\u200b")
	f.Add("I", "l", "i")
	f.Add("\xff", "\ufffd", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		names := []string{a, b, c, a}
		r := toolname.Check(names)
		seen := map[string]bool{}
		groupOf := map[string]int{}
		for gi, g := range r.Ambiguous {
			if len(g.Names) < 2 || len(g.Names) != len(g.Indexes) {
				t.Fatalf("group %+v", g)
			}
			for i, n := range g.Names {
				if seen[n] {
					t.Fatalf("%q in two groups or twice in one: %+v", n, r.Ambiguous)
				}
				seen[n] = true
				groupOf[n] = gi
				if names[g.Indexes[i]] != n {
					t.Fatalf("index %d is not %q", g.Indexes[i], n)
				}
			}
			switch g.Fold {
			case toolname.FoldNFC:
				for _, n := range g.Names {
					if safetext.NFCKey(n) != safetext.NFCKey(g.Names[0]) {
						t.Fatalf("nfc group with different NFC keys: %+v", g)
					}
				}
			case toolname.FoldCase:
				for _, n := range g.Names {
					if safetext.CaseKey(n) != safetext.CaseKey(g.Names[0]) {
						t.Fatalf("case group with different case keys: %+v", g)
					}
				}
			}
		}
		// Two different names with one fold are always grouped.
		for _, p := range [][2]string{{a, b}, {b, c}, {a, c}} {
			if p[0] != p[1] && len(p[0]) <= toolname.MaxFoldInput && len(p[1]) <= toolname.MaxFoldInput &&
				(safetext.Fold(p[0]) == safetext.Fold(p[1]) || safetext.Skeleton(p[0]) == safetext.Skeleton(p[1])) &&
				(!seen[p[0]] || !seen[p[1]] || groupOf[p[0]] != groupOf[p[1]]) {
				t.Fatalf("%q and %q collide but are not grouped", p[0], p[1])
			}
		}
		// Unsafe names are exactly the distinct names outside the safe set.
		want := 0
		done := map[string]bool{}
		for _, n := range names {
			if !done[n] && !safetext.SafeName(n) {
				want++
			}
			done[n] = true
		}
		if len(r.Unsafe) != want {
			t.Fatalf("%d unsafe, want %d", len(r.Unsafe), want)
		}
		// Order does not change what is grouped.
		r2 := toolname.Check([]string{c, b, a})
		if len(r2.Ambiguous) != len(r.Ambiguous) {
			t.Fatalf("order changed the groups: %+v vs %+v", r.Ambiguous, r2.Ambiguous)
		}
	})
}
