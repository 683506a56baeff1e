// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab/usbdev"
)

const usbdevUsage = `wirespeed lab usbdev --socket PATH --tap NAME [--model ncm] [--mbit N] [hostile flags]

A USB network adapter that lives outside the guest: it serves the usbredir
protocol on the unix socket PATH, where QEMU's usb-redir device connects
(-chardev socket,id=ud,path=PATH -device usb-redir,chardev=ud,bus=xhci.0),
and appears on the guest's xHCI as a SuperSpeed adapter. Its Ethernet side
is the tap (tun for mbim) NAME, created in the network namespace it runs in (run it under
'ip netns exec NS'). 'wirespeed lab vm usbdev' starts it for you.

Models: ncm (CDC-NCM, cdc_ncm: NTB16 aggregates, speed and connection
notifications), mbim (a modem's MBIM data function, cdc_mbim: the same
blocks with IPS datagram tables of raw IP, on a tun instead of a tap),
ax88179 (an ASIX AX88179 gigabit adapter, ax88179_178a: vendor registers,
PHY and link-status interrupt; its own RX aggregates within the bulk-in size
the driver sets, with RX checksums checked; TX checksums filled and TSO
segmented in the device, as the driver claims both), aqc111 (an Aquantia
AQC111U multi-gigabit adapter, aqc111: vendor registers, the firmware's PHY
word and link-status interrupt, linking at 1000 unless --mbit says more;
its own RX aggregates up to 62 KiB; TX checksums, TSO and VLAN tags done in
the device), rtl8153 (a Realtek RTL8153 gigabit adapter, r8152 - its own
NAPI and GRO, not usbnet: OCP registers through vendor requests, the PHY
behind its window, the link-status interrupt; rx_desc aggregates up to the
driver's 32 KiB with the checksums it checked, VLAN tags stripped when asked;
TX checksums, TSO and VLAN tags done in the device), rndis (a phone's USB
tethering, rndis_host: RNDIS messages in encapsulated commands with
RESPONSE_AVAILABLE notifications, each frame in a packet message, several
per transfer within the host's MaxTransferSize), eem (a CDC EEM function,
cdc_eem: no control requests, several EEM data packets per transfer, their
CRCs the Ethernet CRC and the 0xdeadbeef sentinel in turn, an echo the host
must answer in every 64th; cdc_eem drops the packets with a CRC that are
not last in their transfer, its own bug, counted in the guest's rx_errors).

--batch N --batch-wait D holds each bulk IN transfer, of every model, until
it carries N frames or D has passed since its first (at most 200ms): at low
rates several segments of one flow then share a transfer, which the frames
waiting when the host asks rarely do. --burst N (with --batch-wait D) builds N
transfers for the requests waiting before it answers any, then answers them
back to back, so the driver takes several in one NAPI poll, where GRO holds a
flow across transfers (a burst not filled within D goes out as it is).

Hostile mode (--seed makes a run repeatable): --bad N malformed aggregates
per 1000 (overlapping, duplicate and header pointers, lengths and counts past
the end, bad signatures, NDP loops, truncated blocks; for ax88179 zero and
too large counts, header offsets past the end or into the frames, frame
lengths past the transfer, runts, CRC errors, truncated aggregates; for
aqc111 zero and too large counts, descriptor offsets past the end or into
the frames, lengths past the descriptors or short of them, frames not
marked received, truncated aggregates; for rtl8153 lengths past the
transfer, longer or shorter than the frame, runts and zero, truncated
aggregates, a lone descriptor; for rndis
bad message types, MessageLength past the transfer, zero or short of the
header, data, OOB and per-packet info outside the message, zero data,
truncated messages; for eem lengths past the end, zero lengths, runts,
echoes past the end, commands a host does not take, bad CRCs and sentinels,
truncated headers and packets, transfers of padding), --stall N stalled bulk
IN answers per 1000, --slow N answers per 1000 held up to --max-delay,
--slow-out N bulk OUT transfers per 1000 held up to --max-delay before the
device takes them (those behind wait; control requests and the other
endpoints are still answered: TX URBs stay in flight across a stop),
--replug-every D unplugs (mid-transfer) and re-plugs about every D of use:
only while the host's driver has the interface open (bulk IN requests
waiting), never during its probe - QEMU's xHCI leaves the transfers an
unplug cuts to the driver's timeouts, where a real controller fails them.

The counts (transfers, frames, malformed aggregates by kind, the process's
CPU) go to --stats FILE as JSON every second and at exit. Ends on SIGINT or
SIGTERM. Needs root (the tap).`

