// SPDX-License-Identifier: Apache-2.0

package inspect

func (c *collector) link(name string, ifindex int) Link {
	base := "/sys/class/net/" + name
	l := Link{}
	l.Operstate, _ = c.str(base + "/operstate")
	if s, e := c.str(base + "/carrier"); e == "" {
		v := s == "1"
		l.Carrier = &v
	}
	if n := c.intp(base + "/speed"); n != nil && *n > 0 {
		l.SpeedMbps = n
	}
	if s, e := c.str(base + "/duplex"); e == "" && s != "unknown" {
		l.Duplex = s
	}
	l.MTU = c.intp(base + "/mtu")
	l.TxQueueLen = c.intp(base + "/tx_queue_len")
	if c.a.QdiscError != "" {
		l.QdiscNote = "unknown: " + c.a.QdiscError
	}
	for _, q := range c.a.Qdiscs {
		if q.Ifindex == ifindex && q.Root {
			l.Qdisc = q.Kind
		}
	}
	if l.Qdisc == "" && c.a.QdiscError == "" {
		l.Qdisc = "noqueue"
		l.QdiscNote = "no root qdisc"
	}
	return l
}

// offloadNames maps the short names inspect shows to kernel feature strings.
var offloadNames = []struct{ short, kernel string }{
	{"rx-gro", "rx-gro"},
	{"rx-gro-hw", "rx-gro-hw"},
	{"rx-gro-list", "rx-gro-list"},
	{"rx-udp-gro-forwarding", "rx-udp-gro-forwarding"},
	{"lro", "rx-lro"},
	{"tso", "tx-tcp-segmentation"},
	{"tso6", "tx-tcp6-segmentation"},
	{"gso", "tx-generic-segmentation"},
	{"uso", "tx-udp-segmentation"}, // UDP GSO offload (the 7.0-7.1.4 corruption workaround turns it off)
}

func (c *collector) offloads(name string) []Offload {
	feats, e := c.a.features(name)
	out := []Offload{}
	for _, o := range offloadNames {
		off := Offload{Name: o.short, Kernel: o.kernel}
		if e != "" {
			off.Error = e
		} else if f, ok := feats[o.kernel]; ok {
			v := f.Active
			off.Active, off.Fixed = &v, f.Fixed
		} else {
			off.Error = "not known to this kernel"
		}
		out = append(out, off)
	}
	return out
}

func (c *collector) stats(base string) Stats {
	s := base + "/statistics/"
	return Stats{
		RxPackets: c.uint64p(s + "rx_packets"), TxPackets: c.uint64p(s + "tx_packets"),
		RxBytes: c.uint64p(s + "rx_bytes"), TxBytes: c.uint64p(s + "tx_bytes"),
		RxDropped: c.uint64p(s + "rx_dropped"), TxDropped: c.uint64p(s + "tx_dropped"),
		RxErrors: c.uint64p(s + "rx_errors"), TxErrors: c.uint64p(s + "tx_errors"),
	}
}
