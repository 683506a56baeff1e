// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

func TestParseKernel(t *testing.T) {
	for _, c := range []struct {
		rel                 string
		major, minor, patch int
		patchKnown          bool
	}{
		{"6.12.117+deb12-arm64", 6, 12, 117, true},
		{"6.12.47+rpt-rpi-v8", 6, 12, 47, true},
		{"6.1.0-56-amd64", 6, 1, 0, false}, // Debian ABI name: no patch level
		{"5.15.0-1034-raspi", 5, 15, 0, false},
		{"6.8.0-45-generic", 6, 8, 0, false},
		{"5.15.4-0-rpi4", 5, 15, 4, true},
		{"6.1.21-v8+", 6, 1, 21, true},
		{"6.16.0", 6, 16, 0, true},
		{"6.19", 6, 19, 0, false},
	} {
		k, ok := ParseKernel(c.rel)
		if !ok || k.Major != c.major || k.Minor != c.minor || k.Patch != c.patch || k.PatchKnown != c.patchKnown {
			t.Errorf("%s: got %+v ok=%v", c.rel, k, ok)
		}
	}
	if _, ok := ParseKernel("linux"); ok {
		t.Error("a name without a version parsed")
	}
}

func TestHas(t *testing.T) {
	for _, c := range []struct {
		rel, key string
		want     datapath.State
	}{
		{"6.19.10+deb14-amd64", "usbnet-bql", datapath.Yes},
		{"7.0.1", "usbnet-bql", datapath.Yes},
		{"6.18.44", "usbnet-bql", datapath.No},
		{"6.12.117+deb12-arm64", "usbnet-bql", datapath.No},
		{"6.16.0", "wg-threaded-default", datapath.Yes},
		{"6.12.48+deb13-amd64", "wg-threaded-default", datapath.Yes}, // the stable backport
		{"6.12.74+deb13-amd64", "wg-threaded-default", datapath.No},  // reverted
		{"6.12.33", "wg-threaded-default", datapath.No},
		{"6.1.0-56-amd64", "wg-threaded-default", datapath.Unknown}, // 6.1.142-6.1.163 or not: the name cannot say
		{"6.6.94", "wg-threaded-default", datapath.Yes},
		{"5.10.200", "wg-threaded-default", datapath.No},
		{"6.19.3", "mt76u-threaded-napi", datapath.No},
		{"7.3.4+deb13-amd64", "mt76u-threaded-napi", datapath.Yes},
		{"7.0.0-15-generic", "udp-gso-corruption", datapath.Yes},
		{"6.18.20+rpt-rpi-2712", "udp-gso-corruption", datapath.No},
		{"7.1.4-200.fc44.x86_64", "udp-gso-corruption-fix", datapath.No},
		{"7.1.5-200.fc44.x86_64", "udp-gso-corruption-fix", datapath.Yes}, // the open stable range
		{"7.1.12", "udp-gso-corruption-fix", datapath.Yes},
		{"7.0.9", "udp-gso-corruption-fix", datapath.No},
		{"7.2.13+deb14-amd64", "udp-gso-corruption-fix", datapath.Yes},
		{"7.1.0-3-generic", "udp-gso-corruption-fix", datapath.Unknown}, // an ABI name of the 7.1 series
		{"7.3.4+deb13-amd64", "mt76-usb-reorder-fix", datapath.Unknown}, // no release recorded
		{"6.16.2", "usbnet-bh-work", datapath.No},
		{"6.17.0", "usbnet-bh-work", datapath.Yes},
		{"5.12.0", "threaded-sysfs", datapath.Yes},
		{"5.11.22", "threaded-sysfs", datapath.No},
	} {
		if got := Has(c.rel, c.key); got != c.want {
			t.Errorf("Has(%s, %s) = %s, want %s", c.rel, c.key, got, c.want)
		}
	}
	if r, in, known := InStable("6.12.73", "wg-threaded-default"); !in || !known || r.After() != "6.12.74" {
		t.Errorf("6.12.73: %v %v %v", r, in, known)
	}
}

