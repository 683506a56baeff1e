// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// RXSide is one boot's receive figures, as usbnet-rx.sh's runs are read:
// CPU per Mbit/s is the guest's total busy CPU (all vCPUs, % of one CPU)
// over bench's load window divided by the device under test's counter rate
// over the same window.
type RXSide struct {
	Mbit, DevMbit  float64
	HasCPU         bool // bench found CPU samples in its load window
	BusyPct        float64
	BusyPerMbit    float64
	SoftirqPerMbit float64
	SysPerMbit     float64
	RXPath         string
	GRORatio       float64
}

// RXPair is a valid stock/ours pair of one phase.
type RXPair struct {
	Pair        int
	Stock, Ours RXSide
}

// ThroughputRatio is ours/stock receive Mbit/s.
func (p RXPair) ThroughputRatio() float64 { return p.Ours.Mbit / p.Stock.Mbit }

// BusyRatio is ours/stock busy CPU per Mbit/s.
func (p RXPair) BusyRatio() float64 { return p.Ours.BusyPerMbit / p.Stock.BusyPerMbit }

// SoftirqRatio is ours/stock softirq CPU per Mbit/s.
func (p RXPair) SoftirqRatio() float64 { return p.Ours.SoftirqPerMbit / p.Stock.SoftirqPerMbit }

// RXPhase reads the pairs PHASE-stock-N / PHASE-ours-N under dir and applies
// the validity rules of the runs' PLAN.md: a pair counts when both boots'
// vm.json say ok and both wrote a complete bench JSON; for real-time TCG
// phases (nic-tcg, gadget-tcg) a pair is dropped when host-top.txt shows a
// process other than QEMU or wirespeed above 20% CPU before either boot
// (for gadget-tcg any QEMU counts: before a boot, a QEMU is another run's).
// It returns the valid pairs and the pair numbers dropped.
func RXPhase(dir, phase string) (pairs []RXPair, dropped []int, err error) {
	reps, err := Reps(dir, phase+"-stock")
	if err != nil {
		return nil, nil, err
	}
	if len(reps) == 0 {
		return nil, nil, fmt.Errorf("%s: no %s-stock-N runs", dir, phase)
	}
	for _, i := range reps {
		a, aok, err := rxSide(filepath.Join(dir, fmt.Sprintf("%s-stock-%d", phase, i)))
		if err != nil {
			return nil, nil, err
		}
		b, bok, err := rxSide(filepath.Join(dir, fmt.Sprintf("%s-ours-%d", phase, i)))
		if err != nil {
			return nil, nil, err
		}
		if !aok || !bok {
			dropped = append(dropped, i)
			continue
		}
		if phase == "nic-tcg" || phase == "gadget-tcg" {
			qemu := phase == "gadget-tcg"
			wa, err := OutsideLoad(filepath.Join(dir, fmt.Sprintf("%s-stock-%d", phase, i), "host-top.txt"), qemu)
			if err != nil {
				return nil, nil, err
			}
			wb, err := OutsideLoad(filepath.Join(dir, fmt.Sprintf("%s-ours-%d", phase, i), "host-top.txt"), qemu)
			if err != nil {
				return nil, nil, err
			}
			if wa > 20 || wb > 20 {
				dropped = append(dropped, i)
				continue
			}
		}
		pairs = append(pairs, RXPair{Pair: i, Stock: a, Ours: b})
	}
	return pairs, dropped, nil
}

