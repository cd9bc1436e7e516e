package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// Synthesize writes a store that reads back as the history it describes.
func TestSynthesize(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			s, url := be.open(t)
			if be.name == "sqlite" {
				s.Close()
				url = "sqlite:" + filepath.Join(t.TempDir(), "synth.db")
			}
			ctx := context.Background()
			start := time.Now()
			if err := Synthesize(ctx, url, 20, 10, 5); err != nil {
				t.Fatal(err)
			}
			t.Logf("1,000 versions in %v", time.Since(start))
			s, err := Open(ctx, url, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Check(ctx); err != nil {
				t.Fatal(err)
			}
			vs, err := s.History(ctx, Query{Server: "server-0007", Tool: "tool-003"})
			if err != nil || len(vs) != 5 {
				t.Fatalf("%+v %v", vs, err)
			}
			if vs[4].FirstScan != 5 || len(vs[4].Findings) != 1 || vs[4].Findings[0].Scan != 5 {
				t.Fatalf("last version %+v", vs[4])
			}
			l, err := s.LastComplete(ctx, "server-0019")
			if err != nil || len(l.Tools) != 10 || l.Tools[3].Name != "tool-003" || l.Scan != 5 {
				t.Fatalf("last complete %+v %v", l, err)
			}
			// a new scan after the synthetic ones gets the next id
			id, err := s.BeginScan(ctx, "after")
			if err != nil || id != 6 {
				t.Fatalf("next scan %d %v", id, err)
			}
			all, err := s.History(ctx, Query{Limit: 100000})
			if err != nil || len(all) != 1000 {
				t.Fatalf("%d versions %v", len(all), err)
			}
			n := 0
			for _, v := range all {
				n += len(v.Findings)
			}
			if n != 100 {
				t.Fatalf("%d findings", n)
			}
		})
	}
}
