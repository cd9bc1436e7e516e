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
	// Change: a structural change record (mcpdrift diff). In the gate it
	// explains digest findings and never changes a verdict; in diff it
	// drives the decision profile.
	Change Kind = "change"
	// Decision: a reason the gateway (mcpdrift proxy) gives for serving,
	// hiding or refusing: in its decision log and in the data of its
	// JSON-RPC errors; never a verdict of a report.
	Decision Kind = "decision"
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
	// StrictSeverity is the severity under the gate's strict profile
	// (both for privileged and not); empty means the same as above.
	StrictSeverity Severity
	// FailClosed, when set, says why the fail-closed decision profile
	// denies this change kind (every other change is reviewable, and a
	// change that is all notation is allowed, under every profile). The
	// decision profiles of diff, drift and the gateway are built from it.
	FailClosed string
	// NoReview, when set, says why a change of this kind needs no review:
	// a tool whose every change is such is allowed under every profile
	// (schemadiff.NeedsNoReview reads it).
	NoReview string
	// ReviewInfo, when set, says why the review decision profile takes
	// this change kind as information: it is reported and never decides
	// there (what each tool's digest already judges); under fail-closed it
	// decides as FailClosed says. NoReview is allowed everywhere.
	ReviewInfo  string
	Title       string
	Explanation string
	Remedy      string
	Source      string // where the code is specified
}

// Families.
const (
	FamilyCoverage    = "coverage"
	FamilyValidity    = "baseline-validity"
	FamilyCoarse      = "coarse-drift"
	FamilyPerTool     = "per-tool-drift"
	FamilyNames       = "tool-names"
	FamilyField       = "field-drift"
	FamilyAttribution = "field-attribution"
	FamilyStructural  = "structural"
	FamilyIdentity    = "identity"
	FamilyLiveDrift   = "live-drift"
	FamilyConformance = "conformance"
	FamilyAuth        = "auth-posture"
	FamilyGateway     = "gateway"
)

const (
	specAssay = "assay-mcp-manifest-drift.md"
	specSES   = "structural-escalation-signals.md"
	specAPV   = "apiverity-mcp-drift.md"
	own       = "mcpdrift"
)

// entries are every code: coreEntries and surfaceEntries (surface.go).
var entries = append(coreEntries, surfaceEntries...)

