// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

// What the USB rules share (usb-bus-slower-than-link, usb-shared-
// controller): the bus's usable rate.

// gigabitUSB are drivers of USB NICs that are gigabit or faster.
var gigabitUSB = map[string]int{
	"ax88179_178a": 1000, "r8152": 1000, "aqc111": 5000, "lan78xx": 1000,
}

// usbSpeed is a USB NIC's USB link rate in Mbit/s; false when it has none
// or it is unreadable.
func usbSpeed(d *inspect.Device) (float64, bool) {
	if d.USB == nil {
		return 0, false
	}
	usb, err := strconv.ParseFloat(strings.TrimSpace(d.USB.SpeedMbps), 64)
	return usb, err == nil && usb > 0
}
