// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// stagedRuns are devlab-rx.sh's receive-only phases of three variants
// per rep, by table id: the staged page-fragment patches (issues 41, 42:
// stock, ours, ours-staged) and seed 003's pair of adapters (issue 42:
// the AX88179 stock and ours, the RTL8153 on r8152). Each later variant
// is compared with the first two of its rep. By their plans a rep counts
// only whole: one boot failed, incomplete or booted beside another
// process above 20% of a host CPU drops the rep's three.
var stagedRuns = map[string]struct {
	dir, phase string
	variants   []string
}{
	"staged-ax-virt-rt-7.3":     {"staged-rx-7.3.4-2026-11-28", "ax-virt-rt-staged", stagedVariants},
	"staged-mbim-virt-rt-7.3":   {"staged-rx-7.3.4-2026-11-28", "mbim-virt-rt", stagedVariants},
	"staged-mbim-x86-rt-7.3":    {"staged-rx-7.3.4-2026-11-28", "mbim-x86-rt", stagedVariants},
	"seed003-r8152-virt-rt-7.3": {"seed003-7.3.4-2026-11-28", "seed003-virt-rt", []string{"stock", "ours", "r8152"}},
	"seed003-r8152-x86-rt-7.3":  {"seed003-7.3.4-2026-11-28", "seed003-x86-rt", []string{"stock", "ours", "r8152"}},
}

var stagedVariants = []string{"stock", "ours", "ours-staged"}

// rxOnlyBoot is one receive-only boot's figures; why says what made it
// invalid.
func rxOnlyBoot(run string) (axSide, string, error) {
	ok, err := kit.VMOK(run)
	if err != nil || !ok {
		return axSide{}, "the boot failed", err
	}
	if w, err := kit.OutsideLoad(filepath.Join(run, "host-top.txt"), true); err != nil || w > 20 {
		return axSide{}, fmt.Sprintf("another process at %.0f%% of a CPU before the boot", w), err
	}
	s, ok, err := axDirection(run, "receive")
	if err != nil || !ok {
		return s, "the bench incomplete", err
	}
	return s, "", nil
}

// stagedReps reads every rep of phase; a rep with a boot not counted is
// in dropped with the reason, not in got.
func stagedReps(dir, phase string, variants []string) (reps []int, got map[int]map[string]axSide, dropped []string, err error) {
	if reps, err = kit.Reps(dir, phase+"-"+variants[0]); err != nil {
		return
	}
	got = map[int]map[string]axSide{}
	for _, i := range reps {
		boots := map[string]axSide{}
		var why []string
		for _, v := range variants {
			s, w, err := rxOnlyBoot(filepath.Join(dir, fmt.Sprintf("%s-%s-%d", phase, v, i)))
			if err != nil {
				return nil, nil, nil, err
			}
			if w != "" {
				why = append(why, v+": "+w)
			}
			boots[v] = s
		}
		if len(why) > 0 {
			dropped = append(dropped, fmt.Sprintf("rep %d (%s)", i, strings.Join(why, ", ")))
			continue
		}
		got[i] = boots
	}
	return
}

// stagedTable: one row per variant - medians over the counted reps of its
// receive rate, busy guest CPU per Mbit/s and GRO's segments per skb, and
// of each rep's ratios to that rep's boots of the first two variants.
func stagedTable(dir, phase string, variants []string) (string, error) {
	reps, got, dropped, err := stagedReps(dir, phase, variants)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, v := range variants {
		var m, b, gro, mS, bS, mO, bO []float64
		for _, i := range reps {
			r, ok := got[i]
			if !ok {
				continue
			}
			x, s, o := r[v], r[variants[0]], r[variants[1]]
			m, b, gro = append(m, x.mbit), append(b, x.busyPerMbit), append(gro, x.gro)
			mS, bS = append(mS, x.mbit/s.mbit), append(bS, x.busyPerMbit/s.busyPerMbit)
			mO, bO = append(mO, x.mbit/o.mbit), append(bO, x.busyPerMbit/o.busyPerMbit)
		}
		rows = append(rows, []string{v, strconv.Itoa(len(m)), med(m, 1), med(mS, 3), med(mO, 3), med(b, 3), med(bS, 3), med(bO, 3), med(gro, 1)})
	}
	if len(dropped) > 0 {
		rows = append(rows, []string{"not counted", strconv.Itoa(len(dropped)), strings.Join(dropped, "; "), "", "", "", "", "", ""})
	}
	a, b := "/ "+variants[0], "/ "+variants[1]
	return kit.Table([]string{"variant", "reps", "receive Mbit/s", a, b, "busy % per Mbit/s", a, b, "GRO segments per skb"}, rows), nil
}

// stagedRepsTable: each counted rep's receive Mbit/s per variant and the
// third variant's ratios to the second (rate, busy CPU per Mbit/s).
func stagedRepsTable(dir, phase string, variants []string) (string, error) {
	reps, got, _, err := stagedReps(dir, phase, variants)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, i := range reps {
		r, ok := got[i]
		if !ok {
			rows = append(rows, []string{strconv.Itoa(i), "-", "-", "-", "not counted", ""})
			continue
		}
		st, o := r[variants[2]], r[variants[1]]
		rows = append(rows, []string{strconv.Itoa(i), kit.F(r[variants[0]].mbit, 1), kit.F(o.mbit, 1), kit.F(st.mbit, 1),
			kit.F(st.mbit/o.mbit, 3), kit.F(st.busyPerMbit/o.busyPerMbit, 3)})
	}
	vs := variants[2] + " / " + variants[1]
	if variants[2] == "ours-staged" { // the tables' first wording
		vs = "staged / ours"
	}
	return kit.Table([]string{"rep", variants[0] + " Mbit/s", variants[1] + " Mbit/s", variants[2] + " Mbit/s", vs + ": rate", vs + ": busy per Mbit/s"}, rows), nil
}
