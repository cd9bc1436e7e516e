package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// BenchmarkWriteJSON: the JSON report of drift over 10,000 unchanged tools
// (1.5 MB), written by writeJSON (Marshal, then indentJSON: one pass)
// beside the baseline it replaced (what a json.Encoder with SetIndent
// does: Marshal, then json.Indent, a second scan that validates the
// document again; then the escaping of unsafe runes, a third pass).
func BenchmarkWriteJSON(b *testing.B) {
	r := &probe.Report{Schema: probe.ReportSchemaID, Findings: []probe.Finding{}, Notes: []string{}, Warnings: []string{}, Suppressed: []probe.SuppressedFinding{}}
	for i := range 10_000 {
		r.Tools = append(r.Tools, schemadiff.ToolVerdict{Name: fmt.Sprintf("tool_%05d", i), Status: "unchanged", Decision: "allow"})
	}
	var out bytes.Buffer
	b.Run("writeJSON", func(b *testing.B) {
		for b.Loop() {
			out.Reset()
			if err := writeJSON(&out, r); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(out.Len()))
	})
	b.Run("baseline=Marshal+json.Indent+escape", func(b *testing.B) {
		for b.Loop() {
			src, err := json.Marshal(r)
			if err != nil {
				b.Fatal(err)
			}
			out.Reset()
			out.Write(append(referenceIndent(b, src), '\n'))
		}
		b.SetBytes(int64(out.Len()))
	})
}
