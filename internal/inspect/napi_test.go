// SPDX-License-Identifier: Apache-2.0

package inspect

import "testing"

// napi.go: napi-get joined with queue-get by NAPI id, and a NAPI's kthread
// read from /proc/PID/stat and status.
func TestNAPIs(t *testing.T) {
	d := device(t, fromFixture(t, "firecracker-host", "eth0"), "eth0")
	if len(d.NAPIs) != 1 || d.NAPIs[0].ID != 257 || len(d.NAPIs[0].RXQueues) != 1 || d.NAPIs[0].RXQueues[0] != 0 {
		t.Errorf("virtio_net napis = %+v", d.NAPIs)
	}

	d = device(t, fromFixture(t, "firecracker-veth-threaded", "ws-fx1"), "ws-fx1")
	n := d.NAPIs[0]
	if n.ID != 278 || n.Threaded != "enabled" || n.Thread == nil {
		t.Fatalf("veth napi = %+v", n)
	}
	if th := *n.Thread; th.PID != 12929 || th.Comm != "napi/ws-fx1-278" || th.CPU != 0 || th.AllowedCPU != "0-1" || th.State != "S" {
		t.Errorf("thread = %+v", th)
	}
}

// napi.go: id-less NAPIs (WireGuard's per-peer ones) are found by thread
// name, each device only its own: wg1's prefix must not catch wg10-wg15.
func TestNAPIThreadsByName(t *testing.T) {
	s := fromFixture(t, "wg-gateway-16", "wg1", "wg10")
	for _, name := range []string{"wg1", "wg10"} {
		d := device(t, s, name)
		if len(d.Threads) != 1 || d.Threads[0].Comm != "napi/"+name+"-0" {
			t.Errorf("%s threads = %+v", name, d.Threads)
		}
	}
}
