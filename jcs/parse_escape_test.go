package jcs

import (
	"testing"
	"unicode/utf8"
)

// TestInvalidEscapeMessagesAreInert: the message of an invalid escape
// names the byte after the backslash without printing a control byte
// raw (a server's ESC reached a terminal through it: FuzzParseObserved).
func TestInvalidEscapeMessagesAreInert(t *testing.T) {
	for b := range 256 {
		_, err := Parse([]byte{'"', '\\', byte(b), '"'})
		if err == nil {
			continue
		}
		msg := err.Error()
		if !utf8.ValidString(msg) {
			t.Errorf("byte 0x%02x: the message is not UTF-8: %q", b, msg)
		}
		for _, r := range msg {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Errorf("byte 0x%02x: the message holds %U: %q", b, r, msg)
				break
			}
		}
	}
}