// Reps lists N of the directories PREFIX-N under dir, in order.
func Reps(dir, prefix string) ([]int, error) {
	ents, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `-(\d+)$`)
	var out []int
	for _, e := range ents {
		if m := re.FindStringSubmatch(e.Name()); m != nil && e.IsDir() {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// VMOK says whether a boot's vm.json reports ok.
func VMOK(run string) (bool, error) {
	b, err := ReadRaw(filepath.Join(run, "vm.json"))
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var v struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return false, fmt.Errorf("%s/vm.json: %w", run, err)
	}
	return v.OK, nil
}

// FirstRun loads run's bench-DIRECTION.json and returns its first run, or
// nil when the boot wrote none (or none complete).
func FirstRun(run, direction string) (*bench.Run, error) {
	p := filepath.Join(run, "bench-"+direction+".json")
	if _, err := Stat(p); os.IsNotExist(err) {
		return nil, nil
	}
	b, err := ReadRaw(p)
	if err != nil {
		return nil, err
	}
	r, err := bench.Decode(b, p)
	if err != nil {
		return nil, err
	}
	if len(r.Runs) == 0 || !r.Runs[0].Complete {
		return nil, nil
	}
	return &r.Runs[0], nil
}

// ObservedDevice is the part of observe's per-device record these tables use.
type ObservedDevice struct {
	Name     string  `json:"name"`
	RXPath   string  `json:"rx_path"`
	GRORatio float64 `json:"gro_ratio"`
	// GROSegments went into GRO, Delivered came out of it.
	GROSegments uint64 `json:"gro_segments"`
	Delivered   uint64 `json:"delivered_skbs"`
}

// Observed returns observe's records of the run's devices.
func Observed(run *bench.Run) ([]ObservedDevice, error) {
	if len(run.Observe) == 0 {
		return nil, nil
	}
	var o struct {
		Devices []ObservedDevice `json:"devices"`
	}
	if err := json.Unmarshal(run.Observe, &o); err != nil {
		return nil, fmt.Errorf("observe record: %w", err)
	}
	return o.Devices, nil
}

// RXRun is one receive boot's side: ok says the boot was clean and its
// bench finished.
func RXRun(run string) (RXSide, bool, error) { return rxSide(run) }

func rxSide(run string) (RXSide, bool, error) {
	ok, err := VMOK(run)
	if err != nil || !ok {
		return RXSide{}, false, err
	}
	r, err := FirstRun(run, "receive")
	if err != nil || r == nil {
		return RXSide{}, false, err
	}
	m := r.Metrics
	s := RXSide{Mbit: m["receive_mbit"]}
	n := 2
	names := map[string]bool{}
	if r.Load != nil {
		if len(r.Load.CPUs) > 0 {
			n = len(r.Load.CPUs)
		}
		for name := range r.Load.Devices {
			names[name] = true
		}
		if len(r.Load.Devices) == 1 {
			for _, d := range r.Load.Devices {
				s.DevMbit = d.RxMbit
			}
		} else {
			s.DevMbit = r.Load.Devices["usb0"].RxMbit
		}
	}
	if s.DevMbit == 0 {
		s.DevMbit = s.Mbit
	}
	if idle, ok := m["cpu_idle_pct"]; ok {
		s.HasCPU = true
		s.BusyPct = (100 - idle) * float64(n)
		s.BusyPerMbit = s.BusyPct / s.DevMbit
		s.SoftirqPerMbit = m["cpu_softirq_pct"] * float64(n) / s.DevMbit
		s.SysPerMbit = m["cpu_sys_pct"] * float64(n) / s.DevMbit
	}
	if len(names) == 0 {
		names["usb0"] = true
	}
	devs, err := Observed(r)
	if err != nil {
		return RXSide{}, false, fmt.Errorf("%s: %w", run, err)
	}
	for _, d := range devs {
		if names[d.Name] {
			s.RXPath, s.GRORatio = d.RXPath, d.GRORatio
		}
	}
	return s, true, nil
}

var topLine = regexp.MustCompile(`^\s*([0-9.]+)\s+\d+\s+(\S+)\s*$`)

// OutsideLoad is the busiest process in a host-top.txt other than QEMU
// and wirespeed (QEMU too when qemuCounts).
func OutsideLoad(path string, qemuCounts bool) (float64, error) {
	b, err := ReadRaw(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	mine := regexp.MustCompile(`^(qemu|wirespeed|ws|ps)`)
	if qemuCounts {
		mine = regexp.MustCompile(`^(wirespeed|ws|ps)`)
	}
	worst := 0.0
	for _, l := range strings.Split(string(b), "\n") {
		m := topLine.FindStringSubmatch(l)
		if m == nil || mine.MatchString(m[2]) {
			continue
		}
		if v, err := strconv.ParseFloat(m[1], 64); err == nil && v > worst {
			worst = v
		}
	}
	return worst, nil
}

// ReadRXSide is one usbnet-rx-style boot's receive figures and whether it
// is valid (vm.json ok, a complete bench JSON), for runs named otherwise
// than PHASE-stock-N / PHASE-ours-N.
func ReadRXSide(run string) (RXSide, bool, error) { return rxSide(run) }
