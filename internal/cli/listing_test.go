package cli

import (
	"reflect"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// A listing beside the primary one takes the primary's digest for a tool
// with exactly its bytes (digestMemo) and computes every other: what it
// keeps is what computing every digest keeps — the same bytes in another
// order of members, a changed description and unreadable entries
// included — so a list that varies per connection is still seen.
func TestDigestMemoAgrees(t *testing.T) {
	primary, err := manifest.ParseToolList([]byte(`{"tools":[{"name":"a","description":"x","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}},{"name":"c"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	memo := newDigestMemo()
	memo.put(primary.Tools)
	page, err := jcs.Parse([]byte(`{"tools":[
		{"name":"a","description":"x","inputSchema":{"type":"object"}},
		{"inputSchema":{"type":"object"},"name":"b"},
		{"name":"c","description":"changed"},
		{"name":"d"},
		17,
		{"name":""},
		{"name":"a","description":"x","inputSchema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	with := &nameDigests{seen: map[string]bool{}, memo: memo}
	without := &nameDigests{seen: map[string]bool{}}
	if err := with.add(page.Root()); err != nil {
		t.Fatal(err)
	}
	if err := without.add(page.Root()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(with.nd, without.nd) || !reflect.DeepEqual(with.invalid, without.invalid) || with.dup != without.dup || !with.dup || len(with.invalid) != 2 {
		t.Fatalf("with the memo %+v %q dup=%v; without %+v %q dup=%v", with.nd, with.invalid, with.dup, without.nd, without.invalid, without.dup)
	}
	if got, ok := memo.get("c", []byte(`{"name":"c","description":"changed"}`)); ok {
		t.Fatalf("the memo answered other bytes: %s", got)
	}
}
