// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/lab"
	"github.com/wirespeed/wirespeed/internal/netdevnl"
)

// What one run measures against: the peer (a remote iperf3 server) or the
// lab built for the run, and the checks that the server answers.

// runTarget is where one run sends its load and what it watches meanwhile.
type runTarget struct {
	addr       netip.Addr
	basePort   int
	clientCmd  func(ctx context.Context, argv []string) *exec.Cmd
	inNetns    func(fn func() error) error // nil: the probes run in this namespace
	devices    []DeviceSource
	irqs       []int
	napiPIDs   []int          // nil: every napi kthread on the host
	echo       netip.AddrPort // the lab's UDP echo server, if any
	observeIfs []string
	down       func() // removes what prepare built; nil for a peer
}

// preparePeer checks the peer's iperf3 servers and finds the local device
// that reaches it.
func (o *Options) preparePeer(ctx context.Context, res *Result, run *Run, fs *hostfs.FS, nprocs int) (*runTarget, error) {
	addr, port, err := o.peerAddr()
	if err != nil {
		return nil, err
	}
	t := &runTarget{addr: addr, basePort: port}
	for i := 0; i < nprocs; i++ {
		if err := CheckServer(ctx, netip.AddrPortFrom(addr, uint16(port+i)), 3*time.Second); err != nil {
			return nil, err
		}
	}
	iface := o.Iface
	if iface == "" {
		iface, _ = RouteDevice(ctx, addr)
	}
	if iface != "" {
		run.Devices = []string{iface}
		t.devices = append(t.devices, DeviceSource{Key: iface, Read: SysfsDevice(fs, iface)})
		t.irqs = DeviceIRQs(fs, iface)
		t.observeIfs = []string{iface}
		if _, ok := res.Inspect["local"]; !ok && o.Inspect != nil {
			res.Inspect["local"] = inspectOrError(ctx, o.Inspect, "", []string{iface})
		}
	}
	t.clientCmd = func(ctx context.Context, argv []string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 3 * time.Second
		return cmd
	}
	return t, nil
}

// prepareLab builds the variant's host lab; the caller takes it down with
// the target's down.
func (o *Options) prepareLab(ctx context.Context, res *Result, run *Run, v Variant, rep, nprocs int) (*runTarget, error) {
	cfg := *v.Lab
	cfg.Servers = nprocs
	cfg.BasePort = o.Port
	l, err := lab.Up(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("build the host lab: %w", err)
	}
	t := &runTarget{down: func() { l.Down() }}
	run.Namespaces = map[string]string{"sender": l.SenderNS, "receiver": l.ReceiverNS}
	run.Devices = []string{l.SenderNS + "/" + l.SenderIf, l.ReceiverNS + "/" + l.ReceiverIf}
	t.observeIfs = []string{l.SenderIf, l.ReceiverIf}
	t.addr, t.basePort = l.ReceiverAddr, l.ServerPorts[0]
	if l.EchoPort != 0 && !o.NoUDPProbe {
		t.echo = netip.AddrPortFrom(l.ReceiverAddr, uint16(l.EchoPort))
	}
	t.inNetns = func(fn func() error) error { return lab.InNetns(l.SenderNS, fn) }
	for _, d := range []struct{ ns, dev string }{{l.SenderNS, l.SenderIf}, {l.ReceiverNS, l.ReceiverIf}} {
		d := d
		t.devices = append(t.devices, DeviceSource{Key: d.ns + "/" + d.dev, Read: func() (DevSample, error) {
			var b []byte
			err := lab.InNetns(d.ns, func() error {
				var err error
				b, err = os.ReadFile("/proc/thread-self/net/dev")
				return err
			})
			if err != nil {
				return DevSample{}, err
			}
			return ParseNetDev(b, d.dev)
		}})
	}
	// Follow only the lab devices' napi kthreads, not other ones on the host.
	t.napiPIDs = []int{}
	for _, ns := range []string{l.SenderNS, l.ReceiverNS} {
		_ = lab.InNetns(ns, func() error {
			napis, err := netdevnl.DumpNAPIs()
			for _, n := range napis {
				if n.PID != nil {
					t.napiPIDs = append(t.napiPIDs, *n.PID)
				}
			}
			return err
		})
	}
	if rep == 1 && o.Inspect != nil {
		res.Inspect[v.Name+"/sender"] = inspectOrError(ctx, o.Inspect, l.SenderNS, []string{l.SenderIf})
		res.Inspect[v.Name+"/receiver"] = inspectOrError(ctx, o.Inspect, l.ReceiverNS, []string{l.ReceiverIf})
	}
	pin := cfg.PinSender
	t.clientCmd = func(ctx context.Context, argv []string) *exec.Cmd {
		if pin != nil {
			argv = append(argv, "-A", strconv.Itoa(*pin))
		}
		return l.Command(ctx, l.SenderNS, argv...)
	}
	return t, nil
}

// CheckServer makes sure an iperf3 server answers at ap, failing within
// timeout with an error naming address and port. It opens a control
// connection and sends a 37-byte cookie as an iperf3 client does: a server
// answers with PARAM_EXCHANGE (9), or ACCESS_DENIED (-1) when another test
// runs. A bare TCP accept is not enough - a proxy or another service would
// leave iperf3 hanging. The server logs a short error and waits for the
// next client when the connection then closes.
func CheckServer(ctx context.Context, ap netip.AddrPort, timeout time.Duration) error {
	d := net.Dialer{Timeout: timeout}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := d.DialContext(cctx, "tcp", ap.String())
	if err != nil {
		return fmt.Errorf("no iperf3 server reachable at %s: %w (start one there with 'iperf3 -s -p %d'; check the address and any firewall)", ap, err, ap.Port())
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	cookie := []byte("wirespeedcheckwirespeedcheckwirespee\x00")
	if _, err := c.Write(cookie); err != nil {
		return fmt.Errorf("%s accepts TCP but the iperf3 handshake failed: %w", ap, err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(c, b); err != nil {
		return fmt.Errorf("%s accepts TCP but no iperf3 server answered the handshake within %v (is it iperf3 3.x? a proxy?): %w", ap, timeout, err)
	}
	switch int8(b[0]) {
	case 9: // PARAM_EXCHANGE
		return nil
	case -1: // ACCESS_DENIED
		return fmt.Errorf("the iperf3 server at %s is busy with another test; try again or use another port", ap)
	}
	return fmt.Errorf("%s answered the iperf3 handshake with state %d, want 9 (PARAM_EXCHANGE): is this an iperf3 3.x server?", ap, int8(b[0]))
}

// RouteDevice returns the device the route to addr leaves through.
func RouteDevice(ctx context.Context, addr netip.Addr) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", "-o", "route", "get", addr.String()).Output()
	if err != nil {
		return "", fmt.Errorf("ip route get %s: %w", addr, err)
	}
	f := strings.Fields(string(out))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			return f[i+1], nil
		}
	}
	return "", fmt.Errorf("ip route get %s: no device in %q", addr, out)
}
