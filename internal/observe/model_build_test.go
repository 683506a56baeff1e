// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"reflect"
	"sort"
	"testing"
)

// TestPollContext: a map key's context is softirq, a task, or - a task
// whose comm is napi/... - a threaded-NAPI kthread; an unknown context
// keeps its pid.
func TestPollContext(t *testing.T) {
	comm := func(pid uint32) string { return map[uint32]string{7: "napi/eth0-8193", 9: "ksoftirqd/1"}[pid] }
	for _, c := range []struct {
		ctx  int
		pid  uint32
		comm func(uint32) string
		want PollContext
	}{
		{CtxSoftirq, 7, comm, PollContext{Kind: PollSoftirq, Polls: 3, Work: 5}},
		{CtxTask, 7, comm, PollContext{Kind: PollThread, PID: 7, Comm: "napi/eth0-8193", Polls: 3, Work: 5}},
		{CtxTask, 9, comm, PollContext{Kind: PollTask, PID: 9, Comm: "ksoftirqd/1", Polls: 3, Work: 5}},
		{CtxTask, 7, nil, PollContext{Kind: PollTask, PID: 7, Polls: 3, Work: 5}},
		{CtxUnknown, 4, comm, PollContext{Kind: PollUnknown, PID: 4, Polls: 3, Work: 5}},
	} {
		if got := pollContext(RawNAPI{Ctx: c.ctx, PID: c.pid}, 3, 5, c.comm); got != c.want {
			t.Errorf("ctx %d pid %d: %+v, want %+v", c.ctx, c.pid, got, c.want)
		}
	}
}

// TestMergeHist: bins with the same bounds add up; others are kept.
func TestMergeHist(t *testing.T) {
	got := mergeHist([]HistBin{{0, 0, 2}, {1, 4, 3}}, []HistBin{{1, 4, 10}, {5, 8, 1}, {65, 0, 1}})
	sort.Slice(got, func(i, j int) bool { return got[i].Lo < got[j].Lo })
	want := []HistBin{{0, 0, 2}, {1, 4, 13}, {5, 8, 1}, {65, 0, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %v, want %v", got, want)
	}
	if got := mergeHist(nil, nil); len(got) != 0 {
		t.Errorf("nothing merged into %v", got)
	}
}

// TestIRQDevices: an IRQ serves the devices inspect names for it and
// those seen whose name is in its actions, each once.
func TestIRQDevices(t *testing.T) {
	devs := map[string]*Device{"eth0": {}, "usb0": {}}
	got := irqDevices(map[string][]int{"eth0": {20}, "eth1": {21}},
		map[int]string{20: "eth0-rx", 22: "usb0, xhci_hcd", 23: "ahci"}, devs)
	for _, l := range got {
		sort.Strings(l)
	}
	want := map[int][]string{20: {"eth0"}, 21: {"eth1"}, 22: {"usb0"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("irq devices %v, want %v", got, want)
	}
}
