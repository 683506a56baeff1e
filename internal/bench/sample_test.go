// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/wirespeed/wirespeed/internal/hostfs"
)

// A USB NIC: its IRQs are the xHCI controller's MSI vectors, two levels up.
func fixtureTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	w := func(p, v string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	xhci := "sys/devices/pci0000:00/0000:00:14.0"
	iface := xhci + "/usb2/2-1/2-1:1.0"
	w(xhci+"/msi_irqs/124", "msi\n")
	w(xhci+"/msi_irqs/125", "msi\n")
	w(iface+"/net/eth1/statistics/rx_bytes", "1000\n")
	for _, f := range []string{"rx_packets", "rx_dropped", "tx_bytes", "tx_packets", "tx_dropped"} {
		w(iface+"/net/eth1/statistics/"+f, "7\n")
	}
	w(iface+"/net/eth1/queues/tx-0/byte_queue_limits/inflight", "3028\n")
	w(iface+"/net/eth1/queues/tx-0/byte_queue_limits/limit", "15140\n")
	w(iface+"/net/eth1/queues/rx-0/rps_cpus", "0\n")
	if err := os.MkdirAll(filepath.Join(root, "sys/class/net"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/net/eth1", filepath.Join(root, "sys/class/net/eth1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../2-1:1.0", filepath.Join(root, iface, "net/eth1/device")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestSysfsDeviceAndIRQs(t *testing.T) {
	fs := hostfs.Dir(fixtureTree(t))
	d, err := SysfsDevice(fs, "eth1")()
	if err != nil {
		t.Fatal(err)
	}
	want := DevSample{RxBytes: 1000, RxPackets: 7, RxDropped: 7, TxBytes: 7, TxPackets: 7, TxDropped: 7,
		BQL: []BQLSample{{Queue: "tx-0", Inflight: 3028, Limit: 15140}}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("device = %+v\nwant     %+v", d, want)
	}
	if got := DeviceIRQs(fs, "eth1"); !reflect.DeepEqual(got, []int{124, 125}) {
		t.Errorf("IRQs = %v, want the xHCI's [124 125]", got)
	}
	if _, err := SysfsDevice(fs, "eth9")(); err == nil {
		t.Error("missing device: no error")
	}
}

// The sampler over /proc files captured on the 2-vCPU Firecracker machine
// (testdata/proc), with one napi kthread added to kthreadd's children.
func TestSamplerRead(t *testing.T) {
	s := &Sampler{FS: hostfs.Dir("testdata"), IRQs: []int{24, 999}}
	sm := s.Read(1.5)
	if len(sm.Errors) > 0 {
		t.Fatalf("errors: %v", sm.Errors)
	}
	if sm.T != 1.5 || len(sm.CPU) != 2 || sm.CPU[1].CPU != 1 || sm.CPU[0].Total() == 0 {
		t.Errorf("cpu = %+v", sm.CPU)
	}
	if len(sm.NetRX) != 2 || len(sm.NetTX) != 2 || sm.NetRX[0]+sm.NetRX[1] == 0 {
		t.Errorf("NET_RX %v NET_TX %v", sm.NetRX, sm.NetTX)
	}
	if len(sm.Softnet) != 2 || sm.Softnet[0].Processed == 0 {
		t.Errorf("softnet = %+v", sm.Softnet)
	}
	if c, ok := sm.IRQs["24"]; !ok || !reflect.DeepEqual(c, []uint64{1, 0}) || len(sm.IRQs) != 1 {
		t.Errorf("irqs = %v, want 24: [1 0] and no 999", sm.IRQs)
	}
	want := []ThreadSample{{PID: 4242, Comm: "napi/ws-rcv-322", Ticks: 1234, CPU: 1}}
	if !reflect.DeepEqual(sm.NAPI, want) {
		t.Errorf("napi = %+v, want %+v", sm.NAPI, want)
	}
}
