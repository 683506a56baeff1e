// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

var usbSharedControllerCases = addCases("usb-shared-controller", []ruleCase{
	{name: "storage on the same controller", fixture: "rpi4-ax88179", id: "usb-shared-controller", fire: true, sev: Info,
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "eth1")
			d.USB.Neighbours = append(d.USB.Neighbours, inspect.USBDevice{Path: "2-1", Product: "SSD", Drivers: []string{"uas"}})
		}},
	{name: "nothing else on the controller", fixture: "rpi4-ax88179", id: "usb-shared-controller"},
})

func TestRuleUsbSharedController(t *testing.T) { runCases(t, usbSharedControllerCases) }
