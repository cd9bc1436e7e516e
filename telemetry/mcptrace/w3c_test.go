package mcptrace

import (
	"strings"
	"testing"
)

const tpValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestParseTraceParent(t *testing.T) {
	sc, err := ParseTraceParent(tpValid)
	if err != nil {
		t.Fatal(err)
	}
	if sc.TraceIDString() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanIDString() != "00f067aa0ba902b7" || !sc.Sampled() {
		t.Fatalf("parsed %+v", sc)
	}
	if got := sc.TraceParent(); got != tpValid {
		t.Fatalf("TraceParent() = %q", got)
	}
	// A later version: the first 55 characters, then "-" or nothing.
	for _, ok := range []string{
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
		"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds",
	} {
		if _, err := ParseTraceParent(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	bad := map[string]string{
		"empty":              "",
		"uppercase hex":      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"version ff":         "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"zero trace id":      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"zero span id":       "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"v00 with a tail":    tpValid + "-extra",
		"short trace id":     "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
		"wrong separator":    "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"later version tail": "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
		"non-hex flags":      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
		"spaces":             " " + tpValid,
		"oversized":          "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-" + strings.Repeat("a", MaxTraceParentLen),
	}
	for name, s := range bad {
		if _, err := ParseTraceParent(s); err == nil {
			t.Errorf("%s: %q accepted", name, s)
		}
	}
}

func TestParseTraceState(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "",
		"rojo=00f067aa0ba902b7": "rojo=00f067aa0ba902b7",
		"rojo=00f067aa0ba902b7 , congo=t61rcWkgMzE": "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
		"a=1,,b=2,":         "a=1,b=2",
		"tenant@system=x y": "tenant@system=x y",
		"0tenant@sys=v":     "0tenant@sys=v",
	} {
		got, err := ParseTraceState(in)
		if err != nil || got != want {
			t.Errorf("ParseTraceState(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	members := make([]string, 33)
	for i := range members {
		members[i] = "k" + strings.Repeat("x", i) + "=v"
	}
	for _, bad := range []string{
		"Rojo=1",              // uppercase key
		"rojo",                // no value
		"rojo=",               // empty value
		"rojo=a,rojo=b",       // a repeated key
		"rojo=a=b",            // "=" in a value
		"rojo=\x01",           // a control character
		"@sys=v",              // an empty tenant
		"t@Sys=v",             // uppercase system
		"t@systemtoolong15=v", // system id longer than 14
		strings.Join(members, ","),
		"k=" + strings.Repeat("v", 257),
		strings.Repeat("a=b,", 200), // oversized
	} {
		if got, err := ParseTraceState(bad); err == nil {
			t.Errorf("ParseTraceState(%q) accepted: %q", bad, got)
		}
	}
}

// FuzzTraceContext: the parsers never panic, refuse everything outside
// their bounds, and what they accept is canonical and read back as itself.
func FuzzTraceContext(f *testing.F) {
	f.Add(tpValid, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "a@b=c, ,d=e")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01", "k=v,k=w")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, tp, ts string) {
		sc, err := ParseTraceParent(tp)
		if err == nil {
			if len(tp) < 55 || len(tp) > MaxTraceParentLen || !sc.Valid() {
				t.Fatalf("accepted %q out of bounds", tp)
			}
			back, err := ParseTraceParent(sc.TraceParent())
			if err != nil || back.TraceID != sc.TraceID || back.SpanID != sc.SpanID || back.Flags != sc.Flags {
				t.Fatalf("%q does not read back: %v", sc.TraceParent(), err)
			}
			if tp[:2] == "00" && sc.TraceParent() != tp {
				t.Fatalf("version 00 %q written back as %q", tp, sc.TraceParent())
			}
		}
		canon, err := ParseTraceState(ts)
		if err != nil {
			return
		}
		if len(canon) > MaxTraceStateLen || strings.Count(canon, ",") >= MaxTraceStateMembers {
			t.Fatalf("accepted %q out of bounds", ts)
		}
		again, err := ParseTraceState(canon)
		if err != nil || again != canon {
			t.Fatalf("canonical %q reads back as %q, %v", canon, again, err)
		}
	})
}
