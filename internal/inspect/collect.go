// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/procfs"
	"golang.org/x/sys/unix"
)

// Options selects what to inspect.
type Options struct {
	FS      *hostfs.FS // nil: the live host
	Answers *Answers   // nil: ask the live kernel
	Ifaces  []string   // empty: every device
}

// ErrUnknownInterface is returned (wrapped) for an interface that does not
// exist; the message lists the ones that do.
var ErrUnknownInterface = errors.New("unknown interface")

// Collect inspects the host (or snapshot) described by opts.
func Collect(ctx context.Context, opts Options) (*Snapshot, error) {
	f := opts.FS
	if f == nil {
		f = hostfs.Live()
	}
	a := opts.Answers
	if a == nil {
		a = LiveAnswers(f)
	}
	names, err := f.ReadDir("/sys/class/net")
	if err != nil {
		return nil, fmt.Errorf("listing network devices: %w", err)
	}
	if !f.IsLive() {
		// A snapshot lists every device of its host but holds only those
		// it inspected.
		var captured []string
		for _, n := range names {
			if f.Exists("/sys/class/net/" + n + "/ifindex") {
				captured = append(captured, n)
			}
		}
		for _, n := range opts.Ifaces {
			if slices.Contains(names, n) && !slices.Contains(captured, n) {
				return nil, fmt.Errorf("%w %q: the snapshot's host had it but it was not captured (captured: %s)",
					ErrUnknownInterface, n, strings.Join(captured, ", "))
			}
		}
		names = captured
	}
	want := names
	if len(opts.Ifaces) > 0 {
		want = nil
		for _, n := range opts.Ifaces {
			if !slices.Contains(names, n) {
				return nil, fmt.Errorf("%w %q (this host has: %s)", ErrUnknownInterface, n, strings.Join(names, ", "))
			}
			if !slices.Contains(want, n) {
				want = append(want, n)
			}
		}
	}
	c := &collector{fs: f, a: a}
	c.interrupts = c.readInterrupts()
	snap := &Snapshot{Schema: SchemaVersion, Source: Source{Kind: SourceLive, AsRoot: a.Euid == 0}}
	snap.Host = c.host(names)
	c.kernel = snap.Host.Kernel
	for _, n := range want {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		snap.Devices = append(snap.Devices, c.device(n))
	}
	if a.Euid != 0 {
		snap.Host.Notes = append(snap.Host.Notes,
			"not root: whether IRQ affinity can be changed was not probed (needs root to write-test /proc/irq/N/smp_affinity); everything else was read")
	}
	return snap, nil
}

type collector struct {
	fs         *hostfs.FS
	a          *Answers
	interrupts *procfs.Interrupts
	threads    []NAPIThread // napi/* kthreads, scanned on first need
	scanned    bool
	kernel     string // the host's release, for what only the version tells
}

// str reads a trimmed sysfs/procfs value; on error it returns "" and the
// error's errno name (or "missing").
func (c *collector) str(p string) (string, string) {
	s, err := c.fs.ReadString(p)
	if err != nil {
		return "", errName(err)
	}
	return s, ""
}

func errName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if errno == syscall.ENOENT {
			return "ENOENT"
		}
		return unix.ErrnoName(errno)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "missing"
	}
	return err.Error()
}

func (c *collector) intp(p string) *int {
	s, e := c.str(p)
	if e != "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil
	}
	return &n
}

func (c *collector) int64p(p string) *int64 {
	s, e := c.str(p)
	if e != "" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func (c *collector) uint64p(p string) *uint64 {
	s, e := c.str(p)
	if e != "" {
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func (c *collector) linkBase(p string) string {
	t, err := c.fs.Readlink(p)
	if err != nil {
		return ""
	}
	return path.Base(t)
}

// device collects one network device: its identity (bus, driver, sysfs
// path) here, each other concern from its own file.
func (c *collector) device(name string) Device {
	base := "/sys/class/net/" + name
	d := Device{Name: name, NAPIs: []NAPI{}, Threads: []NAPIThread{}, IRQs: []IRQ{}}
	if n := c.intp(base + "/ifindex"); n != nil {
		d.Ifindex = *n
	}
	d.Bus = "virtual"
	if c.fs.Exists(base + "/device") {
		real, err := c.fs.RealPath(base + "/device")
		if err == nil {
			d.DevicePath = real
			d.Bus = c.linkBase(real + "/subsystem")
			d.Driver = c.linkBase(real + "/driver")
			d.BusID = path.Base(real)
		}
	}
	if d.Driver == "" {
		if di, e := c.a.driver(name); e == "" {
			d.Driver = di.Driver
		}
	}
	if d.Driver == "" && name == "lo" {
		d.Driver = "loopback"
	}
	if d.Driver == "" {
		if ue, err := c.fs.ReadString(base + "/uevent"); err == nil {
			for _, l := range strings.Split(ue, "\n") {
				if v, ok := strings.CutPrefix(l, "DEVTYPE="); ok {
					d.Driver = v
				}
			}
		}
	}
	if d.Bus == "usb" {
		d.USB = c.usb(d.DevicePath)
	}
	d.Link = c.link(name, d.Ifindex)
	d.NAPISysfs = NAPISysfs{
		Threaded:          c.rawOrErr(base + "/threaded"),
		GROFlushTimeout:   c.rawOrErr(base + "/gro_flush_timeout"),
		NAPIDeferHardIRQs: c.rawOrErr(base + "/napi_defer_hard_irqs"),
	}
	d.NAPIsKnown = c.a.NAPIsError == ""
	d.NAPIs = c.napis(d.Ifindex)
	if d.NAPISysfs.Threaded != "0" || !d.NAPIsKnown {
		d.Threads = c.threadsOf(name)
	}
	d.Offloads = c.offloads(name)
	d.RXQueues, d.TXQueues = c.queues(base)
	d.IRQs = c.irqs(&d)
	d.Stats = c.stats(base)
	c.wireless(&d)
	d.Datapath = c.datapath(&d)
	if d.Datapath.RXPath.Class() == datapath.Borrowed && len(d.IRQs) > 0 {
		// found up the device path (a DSA switch sits below its conduit's
		// Ethernet controller): the interrupts are the conduit's
		d.Notes = append(d.Notes, fmt.Sprintf("%d interrupt(s) found up the device path belong to %s, in whose NAPI this device receives: not listed here", len(d.IRQs), orNone(d.Datapath.RXVia)))
		d.IRQs = []IRQ{}
	}
	return d
}

func (c *collector) rawOrErr(p string) string {
	s, e := c.str(p)
	if e != "" {
		return "error: " + e
	}
	return s
}
