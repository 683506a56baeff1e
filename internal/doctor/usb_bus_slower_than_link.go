// SPDX-License-Identifier: Apache-2.0

package doctor

import "fmt"

// Rule usb-bus-slower-than-link: a USB NIC whose USB link is slower than
// its Ethernet link (a gigabit adapter on a 480 Mbit/s USB 2 port or
// behind a USB 2 hub).

func init() {
	register(Rule{
		ID:       "usb-bus-slower-than-link",
		Summary:  "USB NIC on a USB link slower than its Ethernet link",
		Findings: []string{"usb-bus-slower-than-link"},
		Check:    checkUSBBusSlowerThanLink,
	})
}

// cdcSpeedClass are the class drivers whose link speed comes from the
// device's own speed notification (CDC NCM/ECM, RNDIS): phones and USB
// gadgets report their USB rate there.
var cdcSpeedClass = map[string]bool{"cdc_ncm": true, "cdc_ether": true, "rndis_host": true}

func checkUSBBusSlowerThanLink(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		usb, ok := usbSpeed(d)
		if !ok {
			continue
		}
		link := 0
		fromLink := false // else from the driver
		if d.Link.SpeedMbps != nil && *d.Link.SpeedMbps > 0 {
			link, fromLink = *d.Link.SpeedMbps, true
			if cdcSpeedClass[d.Driver] && float64(link) <= usb {
				// a speed at or below the device's own USB rate, from a
				// CDC speed notification: a phone or another USB gadget
				// telling its bus rate (425 Mbit/s on USB 2), not an
				// Ethernet PHY behind the bus
				continue
			}
		} else if g := gigabitUSB[d.Driver]; g > 0 {
			link = g
		}
		// USB 2 carries ~35-40 MB/s of payload at best; USB 3 (5 Gbit/s)
		// ~3.2-4 Gbit/s after 8b/10b and protocol overhead.
		usable := usb * 0.7
		if link > 0 && float64(link) > usable {
			f := Finding{
				ID: "usb-bus-slower-than-link", Severity: Warn, Impact: 65, Devices: []string{d.Name},
				Title: fmt.Sprintf("%s: %d Mbit/s Ethernet on a %s Mbit/s USB link", d.Name, link, d.USB.SpeedMbps),
				Evidence: []Evidence{
					snapEv(devField(d, "usb.speed_mbps"), "%s", d.USB.SpeedMbps),
					snapEv(devField(d, "usb.path"), "%s on %s", d.USB.Path, d.USB.HostController.BusID),
				},
				Why: fmt.Sprintf("the USB link caps what the adapter can move at roughly %.0f Mbit/s, below its Ethernet rate, whatever the host does; "+
					"a USB 2 port (or a USB 2 hub on the way) is the usual cause.", usable),
				Fix: &Fix{Commands: []string{
					"# plug the adapter into a USB 3 port (blue, SS) directly, not through a USB 2 hub; check with: lsusb -t",
				}},
				Verify: verifyRX(d.Name),
			}
			if fromLink {
				f.Evidence = append(f.Evidence, snapEv(devField(d, "link.speed_mbps"), "%d", link))
			} else {
				f.Evidence = append(f.Evidence, snapEv(devField(d, "driver"), "%s (a %d Mbit/s adapter)", d.Driver, link))
				f.Unchecked = append(f.Unchecked, "the negotiated Ethernet speed (no carrier or unknown): judged by the driver")
			}
			out = append(out, f)
		}
	}
	return out, nil
}
