// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// datapath.go: each branch of the RX path classification on the fixture
// that shows it.
func TestDatapath(t *testing.T) {
	for _, c := range []struct {
		fixture, dev    string
		usbnet, ownNAPI datapath.State
		rxPath          datapath.Path
		text            string
	}{
		{"rpi4-ax88179", "eth1", datapath.Yes, datapath.No, datapath.USBNetPath, "netif_rx backlog (usbnet: no NAPI, no GRO)"},
		{"rpi4-ax88179", "eth0", datapath.No, datapath.Unknown, datapath.NoNAPIGetPath, "unknown (napi-get unavailable)"},
		{"rpi4-ax88179", "lo", datapath.No, datapath.No, datapath.LoopbackPath, "netif_rx backlog (loopback)"},
		{"pi4-r8152", "eth1", datapath.No, datapath.Yes, datapath.NAPIPath(datapath.Yes, datapath.Softirq), "NAPI + GRO (softirq)"},
		{"firecracker-veth-threaded", "ws-fx1", datapath.No, datapath.Yes, datapath.NAPIPath(datapath.Yes, datapath.Threaded), "NAPI + GRO (threaded)"},
		{"firecracker-host", "ifb0", datapath.No, datapath.No, datapath.NoNAPIPath, "no NAPI registered"},
		{"wg-gw-softirq", "wg0", datapath.No, datapath.Yes, datapath.NAPIPath(datapath.Yes, datapath.Softirq), "NAPI + GRO (softirq)"},
		{"wg-gw-threaded", "wg0", datapath.No, datapath.Yes, datapath.NAPIPath(datapath.Yes, datapath.Threaded), "NAPI + GRO (threaded)"},
		{"mt7921u-stock", "wlan0", datapath.No, datapath.No, datapath.MT76WorkerPath, "mt76 usb-rx worker (no NAPI, no GRO)"},
	} {
		d := device(t, fromFixture(t, c.fixture, c.dev), c.dev)
		dp := d.Datapath
		if dp.USBNet.State != c.usbnet || dp.OwnNAPI.State != c.ownNAPI || dp.RXPath != c.rxPath {
			t.Errorf("%s %s: usbnet %+v own NAPI %+v rx path %q, want %s/%s/%q",
				c.fixture, c.dev, dp.USBNet, dp.OwnNAPI, dp.RXPath, c.usbnet, c.ownNAPI, c.rxPath)
		}
		if dp.RXPath.String() != c.text {
			t.Errorf("%s %s: rx path text %q, want %q", c.fixture, c.dev, dp.RXPath, c.text)
		}
	}
}

// datapath.go: with usbnet built in, /sys/module/usbnet/holders is empty
// and the list of minidrivers decides.
func TestDatapathUSBNetMinidrivers(t *testing.T) {
	c := fixtureCollector(t, "rpi4-ax88179")
	for drv, want := range map[string]Tri{
		"asix":  {datapath.Yes, "asix is a usbnet minidriver"},
		"r8152": {datapath.No, "r8152 is not on usbnet"},
		"":      {datapath.Unknown, "no driver bound"},
	} {
		dp := c.datapath(&Device{Bus: "usb", Driver: drv})
		if dp.USBNet != want {
			t.Errorf("%q: usbnet %+v, want %+v", drv, dp.USBNet, want)
		}
		if want.State == datapath.Yes && dp.RXPath != datapath.USBNetPath {
			t.Errorf("%q: rx path %q", drv, dp.RXPath)
		}
	}
}

// fixtureCollector is the collector Collect would use on a fixture, for
// calling one reader on a hand-made Device.
func fixtureCollector(t *testing.T, name string) *collector {
	t.Helper()
	s, a := openFixture(t, name)
	return &collector{fs: s.FS, a: a}
}

// wireless.go: mt76u on 7.3+ polls a threaded NAPI on a dummy netdev named
// mt76u-rx; its usb-rx worker stays for the MCU queue, so a worker without
// that thread is unknown there, and the old RX path only before 7.3.
func TestMT76UWorkerByRelease(t *testing.T) {
	d := device(t, fromFixture(t, "mt7921u-73"), "wlan0")
	if d.Datapath.OwnNAPI.State != datapath.Yes || d.Datapath.RXPath.Class() != datapath.NAPI || len(d.Wireless.RXWorkers) != 1 {
		t.Errorf("7.3 with napi/mt76u-rx-*: %+v, workers %v", d.Datapath, d.Wireless.RXWorkers)
	}
	d.Threads = nil
	for kernel, want := range map[string]datapath.State{"7.3.4+deb13-amd64": datapath.Unknown, "7.4.1": datapath.Unknown, "6.12.117+deb12-amd64": datapath.No, "7.2.13+deb14-amd64": datapath.No} {
		var dp Datapath
		wirelessDatapath(d, &dp, datapath.Yes, datapath.Softirq, kernel)
		if dp.OwnNAPI.State != want {
			t.Errorf("%s, worker only: own_napi %s, want %s (%s)", kernel, dp.OwnNAPI.State, want, dp.OwnNAPI.Evidence)
		}
	}
}

// datapath.go: usbnet's bottom half is named as the kernel runs it.
func TestUsbnetBHContext(t *testing.T) {
	for k, want := range map[string]string{"6.12.117+deb12-amd64": "tasklet", "6.17.1": "BH work", "7.3.4+deb13-arm64": "BH work", "": "tasklet before 6.17"} {
		if got := usbnetBH(k); !strings.Contains(got, want) {
			t.Errorf("usbnetBH(%q) = %q, want %q", k, got, want)
		}
	}
}
