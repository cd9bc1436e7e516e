package manifest

import "testing"

// TestSameEndpoint: an endpoint pinned with a credential in its path (as
// an earlier version recorded it) is the endpoint recorded now with the
// segment left out; nothing else is made equal.
func TestSameEndpoint(t *testing.T) {
	const key = "sk-ak-Q7w2E9r4T1y8U3i6O5p0"
	for _, c := range []struct {
		pinned, now string
		same        bool
	}{
		{"https://h/mcp", "https://h/mcp", true},
		{"https://h/mcp/" + key + "/sse", "https://h/mcp/[REDACTED]/sse", true},
		{"https://h/mcp/" + key + "/sse", "https://h/mcp/" + key + "/sse", true},
		{"https://h/mcp/" + key + "/sse", "https://other/mcp/[REDACTED]/sse", false},
		{"https://h/mcp/" + key + "/sse", "https://h/mcp/[REDACTED]/ws", false},
		{"https://h/mcp?api_key=x", "https://h/mcp?api_key=", true},
		{"https://h/mcp", "https://h/other", false},
		{"stdio:/a/b " + key, "stdio:/a/b [REDACTED]", false},
		{"", "https://h/mcp", false},
	} {
		if got := SameEndpoint(c.pinned, c.now); got != c.same {
			t.Errorf("SameEndpoint(%q, %q) = %v", c.pinned, c.now, got)
		}
	}
}
