package redact

// PercentDecodedForTest is percentDecoded, for the package's external tests.
var PercentDecodedForTest = percentDecoded

// EncodingsForTest is encodings, for the package's external tests.
var EncodingsForTest = encodings

// PartsForTest are the windows of v's runs that count (MinRun characters
// each), for the package's external tests.
func PartsForTest(v string) []string {
	var out []string
	for _, r := range distinctRuns(v) {
		for w := 0; w+MinRun <= len(r.text); w++ {
			if r.counts[w+1] > r.counts[w] {
				out = append(out, r.text[w:w+MinRun])
			}
		}
	}
	return out
}

// FormsForTest is how many forms s is looked for in (its compiled
// spellings of every secret): the work a rebuild does.
func FormsForTest(s *Set) int {
	c := s.compiled()
	if c == nil {
		return 0
	}
	return len(c.forms)
}

// PercentAllForTest is percentAll, for the package's external tests.
var PercentAllForTest = percentAll
