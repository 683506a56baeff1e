// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"os"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/testfiles"
)

// FuzzParseIperf3: whatever iperf3 -J printed, parsing and everything bench
// derives from the report (direction, per-direction sums, intervals) must
// not panic, and the sums must say where they came from.
func FuzzParseIperf3(f *testing.F) {
	testfiles.Seeds(f, "testdata/iperf3-*.json", 0)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseIperf3(b)
		if err != nil {
			return
		}
		switch d := r.Direction(); d {
		case DirSend, DirReceive, DirBoth:
		default:
			t.Fatalf("direction %q", d)
		}
		for dir, s := range r.Summaries() {
			if s.Source != "end" && s.Source != "intervals" {
				t.Fatalf("%s: source %q", dir, s.Source)
			}
		}
		for _, iv := range r.Intervals() {
			if iv.Mbit == nil {
				t.Fatalf("interval without rates: %+v", iv)
			}
		}
	})
}

func FuzzParseIperf3Version(f *testing.F) {
	f.Add("iperf 3.12 (cJSON 1.7.15)\nLinux host 6.1.0 #1 SMP x86_64\n")
	f.Add("iperf 3.16\n")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseIperf3Version(s)
		if err != nil {
			return
		}
		if v.Major < 0 || v.Minor < 0 || strings.Contains(v.Text, "\n") {
			t.Fatalf("%q -> %+v", s, v)
		}
		if w, err := ParseIperf3Version("iperf " + v.String()); err != nil || w.Major != v.Major || w.Minor != v.Minor {
			t.Fatalf("%q -> %s does not read back: %+v %v", s, v, w, err)
		}
	})
}

// FuzzDecode: a result file is accepted only with bench's schema; show,
// compare and report read these files from users.
func FuzzDecode(f *testing.F) {
	b, err := os.ReadFile("../../testdata/results/vm-usb-nic-stock.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"schema":"wirespeed.bench/v1","runs":[{"variant":"a","metrics":{"send_mbit":1}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b, "fuzz")
		if err != nil {
			return
		}
		if !strings.HasPrefix(r.Schema, "wirespeed.bench/v1") {
			t.Fatalf("accepted schema %q", r.Schema)
		}
	})
}
