// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// Classify names the RX path of a device from its event counts: gro
// segments entering GRO, polls by the device's NAPIs that did work, skbs a
// driver handed over with netif_receive_skb{,_list} (direct), skbs queued
// with netif_rx, and skbs delivered to the stack.
func Classify(gro, pollsWithWork, direct, netifRx, delivered uint64) (datapath.Path, string) {
	total := gro + direct + netifRx
	note := ""
	if total > 0 {
		var parts []string
		for _, p := range []struct {
			n string
			v uint64
		}{{"GRO", gro}, {"netif_receive_skb", direct}, {"netif_rx", netifRx}} {
			if p.v > 0 && p.v*10 >= total && p.v != total {
				parts = append(parts, fmt.Sprintf("%s %.0f%%", p.n, 100*float64(p.v)/float64(total)))
			}
		}
		if len(parts) > 1 {
			note = "mixed entry points: " + strings.Join(parts, ", ")
		}
	}
	switch {
	case gro > 0 && gro >= direct && gro >= netifRx:
		return PathNAPIGRO, note
	case netifRx > 0 && netifRx >= direct:
		return PathNetifRx, note
	case direct > 0 && pollsWithWork > 0:
		return PathNAPINoGRO, note
	case direct > 0:
		return PathDirect, note
	case pollsWithWork > 0:
		return PathNAPINoGRO, "NAPI polls did work but no RX entry event was seen"
	case delivered > 0:
		return PathOther, "skbs delivered without a traced entry point"
	}
	return PathIdle, ""
}

// lightClassify fills in what light mode did not count: the packets a
// device's NAPIs handed up (their work) stand in for the segments entering
// GRO; a ratio of work to delivered skbs above 1.1 means GRO coalesced.
// With no coalescing, "NAPI, no GRO" and "NAPI + GRO" that found nothing
// to merge (UDP, or TSO super-packets) look the same, and the note says so.
func lightClassify(d *Device) {
	var work uint64
	for _, n := range d.NAPIs {
		work += n.Work
	}
	if work == 0 || d.NetifRx >= work || d.Delivered == 0 {
		return
	}
	v := share(work, d.Delivered)
	d.GRORatio = &v
	d.GROSegments = work
	d.GROFrom = "napi_poll work (light mode estimate)"
	if v >= 1.1 {
		d.RXPath, d.RXPathNote = PathNAPIGRO, "light mode: GRO inferred from NAPI work per delivered skb"
	} else {
		d.RXPath, d.RXPathNote = PathNAPINoGRO, "light mode: no coalescing seen; GRO may be on with nothing to merge"
	}
}
