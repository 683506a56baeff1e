// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"reflect"
	"testing"
)

// TestIRQDeltas: per-CPU deltas of the IRQs both samples have with the
// same CPUs; a counter that went back (reset) counts 0; none gives nil.
func TestIRQDeltas(t *testing.T) {
	a := Sample{IRQs: map[string][]uint64{"eth0:30": {10, 20}, "eth0:31": {5}, "eth0:32": {9, 9}}}
	b := Sample{IRQs: map[string][]uint64{"eth0:30": {15, 19}, "eth0:31": {6, 7}, "eth0:33": {1}}}
	if got, want := irqDeltas(a, b), map[string][]uint64{"eth0:30": {5, 0}}; !reflect.DeepEqual(got, want) {
		t.Errorf("irq deltas %v, want %v", got, want)
	}
	if got := irqDeltas(Sample{}, Sample{}); got != nil {
		t.Errorf("no IRQs: %v, want nil", got)
	}
}

// TestDevDeltas: rates over the first and last samples; BQL peaks over
// every sample of the window, middle ones included.
func TestDevDeltas(t *testing.T) {
	win := []Sample{
		{Devices: map[string]DevSample{"eth0": {RxBytes: 0, TxPackets: 1}}},
		{Devices: map[string]DevSample{"eth0": {BQL: []BQLSample{{Queue: "tx-0", Inflight: 9000, Limit: 30000}}}}},
		{Devices: map[string]DevSample{"eth0": {RxBytes: 2_500_000, TxPackets: 11, BQL: []BQLSample{{Queue: "tx-0", Inflight: 100, Limit: 40000}}},
			"usb0": {RxBytes: 5}}},
	}
	got := devDeltas(win, 2)
	want := map[string]DevDelta{"eth0": {RxMbit: 10, TxPackets: 10, BQLMaxBytes: 9000, BQLLimit: 40000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dev deltas %+v, want %+v", got, want)
	}
}
