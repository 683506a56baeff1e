// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab"
	"github.com/wirespeed/wirespeed/internal/testnet"
)

// Root tests of sampled mode: it agrees with continuous observation in the
// host lab, and its programs are attached only inside its windows.

func TestLabLightMode(t *testing.T) {
	needLab(t)
	l, _ := upLab(t, lab.Config{GRO: true, SenderOffloadsOff: true})
	ob := observeLoadOpts(t, l, 3, nil, Options{Light: true})
	d := ob.dev
	if d.RXPath != PathNAPIGRO || d.GRORatio == nil || *d.GRORatio < 2 {
		t.Errorf("light, GRO on: %q ratio %v", d.RXPath, d.GRORatio)
	}
	// NAPI work stands in for GRO input: it must match the packet counter.
	if !within(d.GROSegments, ob.rxPackets, 0.02, 100) {
		t.Errorf("NAPI work = %d, receiver rx_packets delta = %d", d.GROSegments, ob.rxPackets)
	}
	for _, e := range ob.o.Events {
		if e.Event == "net:napi_gro_receive_entry" && e.Status != "skipped" {
			t.Errorf("light mode attached %s: %+v", e.Event, e)
		}
	}
	l2, _ := upLab(t, lab.Config{GRO: false, SenderOffloadsOff: true})
	if d := observeLoadOpts(t, l2, 2, nil, Options{Light: true}).dev; d.RXPath != PathNetifRx {
		t.Errorf("light, GRO off: %q", d.RXPath)
	}
}

// Sampled observation (--sample 20%) must tell what continuous observation
// tells - the same RX path, about the same GRO ratio, believable shares of
// a CPU in NET_RX - from a fifth of the time, with rates that, times the
// wall time, give back what the kernel's counters saw.
func TestLabSampledAgreesWithContinuous(t *testing.T) {
	needLab(t)
	for _, c := range []struct {
		name  string
		cfg   lab.Config
		light bool
	}{
		{"gro-on", lab.Config{GRO: true, SenderOffloadsOff: true}, false},
		{"gro-on-light", lab.Config{GRO: true, SenderOffloadsOff: true}, true},
		{"gro-off", lab.Config{GRO: false, SenderOffloadsOff: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, _ := upLab(t, c.cfg)
			cont := observeLoadOpts(t, l, 3, nil, Options{Light: c.light})
			samp := observeLoadOpts(t, l, 5, nil, Options{Light: c.light, Sample: 0.2})
			o, d, cd := samp.o, samp.dev, cont.dev
			if o.Sample == nil || o.Sample.Fraction != 0.2 {
				t.Fatalf("sample block %+v", o.Sample)
			}
			if f := o.Sample.AttachedSec / o.DurationSec; f < 0.1 || f > 0.4 {
				t.Errorf("attached %.2f s of %.2f s (%.0f%%), want about 20%%", o.Sample.AttachedSec, o.DurationSec, 100*f)
			}
			if d.RXPath != cd.RXPath {
				t.Errorf("sampled RX path %q, continuous %q", d.RXPath, cd.RXPath)
			}
			switch {
			case (d.GRORatio == nil) != (cd.GRORatio == nil):
				t.Errorf("sampled GRO ratio %v, continuous %v", d.GRORatio, cd.GRORatio)
			case d.GRORatio != nil:
				if r := *d.GRORatio / *cd.GRORatio; r < 0.6 || r > 1/0.6 {
					t.Errorf("sampled GRO ratio %.1f, continuous %.1f", *d.GRORatio, *cd.GRORatio)
				}
			}
			// The programs were detached most of the time: they saw a
			// fraction of the packets, and the rates over attached time
			// extrapolate to all of them.
			seen := d.GROSegments + d.NetifRx
			est := (d.GROSegmentsPerSec + d.NetifRxPerSec) * o.DurationSec
			if seen == 0 || seen > samp.rxPackets/2 {
				t.Errorf("sampled: %d packets counted of %d received; want about a fifth", seen, samp.rxPackets)
			}
			if est < 0.6*float64(samp.rxPackets) || est > 1.4*float64(samp.rxPackets) {
				t.Errorf("sampled: %.0f packets/s over attached time x %.2f s = %.0f, receiver counted %d",
					d.GROSegmentsPerSec+d.NetifRxPerSec, o.DurationSec, est, samp.rxPackets)
			}
			var top float64
			for _, cpu := range o.CPUs {
				if cpu.NetRXShare < 0 || cpu.NetRXShare > 1.02 {
					t.Errorf("cpu%d: NET_RX share %.3f of attached time", cpu.CPU, cpu.NetRXShare)
				}
				top = max(top, cpu.NetRXShare)
				if cpu.CPU < len(samp.netRX) && samp.netRX[cpu.CPU] > 1000 {
					if r := float64(cpu.NetRX) / float64(samp.netRX[cpu.CPU]); r < 0.05 || r > 0.5 {
						t.Errorf("cpu%d: %d NET_RX softirqs counted, /proc/softirqs %d: want about a fifth",
							cpu.CPU, cpu.NetRX, samp.netRX[cpu.CPU])
					}
				}
			}
			if top < 0.01 {
				t.Errorf("NET_RX share at most %.4f under load", top)
			}
			// Placement: a window may open inside a softirq (its polls then
			// look like task polls), but softirq must dominate.
			if c.cfg.GRO {
				var polls, soft uint64
				for _, n := range d.NAPIs {
					for _, x := range n.Contexts {
						polls += x.Polls
						if x.Kind == "softirq" {
							soft += x.Polls
						}
					}
				}
				if polls == 0 || soft < polls*9/10 {
					t.Errorf("%d of %d polls in softirq, want nearly all", soft, polls)
				}
			}
		})
	}
}

