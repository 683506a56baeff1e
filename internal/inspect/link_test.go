// SPDX-License-Identifier: Apache-2.0

package inspect

import "testing"

// link.go: link state from sysfs, the root qdisc from the rtnetlink dump
// (none: noqueue), offloads from ethtool, counters from statistics/.
func TestLinkOffloadsStats(t *testing.T) {
	s := fromFixture(t, "rpi4-ax88179")
	d := device(t, s, "eth1")
	l := d.Link
	if l.Operstate != "up" || l.Carrier == nil || !*l.Carrier || l.SpeedMbps == nil || *l.SpeedMbps != 1000 ||
		l.Duplex != "full" || *l.MTU != 1500 || *l.TxQueueLen != 1000 || l.Qdisc != "pfifo_fast" || l.QdiscNote != "" {
		t.Errorf("eth1 link = %+v", l)
	}
	lo := device(t, s, "lo").Link
	if lo.SpeedMbps != nil || lo.Duplex != "" || lo.Qdisc != "noqueue" || lo.QdiscNote != "no root qdisc" {
		t.Errorf("lo link = %+v", lo)
	}

	if len(d.Offloads) != len(offloadNames) {
		t.Fatalf("offloads = %+v", d.Offloads)
	}
	want := map[string][2]bool{"rx-gro": {true, false}, "lro": {false, true}, "tso": {true, false}, "rx-gro-hw": {false, true}}
	for _, o := range d.Offloads {
		w, ok := want[o.Name]
		if !ok {
			continue
		}
		if o.Active == nil || *o.Active != w[0] || o.Fixed != w[1] || o.Error != "" {
			t.Errorf("offload %s (%s) = active %v fixed %v %q", o.Name, o.Kernel, o.Active, o.Fixed, o.Error)
		}
	}

	st := d.Stats
	if *st.RxPackets != 48110233 || *st.RxBytes != 72012345678 || *st.TxPackets != 21773518 || *st.RxDropped != 0 {
		t.Errorf("stats = rx %d/%d tx %d", *st.RxPackets, *st.RxBytes, *st.TxPackets)
	}
}
