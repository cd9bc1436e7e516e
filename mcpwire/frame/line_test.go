package frame

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type lineResult struct {
	line string
	err  string
}

func readLines(r io.Reader, max int64, skip bool) []lineResult {
	lr := NewLineReader(r, max)
	var out []lineResult
	for range 100 {
		line, err := lr.Next()
		res := lineResult{line: string(line)}
		if err != nil {
			res.err = err.Error()
			if IsLineTooLong(err) {
				res.err = "too long"
			}
		}
		out = append(out, res)
		if IsLineTooLong(err) && skip {
			if err := lr.Skip(); err != nil {
				out = append(out, lineResult{err: "skip: " + err.Error()})
				return out
			}
			continue
		}
		if err != nil {
			return out
		}
	}
	return out
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 11)
	cases := []struct {
		in   string
		skip bool
		want []lineResult
	}{
		// CR, blank lines and whitespace are the caller's.
		{"a\r\n\n  \nb\n", false, []lineResult{{"a\r", ""}, {"", ""}, {"  ", ""}, {"b", ""}, {"", "EOF"}}},
		// A last line without LF comes with io.EOF.
		{"a\nb", false, []lineResult{{"a", ""}, {"b", "EOF"}}},
		{"", false, []lineResult{{"", "EOF"}}},
		// Exactly the bound, LF not counted.
		{"0123456789\n", false, []lineResult{{"0123456789", ""}, {"", "EOF"}}},
		{"0123456789", false, []lineResult{{"0123456789", "EOF"}}},
		// One byte more is too long, with an LF or at the end.
		{long + "\nok\n", false, []lineResult{{"", "too long"}}},
		{long, false, []lineResult{{"", "too long"}}},
		// Skip discards the rest of the line (or finds the end of the input).
		{long + long + "\nok\n", true, []lineResult{{"", "too long"}, {"ok", ""}, {"", "EOF"}}},
		{long + "\nok\n", true, []lineResult{{"", "too long"}, {"ok", ""}, {"", "EOF"}}},
		{long + long, true, []lineResult{{"", "too long"}, {"", "skip: EOF"}}},
		{long, true, []lineResult{{"", "too long"}, {"", "skip: EOF"}}},
	}
	for _, c := range cases {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got := readLines(r, 10, c.skip)
			if len(got) != len(c.want) {
				t.Errorf("%q (one byte %v): got %q, want %q", c.in, oneByte, got, c.want)
				continue
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("%q (one byte %v): got %q, want %q", c.in, oneByte, got, c.want)
					break
				}
			}
		}
	}
}

// A line far beyond bufio's buffer is refused as soon as the bound is
// passed, and skipped without being buffered.
func TestLineReaderLongLines(t *testing.T) {
	huge := strings.Repeat("y", 1<<20)
	lr := NewLineReader(strings.NewReader(huge+"\n"+"next\n"), 200<<10)
	if _, err := lr.Next(); !IsLineTooLong(err) {
		t.Fatalf("huge: %v", err)
	}
	var le *LimitError
	if _, err := lr.Next(); !errors.As(err, &le) || le.Max != 200<<10 {
		// Next without Skip reads on inside the same line.
		t.Fatalf("again: %v", err)
	}
	if err := lr.Skip(); err != nil {
		t.Fatal(err)
	}
	if l, err := lr.Next(); err != nil || string(l) != "next" {
		t.Fatalf("after skip: %q %v", l, err)
	}
	// A long line within the bound is whole.
	lr = NewLineReader(strings.NewReader(huge+"\n"), 1<<20)
	if l, err := lr.Next(); err != nil || len(l) != 1<<20 {
		t.Fatalf("within: %d %v", len(l), err)
	}
}

func TestLineReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	lr := NewLineReader(io.MultiReader(strings.NewReader("a\npart"), iotest.ErrReader(boom)), 100)
	if l, err := lr.Next(); err != nil || string(l) != "a" {
		t.Fatalf("%q %v", l, err)
	}
	if l, err := lr.Next(); !errors.Is(err, boom) || string(l) != "part" {
		t.Fatalf("the line before the error: %q %v", l, err)
	}
	if l, err := lr.Next(); !errors.Is(err, boom) || l != nil {
		t.Fatalf("sticky: %q %v", l, err)
	}
	if err := lr.Skip(); !errors.Is(err, boom) {
		t.Fatalf("skip after the end: %v", err)
	}
	// Fresh slices: a line outlives the next read.
	lr = NewLineReader(strings.NewReader("first\nsecond\n"), 100)
	a, _ := lr.Next()
	b, _ := lr.Next()
	if string(a) != "first" || string(b) != "second" {
		t.Fatalf("%q %q", a, b)
	}
}

func TestAppendLine(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                    "{\"a\":1}\n",
		"{\n  \"a\": 1\r\n}":         "{   \"a\": 1  }\n",
		"":                           "\n",
		`{"s":"escaped \n stays"}`:   "{\"s\":\"escaped \\n stays\"}\n",
		"\r\r\n\n":                   "    \n",
		`{"x":"\u2028 not a break"}`: "{\"x\":\"\\u2028 not a break\"}\n",
	} {
		if got := string(AppendLine([]byte("> "), []byte(in))); got != "> "+want {
			t.Errorf("%q: got %q, want %q", in, got, "> "+want)
		}
	}
	msg := []byte("a\nb")
	AppendLine(nil, msg)
	if string(msg) != "a\nb" {
		t.Error("AppendLine changed its input")
	}
}

func TestTrimSpace(t *testing.T) {
	for in, want := range map[string]string{" \t\r\n{} \n": "{}", "": "", " \r ": "", "\u00a0{}": "\u00a0{}"} {
		if got := string(TrimSpace([]byte(in))); got != want {
			t.Errorf("%q: %q", in, got)
		}
	}
}

// SkipEnds keeps the two ends of a line too long — whether the line ends
// within the read that found it too long or far beyond — and reads on at
// the next line.
func TestLineReaderSkipEnds(t *testing.T) {
	head, tail := `{"jsonrpc":"2.0","id":7,"result":{"x":"`, `"},"id":9}`
	for _, size := range []int{300, 70 << 10, 3 << 20} {
		line := head + strings.Repeat("z", size) + tail
		for _, r := range []io.Reader{strings.NewReader(line + "\nnext\n"), iotest.OneByteReader(strings.NewReader(line + "\nnext\n"))} {
			lr := NewLineReader(r, 200)
			if _, err := lr.Next(); !IsLineTooLong(err) {
				t.Fatalf("%d: %v", size, err)
			}
			h, tl, err := lr.SkipEnds(len(head))
			if err != nil || string(h) != head || string(tl) != line[len(line)-len(head):] {
				t.Errorf("%d: head %q tail %q %v", size, h, tl, err)
			}
			if h, tl, _ := lr.SkipEnds(1 << 20); len(h) > 4096 || len(tl) > 4096 || !strings.HasSuffix(string(tl), tail) {
				t.Errorf("%d: ends of %d and %d bytes (at most 4096 each)", size, len(h), len(tl))
			}
			if l, err := lr.Next(); err != nil || string(l) != "next" {
				t.Errorf("%d: after the line: %q %v", size, l, err)
			}
			if h, tl, _ := lr.SkipEnds(10); len(h)+len(tl) != 0 {
				t.Errorf("%d: ends after a line within the bound: %q %q", size, h, tl)
			}
		}
	}
	// A line too long that the input ends inside: its ends, and the end.
	lr := NewLineReader(strings.NewReader(head+strings.Repeat("z", 1000)), 100)
	lr.Next()
	if h, tl, err := lr.SkipEnds(5); string(h) != head[:5] || string(tl) != "zzzzz" || err != io.EOF {
		t.Errorf("cut: %q %q %v", h, tl, err)
	}
}