// runLabUSBDev runs the device until the context ends.
func runLabUSBDev(ctx context.Context, env Env, fs *flag.FlagSet, args []string) error {
	o := usbdev.Options{Faults: &usbdev.Faults{}}
	fs.StringVar(&o.Model, "model", "ncm", "device model: "+strings.Join(usbdev.Models, ", "))
	fs.StringVar(&o.Socket, "socket", "", "unix socket QEMU's usb-redir connects to")
	fs.StringVar(&o.Tap, "tap", "", "the device's Ethernet side: a tap created in this namespace")
	fs.IntVar(&o.Mbit, "mbit", 0, "link rate in Mbit/s (0: unpaced)")
	fs.IntVar(&o.MTU, "mtu", 0, "the tap's MTU (68-65535; 0: the kernel's): small segments, several of one flow per transfer")
	mac := fs.String("mac", "02:77:73:00:00:01", "MAC address the host's driver gives its netdev")
	fs.StringVar(&o.StatsFile, "stats", "", "write the counts as JSON to FILE")
	fs.Int64Var(&o.Faults.Seed, "seed", 1, "hostile mode's random seed")
	fs.IntVar(&o.Faults.BadPerMille, "bad", 0, "malformed aggregates per 1000")
	fs.IntVar(&o.Faults.StallPerMille, "stall", 0, "stalled bulk IN answers per 1000")
	fs.IntVar(&o.Faults.SlowPerMille, "slow", 0, "bulk IN answers per 1000 held up to --max-delay")
	fs.IntVar(&o.Faults.SlowOutPerMille, "slow-out", 0, "bulk OUT transfers per 1000 held up to --max-delay")
	fs.DurationVar(&o.Faults.MaxDelay, "max-delay", 20*time.Millisecond, "longest hold of a slow answer")
	fs.DurationVar(&o.Faults.ReplugEvery, "replug-every", 0, "unplug and re-plug about this often while the interface is open (0: never)")
	fs.IntVar(&o.Batch.Frames, "batch", 0, "hold each bulk IN transfer until it carries N frames (0: send what is waiting)")
	fs.DurationVar(&o.Batch.Wait, "batch-wait", 0, "longest a --batch transfer (or a --burst) waits for its frames, from its first")
	fs.IntVar(&o.Batch.Transfers, "burst", 0, "answer bulk IN requests N at a time, back to back (0: each as it is built)")
	verbose := fs.Bool("v", false, "log the protocol's events to stderr")
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(env.Stdout, usbdevUsage)
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkUSBDevFlags(&o, *mac, pos); err != nil {
		return &UsageError{Err: err}
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("lab usbdev needs root (it creates the tap %s); run it with sudo", o.Tap)
	}
	logf := func(f string, a ...any) {
		if *verbose {
			fmt.Fprintf(env.Stderr, f+"\n", a...)
		}
	}
	fmt.Fprintf(env.Stderr, "usbdev: %s on %s, tap %s, %s\n", o.Model, o.Socket, o.Tap, rateText(o.Mbit))
	res, err := usbdev.Run(ctx, o, logf)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "usbdev: %d connection(s), %d bulk IN transfers (%d bytes), %d OUT (%d bytes)\n",
		res.Sessions, res.Stats.InTransfers, res.Stats.InBytes, res.Stats.OutTransfers, res.Stats.OutBytes)
	return nil
}

func rateText(mbit int) string {
	if mbit <= 0 {
		return "unpaced"
	}
	return fmt.Sprintf("%d Mbit/s", mbit)
}

func checkUSBDevFlags(o *usbdev.Options, mac string, pos []string) error {
	if len(pos) > 0 {
		return fmt.Errorf("lab usbdev: unexpected argument %q", pos[0])
	}
	if err := usbdev.CheckModel(o.Model); err != nil {
		return err
	}
	if o.Socket == "" || o.Tap == "" {
		return fmt.Errorf("lab usbdev: give --socket PATH and --tap NAME")
	}
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 || hw[0]&1 != 0 {
		return fmt.Errorf("lab usbdev: --mac %q is no unicast Ethernet address (like 02:77:73:00:00:01)", mac)
	}
	copy(o.MAC[:], hw)
	f := o.Faults
	for _, v := range []struct {
		name string
		n    int
	}{{"--bad", f.BadPerMille}, {"--stall", f.StallPerMille}, {"--slow", f.SlowPerMille}, {"--slow-out", f.SlowOutPerMille}} {
		if v.n < 0 || v.n > 1000 {
			return fmt.Errorf("lab usbdev: %s %d is not a count per 1000 (0-1000)", v.name, v.n)
		}
	}
	if o.MTU != 0 && (o.MTU < 68 || o.MTU > 65535) {
		return fmt.Errorf("lab usbdev: --mtu %d: want 68-65535 (IPv4's minimum to the largest frame)", o.MTU)
	}
	if o.Mbit < 0 || f.MaxDelay < 0 || f.ReplugEvery < 0 {
		return fmt.Errorf("lab usbdev: --mbit, --max-delay and --replug-every cannot be negative")
	}
	if f.ReplugEvery > 0 && f.ReplugEvery < time.Second {
		return fmt.Errorf("lab usbdev: --replug-every %s is shorter than an enumeration; give 1s or more", f.ReplugEvery)
	}
	if err := o.Batch.Check(); err != nil {
		return fmt.Errorf("lab usbdev: %w", err)
	}
	return nil
}
