// SPDX-License-Identifier: Apache-2.0

package ethtoolioctl

import (
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

const (
	ethtoolGDrvInfo = 0x00000003
	drvInfoSize     = 196 // struct ethtool_drvinfo
)

// DrvInfo is what ETHTOOL_GDRVINFO answers: the driver's name (also for
// virtual devices, which have no driver link in sysfs: "veth",
// "wireguard"), its version and the bus address.
type DrvInfo struct {
	Driver   string `json:"driver"`
	Version  string `json:"version,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	BusInfo  string `json:"bus_info,omitempty"`
}

// DriverInfo returns the driver information of ifname in the calling
// thread's network namespace.
func DriverInfo(ifname string) (DrvInfo, error) {
	if ifname == "" || len(ifname) >= unix.IFNAMSIZ {
		return DrvInfo{}, fmt.Errorf("ethtoolioctl: interface %q: invalid name: %w", ifname, os.ErrNotExist)
	}
	fd, err := controlSocket()
	if err != nil {
		return DrvInfo{}, fmt.Errorf("ethtoolioctl: socket: %w", err)
	}
	defer unix.Close(fd)
	buf := make([]byte, drvInfoSize)
	binary.NativeEndian.PutUint32(buf, ethtoolGDrvInfo)
	if err := ioctlEthtool(fd, ifname, buf); err != nil {
		return DrvInfo{}, wrapErr(ifname, "ETHTOOL_GDRVINFO", err)
	}
	return parseDrvInfo(buf), nil
}

func parseDrvInfo(b []byte) DrvInfo {
	field := func(i int) string {
		s := b[4+32*i : 4+32*(i+1)]
		end := 0
		for end < len(s) && s[end] != 0 {
			end++
		}
		return string(s[:end])
	}
	return DrvInfo{Driver: field(0), Version: field(1), Firmware: field(2), BusInfo: field(3)}
}
