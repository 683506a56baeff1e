// SPDX-License-Identifier: Apache-2.0

package shellquote

import (
	"os/exec"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":            `''`,
		"eth0":        `'eth0'`,
		"it's":        `'it'\''s'`,
		"$(rm -rf /)": `'$(rm -rf /)'`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestQuoteIfNeeded(t *testing.T) {
	for in, want := range map[string]string{
		"":                    `''`,
		"usb0":                "usb0",
		"/var/lib/x_y-1.2":    "/var/lib/x_y-1.2",
		"a=b,c:d+e@f%":        "a=b,c:d+e@f%",
		"two words":           `'two words'`,
		"it's":                `'it'\''s'`,
		"*":                   `'*'`,
		"~root":               `'~root'`,
		"a;b":                 `'a;b'`,
		"new\nline":           "'new\nline'",
		"$HOME":               `'$HOME'`,
		"back\\slash":         `'back\slash'`,
		"x\"y":                `'x"y'`,
		"semi;colon $(x) `y`": "'semi;colon $(x) `y`'",
	} {
		if got := QuoteIfNeeded(in); got != want {
			t.Errorf("QuoteIfNeeded(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestShellReadsOneWord hands the quoted words to a real shell: each must
// come back as the one argument it was.
func TestShellReadsOneWord(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, s := range []string{"", "plain", "it's", "a b\tc\nd", `$HOME "x" \n`, "'''", "*?[a]", "-n"} {
		for _, q := range []func(string) string{Quote, QuoteIfNeeded} {
			out, err := exec.Command(sh, "-c", "set -- "+q(s)+`; printf '%s' "$#:$1"`).CombinedOutput()
			if err != nil || string(out) != "1:"+s {
				t.Errorf("sh read %q back as %q (%v)", s, out, err)
			}
		}
	}
}
