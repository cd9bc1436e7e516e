package mcpwire

import "testing"

// The examples of the 2026-07-28 specification and SEP-2243's test table.
func TestHeaderValueEncoding(t *testing.T) {
	for in, want := range map[string]string{
		"get_weather":        "get_weather",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"inner space":        "inner space",
		"tab\tinside":        "tab\tinside",
		"ctrl\x01":           "=?base64?Y3RybAE=?=",
		"bidi\u202ename":     "=?base64?YmlkaeKArm5hbWU=?=",
		"":                   "",
	} {
		got := EncodeHeaderValue(in)
		if got != want {
			t.Errorf("Encode(%q) = %q, want %q", in, got, want)
		}
		back, err := DecodeHeaderValue(got)
		if err != nil || back != in {
			t.Errorf("Decode(%q) = %q, %v", got, back, err)
		}
	}
	for in, want := range map[string]string{
		"=?BASE64?SGVsbG8=?=": "=?BASE64?SGVsbG8=?=", // upper-case prefix: literal
		"=?base64?SGVsbG8=":   "=?base64?SGVsbG8=",   // no suffix: literal
		"base64?SGVsbG8=?=":   "base64?SGVsbG8=?=",   // no prefix: literal
	} {
		if got, err := DecodeHeaderValue(in); err != nil || got != want {
			t.Errorf("Decode(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"=?base64?SGVsbG8?=", "=?base64?SGV$bG8=?=", "=?base64?/w==?="} {
		if _, err := DecodeHeaderValue(bad); err != ErrBadEncoding {
			t.Errorf("Decode(%q): %v, want ErrBadEncoding", bad, err)
		}
	}
}

func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"a", " x", "=?base64?YQ==?=", "é", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; (c < 0x20 && c != '\t') || c > 0x7e {
				t.Fatalf("encoded value %q has byte %#x", enc, c)
			}
		}
		if validUTF8([]byte(s)) {
			back, err := DecodeHeaderValue(enc)
			if err != nil || back != s {
				t.Fatalf("round trip %q -> %q -> %q, %v", s, enc, back, err)
			}
		}
		DecodeHeaderValue(s) // never panics
	})
}
