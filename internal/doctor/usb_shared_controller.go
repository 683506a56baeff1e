// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"
)

// Rule usb-shared-controller: a USB NIC shares its host controller - and
// so its one interrupt - with storage or other NICs.

func init() {
	register(Rule{
		ID:       "usb-shared-controller",
		Summary:  "USB NIC sharing its host controller with storage or other NICs",
		Findings: []string{"usb-shared-controller"},
		Check:    checkUSBSharedController,
	})
}

func checkUSBSharedController(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		if _, ok := usbSpeed(d); !ok {
			continue
		}
		var busy []string
		for _, n := range d.USB.Neighbours {
			for _, drv := range n.Drivers {
				if drv == "usb-storage" || drv == "uas" || gigabitUSB[drv] > 0 || drv == "cdc_ether" || drv == "asix" {
					busy = append(busy, fmt.Sprintf("%s %s (%s)", n.Path, n.Product, drv))
					break
				}
			}
		}
		if len(busy) > 0 {
			out = append(out, Finding{
				ID: "usb-shared-controller", Severity: Info, Impact: 20, Devices: []string{d.Name},
				Title:    fmt.Sprintf("%s shares USB host controller %s with %s", d.Name, d.USB.HostController.BusID, strings.Join(busy, ", ")),
				Evidence: []Evidence{snapEv(devField(d, "usb.neighbours"), "%s", strings.Join(busy, "; "))},
				Why: "every device on a host controller shares its bandwidth and its one interrupt (and so the CPU that interrupt runs on): " +
					"a disk copy and network traffic at the same time compete for both.",
				Fix:       &Fix{Commands: []string{"# move the storage (or the other NIC) to another host controller if the machine has one: lsusb -t shows which bus each device is on"}},
				Unchecked: []string{"whether the neighbours are busy at the same time as the NIC: not visible in a snapshot"},
			})
		}
	}
	return out, nil
}