var coreEntries = []Entry{
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
	{Code: "manifest_partial_observation_unjudged", Family: FamilyCoverage, Kind: Warning,
		Title:       "Findings were made, but pages of the list went unseen",
		Explanation: "The observation is partial: the pagination chain was not completed, so tools on the pages that were not seen (a privileged tool past a page cap, say) were not judged. The findings among the observed tools stand and hold the run for review; without them the run would be inconclusive.",
		Remedy:      "Review the findings, then capture the whole pagination chain (every page until no nextCursor) and gate again.",
		Source:      own},
	{Code: "diff_new_list_partial", Family: FamilyCoverage, Kind: Inconclusive,
		Title:       "The new tool list of a diff is partial",
		Explanation: "The new list's pagination chain was not completed, so tools on the pages that were not seen cannot be judged: the diff never decides allow. The review profile asks for review; fail-closed denies. With no change among the tools that were seen, diff exits 3.",
		Remedy:      "Capture the whole pagination chain (every page until no nextCursor) and diff again.",
		FailClosed:  "pages of the new list went unseen: tools on them cannot be judged",
		Source:      own},
	{Code: "findings_suppressed", Family: FamilyCoverage, Kind: Warning,
		Title:       "Findings were suppressed",
		Explanation: "The suppression file (mcpdrift.yaml) accepted some findings: they no longer hold the run, and the report lists each with its rule, tool, reason and where it was written. A run with suppressed findings is never reported as plain no_finding.",
		Remedy:      "Review the suppressions from time to time; give each an expires day.",
		Source:      own},
	{Code: "suppression_expired", Family: FamilyCoverage, Kind: Warning,
		Title:       "A suppression has expired",
		Explanation: "A suppression in the suppression file (mcpdrift.yaml) matches this finding, but its expires day has passed, so the finding holds the run again.",
		Remedy:      "Fix what the finding reports, or renew the suppression with a new reason and day.",
		Source:      own},
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
	{Code: "declared_definitions_mismatch", Family: FamilyValidity, Kind: Inconclusive,
		Title:       "The definitions pinned with the baseline are not its tools",
		Explanation: "The snapshot beside the declared baseline (or a lock entry's definitions) holds a tool the baseline does not list, lacks one it lists, has another tool_digest for one, or is of another server. The two files were edited or mixed up, so which definitions are approved is undefined: the gate makes no per-tool diff, and the gateway withholds the server.",
		Remedy:      "Pin again (`mcpdrift pin` writes the baseline and its snapshot together), or restore the pair from version control.",
		Source:      own},
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
		Title:          "A tool changed",
		Explanation:    "The tool's canonical digest differs from the baseline: its description, input schema, output schema or annotations changed. Field attribution was unavailable or inconsistent (see the attached note).",
		Remedy:         "Compare the tool's definition with the pinned snapshot; review the change, then re-pin.",
		StrictSeverity: High,
		Source:         specAssay},
	{Code: "mcp_privileged_tool_changed", Family: FamilyPerTool, Kind: Finding, Severity: High,
		Title:       "A privileged tool changed",
		Explanation: "A tool that is privileged on either side has a different canonical digest than the baseline.",
		Remedy:      "Review the change with care before re-pinning: this tool acts with privilege.",
		Source:      specAssay},

	// Tool names (the name check of package toolname). A name is new when
	// the reference (the declared baseline; in the coarse gate, a drifted
	// manifest digest) does not vouch for it: then it is a finding, else a
	// warning.
	{Code: "mcp_tool_name_unsafe", Family: FamilyNames, Kind: Finding, Severity: Medium, PrivilegedSeverity: High,
		Title:       "A new tool name is outside the safe set",
		Explanation: "The name of a tool the baseline does not vouch for has characters outside A-Z a-z 0-9 _ - . or is not 1 to 128 characters long, which the MCP specification says a tool name should be. Letters of other scripts, invisible characters and compatibility forms make a name print like another one (delete_file with the Cyrillic U+0435 for its first e prints as delete_file), so reports show such a name with every non-ASCII character escaped (d\\u0435lete_file), and the details list the code points. The name is classified by its confusable fold, so a disguised privileged name is privileged (high).",
		Remedy:      "Read the escaped name, not the rendered one. Ask the server's owner for an ASCII name; do not pin a name you cannot read.",
		Source:      own},
	{Code: "mcp_tool_names_ambiguous", Family: FamilyNames, Kind: Finding, Severity: Medium, PrivilegedSeverity: High,
		Title:       "Tool names collide after normalization, case folding or the confusable fold",
		Explanation: "Two or more different names of the observed list are equal after Unicode normalization (NFC), after case folding, or after the confusable fold (look-alike letters of other scripts, invisible characters, compatibility forms, combining marks; UTS #39). A person cannot tell them apart, and a client or gateway that folds names may call the wrong one: a look-alike can shadow a reviewed tool. Every name of the group is reported, and its note says which fold made them collide. High when any name of the group is privileged. A baseline does not vouch for such names: pin, lock add and approve refuse them (exit 2) unless each is acknowledged in the suppression file under this rule (tool: the name, a reason, an expiry), and gate, drift (MCP-CONF-TOOL-NAMES-AMBIGUOUS, which the same entry acknowledges) and the gateway (tool_names_collide) report them until then. (Exact duplicates are the ambiguous observation, not this.)",
		Remedy:      "Treat the look-alike as suspect until its owner explains it; compare the escaped names. Names should differ in ASCII; to keep them, acknowledge each name in the suppression file with a reason and an expiry.",
		Source:      own},
	{Code: "mcp_pinned_tool_name_unsafe", Family: FamilyNames, Kind: Warning,
		Title:       "A pinned tool name is outside the safe set",
		Explanation: "The baseline already vouches for this name, so it is not new, but it has characters outside A-Z a-z 0-9 _ - . (or is empty, or longer than 128 characters) and can print like another name. Reports show it escaped.",
		Remedy:      "Review the escaped name; ask the server's owner for an ASCII name at its next change.",
		Source:      own},
	{Code: "mcp_tool_names_fold_nfc", Family: FamilyNames, Kind: Note,
		Title:       "Equal after Unicode normalization (NFC)",
		Explanation: "The names are different code point sequences that print identically, such as a precomposed é against e and a combining acute accent.",
		Remedy:      "Compare the escaped names: only the code points differ.",
		Source:      own},
	{Code: "mcp_tool_names_fold_case", Family: FamilyNames, Kind: Note,
		Title:       "Equal after case folding",
		Explanation: "The names differ only in case (full case folding: Delete_File and delete_file, STRASSE and straße). Tool names are case-sensitive, but people and some clients are not.",
		Remedy:      "Ask which one is meant; names should differ by more than case.",
		Source:      own},
	{Code: "mcp_tool_names_fold_confusable", Family: FamilyNames, Kind: Note,
		Title:       "Equal after the confusable fold",
		Explanation: "The names look alike: they are equal after folding look-alike letters to their UTS #39 prototypes (the Cyrillic U+0435 to e, 0 to o, an upper-case I to l), removing invisible characters and combining marks, and folding compatibility forms and case.",
		Remedy:      "Compare the escaped names: the look-alike is the one with escapes.",
		Source:      own},

	// Field-level drift.
	{Code: "mcp_tool_description_changed", Family: FamilyField, Kind: Finding, Severity: Medium, PrivilegedSeverity: High,
		Title:          "A tool's description changed",
		Explanation:    "The description is the tool-poisoning surface: the agent reads it to decide whether and how to call the tool. A rewritten description can carry instructions.",
		Remedy:         "Read the new description for instructions aimed at the agent (\"ignore\", \"always\", \"before calling\", hidden text), then re-pin.",
		StrictSeverity: High,
		Source:         specAssay},
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

	// Structural changes (mcpdrift diff; explanations beside gate findings).
	{Code: "param_added_optional", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A tool gained an optional parameter",
		Explanation: "Optional parameters are the preferred injection vector: they do not break existing callers and do not appear in the description's examples. A new callback_url, env or working_directory is a capability the planner never consented to. Parameters whose names suggest a new capability (URLs, commands, paths, environment, headers, tokens) are high.",
		Remedy:      "Surface the new parameter to whoever approved the tool; re-consent before agents may use it.",
		FailClosed:  "a new optional parameter that was not re-consented",
		Source:      specSES},
	{Code: "param_added_required", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A tool gained a required parameter",
		Explanation: "Existing callers that do not send the new parameter now fail validation.",
		Remedy:      "Update callers or ask the server's owner; then re-pin.",
		Source:      specSES},
	{Code: "param_removed", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A tool lost a parameter",
		Explanation: "The parameter's definition is gone. With additionalProperties false, callers that send it now fail; otherwise its value is no longer constrained at all.",
		Remedy:      "Check whether the value is now accepted unconstrained.",
		Source:      specSES},
	{Code: "required_dropped", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A parameter is no longer required",
		Explanation: "The executor now accepts calls without it: a default the planner never saw may apply.",
		Remedy:      "Check what the tool does when the parameter is missing.",
		Source:      specSES},
	{Code: "required_added", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A parameter became required",
		Explanation: "Existing callers that omit it now fail.",
		Remedy:      "Update callers; then re-pin.",
		Source:      specSES},
	{Code: "type_widened", Family: FamilyStructural, Kind: Change, Severity: High,
		Title:       "A parameter's type widened",
		Explanation: "The executor accepts more value shapes than before (string becoming string|object, a missing type), without a change to the call signature the planner reasons about.",
		Remedy:      "Find out why the tool now needs the wider type; objects where strings were expected can smuggle structure.",
		Source:      specSES},
	{Code: "type_narrowed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "A parameter's type narrowed",
		Explanation: "Values that were accepted before are refused.",
		Remedy:      "Update callers; then re-pin.",
		Source:      specSES},
	{Code: "type_changed", Family: FamilyStructural, Kind: Change, Severity: High,
		Title:       "A parameter's type changed",
		Explanation: "The old and new type sets do not contain each other.",
		Remedy:      "Review the new type and its callers.",
		Source:      specSES},
	{Code: "enum_widened", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "An enum gained members",
		Explanation: "The executor accepts values the planner has never seen offered (a new mode, a new target).",
		Remedy:      "Review what each new member does.",
		Source:      specSES},
	{Code: "enum_narrowed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "An enum lost members",
		Explanation: "Callers using the removed values now fail.",
		Remedy:      "Update callers; then re-pin.",
		Source:      specSES},
	{Code: "const_changed", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A constant changed",
		Explanation: "The one value the executor accepts (or returns) is now a different one.",
		Remedy:      "Review the new constant.",
		Source:      specSES},
	{Code: "additional_properties_loosened", Family: FamilyStructural, Kind: Change, Severity: High,
		Title:       "additionalProperties was loosened",
		Explanation: "The executor now accepts parameters nobody declared.",
		Remedy:      "Find out which undeclared parameters the tool now reads.",
		Source:      specSES},
	{Code: "additional_properties_tightened", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "additionalProperties was tightened",
		Explanation: "Calls with undeclared parameters now fail.",
		Remedy:      "Update callers.",
		Source:      specSES},
	{Code: "constraint_loosened", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A validation constraint was loosened",
		Explanation: "A bound, length, pattern, format or uniqueness rule allows more than before. A removed pattern or format is high: the value is no longer shaped at all.",
		Remedy:      "Check whether the loosened value reaches a path, a URL, a command or a query.",
		Source:      specSES},
	{Code: "constraint_tightened", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "A validation constraint was tightened",
		Explanation: "Values that were valid before are refused.",
		Remedy:      "Update callers.",
		Source:      specSES},
	{Code: "composition_widened", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A schema composition widened",
		Explanation: "A branch was added to anyOf/oneOf or a member removed from allOf: more shapes validate.",
		Remedy:      "Review the new branch.",
		Source:      specSES},
	{Code: "composition_narrowed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "A schema composition narrowed",
		Explanation: "A branch was removed from anyOf/oneOf or a member added to allOf.",
		Remedy:      "Update callers.",
		Source:      specSES},
	{Code: "external_ref_introduced", Family: FamilyStructural, Kind: Change, Severity: High,
		Title:       "A $ref to an external document appeared",
		Explanation: "A $ref or $dynamicRef that does not start with '#': the effective schema is whatever the referenced document says at load time, so a byte-identical manifest can hide an attacker-controlled schema. The highest-severity structural signal.",
		Remedy:      "Refuse the tool unless the referenced document is pinned by hash: read it, then mcpdrift lock pin-ref NAME URL.",
		FailClosed:  "an external $ref not pinned by hash",
		Source:      specSES},
	{Code: "external_ref_present", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A $ref to an external document is present",
		Explanation: "The baseline already referred to an external document; its content is outside the manifest and is not pinned by hash (in a lock, mcpdrift lock pin-ref pins it). Against a lock under fail-closed this denies the tool even when its digest did not change.",
		Remedy:      "Inline the definition, or pin the referenced document (mcpdrift lock pin-ref NAME URL).",
		FailClosed:  "an external $ref not pinned by hash",
		Source:      specSES},
	{Code: "external_ref_pinned", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "A $ref to an external document pinned by hash",
		Explanation: "A $ref or $dynamicRef that leaves the manifest names a document that the lock pins by its SHA-256 (mcpdrift lock pin-ref) and, when --verify-refs fetched it, still has that digest. The tool is judged like any other: this record alone is reviewable, never denied.",
		Remedy:      "None; run lock check --verify-refs to see that the document is still the one pinned.",
		Source:      specSES},
	{Code: "external_ref_document_changed", Family: FamilyStructural, Kind: Change, Severity: High,
		Title:       "The document an external $ref names changed",
		Explanation: "--verify-refs fetched the document of a pinned $ref and its SHA-256 is not the one the lock pins: the effective schema of a tool whose own bytes did not change is now something no one approved. The detail gives the URL and both digests.",
		Remedy:      "Read the new document; if it is acceptable, pin it again (mcpdrift lock pin-ref NAME URL).",
		FailClosed:  "the document of a pinned external $ref no longer has the pinned digest",
		Source:      specSES},
	{Code: "external_ref_unverified", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "The document of a pinned external $ref could not be verified",
		Explanation: "Verification was asked (--verify-refs) and the document of a pinned $ref could not be fetched (refused address, too large, too slow, a redirect off its host, not 200): what it says now is not known.",
		Remedy:      "Make the document reachable, or check without --verify-refs to judge against the pin alone.",
		FailClosed:  "a pinned external $ref whose document could not be verified when verification was asked",
		Source:      specSES},
	{Code: "keyword_unmodeled", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A keyword the diff does not model changed",
		Explanation: "A schema keyword or an annotation outside the model changed (a hint that is not a boolean, an annotation member beside the MCP hints). It is reported, never silently ignored. (A tool member outside the digest projection is tool_member_changed.)",
		Remedy:      "Read the change in the snapshot; report the keyword if mcpdrift should model it.",
		Source:      specSES},
	{Code: "schema_unresolved", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "Part of a schema could not be resolved",
		Explanation: "An internal $ref points to a missing target, refs form a cycle, or the work budget was spent; the diff continued elsewhere and says what it could not see.",
		Remedy:      "Fix the schema's references; review that part by hand.",
		Source:      specSES},
	{Code: "schema_annotation_changed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "An annotation that validation never reads changed inside a schema",
		Explanation: "$comment, examples, deprecated, readOnly or writeOnly changed, was added or removed somewhere in a schema. A validator accepts the same instances. Neutral. (A parameter's description or title is planner-facing text: description_changed or title_changed at its pointer; a default is schema_default_changed.)",
		Remedy:      "None needed; re-pin to record the new bytes.",
		NoReview:    "an annotation validation never reads",
		Source:      specSES},
	{Code: "schema_default_changed", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A default inside a schema changed",
		Explanation: "A parameter's default changed, was added or removed. A validator accepts the same instances, but an executor may apply the default when the argument is omitted, so what a call does may change. Neutral. For an output schema, low.",
		Remedy:      "Check what the tool does with the new default when the argument is omitted.",
		Source:      own},
	{Code: "schema_dialect_changed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "A schema's dialect changed, and it validates the same",
		Explanation: "$schema changed, was added or removed between draft-07, 2019-09 and 2020-12, and the schemas use no keyword the dialects read differently (items as an array, additionalItems, prefixItems, dependencies, dependentRequired, dependentSchemas, unevaluatedProperties, unevaluatedItems, minContains, maxContains, $recursiveRef, $recursiveAnchor, $dynamicRef, $dynamicAnchor, $anchor, an $id that is a plain-name fragment, a $ref beside validating keywords, a $ref into definitions or $defs): a validator accepts the same instances under either. Neutral. Where such a keyword is used, or a $schema names another dialect, the change is schema_unresolved instead: the schemas were not compared under each side's dialect. format and the content keywords are not counted: whether they assert is left to the implementation under both dialects.",
		Remedy:      "None needed; re-pin to record the new bytes.",
		NoReview:    "a dialect no keyword of the schemas reads differently",
		Source:      own},
	{Code: "schema_notation_changed", Family: FamilyStructural, Kind: Change, Severity: Low, NoReview: "the schema is spelled differently and accepts the same instances",
		Title:       "A schema is spelled differently but means the same",
		Explanation: "The old and new schema at this place have the same normal form: they accept exactly the same instances and carry the same annotations (empty properties or required written out, a type as a one-element array, a one-branch allOf, a $ref to an identical definition, default values written out, enum/required/type in another order, const for a one-element enum, ...). Neutral. A tool whose every change is notation needs no review: the diff allows it under every profile, for the reason \"notation only\"; its digests still changed, so the gate's digest finding stays.",
		Remedy:      "None needed; re-pin to record the new bytes.",
		Source:      own},
	{Code: "output_schema_added", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "The tool now declares an output schema",
		Explanation: "The tool added a contract for its structured output.",
		Remedy:      "None required; consumers can now validate output.",
		Source:      specSES},
	{Code: "output_schema_removed", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "The tool no longer declares an output schema",
		Explanation: "Callers can no longer validate what the tool returns: it may return anything.",
		Remedy:      "Ask why the contract was dropped.",
		Source:      specSES},
	{Code: "output_schema_changed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "The output schema changed",
		Explanation: "What the tool declares it returns changed in a way no finer kind describes. Every change under the output schema is named as output (\"output field\") and graded for the agent that reads the result: a widening is what it may now receive unannounced; a narrowing (the tool returns less) is harmless, and low. No output change is raised by the parameters the tool takes, and none is an escalation of its input.",
		Remedy:      "Check consumers of the tool's structured output.",
		Source:      specSES},
	{Code: "annotation_hint_weakened", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A behaviour hint was weakened",
		Explanation: "readOnlyHint true→false, destructiveHint false→true, idempotentHint true→false or openWorldHint false→true (MCP defaults stand for absent hints). Clients that auto-approve read-only tools will now treat this one differently. Read-only and destructive hints are high.",
		Remedy:      "Check whether the tool now writes or destroys; re-approve accordingly.",
		Source:      specSES},
	{Code: "annotation_hint_strengthened", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "A behaviour hint was strengthened",
		Explanation: "The server now claims the tool is safer. Hints are self-asserted, not authority.",
		Remedy:      "Do not relax controls on the strength of a hint alone.",
		Source:      specSES},
	{Code: "description_changed", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "The description changed",
		Explanation: "The description is the tool-poisoning surface. The change is shown as a compact word diff. A parameter's description inside the input schema is the same planner-facing text, reported with this kind at its own pointer (\"description of parameter ...\"); validation is the same, so it is never schema drift or an escalation.",
		Remedy:      "Read the new words for instructions aimed at the agent.",
		Source:      specSES},
	{Code: "title_changed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "The title changed",
		Explanation: "annotations.title, or a parameter's title inside a schema (planner-facing text, at its own pointer), changed. The tool's own title member is outside the digest projection: tool_member_changed.",
		Remedy:      "Check it still names what the tool does.",
		Source:      specSES},
	{Code: "schema_drift_stable_description", Family: FamilyStructural, Kind: Change, Severity: High,
		Title:       "The input schema changed under a stable description",
		Explanation: "The canonical signal of schema-shape escalation: the planner reasons over the old description while the executor validates against a new schema. Said only when a change of the input schema may change what a validator accepts (not for notation, a neutral dialect, annotations, a default or a parameter's text, which validate the same), and it carries their direction: widening when one widens, narrowing when every one narrows, neutral otherwise. Only one that is not narrowing is an escalation (MCP-DRIFT-ESCALATION); a narrowing breaks callers (MCP-DRIFT-SCHEMA).",
		Remedy:      "Review the schema change as if it were a new tool; fail-closed denies it.",
		FailClosed:  "the input schema drifted while the description stayed identical",
		Source:      specSES},
	{Code: "tool_member_changed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "A tool member outside the digest projection changed",
		Explanation: "A member of the tool object that the digests do not cover changed (execution, title, icons, _meta, a vendor member): reported as information, never silently ignored. It never decides: no approval covers it, so none is asked for it. The title gets a word diff.",
		Remedy:      "None needed.",
		NoReview:    "information: outside the digest projection, it never decides",
		Source:      own},
	{Code: "tool_rename_suspected", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A tool looks renamed",
		Explanation: "A removed and an added tool have the same description, schemas and annotations.",
		Remedy:      "Confirm the rename; clients keyed on the old name break.",
		Source:      specSES},
	{Code: "tool_added", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A tool was added",
		Explanation: "A tool that the old list did not have. Privileged names are high.",
		Remedy:      "Review it as a new capability.",
		Source:      specSES},
	{Code: "tool_removed", Family: FamilyStructural, Kind: Change, Severity: Low,
		Title:       "A tool was removed",
		Explanation: "A tool of the old list is gone (if the new list is incomplete, it may be on an unobserved page).",
		Remedy:      "Confirm the removal.",
		Source:      specSES},
	{Code: "tool_duplicate_name", Family: FamilyStructural, Kind: Change, Severity: High,
		Title:       "Two tools share a name",
		Explanation: "Which one a client calls is undefined; a duplicate can shadow a reviewed tool.",
		Remedy:      "Treat the server as suspect.",
		Source:      specSES},
	{Code: "tool_name_unsafe", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A new tool name is outside the safe set",
		Explanation: "A name the old list did not have uses characters outside A-Z a-z 0-9 _ - . (or is not 1 to 128 characters long) and can print like another name; the detail lists the code points. Privileged names (classified by their confusable fold) are high.",
		Remedy:      "Read the escaped name; ask for an ASCII name.",
		Source:      own},
	{Code: "tool_names_ambiguous", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "New tool names collide after normalization, case folding or the confusable fold",
		Explanation: "Different names of the new list, at least one of them new, are equal after NFC, case folding or the confusable fold (UTS #39): a look-alike can shadow a reviewed tool. Each name of the group is a record; the detail says which fold. High when any of them is privileged.",
		Remedy:      "Treat the new look-alike as suspect; names should differ in ASCII.",
		Source:      own},
	{Code: "number_beyond_precision_changed", Family: FamilyStructural, Kind: Change, Severity: Medium,
		Title:       "A number changed beyond float64 precision",
		Explanation: "A number at the same pointer of the old and new tool has a different value, but RFC 8785 rounds both to the same double (9007199254740993 and 9007199254740992 both canonicalize to 9007199254740992), so every digest, and every comparison of canonical forms, is blind to it: the gate and the policy map say nothing changed. Only the raw text shows it; the diff reads numbers exactly. Direction is neutral: the diff does not grade what the number means.",
		Remedy:      "Compare the old and new values in the snapshots. If the number is a bound (maximum, an id range), decide whether the new value is acceptable; prefer bounds float64 can represent (at most 2^53 for integers) so the digests can pin them.",
		Source:      own},

	// The server half of the identity tuple.
	{Code: "server_endpoint_rebound", Family: FamilyIdentity, Kind: Change, Severity: High,
		Title:       "The server endpoint changed under a stable name",
		Explanation: "Name-stable, endpoint-mutable is the registry equivalent of DNS rebinding: the tools now come from somewhere else.",
		Remedy:      "Treat every tool as new and unvetted; re-consent.",
		FailClosed:  "the endpoint changed under a stable name: a new, unvetted tool source",
		Source:      specSES},
	{Code: "server_install_moved", Family: FamilyIdentity, Kind: Change, Severity: Medium,
		Title:       "The stdio server's install moved (same package, same binary, same arguments)",
		Explanation: "The stdio endpoint changed only in where the same binary of the same package is installed (an upgrade into a new directory, another npx cache path, a launcher's spec in another version); the arguments are the same. The package is named from the path as recorded, never by reading the server's files: the innermost node_modules/<name> or node_modules/@scope/<name> for npm (a node_modules/.bin link by the file it resolved to when mcpdrift started the server, resolved_endpoint), the distribution for a Python environment (site-packages/<name>, pipx's and uv's tool environments); any other path names no package, and its move is a rebinding. Under the review profile it is information: the version change is logged, and each tool is judged by its digest. Under fail-closed the endpoint is part of the identity tuple.",
		Remedy:      "Check that the new path is the package you installed (its version and integrity); under fail-closed, re-pin.",
		FailClosed:  "the endpoint is part of the identity tuple: the stdio server now runs from another path",
		ReviewInfo:  "the same package's binary at another path, with the same arguments: the version change is logged, and each tool is judged by its digest",
		Source:      own},
	{Code: "server_env_changed", Family: FamilyIdentity, Kind: Change, Severity: Medium,
		Title:       "The stdio server's environment changed",
		Explanation: "The environment given to the stdio server changed: a variable was added or removed, or the digest of its value changed. Environment variables can switch tools on and off, so they are part of the identity. Only names and value digests are recorded, never values.",
		Remedy:      "Check that the change was intended (a rotated token changes its digest too), then re-pin.",
		Source:      own},
	{Code: "publisher_key_changed", Family: FamilyIdentity, Kind: Change, Severity: High,
		Title:       "The publisher key changed",
		Explanation: "The key that vouches for the server changed under a stable name.",
		Remedy:      "Verify the new key out of band before trusting the server.",
		FailClosed:  "the publisher key changed under a stable name: a new, unvetted tool source",
		Source:      specSES},
	{Code: "server_name_changed", Family: FamilyIdentity, Kind: Change, Severity: Medium,
		Title:       "The server's reported name changed",
		Explanation: "The server reports a different name than at pinning time. Under the review profile it is information (each tool is judged by its digest); under fail-closed it is part of the identity tuple.",
		Remedy:      "Confirm it is the same server.",
		FailClosed:  "the server's reported name is part of the identity tuple",
		ReviewInfo:  "each tool is judged by its digest",
		Source:      specSES},
	{Code: "server_version_changed", Family: FamilyIdentity, Kind: Change, Severity: Low,
		Title:       "The server's reported version changed",
		Explanation: "An upgrade, usually; digest and structural findings say whether the tools changed. Under the review profile it is information; under fail-closed it is part of the identity tuple.",
		Remedy:      "Review the release notes beside the tool changes.",
		FailClosed:  "the server's reported version is part of the identity tuple",
		ReviewInfo:  "each tool is judged by its digest",
		Source:      specSES},

	// Live drift (mcpdrift drift): the declared manifest against a running server, the server against the specification, and the authentication posture.
	{Code: "MCP-DRIFT-TOOL-MISSING", Family: FamilyLiveDrift, Kind: Finding, Severity: High,
		Title:       "A declared tool is not served",
		Explanation: "The declared manifest lists a tool the running server does not serve, on a complete tools/list. An agent generated from this manifest will call it and fail.",
		Remedy:      "Find out whether the tool was removed or renamed; update the manifest or the server.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-TOOL-UNDECLARED", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium,
		Title:       "A served tool is not declared",
		Explanation: "The server serves a tool the declared manifest does not list. Agents discover it and may call a capability nobody agreed to support.",
		Remedy:      "Review the tool; declare it or remove it from the server.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-SCHEMA", Family: FamilyLiveDrift, Kind: Finding, Severity: High,
		Title:       "The served schema breaks the declared one",
		Explanation: "The served input schema differs from the declared one in a way the structural diff grades narrowing: callers generated from the manifest can fail. The finding carries the change records. (A narrowing of the output schema is harmless: MCP-DRIFT-SCHEMA-COMPATIBLE.)",
		Remedy:      "Regenerate the manifest or fix the server; review each change record.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-SCHEMA-COMPATIBLE", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium,
		Title:       "The served schema differs without breaking callers",
		Explanation: "The served schema differs from the declared one, but no change narrows what callers may send. WARN when the served schema accepts more (widening), or when a change cannot be graded as only wider or only narrower (review each change); INFO otherwise (\"validates the same\" when every change is notation, a neutral dialect, an annotation or a default). A change that is both at once (a type or const that changed) breaks callers: MCP-DRIFT-SCHEMA. The output schema is graded on its own, for the agent that reads the result: WARN when the tool may now return what the declared schema did not allow, INFO when it returns less (harmless).",
		Remedy:      "Widening is how capability grows silently: review it; update the manifest if intended.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-ANNOTATION", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium,
		Title:       "A declared hint disagrees with the served one",
		Explanation: "readOnlyHint, destructiveHint, idempotentHint or openWorldHint differs (MCP defaults stand for absent hints). An agent that planned around the declared value planned wrong. Hints are untrusted either way.",
		Remedy:      "Check what the tool really does; update the manifest.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-ESCALATION", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium, PrivilegedSeverity: High,
		Title:       "A served tool escalates",
		Explanation: "The structural diff of a served tool's input against the declared one carries an escalation signal: a widening (a new optional parameter, a widened type, enum or constraint, a dropped requirement: the executor now accepts a value it did not accept before), a new external $ref, identity churn, or schema drift under a stable description that is not a narrowing (one that neither only widens nor only narrows says the executor may now accept what the planner never saw). A narrowing is a breaking change for callers (MCP-DRIFT-SCHEMA), never an escalation; a parameter's description or title is text (MCP-DRIFT-DESCRIPTION); a change that validates the same, and any change of the output schema, never escalate. ERROR on a privileged tool, WARN otherwise, under every profile.",
		Remedy:      "Review the change as an escalation; re-pin only with explicit consent.",
		Source:      specSES},
	{Code: "MCP-DRIFT-DESCRIPTION", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium,
		Title:       "The served description differs from the declared one",
		Explanation: "The agent reads the served description, not the declared one; a rewritten description is the tool-poisoning surface. A parameter's description or title in the input schema is the same planner-facing text and is reported here, named (\"the description of parameter ...\"). (Not in the apiverity rule set: mcpdrift adds it.)",
		Remedy:      "Read the served text for instructions aimed at the agent.",
		Source:      own},
	{Code: "MCP-DRIFT-PROTOCOL-UNSUPPORTED", Family: FamilyLiveDrift, Kind: Finding, Severity: High,
		Title:       "The server refused the protocol revision",
		Explanation: "server/discover was answered with -32022. The run stopped before any tool comparison: without a tool list, every declared tool would otherwise read as missing.",
		Remedy:      "Check which revisions the server supports (the finding lists them).",
		Source:      specAPV},
	{Code: "MCP-DRIFT-IDENTITY", Family: FamilyLiveDrift, Kind: Finding, Severity: High,
		Title:       "The server is not the one the baseline pinned",
		Explanation: "The identity the run established (the endpoint and what it resolved to, the server's reported name and version) is not the one the snapshot beside the baseline pinned, in a way the decision profile does not take as information: an endpoint rebound, or under fail-closed any change of the tuple, a moved install included. It is the gateway's rule (decide.CheckIdentity, the decision diff, lock check and the gateway make): the gateway would withhold every tool of this server. The message names the component and both values. A change the profile takes as information (under review, the same package's binary at another path, a new reported version) is a note.",
		Remedy:      "Check that the server is the one you meant to run (its package, version and integrity), then re-pin it.",
		Source:      own},
	{Code: "MCP-DRIFT-NOT-OBSERVED", Family: FamilyLiveDrift, Kind: Inconclusive,
		Title:       "The server could not be observed",
		Explanation: "The server could not be reached, or did not answer tools/list usably (invalid JSON, a wrong response id, an oversized or endless response, a redirect to another origin), so nothing was compared: absence of evidence is not \"no drift\". drift exits 3 and still writes its report, saying why.",
		Remedy:      "Check the target and the network path, and run again.",
		Source:      own},
	{Code: "MCP-DRIFT-LEGACY-SERVER", Family: FamilyLiveDrift, Kind: Note,
		Title:       "A legacy (initialize-era) server",
		Explanation: "The server has no server/discover. It was compared anyway, because tools/list has the same shape in both eras; the protocol revision is not claimed.",
		Remedy:      "None; upgrade the server to the 2026-07-28 revision when possible.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-PAGINATION-CAPPED", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium,
		Title:       "The page cap was reached",
		Explanation: "--max-list-pages bounded how far nextCursor was followed and the cap was hit. No missing-tool finding is made: a tool on the next page is not a removed tool.",
		Remedy:      "Raise --max-list-pages, or find out why the server has so many pages.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-CALL-OUTPUT-SCHEMA", Family: FamilyLiveDrift, Kind: Finding, Severity: High,
		Title:       "A tool's output does not match its declared outputSchema",
		Explanation: "With --invoke-tool and --execute, the structuredContent a tool returned does not validate against the declared outputSchema. The finding carries the JSON pointer, the declared constraint and the observed JSON type, never the value: a tool result is arbitrary production data.",
		Remedy:      "Fix the server or the declared schema; consumers that trust the schema will mis-handle this output.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-CALL-NO-STRUCTURED-CONTENT", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium,
		Title:       "A tool declares an outputSchema and returned no structuredContent",
		Explanation: "The tool declares structured output but the call returned none (and did not report an error).",
		Remedy:      "Return structuredContent, or stop declaring an outputSchema.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-CALL-NO-ANSWER", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium,
		Title:       "A tool call got no answer",
		Explanation: "With --invoke-tool and --execute, a tools/call got no usable response: its event stream ended (or was lost) before the response and could not be resumed (2025-03-26 to 2025-11-25: a GET with Last-Event-ID after the server's retry, within bounds; 2026-07-28 has no resumption), or the request timed out, or the answer was not a result (malformed, another id). The run cannot say the tool behaves, so it is not clean. The finding says which, never what the tool returned.",
		Remedy:      "Make the server answer every call, ending the stream only with or after the response; a server that closes it early (SEP-1699 polling) must put an id and a retry on an event before and serve the GET that resumes from it.",
		Source:      specAPV},
	{Code: "MCP-DRIFT-CALL-ERROR-SHAPE", Family: FamilyLiveDrift, Kind: Finding, Severity: Medium,
		Title:       "A tool failure arrived as a JSON-RPC error",
		Explanation: "The call failed with a JSON-RPC error other than a protocol error (bad arguments, unknown tool); a tool failure should be a successful result with isError: true, which the model can read and recover from.",
		Remedy:      "Return tool failures as results with isError: true.",
		Source:      specAPV},
	{Code: "MCP-CONF-LIST-CACHE-FIELDS", Family: FamilyConformance, Kind: Finding, Severity: Medium,
		Title:       "tools/list lacks ttlMs or cacheScope",
		Explanation: "A 2026-07-28 list result must carry ttlMs and cacheScope.",
		Remedy:      "Fix the server's list result.",
		Source:      specAPV},
	{Code: "MCP-CONF-TOOL-SHAPE", Family: FamilyConformance, Kind: Finding, Severity: High,
		Title:       "A served tool lacks an object-typed inputSchema",
		Explanation: "Every tool must have a name and an inputSchema whose type is \"object\".",
		Remedy:      "Fix the server's tool definition.",
		Source:      specAPV},
	{Code: "MCP-CONF-PARAM-HEADER", Family: FamilyConformance, Kind: Finding, Severity: High,
		Title:       "A served tool's x-mcp-header annotation is invalid",
		Explanation: "On the 2026-07-28 Streamable HTTP transport an inputSchema property may carry x-mcp-header, which mirrors its argument into an Mcp-Param-* header. The annotation must sit on a property reached from the root through properties only, name a non-empty HTTP header token unique in any case, and annotate a string, integer or boolean property (not number). Clients of that transport MUST exclude a tool that breaks this from tools/list: an agent behind a conforming client never sees the tool a reviewer approved, and the gateway does not serve it. Reported for a 2026-07-28 listing over HTTP only; legacy revisions and stdio have no such headers.",
		Remedy:      "Fix or remove the annotation the finding names (its JSON pointer and why).",
		Source:      own},
	{Code: "MCP-CONF-TOOLSET-VARIES", Family: FamilyConformance, Kind: Finding, Severity: High,
		Title:       "The tool set varies per connection",
		Explanation: "A second connection was served a different tool set. The specification says list results MUST NOT vary per connection; a server that shows a reviewer one list and an agent another is the rug pull.",
		Remedy:      "Treat the server as suspect until it serves one list.",
		Source:      specAPV},
	{Code: "MCP-CONF-TOOLSET-VARIES-BY-CLIENT", Family: FamilyConformance, Kind: Finding, Severity: High,
		Title:       "The tool set varies by client identity",
		Explanation: "With --cloak-check the list was fetched again presenting another well-known client (clientInfo and User-Agent), and the server served a different tool set or different definitions. A server can show the reviewer's tool the approved list and an agent another one.",
		Remedy:      "Treat the server as suspect. Observe it as the client your agents use (--client-info, --user-agent) and pin that list.",
		Source:      own},
	{Code: "MCP-CONF-ORDER-VARIES", Family: FamilyConformance, Kind: Finding, Severity: Low,
		Title:       "The tool order varies per connection",
		Explanation: "The same tools came back in another order on a second connection. Deterministic ordering is a SHOULD.",
		Remedy:      "None required; stable order helps caching and review.",
		Source:      specAPV},
	{Code: "MCP-CONF-CURSOR-CYCLE", Family: FamilyConformance, Kind: Finding, Severity: High,
		Title:       "The server's cursors cycle",
		Explanation: "A nextCursor repeated, so following the cursors never ends; the list is partial.",
		Remedy:      "Fix the server's pagination.",
		Source:      own},
	{Code: "MCP-CONF-DUPLICATE-TOOL-NAME", Family: FamilyConformance, Kind: Finding, Severity: High,
		Title:       "Two served tools share a name",
		Explanation: "Which one a client calls is undefined; a duplicate can shadow a reviewed tool.",
		Remedy:      "Treat the server as suspect.",
		Source:      own},
	{Code: "MCP-CONF-TOOL-NAME-UNSAFE", Family: FamilyConformance, Kind: Finding, Severity: Medium,
		Title:       "A served tool name is outside the safe set",
		Explanation: "The specification says a tool name should be 1 to 128 characters from A-Z a-z 0-9 _ - . only. This one is not; letters of other scripts, invisible characters and compatibility forms make a name print like another. The message lists the code points; reports show the name escaped.",
		Remedy:      "Rename the tool with ASCII characters only.",
		Source:      own},
	{Code: "MCP-CONF-TOOL-NAMES-AMBIGUOUS", Family: FamilyConformance, Kind: Finding, Severity: High,
		Title:       "Served tool names collide after normalization, case folding or the confusable fold",
		Explanation: "Different served names are equal after NFC, case folding or the confusable fold (UTS #39): a person cannot tell them apart and a client that folds names may call the wrong one. Every name of the group is reported; the message says which fold.",
		Remedy:      "Treat the server as suspect; names should differ in ASCII.",
		Source:      own},
	{Code: "MCP-AUTH-ANONYMOUS-LIST", Family: FamilyAuth, Kind: Finding, Severity: Medium,
		Title:       "The tool inventory is served without credentials",
		Explanation: "The tool list came back to a request carrying no credential. Graded by target: INFO for a local host, WARN for dev, staging and unknown, ERROR for production. The finding names the classification it applied.",
		Remedy:      "Require authentication on anything that is not a local development server.",
		Source:      specAPV},
	{Code: "MCP-AUTH-ENFORCED", Family: FamilyAuth, Kind: Note,
		Title:       "Anonymous access is refused",
		Explanation: "A request without credentials was refused (401/403). Recorded as evidence, not as a problem.",
		Remedy:      "None.",
		Source:      specAPV},
	{Code: "MCP-AUTH-NO-CHALLENGE", Family: FamilyAuth, Kind: Finding, Severity: Medium,
		Title:       "401/403 without WWW-Authenticate",
		Explanation: "A refusal with no WWW-Authenticate leaves a client no way to discover where to obtain a credential.",
		Remedy:      "Send a WWW-Authenticate challenge (with resource metadata) on 401.",
		Source:      specAPV},
	{Code: "MCP-AUTH-INDETERMINATE", Family: FamilyAuth, Kind: Finding, Severity: Medium,
		Title:       "The unauthenticated probe did not complete",
		Explanation: "The credential-stripped tools/list failed without an answer that says anything about enforcement. A failed connection is not evidence of enforcement.",
		Remedy:      "Re-run; check the network path.",
		Source:      specAPV},
	{Code: "MCP-AUTH-CREDENTIAL-REFLECTED", Family: FamilyAuth, Kind: Finding, Severity: High,
		Title:       "The server reflects a credential into its tool list",
		Explanation: "A tool definition (or the server's reported identity) carries a secret this run sent (a header value, a URL credential or query value, or an env value given to a stdio child), whole or cut right before an ellipsis (at least 6 bytes of it past an auth scheme), as sent, JSON-escaped or percent-encoded. Agents read tool lists, and tool lists get logged, cached and pinned, so the credential leaks to everything downstream. mcpdrift redacts it from every output and refuses to pin such a list.",
		Remedy:      "Treat the server as hostile or broken: rotate the credential, and fix the server so it never echoes request headers or parameters into tool definitions.",
		Source:      own},
	{Code: "MCP-AUTH-PLAINTEXT-TRANSPORT", Family: FamilyAuth, Kind: Finding, Severity: High,
		Title:       "Plain HTTP to a non-local target",
		Explanation: "Credentials and tool definitions travel unencrypted to a host that does not classify as local.",
		Remedy:      "Use HTTPS.",
		Source:      specAPV},

	// Gateway decisions (mcpdrift proxy): the decision log's reasons and
	// the data.reason of the gateway's own JSON-RPC errors.
	{Code: "tool_unchanged", Family: FamilyGateway, Kind: Decision, Title: "Served: the tool is unchanged",
		Explanation: "The served tool's digest is the pinned one: the gateway serves it, byte for byte as the upstream sent it.", Remedy: "None.", Source: own},
	{Code: "tool_changed_notation_only", Family: FamilyGateway, Kind: Decision, Title: "Served: the tool changed in notation only",
		Explanation: "The tool's bytes changed, but every change is notation (schemas that accept the same instances): the decision is allow, and the gateway serves it.", Remedy: "Re-pin when convenient, so the baseline holds the new spelling.", Source: own},
	{Code: "tool_changed_validates_same", Family: FamilyGateway, Kind: Decision, Title: "Served: the tool changed, but validates the same",
		Explanation: "The tool's bytes changed, but no change needs review: a dialect that no keyword of its schemas reads differently, annotations validation never reads, members outside the digest projection, notation. The decision is allow under every profile, and the gateway serves it.", Remedy: "Re-pin when convenient, so the baseline holds the new bytes.", Source: own},
	{Code: "tool_changed_needs_review", Family: FamilyGateway, Kind: Decision, Title: "Hidden: the tool changed",
		Explanation: "The served tool differs from the pinned one in a way that needs review: the gateway hides it and refuses calls to it until the change is approved (re-pinned).", Remedy: "Review the change (mcpdrift diff or drift), then re-pin.", Source: own},
	{Code: "tool_change_denied", Family: FamilyGateway, Kind: Decision, Title: "Hidden: the profile denies the tool's change",
		Explanation: "The decision profile denies the change (for example schema drift under a stable description under fail-closed): the tool is hidden and its calls refused.", Remedy: "Treat the change as an escalation; approve it only with explicit re-consent.", Source: own},
	{Code: "tool_not_in_baseline", Family: FamilyGateway, Kind: Decision, Title: "Hidden: the tool is not in the baseline",
		Explanation: "The upstream serves a tool the baseline does not hold: nobody approved it, so the gateway hides it.", Remedy: "Review the new tool, then pin it if it is wanted.", Source: own},
	{Code: "tool_no_longer_served", Family: FamilyGateway, Kind: Decision, Title: "Removed: a pinned tool is no longer served",
		Explanation: "The baseline holds a tool the upstream no longer serves: the gateway never advertises it, and drift reports its decision.", Remedy: "Re-pin if the removal was intended.", Source: own},
	{Code: "tool_param_header_invalid", Family: FamilyGateway, Kind: Decision, Title: "Hidden: the tool's x-mcp-header annotation is invalid",
		Explanation: "On the 2026-07-28 Streamable HTTP transport a client MUST exclude from tools/list a tool whose x-mcp-header annotations break the transport's rules (MCP-CONF-PARAM-HEADER says which and where). The gateway is such a client of its upstream: the tool is not served, whatever its approval, its calls are refused (call_hidden_tool), and a note in the decision log says why.", Remedy: "Fix the annotation on the server; drift reports it as MCP-CONF-PARAM-HEADER.", Source: own},
	{Code: "tool_ambiguous", Family: FamilyGateway, Kind: Decision, Title: "Hidden: clients would read the tool otherwise than the gateway",
		Explanation: "The served tool object holds two members that a case-insensitive decoder takes for one, a case variant of a member clients read (\"Description\" beside or instead of \"description\"), or a member named \"__proto__\". Such members are outside the digested projection, so the approved digest says nothing of them, yet Go's encoding/json (the mcp-go client among others) reads the last case-insensitive match, and a JavaScript client's copy turns \"__proto__\" into a prototype. The gateway forwards tools byte for byte, so it does not serve this one; a note in the decision log says which member.", Remedy: "Fix the server: each member once, as the specification spells it.", Source: own},
	{Code: "tool_names_collide", Family: FamilyGateway, Kind: Decision, Title: "Hidden: the name collides with another served name",
		Explanation: "The tool's name is equal to another served tool's after NFC, case folding or the confusable fold (the one name check, package toolname), and the operator did not acknowledge it (a suppression of mcp_tool_names_ambiguous for this name, unexpired, in the suppression file the gateway read): a client that folds names may call the wrong one, so the gateway does not serve it, whatever its approval. A note in the decision log gives the fold.", Remedy: "Ask the server's owner to make the names differ in ASCII, or acknowledge each name in the suppression file with a reason and an expiry.", Source: own},
	{Code: "server_list_incomplete", Family: FamilyGateway, Kind: Decision, Title: "Withheld: the upstream could not be listed completely",
		Explanation: "The gateway's own listing of the upstream failed or was cut short (a page cap, a cursor cycle, a byte or tool bound, the deadline, an unreadable entry): fail closed, nothing is served and every call is refused (unless --serve-stale).", Remedy: "Fix the upstream's pagination or raise the bound.", Source: own},
	{Code: "server_identity_mismatch", Family: FamilyGateway, Kind: Decision, Title: "Withheld: the identity tuple does not match",
		Explanation: "The upstream's endpoint or publisher key (under fail-closed also its name or version) is not the pinned one: the tools come from somewhere else, so nothing is served.", Remedy: "Check where the gateway points; re-pin if the move was intended.", Source: specSES},
	{Code: "server_baseline_invalid", Family: FamilyGateway, Kind: Decision, Title: "Withheld: the baseline or the served list is not usable",
		Explanation: "The baseline fails the validity check gate makes (a tool named twice, a manifest_digest that does not recompute from its entries, definitions that are not its entries: declared_mcp_manifest_ambiguous, declared_manifest_digest_mismatch, declared_definitions_mismatch), it could not be read again on reload, or the upstream's list names a tool twice: which tools are approved, or which one a client would call, is undefined, so nothing is served and every call is refused. The detail says which.", Remedy: "Fix the baseline (pin again) or the server; the gateway serves again at the next valid reload.", Source: own},
	{Code: "call_unknown_tool", Family: FamilyGateway, Kind: Decision, Title: "Refused: no served tool has that name",
		Explanation: "A tools/call named a tool the gateway does not serve. Names match exactly: one that differs by case or Unicode normalization is unknown. Answered -32602, never forwarded.", Remedy: "None: the agent called what it was not offered.", Source: own},
	{Code: "call_hidden_tool", Family: FamilyGateway, Kind: Decision, Title: "Refused: the tool is hidden",
		Explanation: "A tools/call named a tool the upstream serves but the gateway hides (added, changed or denied). Answered -32602, never forwarded.", Remedy: "Review and approve the tool's current version if it is wanted.", Source: own},
	{Code: "call_server_withheld", Family: FamilyGateway, Kind: Decision, Title: "Refused: the server is withheld",
		Explanation: "The whole server is withheld (incomplete list, identity mismatch, invalid baseline): every call is refused.", Remedy: "See the withholding reason in the decision log.", Source: own},
	{Code: "call_approval_in_doubt", Family: FamilyGateway, Kind: Decision, Title: "Refused: the tool list is being re-observed",
		Explanation: "The upstream announced that its tool list changed; until the new list is gated, approval is in doubt and calls are refused.", Remedy: "Retry after the re-observation.", Source: own},
	{Code: "call_arguments_invalid", Family: FamilyGateway, Kind: Decision, Title: "Refused: the arguments break the approved inputSchema",
		Explanation: "The arguments are checked against the pinned inputSchema, not the one the server serves now, so a widened schema cannot be used before it is gated. The error names the JSON pointer and the constraint, never the value.", Remedy: "None: the call does not match what was approved.", Source: specSES},
	{Code: "call_argument_undeclared", Family: FamilyGateway, Kind: Decision, Title: "Refused: an argument the approved schema does not declare",
		Explanation: "Strict arguments (the default under fail-closed) refuse properties the pinned inputSchema does not declare where they stand, at any depth (inside values matched by patternProperties or additionalProperties, array items and tuples too); a member deeper than 64 levels is refused.", Remedy: "None; or, if open schemas are intended, run without --strict-arguments (under fail-closed, where it is the default, with --no-strict-arguments).", Source: own},
	{Code: "call_schema_unusable", Family: FamilyGateway, Kind: Decision, Title: "Refused: the pinned inputSchema cannot check arguments",
		Explanation: "The pinned tool has no usable inputSchema (absent, not an object, or not compilable without loading anything): arguments cannot be checked, so the call is refused.", Remedy: "Fix the server's schema and re-pin.", Source: own},
	{Code: "call_argument_ambiguous", Family: FamilyGateway, Kind: Decision, Title: "Refused: an argument named like a declared property in another case",
		Explanation: "An argument's name is not a property the pinned inputSchema declares at its place, but differs from one there only in case (a top-level \"PATH\" beside a declared \"path\", even if a nested object declares a \"PATH\" of its own; or the Kelvin sign for \"k\"). A server that decodes arguments into a struct with Go's encoding/json, or with another decoder that ignores case, reads it as the declared property, although the schema check passed on something else. Where the schema that applies cannot be read (an anchor or external $ref, deeper than 64 levels), a name that another declared name matches in another case is refused. Answered -32602 with the pointer, never forwarded.", Remedy: "None: send the property by its declared name.", Source: own},
	{Code: "message_ambiguous", Family: FamilyGateway, Kind: Decision, Title: "Refused: decoders read the message differently",
		Explanation: "The message holds two member names that a case-insensitive decoder takes for one (anywhere in it), a case variant of a member the specification names in the envelope, params or _meta (\"Method\", \"Name\", \"PARAMS\"), or a method outside printable ASCII or in another case than the specification's. The gateway decides on exact names, but Go's encoding/json and every SDK built on it, System.Text.Json and Jackson's case-insensitive mode match member names without regard to case (the last match wins), so the server would act on something else than what was decided. Refused whole (-32600, or -32602 inside params), never forwarded.", Remedy: "None: the sender must name each member once, as the specification spells it.", Source: own},
	{Code: "notification_undefined", Family: FamilyGateway, Kind: Decision, Title: "Dropped: not a notification defined in this direction",
		Explanation: "A message without an id whose method is not a notification the specification lets its sender send (a request's method, such as tools/call, sent without an id; or an unknown method). A server that dispatches on the method alone would run it, and nothing could answer it: it is never forwarded, and is logged. An HTTP downstream gets 400 with an error whose id is null.", Remedy: "None: a request needs an id.", Source: own},
	{Code: "response_unsolicited", Family: FamilyGateway, Kind: Decision, Title: "Dropped: a server's response outside the exchange it answers",
		Explanation: "The upstream sent a response on a stream of its own (the legacy GET stream, a stdio server's output) rather than in the exchange of the request it answers. Forwarded, the downstream would take it for the answer to its own pending request with that id: a tool list that never went through the decision, say. Every answer the downstream gets comes from its request's own exchange; this one is dropped and logged.", Remedy: "None: a conforming server answers each request in its own exchange.", Source: own},
	{Code: "observe_mode", Family: FamilyGateway, Kind: Decision, Title: "Refused: observe mode forwards only the listing methods",
		Explanation: "In observe mode the gateway forwards initialize, notifications/initialized, server/discover, ping, tools/list, list_changed and subscriptions/listen; anything else is answered -32601 and never reaches the server.", Remedy: "Use audit or enforce mode to pass other traffic.", Source: own},
	{Code: "invalid_cursor", Family: FamilyGateway, Kind: Decision, Title: "Refused: a cursor the gateway never issued",
		Explanation: "In enforce mode the gateway serves the whole gated list in one page, so any cursor is invalid.", Remedy: "None.", Source: own},
	{Code: "upstream_error", Family: FamilyGateway, Kind: Decision, Title: "The upstream did not answer",
		Explanation: "The upstream could not be reached, timed out, or answered with something that is not a JSON-RPC response.", Remedy: "Check the upstream.", Source: own},
	{Code: "upstream_unattributable", Family: FamilyGateway, Kind: Decision, Title: "The upstream sent an answer the gateway cannot attribute",
		Explanation: "A stdio upstream sent a line longer than the gateway accepts whose id could not be read from its ends, or a response whose id is no request's in flight (nor one the gateway gave up on): it answers one of the requests in flight, but which cannot be known, and handing it to any could give one caller another's result. Every request then in flight on that link is answered -32603 with this reason at once, rather than waiting out its deadline; late answers to them are dropped.", Remedy: "Fix the server (its answers must carry the request's id, within the size bound), or raise the bound; retry the call.", Source: own},
	{Code: "upstream_refused", Family: FamilyGateway, Kind: Decision, Title: "The upstream refused the request",
		Explanation: "The upstream answered 401 or 403; an HTTP downstream gets the status and WWW-Authenticate as they came.", Remedy: "Give the downstream (or the gateway's --header) a valid credential.", Source: own},
	{Code: "session_failed", Family: FamilyGateway, Kind: Decision, Title: "The session was ended after a fault in the gateway",
		Explanation: "Work the gateway did for one session panicked (a downstream writer that failed, a bug reached by an upstream's bytes): that session alone is ended, failing closed. Its upstream link is closed, its requests still in flight are answered -32603 with this reason, a legacy HTTP session's later requests get 404 (initialize again), a stdio downstream's gateway exits with an error, and the decision log records where it happened. Other sessions and the process go on.", Remedy: "Start a new session; report the decision log's note, which says where the fault was.", Source: own},
	{Code: "serve_stale", Family: FamilyGateway, Kind: Decision, Title: "Served stale: the upstream could not be listed",
		Explanation: "With --serve-stale, when the upstream cannot be listed completely, the last gated list keeps being served (once, then it is withheld).", Remedy: "Fix the upstream; prefer failing closed.", Source: own},
	{Code: "no_complete_list_observed", Family: FamilyGateway, Kind: Decision, Title: "Audit: no complete list was observed yet",
		Explanation: "In audit mode a call arrived before the downstream had fetched a complete list, so what enforce would decide cannot be said.", Remedy: "None.", Source: own},
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
	for i, x := range []string{FamilyCoarse, FamilyPerTool, FamilyNames, FamilyField, FamilyAttribution, FamilyCoverage, FamilyValidity, FamilyStructural, FamilyIdentity, FamilyLiveDrift, FamilySurface, FamilyConformance, FamilyAuth, FamilyGateway} {
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
	b.WriteString("Kinds: **finding** needs review (exit 1); **inconclusive** means the evidence cannot support a verdict (exit 3); **warning** weakens a clean result without failing it; **note** qualifies a finding; **change** is a structural change record of `mcpdrift diff` (beside gate findings it explains them and never changes a verdict).\n")
	b.WriteString("Severities are review priorities, not maliciousness. Profiles can change them (see `mcpdrift gate --profile`).\n\n")
	b.WriteString("**The one table of severities and decisions.** Severity is the default (privileged in brackets; `strict:` under `gate --profile strict`). Decision is what the decision profiles of `diff`, `drift` and `proxy` decide on a change of that kind: `review` under the review profile, and `deny` where the fail-closed profile denies it; `allow / allow` for the kinds that need no review: a tool whose every change is such is allowed under both.\n\n")
	b.WriteString("| code | family | kind | severity (privileged) | decision: review / fail-closed |\n|---|---|---|---|---|\n")
	all := All()
	for _, e := range all {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s | %s |\n", e.Code, Anchor(e.Code), e.Family, e.Kind, sevCell(e), decisionCell(e))
	}
	for _, e := range all {
		fmt.Fprintf(&b, "\n## %s\n\n", e.Code)
		fmt.Fprintf(&b, "**%s.** Family: %s. Kind: %s. Severity: %s. Decision: %s. Specified in: %s.\n\n", e.Title, e.Family, e.Kind, sevCell(e), decisionCell(e), e.Source)
		if e.FailClosed != "" {
			fmt.Fprintf(&b, "Denied under fail-closed: %s.\n\n", e.FailClosed)
		}
		if e.NoReview != "" {
			fmt.Fprintf(&b, "Allowed under every profile: %s.\n\n", e.NoReview)
		}
		if r, ok := OWASPMCP(e.Code); ok {
			fmt.Fprintf(&b, "OWASP MCP Top 10: %s %s.\n\n", r.ID, r.Name)
		}
		fmt.Fprintf(&b, "%s\n\n", e.Explanation)
		fmt.Fprintf(&b, "What to do: %s\n", e.Remedy)
	}
	return b.Bytes()
}

