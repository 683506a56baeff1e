// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

// No made-up numbers: a shaper or a limit is set only at a rate the host
// measured or negotiated, never at a constant a driver reports whatever
// the link does. An Ethernet PHY negotiates a rate and a duplex; usbnet
// drivers without MII report the device's CDC speed notification and
// leave the duplex unknown (usbnet_get_link_ksettings_internal(): a phone
// tethered over NCM reports its USB bit rate, f_ncm's 425 Mbit/s at high
// speed; an RTL8156 in NCM mode its PHY's, which nothing here can tell
// apart); virtual and tunnel drivers report constants (tun 10 Mbit/s,
// veth 10000).

// constRate are drivers whose reported speed is not a negotiated rate.
var constRate = map[string]bool{"tun": true, "veth": true, "virtio_net": true, "wireguard": true, "dummy": true,
	"cdc_ncm": true, "cdc_ether": true, "cdc_mbim": true, "huawei_cdc_ncm": true, "rndis_host": true, "cdc_eem": true,
	"cdc_subset": true, "zaurus": true, "qmi_wwan": true}

// phyRate: is d's link speed a rate its PHY negotiated? why says why not.
func phyRate(d *inspect.Device) (bool, string) {
	switch {
	case d.Link.SpeedMbps == nil || *d.Link.SpeedMbps <= 0:
		return false, d.Name + " reports no link speed"
	case constRate[d.Driver]:
		return false, fmt.Sprintf("%s reports %d Mbit/s, a speed its driver (%s) passes on from the device or sets itself, not one a PHY negotiated", d.Name, *d.Link.SpeedMbps, d.Driver)
	case d.Link.Duplex != "full" && d.Link.Duplex != "half":
		return false, fmt.Sprintf("%s reports %d Mbit/s without a duplex: no PHY negotiated it", d.Name, *d.Link.SpeedMbps)
	}
	return true, ""
}
