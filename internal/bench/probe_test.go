// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"net"
	"testing"
	"time"
)

// TestProbeKernelReceiveTime: a reply that waits in the socket before it is
// read is timed when it arrived (SO_TIMESTAMPNS), not when it was read - so
// a probe process that gets the CPU late does not inflate the RTT.
func TestProbeKernelReceiveTime(t *testing.T) {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Skipf("no loopback UDP: %v", err)
	}
	defer rx.Close()
	p := &Prober{cfg: ProbeConfig{Priority: -1}, conn: rx}
	if err := p.setOpts(rx); err != nil {
		t.Fatal(err)
	}
	if p.RxTime() != "kernel" {
		t.Fatalf("SO_TIMESTAMPNS not enabled on a UDP socket: RxTime %q", p.RxTime())
	}
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	// The kernel turns receive timestamps on with a static key that a
	// work item flips after setsockopt (netstamp_needed_deferred); until
	// it runs, packets arrive unstamped and recvmsg stamps them at the
	// read. On a loaded host that takes a while: wait for a stamped one.
	for i := 0; ; i++ {
		if _, err := tx.Write([]byte("warm-up")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		_, at, err := p.read(make([]byte, 1500), make([]byte, 128))
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(at) >= 25*time.Millisecond {
			break
		}
		if i == 40 {
			t.Fatalf("no packet in 2 s had a receive time before its read: the read time is used, not the kernel's")
		}
	}
	sent := time.Now()
	if _, err := tx.Write([]byte("wirespeed probe")); err != nil {
		t.Fatal(err)
	}
	const wait = 300 * time.Millisecond
	time.Sleep(wait)
	n, at, err := p.read(make([]byte, 1500), make([]byte, 128))
	readAt := time.Now()
	if err != nil || n != len("wirespeed probe") {
		t.Fatalf("read: %d bytes, %v", n, err)
	}
	if late := readAt.Sub(at); late < wait/2 {
		t.Errorf("receive time %v is only %v before the read: the read time was used, not the kernel's", at, late)
	}
	if d := at.Sub(sent); d < -time.Second || d > wait/2 {
		t.Errorf("receive time %v is %v after sending, want about 0", at, d)
	}
}

func TestKernelTimeIgnoresOtherMessages(t *testing.T) {
	if _, ok := kernelTime(nil); ok {
		t.Error("no control message gave a time")
	}
	if _, ok := kernelTime([]byte{1, 2, 3}); ok {
		t.Error("a truncated control message gave a time")
	}
}