// Anchor is the fragment GitHub gives the code's section on the reference
// page (headings are lower-cased; dots are dropped).
func Anchor(code string) string { return strings.ToLower(strings.ReplaceAll(code, ".", "")) }

func sevCell(e Entry) string {
	if e.Kind != Finding && e.Kind != Change {
		return "n/a"
	}
	out := string(e.Severity)
	if e.PrivilegedSeverity != "" && e.PrivilegedSeverity != e.Severity {
		out = fmt.Sprintf("%s (%s)", e.Severity, e.PrivilegedSeverity)
	}
	if e.StrictSeverity != "" {
		out += ", strict: " + string(e.StrictSeverity)
	}
	return out
}

// decisionCell is what the decision profiles decide on a change of e's
// kind: review / fail-closed.
func decisionCell(e Entry) string {
	switch {
	case e.Kind != Change && e.FailClosed == "":
		return "n/a"
	case e.NoReview != "":
		return "allow / allow"
	case e.ReviewInfo != "" && e.FailClosed != "":
		return "information / deny"
	case e.ReviewInfo != "":
		return "information / review"
	case e.FailClosed != "":
		return "review / deny"
	}
	return "review / review"
}

// NoReviewKinds returns the change codes that need no review, with why
// (the one place they are written down).
func NoReviewKinds() map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.NoReview != "" {
			out[e.Code] = e.NoReview
		}
	}
	return out
}

// ReviewInfoKinds returns the codes the review profile takes as
// information, with why.
func ReviewInfoKinds() map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.ReviewInfo != "" {
			out[e.Code] = e.ReviewInfo
		}
	}
	return out
}

// FailClosedKinds returns the codes the fail-closed profile denies, with
// why (the one place the profile is written down).
func FailClosedKinds() map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.FailClosed != "" {
			out[e.Code] = e.FailClosed
		}
	}
	return out
}
