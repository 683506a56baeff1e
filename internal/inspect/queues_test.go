// SPDX-License-Identifier: Apache-2.0

package inspect

import "testing"

// queues.go: RPS masks decoded, XPS explained where it cannot apply, BQL
// read where the directory exists (with stall stats on 6.x).
func TestQueues(t *testing.T) {
	s := fromFixture(t, "rpi4-ax88179")
	d := device(t, s, "eth1")
	if len(d.RXQueues) != 1 || len(d.TXQueues) != 1 {
		t.Fatalf("queues = %+v %+v", d.RXQueues, d.TXQueues)
	}
	if r := d.RXQueues[0]; r.Name != "rx-0" || r.RPSCPUs != "f" || r.RPSCPUList != "0-3" || r.RPSFlowCnt == nil || *r.RPSFlowCnt != 0 {
		t.Errorf("rx-0 = %+v", r)
	}
	// xps_cpus exists but answers ENOENT on a one-queue device.
	tx := d.TXQueues[0]
	if tx.XPSCPUs != "" || tx.XPSNote != "not applicable: one TX queue" || tx.BQL == nil || *tx.BQL.LimitMax != 1879048192 || tx.BQL.StallThrs != nil {
		t.Errorf("tx-0 = %+v bql %+v", tx, tx.BQL)
	}
	if lo := device(t, s, "lo"); lo.TXQueues[0].BQL != nil {
		t.Errorf("lo has BQL %+v", lo.TXQueues[0].BQL)
	}

	tx = device(t, fromFixture(t, "vm-rpi3-usb-nic", "usb0"), "usb0").TXQueues[0]
	if tx.BQL == nil || tx.BQL.StallThrs == nil || tx.BQL.StallCnt == nil {
		t.Errorf("6.12 BQL = %+v", tx.BQL)
	}
	tx = device(t, fromFixture(t, "firecracker-veth-threaded", "ws-fx1"), "ws-fx1").TXQueues[0]
	if tx.XPSCPUs != "0" || tx.XPSNote != "" {
		t.Errorf("veth tx-0 = %+v", tx)
	}
}
