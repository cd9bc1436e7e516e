// Package catalog is the one list of every reason code mcpdrift can emit:
// its family, kind, default severity, a short explanation and what a
// reviewer should do. Findings are built from catalogue entries (Get panics
// on an unknown code, and a test walks every code the gate can emit), and
// the reference page docs/reason-codes.md is generated from it.
package catalog

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Kind says how a code affects a verdict.
type Kind string

// Kinds of codes.
const (
	// Finding: something drifted and needs review (exit 1).
	Finding Kind = "finding"
	// Inconclusive: the evidence cannot support a verdict (exit 3).
	Inconclusive Kind = "inconclusive"
	// Warning: no finding, but the claim is weaker than "clean".
	Warning Kind = "warning"
	// Note: attached to a finding to qualify it; never changes a verdict.
	Note Kind = "note"
)

// Severity of a finding, for review prioritisation (not maliciousness).
type Severity string

// Severities, from least to most urgent.
const (
	None   Severity = "none"
	Low    Severity = "low"
	Medium Severity = "medium"
	High   Severity = "high"
)

// Rank orders severities (higher is more urgent).
func (s Severity) Rank() int {
	switch s {
	case Low:
		return 1
	case Medium:
		return 2
	case High:
		return 3
	}
	return 0
}

// Entry documents one reason code.
type Entry struct {
	Code     string
	Family   string
	Kind     Kind
	Severity Severity // default severity (profiles may change it)
	// PrivilegedSeverity applies when the tool concerned is privileged;
	// empty means the same as Severity.
	PrivilegedSeverity Severity
	Title              string
	Explanation        string
	Remedy             string
	Source             string // where the code is specified
}

// Families.
const (
	FamilyCoverage    = "coverage"
	FamilyValidity    = "baseline-validity"
	FamilyCoarse      = "coarse-drift"
	FamilyPerTool     = "per-tool-drift"
	FamilyField       = "field-drift"
	FamilyAttribution = "field-attribution"
)

const (
	specAssay = "assay-mcp-manifest-drift.md"
	own       = "mcpdrift"
)