// TestFactsTable: the entries issue 21 asks for exist, each with a release
// or a commit subject, and a source.
func TestFactsTable(t *testing.T) {
	want := map[string]string{
		"usbnet-bql": "6.19", "usbnet-bql-dql-fix": "6.19", "usbnet-bql-resume-fix": "",
		"wg-threaded-default": "6.16", "mt76u-threaded-napi": "7.3", "napi-set-config": "6.13",
		// the kernel facts of 2026 (issue 31)
		"mt76-usb-reorder-regression": "6.19", "mt76-usb-reorder-fix": "", "udp-gso-corruption": "7.0",
		"udp-gso-corruption-fix": "7.2", "usbnet-bh-work": "6.17", "udp-gro-fwd-tunnels": "6.2",
		"per-napi-threaded": "6.17", "threaded-busy-poll": "6.19", "r8152-gro-frags": "6.7",
		"threaded-sysfs": "5.12", "bql-stall-stats": "6.9",
	}
	for k, rel := range want {
		f := fact(k)
		if f.Release != rel {
			t.Errorf("%s: release %q, want %q", k, f.Release, rel)
		}
	}
	for _, f := range Facts {
		if f.Release == "" && f.Commit == "" || f.Source == "" {
			t.Errorf("%s: needs a release or a commit subject, and a source", f.Key)
		}
	}
	for _, k := range []string{"mt76u-threaded-napi", "mt76-usb-reorder-fix", "udp-gso-corruption", "usbnet-bh-work"} {
		if c := fact(k).Commit; !regexp.MustCompile(`^[0-9a-f]{7,12}\b`).MatchString(c) {
			t.Errorf("%s: the commit id first: %q", k, c)
		}
	}
	if got := fact("udp-gso-corruption-fix").StableRanges(); got != "7.1.5 and later 7.1.y" {
		t.Errorf("UDP GSO fix ranges: %s", got)
	}
	for _, d := range DistroKernels {
		if d.Source == "" || d.Series == "" && d.Closed == "" {
			t.Errorf("distribution kernel %s %s %s: needs a series (or the date it closed) and a source", d.Distro, d.Release, d.Channel)
		}
	}
	if got := fact("wg-threaded-default").StableRanges(); got != "5.15.186-5.15.200, 6.1.142-6.1.163, 6.6.94-6.6.126, 6.12.34-6.12.73" {
		t.Errorf("CVE-2026-52945 ranges: %s", got)
	}
}

// versionInString finds kernel versions in a string literal: "Linux 6.19",
// "6.19+", "6.12.N", "6.1.0-56", "the 6.1 family".
var versionInString = regexp.MustCompile(`(?i)\b(linux|kernels?)\s+v?\d+\.\d+|\b\d+\.\d+(\.(\d+|y|N))?\+|\b\d+\.\d+\.(y|N|\d+)\b|\b\d+\.\d+\s+(famil|or later|and later|or newer)`)

// TestKernelKnowledgeInFacts: no rule file holds a kernel version in a
// string or parses one itself; kernel knowledge comes from facts.go.
func TestKernelKnowledgeInFacts(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") || p == "facts.go" || p == "facts_platforms.go" {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, _ := strconv.Unquote(lit.Value)
			if m := versionInString.FindString(s); m != "" {
				t.Errorf("%s: kernel version %q in a rule: put the fact in facts.go", fset.Position(lit.Pos()), m)
			}
			if strings.Contains(s, "%d.%d") {
				t.Errorf("%s: a rule parses a kernel version itself: use ParseKernel/Has", fset.Position(lit.Pos()))
			}
			return true
		})
	}
}

// TestCitableWords: findings cite what a user can look up, not this
// project's internal names for its sources.
func TestCitableWords(t *testing.T) {
	bad := regexp.MustCompile(`(?i)\bseed \d|\bseeds?\b.*\b00\d\b|this project's`)
	files, _ := filepath.Glob("*.go")
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && bad.MatchString(lit.Value) {
				t.Errorf("%s: %s", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
	}
}
