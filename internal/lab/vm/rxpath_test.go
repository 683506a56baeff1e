// SPDX-License-Identifier: Apache-2.0

package vm

import "testing"

// The classes and byte counts of one AX88179 boot of the device lab
// (ax-rt-7.3.4-2026-11-28, ax-virt-rt-ours-1): sending, observe saw only
// the ACKs come in and nothing for GRO to merge; receiving, GRO merged
// ~12 segments per skb. The console summary said "NAPI, no GRO" because
// bench-send.json was read last.
const (
	benchSendObserve = `{"runs":[{"observe":{"devices":[{"name":"eth0","rx_path":"NAPI, no GRO","delivered_bytes":134258}]}}]}`
	benchRecvObserve = `{"runs":[{"observe":{"devices":[{"name":"eth0","rx_path":"NAPI + GRO","delivered_bytes":27440754}]}}]}`
)

func TestRXPathFromTheReceivingBench(t *testing.T) {
	for _, order := range [][]string{{benchSendObserve, benchRecvObserve}, {benchRecvObserve, benchSendObserve}} {
		seen := map[string]RXSeen{}
		for _, b := range order {
			for d, s := range RXPaths([]byte(b)) {
				MergeRXPath(seen, d, s)
			}
		}
		if got := seen["eth0"].Class; got != "NAPI + GRO" {
			t.Errorf("benches read in this order %v: eth0's RX path %q, want the receiving bench's %q", order, got, "NAPI + GRO")
		}
	}
	if got := RXPaths([]byte(`{"runs":[{"observe":{"devices":[{"name":"eth0","rx_path":""}]}},{}]}`)); len(got) != 0 {
		t.Errorf("no class seen: %v, want none", got)
	}
	if got := RXPaths([]byte(`not json`)); len(got) != 0 {
		t.Errorf("bad JSON: %v, want none", got)
	}
}
