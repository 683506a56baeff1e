// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab/usbdev"
)

// TestUSBDevFlagsRefused: each bad value of 'lab usbdev' is refused with
// a message naming it, before anything is created.
func TestUSBDevFlagsRefused(t *testing.T) {
	good := func() usbdev.Options {
		return usbdev.Options{Model: "ncm", Socket: "/run/x.sock", Tap: "t0", Faults: &usbdev.Faults{}}
	}
	for _, tc := range []struct {
		name, mac, want string
		edit            func(*usbdev.Options)
	}{
		{"model", "02:00:00:00:00:01", `unknown device model "e1000"`, func(o *usbdev.Options) { o.Model = "e1000" }},
		{"no socket", "02:00:00:00:00:01", "--socket PATH and --tap NAME", func(o *usbdev.Options) { o.Socket = "" }},
		{"multicast MAC", "03:00:00:00:00:01", "no unicast Ethernet address", func(o *usbdev.Options) {}},
		{"MTU", "02:00:00:00:00:01", "--mtu 67", func(o *usbdev.Options) { o.MTU = 67 }},
		{"per mille", "02:00:00:00:00:01", "--bad 1001", func(o *usbdev.Options) { o.Faults.BadPerMille = 1001 }},
		{"replug", "02:00:00:00:00:01", "shorter than an enumeration", func(o *usbdev.Options) { o.Faults.ReplugEvery = 100 * time.Millisecond }},
		{"batch without wait", "02:00:00:00:00:01", "--batch 4 --burst 0 needs --batch-wait", func(o *usbdev.Options) { o.Batch.Frames = 4 }},
		{"batch wait", "02:00:00:00:00:01", "--batch-wait 1s: at most", func(o *usbdev.Options) { o.Batch = usbdev.Batch{Frames: 4, Wait: time.Second} }},
	} {
		o := good()
		tc.edit(&o)
		err := checkUSBDevFlags(&o, tc.mac, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	o := good()
	if err := checkUSBDevFlags(&o, "02:77:73:00:00:01", nil); err != nil || o.MAC != [6]byte{2, 0x77, 0x73, 0, 0, 1} {
		t.Errorf("good flags: %v, MAC %x", err, o.MAC)
	}
}
