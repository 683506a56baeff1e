// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"context"
	"os"
	"testing"

	"github.com/wirespeed/wirespeed/internal/lab"
)

// The raw BTF tracepoint programs and the classic ones, attached side by
// side in two sessions over the same load, count the same events: skbs
// delivered, netif_rx, NAPI polls and their work, NET_RX softirqs - within
// 1% (plus a few events: the two sessions' windows open and close a few
// microseconds apart). Every counting path of the raw programs is covered:
// a receiver with NAPI + GRO, and one on the netif_rx backlog.
func TestLabRawAgreesWithClassic(t *testing.T) {
	needLab(t)
	if _, err := os.Stat(vmlinuxBTF); err != nil {
		t.Skip("no kernel BTF: the raw programs cannot load")
	}
	for _, gro := range []bool{true, false} {
		l, name := upLab(t, lab.Config{GRO: gro, SenderOffloadsOff: true})
		var sess [2]*Session
		for i, p := range []string{ProgramsClassic, ProgramsBTF} {
			s, err := Start(context.Background(), Options{Ifaces: []string{name}, Light: true, Programs: p})
			if err != nil {
				t.Fatalf("%s: Start: %v", p, err)
			}
			defer s.Close()
			hasRaw := map[string]bool{}
			for _, e := range events {
				hasRaw[e.Key()] = e.btf != ""
			}
			for _, e := range s.Events() {
				if raw := e.Detail == RawDetail; e.Status == "attached" && raw != (p == ProgramsBTF && hasRaw[e.Event]) {
					t.Errorf("%s: %s attached as %q", p, e.Event, e.Detail)
				}
			}
			sess[i] = s
		}
		var before [2]*Raw
		for i, s := range sess {
			r, err := s.ReadRaw()
			if err != nil {
				t.Fatal(err)
			}
			before[i] = r
		}
		load(t, l, 2, nil)
		var obs [2]*Observation
		for i, s := range sess {
			r, err := s.ReadRaw()
			if err != nil {
				t.Fatal(err)
			}
			d := Diff(r, before[i])
			obs[i] = Build(d, s.meta(before[i].At, r.At.Sub(before[i].At), d.Attached))
		}
		c, b := findDevice(obs[0], name), findDevice(obs[1], name)
		if c == nil || b == nil {
			t.Fatalf("gro %v: %s missing: classic %v, raw %v", gro, name, c != nil, b != nil)
		}
		same := func(what string, classic, raw uint64) {
			t.Helper()
			if classic == 0 && what != "netif_rx" {
				t.Errorf("gro %v: classic counted no %s", gro, what)
			}
			if !within(raw, classic, 0.01, 20) {
				t.Errorf("gro %v: %s: raw %d, classic %d", gro, what, raw, classic)
			}
		}
		same("delivered skbs", c.Delivered, b.Delivered)
		same("delivered bytes", c.DeliveredBytes, b.DeliveredBytes)
		if !gro {
			same("netif_rx", c.NetifRx, b.NetifRx)
		}
		var cp, bp, cw, bw uint64
		for _, n := range c.NAPIs {
			cp, cw = cp+n.Polls, cw+n.Work
		}
		for _, n := range b.NAPIs {
			bp, bw = bp+n.Polls, bw+n.Work
		}
		if gro {
			same("NAPI polls", cp, bp)
			same("NAPI work", cw, bw)
		}
		var cs, bs uint64
		for i := range obs[0].CPUs {
			cs += obs[0].CPUs[i].NetRX
		}
		for i := range obs[1].CPUs {
			bs += obs[1].CPUs[i].NetRX
		}
		same("NET_RX softirqs", cs, bs)
		if c.RXPath != b.RXPath {
			t.Errorf("gro %v: RX path: raw %q, classic %q", gro, b.RXPath, c.RXPath)
		}
		t.Logf("gro %v: delivered %d/%d, netif_rx %d/%d, polls %d/%d, NET_RX %d/%d (classic/raw); path %s",
			gro, c.Delivered, b.Delivered, c.NetifRx, b.NetifRx, cp, bp, cs, bs, b.RXPath)
		for _, s := range sess {
			s.Close()
		}
		l.Down()
	}
}

func findDevice(o *Observation, name string) *Device {
	for i := range o.Devices {
		if o.Devices[i].Name == name {
			return &o.Devices[i]
		}
	}
	return nil
}
