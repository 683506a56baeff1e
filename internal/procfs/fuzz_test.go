// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"os"
	"testing"
)

// seed adds the captured fixtures and, where readable, this machine's own
// file, so every target starts from real kernel output.
func seed(f *testing.F, fixtures []string, live string) {
	for _, p := range fixtures {
		b, err := os.ReadFile("testdata/" + p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	if b, err := os.ReadFile(live); err == nil {
		f.Add(b)
	}
}

func FuzzParseSoftnetStat(f *testing.F) {
	seed(f, []string{"softnet_stat.firecracker"}, "/proc/net/softnet_stat")
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseSoftnetStat(b)
		if err != nil {
			return
		}
		if len(rows) > len(b) {
			t.Fatalf("%d rows from %d bytes", len(rows), len(b))
		}
	})
}

func FuzzParseStat(f *testing.F) {
	seed(f, []string{"stat.firecracker"}, "/proc/stat")
	f.Fuzz(func(t *testing.T, b []byte) {
		cpus, err := ParseStat(b)
		if err != nil {
			return
		}
		for _, c := range cpus {
			// Total is the sum the CPU-load code divides by: it must not
			// be smaller than any part (no wrap-around on crafted input).
			if c.Total() < c.Idle {
				t.Fatalf("total %d below idle %d: %+v", c.Total(), c.Idle, c)
			}
		}
	})
}

func FuzzParseSoftirqs(f *testing.F) {
	seed(f, []string{"softirqs.firecracker"}, "/proc/softirqs")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSoftirqs(b)
		if err != nil {
			return
		}
		for name, v := range s.Counts {
			if len(v) != len(s.CPUs) {
				t.Fatalf("%s: %d counts for %d CPUs", name, len(v), len(s.CPUs))
			}
		}
	})
}

func FuzzParseInterrupts(f *testing.F) {
	seed(f, []string{"interrupts.firecracker", "interrupts.rpi4"}, "/proc/interrupts")
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := ParseInterrupts(b)
		if err != nil {
			return
		}
		for _, l := range in.Lines {
			if len(l.Counts) > len(in.CPUs) {
				t.Fatalf("%s: %d counts for %d CPUs", l.IRQ, len(l.Counts), len(in.CPUs))
			}
			if l.Number >= 0 && in.Find(l.Number) == nil {
				t.Fatalf("IRQ %d parsed but not found", l.Number)
			}
		}
	})
}

func FuzzParsePidStat(f *testing.F) {
	seed(f, []string{"pid_stat.self"}, "/proc/self/stat")
	f.Add([]byte("1 (a) b) S 0 1 1 0 -1 4194560 0 0 0 0 7 9 0 0 20 0 1 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePidStat(b)
		if err != nil {
			return
		}
		if p.PID <= 0 {
			t.Fatalf("accepted pid %d", p.PID)
		}
		if p.Processor < 0 {
			t.Fatalf("accepted processor %d", p.Processor)
		}
	})
}
