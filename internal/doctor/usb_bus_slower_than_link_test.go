// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var usbBusSlowerThanLinkCases = addCases("usb-bus-slower-than-link", []ruleCase{
	{name: "gigabit adapter on USB 2", fixture: "rpi4-ax88179", id: "usb-bus-slower-than-link", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").USB.SpeedMbps = "480" }},
	{name: "gigabit adapter without carrier on USB 2", fixture: "rpi4-ax88179", id: "usb-bus-slower-than-link", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "eth1")
			d.USB.SpeedMbps, d.Link.SpeedMbps = "480", nil
		}},
	{name: "gigabit adapter on USB 3", fixture: "rpi4-ax88179", id: "usb-bus-slower-than-link"},
	{name: "2.5G adapter on 5 Gbit/s USB", fixture: "rpi4-ax88179", id: "usb-bus-slower-than-link",
		change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").Link.SpeedMbps = ptr(2500) }},
})

func TestRuleUsbBusSlowerThanLink(t *testing.T) { runCases(t, usbBusSlowerThanLinkCases) }