// ourPerfBPF counts this process's perf events that have a BPF program
// attached, as bpftool sees them.
func ourPerfBPF(t *testing.T) int {
	out, err := exec.Command("bpftool", "perf", "show", "-j").Output()
	if err != nil {
		t.Errorf("bpftool perf show: %v", err)
		return -1
	}
	var entries []struct {
		PID    int `json:"pid"`
		ProgID int `json:"prog_id"`
	}
	if err := json.Unmarshal(out, &entries); err != nil {
		t.Errorf("bpftool perf show: %v: %s", err, out)
		return -1
	}
	n := 0
	for _, e := range entries {
		if e.PID == os.Getpid() {
			n++
		}
	}
	return n
}

// Between windows nothing may be attached, in a window everything, and
// after Close nothing at all - whether it comes in a window or between.
func TestSampledDetachesBetweenWindows(t *testing.T) {
	testnet.NeedRoot(t)
	if _, err := exec.LookPath("bpftool"); err != nil {
		t.Skip("bpftool not installed")
	}
	for _, closeIn := range []string{"window", "gap"} {
		t.Run("close-in-"+closeIn, func(t *testing.T) {
			type seen struct {
				attached bool
				n        int
			}
			ch := make(chan seen, 8)
			report := func(attached bool) func() {
				return func() {
					select {
					case ch <- seen{attached, ourPerfBPF(t)}:
					default:
					}
				}
			}
			// The hooks run in the sampler and hold it up while bpftool
			// runs; the period leaves room for that.
			s, err := Start(context.Background(), Options{Sample: 0.2, Period: 500 * time.Millisecond,
				afterAttach: report(true), afterDetach: report(false)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			want := len(s.targets)
			if want < len(events)-2 {
				t.Fatalf("only %d tracepoints attached: %v", want, s.Events())
			}
			for i := 0; i < 4; i++ {
				x := <-ch
				if x.attached && x.n != want || !x.attached && x.n != 0 {
					t.Errorf("%s %d: bpftool shows %d programs of this process attached, want %d",
						map[bool]string{true: "window", false: "gap"}[x.attached], i/2+1, x.n, map[bool]int{true: want}[x.attached])
				}
			}
			// Close now in a window (the attach hook just ran) or in a gap.
			for x := <-ch; x.attached != (closeIn == "window"); x = <-ch {
			}
			progs, _ := sessionIDs(t, s)
			o, err := s.Total()
			if err != nil {
				t.Fatal(err)
			}
			if o.Sample == nil || o.Sample.AttachedSec <= 0 || o.Sample.AttachedSec >= o.DurationSec {
				t.Errorf("sample block %+v of %.2f s", o.Sample, o.DurationSec)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if n := ourPerfBPF(t); n != 0 {
				t.Errorf("bpftool shows %d programs of this process attached after Close", n)
			}
			assertGone(t, progs)
			if s.Close() != nil {
				t.Error("second Close failed")
			}
		})
	}
}