var entries = []Entry{
	// Coarse verdict codes.
	{Code: "mcp_tool_manifest_drift", Family: FamilyCoarse, Kind: Finding, Severity: Medium,
		Title:       "The observed manifest digest differs from the baseline",
		Explanation: "The canonical digest of the observed tools/list is not the pinned manifest_digest. Some tool was added, removed or changed; the coarse gate does not say which. Drift is asserted even when completeness is unknown.",
		Remedy:      "Run the gate with the declared per-tool baseline (--declared) to see which tools changed, review them, then re-pin with `mcpdrift pin` if the change is legitimate.",
		Source:      specAssay},
	{Code: "inconclusive_manifest_not_observed", Family: FamilyCoverage, Kind: Inconclusive,
		Title:       "No tools/list was observed",
		Explanation: "The record says no tools/list was observed. Absence of evidence is never read as \"no drift\".",
		Remedy:      "Make sure the observer reaches the server and captures tools/list, then gate again.",
		Source:      specAssay},
	{Code: "inconclusive_manifest_partial_observation", Family: FamilyCoverage, Kind: Inconclusive,
		Title:       "The tools/list was only partly observed",
		Explanation: "Pagination started but the chain was not completed (or completeness is unknown), so a tool missing from the observation could be on a page that was not seen. Removals are not evaluable; additions and changes among observed tools are still asserted.",
		Remedy:      "Capture the whole pagination chain (every page until no nextCursor). If partial observation is acceptable for this server, set partial_observation: warn in the policy.",
		Source:      specAssay},
	{Code: "manifest_observation_ambiguous", Family: FamilyCoverage, Kind: Inconclusive,
		Title:       "Duplicate tool names in the observed manifest (coarse gate)",
		Explanation: "The observed list has two tools with the same name, so its identity is ambiguous and no manifest digest is claimed. A client would call one of them; which one is not defined.",
		Remedy:      "Treat the server as suspect: duplicate names can shadow a reviewed tool. Fix the server so names are unique.",
		Source:      specAssay},
	{Code: "manifest_coverage_unknown", Family: FamilyCoverage, Kind: Warning,
		Title:       "Digest matches, but completeness is unknown",
		Explanation: "Nothing drifted in what was observed, but nothing proves the observation was the whole list, so the result may not be claimed fully clean.",
		Remedy:      "Observe the server directly (or capture the whole pagination chain) so completeness can be proven.",
		Source:      specAssay},
	{Code: "manifest_partial_observation_allowed", Family: FamilyCoverage, Kind: Warning,
		Title:       "Partial observation accepted by policy as warning-only",
		Explanation: "The observation was partial and the policy for this server allows warning-only, so the partial-observation rule did not make the run inconclusive.",
		Remedy:      "Prefer complete observations; keep warning-only for servers whose lists cannot be fully captured.",
		Source:      specAssay},
	{Code: "manifest_policy_entry_missing", Family: FamilyCoverage, Kind: Warning,
		Title:       "The policy has no entry for this server",
		Explanation: "A policy file was given with a declared baseline, but it does not pin this server, so the coarse-consistency check could not run.",
		Remedy:      "Add the server's manifest_digest to declared_mcp_manifests, or gate without the policy.",
		Source:      own},

	// Baseline validity (granular).
	{Code: "declared_manifest_digest_mismatch", Family: FamilyValidity, Kind: Inconclusive,
		Title:       "The declared baseline does not recompute",
		Explanation: "The declared manifest_digest is not the digest of its own tools[].{name, tool_digest}. The baseline was edited by hand or damaged, so no per-tool diff is made against it.",
		Remedy:      "Regenerate the baseline with `mcpdrift pin` from a clean, complete observation.",
		Source:      specAssay},
	{Code: "declared_mcp_manifest_ambiguous", Family: FamilyValidity, Kind: Inconclusive,
		Title:       "Duplicate tool names in the declared baseline",
		Explanation: "The baseline lists a tool name twice, so per-tool expectations are ambiguous.",
		Remedy:      "Fix the baseline so each tool name appears once.",
		Source:      specAssay},
	{Code: "mcp_manifest_server_mismatch", Family: FamilyValidity, Kind: Inconclusive,
		Title:       "Observed and declared server ids differ",
		Explanation: "The observation is about another server than the baseline, so comparing them means nothing.",
		Remedy:      "Pair each observation with the baseline of the same server id.",
		Source:      specAssay},
	{Code: "mcp_manifest_canonicalization_mismatch", Family: FamilyValidity, Kind: Inconclusive,
		Title:       "Observed and declared canonicalizations differ",
		Explanation: "Digests made under different projections cannot be compared.",
		Remedy:      "Re-observe and re-pin with the same canonicalization (assay.mcp_manifest_projection.v0).",
		Source:      specAssay},
	{Code: "mcp_manifest_observation_ambiguous", Family: FamilyValidity, Kind: Inconclusive,
		Title:       "The observation is ambiguous (granular gate)",
		Explanation: "The observed record has status ambiguous or lists a tool name twice; no per-tool diff is made.",
		Remedy:      "Treat the server as suspect: duplicate names can shadow a reviewed tool.",
		Source:      specAssay},
	{Code: "declared_manifest_baseline_conflict", Family: FamilyValidity, Kind: Inconclusive,
		Title:       "The policy map and the declared baseline disagree",
		Explanation: "declared_mcp_manifests[server].manifest_digest in the policy is not the declared baseline's manifest_digest: two declared truths.",
		Remedy:      "Decide which baseline is current and update the other.",
		Source:      specAssay},

	// Per-tool drift.
	{Code: "mcp_tool_added", Family: FamilyPerTool, Kind: Finding, Severity: Medium,
		Title:       "A tool was added",
		Explanation: "The server serves a tool the baseline does not list. Its description reaches the agent and can steer it.",
		Remedy:      "Review the new tool's description and schema before agents may use it, then re-pin.",
		Source:      specAssay},
	{Code: "mcp_new_privileged_tool", Family: FamilyPerTool, Kind: Finding, Severity: High,
		Title:       "A privileged tool was added",
		Explanation: "The server serves a new tool whose name the classifier maps to a privileged action class (credentials, execution, money, messaging, permissions ...).",
		Remedy:      "Do not re-pin until a person has approved the new capability.",
		Source:      specAssay},
	{Code: "mcp_tool_removed", Family: FamilyPerTool, Kind: Finding, Severity: Low,
		Title:       "A tool was removed",
		Explanation: "A tool the baseline lists is missing from a complete observation.",
		Remedy:      "Confirm the removal was intended (agents that depend on it will break), then re-pin.",
		Source:      specAssay},
	{Code: "mcp_privileged_tool_removed", Family: FamilyPerTool, Kind: Finding, Severity: High,
		Title:       "A privileged tool was removed",
		Explanation: "A privileged tool the baseline lists is missing from a complete observation. A removal can precede a re-add under another definition.",
		Remedy:      "Confirm the removal with the server's owner, then re-pin.",
		Source:      specAssay},
	{Code: "mcp_tool_changed", Family: FamilyPerTool, Kind: Finding, Severity: Medium,
		Title:       "A tool changed",
		Explanation: "The tool's canonical digest differs from the baseline: its description, input schema, output schema or annotations changed. Field attribution was unavailable or inconsistent (see the attached note).",
		Remedy:      "Compare the tool's definition with the pinned snapshot; review the change, then re-pin.",
		Source:      specAssay},
	{Code: "mcp_privileged_tool_changed", Family: FamilyPerTool, Kind: Finding, Severity: High,
		Title:       "A privileged tool changed",
		Explanation: "A tool that is privileged on either side has a different canonical digest than the baseline.",
		Remedy:      "Review the change with care before re-pinning: this tool acts with privilege.",
		Source:      specAssay},

	// Field-level drift.
	{Code: "mcp_tool_description_changed", Family: FamilyField, Kind: Finding, Severity: Medium, PrivilegedSeverity: High,
		Title:       "A tool's description changed",
		Explanation: "The description is the tool-poisoning surface: the agent reads it to decide whether and how to call the tool. A rewritten description can carry instructions.",
		Remedy:      "Read the new description for instructions aimed at the agent (\"ignore\", \"always\", \"before calling\", hidden text), then re-pin.",
		Source:      specAssay},
	{Code: "mcp_tool_input_schema_changed", Family: FamilyField, Kind: Finding, Severity: Medium, PrivilegedSeverity: High,
		Title:       "A tool's input schema changed",
		Explanation: "The argument surface changed: parameters added or removed, types or constraints altered.",
		Remedy:      "Check for new parameters (callback URLs, paths, commands) and loosened constraints (path, URL and command parameters first), then re-pin.",
		Source:      specAssay},
	{Code: "mcp_tool_output_schema_changed", Family: FamilyField, Kind: Finding, Severity: Low, PrivilegedSeverity: Medium,
		Title:       "A tool's output schema changed",
		Explanation: "What the tool declares it returns changed.",
		Remedy:      "Check that consumers of the tool's structured output still work, then re-pin.",
		Source:      specAssay},
	{Code: "mcp_tool_annotations_changed", Family: FamilyField, Kind: Finding, Severity: Low, PrivilegedSeverity: Medium,
		Title:       "A tool's annotations changed",
		Explanation: "The server's self-asserted hints (readOnlyHint, destructiveHint ...) changed. They are hints, not authority.",
		Remedy:      "Check whether a hint was weakened (e.g. readOnlyHint true to false), then re-pin.",
		Source:      specAssay},

	// Field attribution.
	{Code: "field_attribution_unavailable", Family: FamilyAttribution, Kind: Note,
		Title:       "Field attribution unavailable",
		Explanation: "One side lacks a complete set of field_digests, so the change cannot be attributed to a field. A missing field digest is never read as \"unchanged\".",
		Remedy:      "Pin and observe with mcpdrift (which always writes field_digests) to get field-level findings.",
		Source:      specAssay},
	{Code: "field_attribution_inconsistent", Family: FamilyAttribution, Kind: Inconclusive,
		Title:       "Field digests disagree with the tool digest",
		Explanation: "Either the tool digest changed while no field digest did, or a field digest changed while the tool digest did not. The canonical tool_digest stays authoritative; the field digests tell a story it does not support.",
		Remedy:      "Regenerate both artifacts with one producer; suspect tampering if they came from mcpdrift.",
		Source:      specAssay},
}

