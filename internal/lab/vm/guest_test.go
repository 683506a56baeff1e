// SPDX-License-Identifier: Apache-2.0
package vm

import (
	"io/fs"
	"strings"
	"testing"
)

// Every guest file has a header the guest does not get (the licence, the
// file-wide shellcheck directives), and the scripts the guest gets carry
// no trace of it; a directive for one line stays with its line.
func TestGuestHeadersStayHome(t *testing.T) {
	names, err := fs.Glob(guestFiles, "guest/*.sh")
	if err != nil || len(names) == 0 {
		t.Fatalf("no guest scripts embedded: %v", err)
	}
	for _, n := range names {
		text := guestText(strings.TrimPrefix(n, "guest/"))
		if strings.Contains(text, "SPDX-License-Identifier") || strings.Contains(text, "# shellcheck shell=") {
			t.Errorf("%s: the header reaches the guest:\n%s", n, text[:min(len(text), 300)])
		}
	}
	if !strings.HasPrefix(initWrapper, "#!/bin/sh\nexport PATH=") {
		t.Errorf("/init does not start with its #! line and its first command:\n%.80s", initWrapper)
	}
	if !strings.HasPrefix(usbnetStress, "# usbnet stress: the guest side") {
		t.Errorf("usbnet_stress.sh lost its own first comment:\n%.80s", usbnetStress)
	}
	for _, name := range ScenarioNames() {
		o := Options{Scenario: name, Duration: 3e9, Streams: 2, Direction: "both", Speed: "super", BusRate: 100, Tune: "--pairs 3"}
		s := initScript(scenarios[name], o, nil)
		if strings.Contains(s, "SPDX-License-Identifier") || placeholderRe.MatchString(s) {
			t.Errorf("%s: main.sh has a header line or an unfilled placeholder", name)
		}
	}
	if !strings.Contains(initLib, `echo "`+markerPrefix+` $* t=`) {
		t.Error("lib.sh's ws does not print the marker")
	}
}

func TestGuestHeaderRules(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"# h\n# h2\n\nbody\n", "body\n"},
		{"#!/bin/sh\n# h\n\n# kept\nx\n", "#!/bin/sh\n# kept\nx\n"},
		{"# h\n\n\nx\n", "\nx\n"},
	} {
		if got := stripHeader("t", c.in); got != c.want {
			t.Errorf("stripHeader(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a header without its empty line did not panic")
			}
		}()
		stripHeader("t", "# h\nbody\n")
	}()
}

func TestGuestPlaceholders(t *testing.T) {
	tmpl := "a @X@ b @X@\n@BLOCK@\nc@Y@\n"
	got := fill("t", tmpl, "@X@", "1", "@BLOCK@", "l1\nl2 @X@\n", "@Y@", "")
	if want := "a 1 b 1\nl1\nl2 @X@\nc\n"; got != want {
		t.Errorf("fill = %q, want %q", got, want)
	}
	if got := fill("t", tmpl, "@X@", "1", "@BLOCK@", "", "@Y@", "2"); got != "a 1 b 1\nc2\n" {
		t.Errorf("an empty block leaves %q", got)
	}
	for _, bad := range [][]string{
		{"@X@", "1", "@BLOCK@", "x\n"},                        // @Y@ has no value
		{"@X@", "1", "@BLOCK@", "x\n", "@Y@", "", "@Z@", "z"}, // @Z@ is nowhere
		{"@X@", "1", "@BLOCK@", "no newline", "@Y@", ""},      // a block's value is whole lines
		{"@X@"}, // odd
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("fill with %q did not panic", bad)
				}
			}()
			fill("t", tmpl, bad...)
		}()
	}
}

// A run on a kernel with kmemleak ends with a scan whose count of
// suspects reaches facts.txt (the console guards never see kmemleak's
// own report, which its thread prints every 10 minutes).
func TestKmemleakScanAtEnd(t *testing.T) {
	i := strings.Index(initLib, "finish() {")
	if i < 0 || !strings.Contains(initLib[i:i+300], "\n  ws_kmemleak\n") {
		t.Error("finish does not call ws_kmemleak")
	}
	for _, want := range []string{"echo scan > $k", `echo "kmemleak_suspects=$(grep -c '^unreferenced object' /results/kmemleak.txt)" >> /results/facts.txt`} {
		if !strings.Contains(initLib, want) {
			t.Errorf("lib.sh lacks %q", want)
		}
	}
}