var index = func() map[string]*Entry {
	m := make(map[string]*Entry, len(entries))
	for i := range entries {
		e := &entries[i]
		if _, dup := m[e.Code]; dup {
			panic("catalog: duplicate code " + e.Code)
		}
		m[e.Code] = e
	}
	return m
}()

// Lookup returns the entry for code.
func Lookup(code string) (Entry, bool) {
	e, ok := index[code]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

// Get returns the entry for code and panics if it is not catalogued: every
// emitted code must be in the catalogue (a test enforces it).
func Get(code string) Entry {
	e, ok := index[code]
	if !ok {
		panic("catalog: uncatalogued reason code " + code)
	}
	return *e
}

// All returns every entry, sorted by family then code.
func All() []Entry {
	out := append([]Entry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Family != out[j].Family {
			return familyOrder(out[i].Family) < familyOrder(out[j].Family)
		}
		return out[i].Code < out[j].Code
	})
	return out
}

func familyOrder(f string) int {
	for i, x := range []string{FamilyCoarse, FamilyPerTool, FamilyField, FamilyAttribution, FamilyCoverage, FamilyValidity} {
		if x == f {
			return i
		}
	}
	return 99
}

// Markdown renders the reference page for every code.
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# mcpdrift reason codes\n\n")
	b.WriteString("Generated from `catalog/catalog.go` by `go run ./cmd/mcpdrift codes --format markdown > docs/reason-codes.md`; a test fails when this page is stale.\n\n")
	b.WriteString("Kinds: **finding** needs review (exit 1); **inconclusive** means the evidence cannot support a verdict (exit 3); **warning** weakens a clean result without failing it; **note** qualifies a finding.\n")
	b.WriteString("Severities are review priorities, not maliciousness. Profiles can change them (see `mcpdrift gate --profile`).\n\n")
	b.WriteString("| code | family | kind | severity (privileged) |\n|---|---|---|---|\n")
	all := All()
	for _, e := range all {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s |\n", e.Code, anchor(e.Code), e.Family, e.Kind, sevCell(e))
	}
	for _, e := range all {
		fmt.Fprintf(&b, "\n## %s\n\n", e.Code)
		fmt.Fprintf(&b, "**%s.** Family: %s. Kind: %s. Severity: %s. Specified in: %s.\n\n", e.Title, e.Family, e.Kind, sevCell(e), e.Source)
		fmt.Fprintf(&b, "%s\n\n", e.Explanation)
		fmt.Fprintf(&b, "What to do: %s\n", e.Remedy)
	}
	return b.Bytes()
}

func anchor(code string) string { return strings.ReplaceAll(code, ".", "") }

func sevCell(e Entry) string {
	if e.Kind != Finding {
		return "n/a"
	}
	if e.PrivilegedSeverity != "" && e.PrivilegedSeverity != e.Severity {
		return fmt.Sprintf("%s (%s)", e.Severity, e.PrivilegedSeverity)
	}
	return string(e.Severity)
}
