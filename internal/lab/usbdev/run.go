// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// Models are the device models, by name.
var Models = []string{"ncm", "mbim", "ax88179", "aqc111", "rtl8153", "rndis", "eem"}

// Options are a device process's settings.
type Options struct {
	Model  string `json:"model"`
	Socket string `json:"socket"`
	Tap    string `json:"tap"`
	// Mbit paces the link (0: as fast as the bus and this process go).
	Mbit int `json:"link_mbit"`
	// MTU, when set, is the tap's: the host's TCP then sends segments
	// that small, so several of one flow share a transfer (the path where
	// a driver splits one URB into frames of one flow).
	MTU int `json:"tap_mtu,omitempty"`
	// MAC is the address the host's driver gives its netdev.
	MAC    [6]byte `json:"-"`
	Faults *Faults `json:"faults,omitempty"`
	// Batch holds bulk IN transfers until they carry several frames.
	Batch Batch `json:"batch,omitempty"`
	// StatsFile receives the counts as JSON, every second and at the end.
	StatsFile string `json:"-"`
}

// Result is what the device's result file holds.
type Result struct {
	Options  Options           `json:"options"`
	Sessions int               `json:"sessions"`
	Stats    Stats             `json:"stats"`
	Model    map[string]uint64 `json:"model"`
	// CPU the device process used (user and system seconds): that the
	// device is not the limit is shown beside the guest's CPU.
	CPUUserS float64 `json:"cpu_user_s"`
	CPUSysS  float64 `json:"cpu_sys_s"`
}

// CheckModel says whether name is a device model.
func CheckModel(name string) error {
	for _, m := range Models {
		if m == name {
			return nil
		}
	}
	return fmt.Errorf("unknown device model %q; give one of %v", name, Models)
}

// NewModel makes a model by name on link, batching its bulk IN
// transfers as o.Batch says.
func NewModel(o Options, l Link) (Model, error) {
	m, err := newModel(o, l)
	if err != nil {
		return nil, err
	}
	b, ok := m.(interface{ setBatch(Batch) })
	if !ok {
		return nil, fmt.Errorf("device model %q cannot batch its transfers", o.Model)
	}
	b.setBatch(o.Batch)
	return m, nil
}

func newModel(o Options, l Link) (Model, error) {
	switch o.Model {
	case "ncm":
		return NewNCM(l, o.Mbit, o.MAC, o.Faults), nil
	case "mbim":
		return NewMBIM(l, o.Mbit, o.MAC, o.Faults), nil
	case "ax88179":
		return NewAX88179(l, o.Mbit, o.MAC, o.Faults), nil
	case "aqc111":
		return NewAQC111(l, o.Mbit, o.MAC, o.Faults), nil
	case "rtl8153":
		return NewRTL8153(l, o.Mbit, o.MAC, o.Faults), nil
	case "rndis":
		return NewRNDIS(l, o.Mbit, o.MAC, o.Faults), nil
	case "eem":
		return NewEEM(l, o.Mbit, o.MAC, o.Faults), nil
	}
	return nil, fmt.Errorf("unknown device model %q; give one of %v", o.Model, Models)
}

// needsTun says whether a model's link carries IP packets, not frames.
func needsTun(model string) bool { return model == "mbim" }

// Run serves the device on o.Socket until ctx is done: QEMU connects (and
// may connect again after a restart), the device plugs in, and every
// connection's counts add up in the result.
func Run(ctx context.Context, o Options, logf func(string, ...any)) (*Result, error) {
	if err := CheckModel(o.Model); err != nil {
		return nil, err
	}
	tap, err := OpenTap(o.Tap, needsTun(o.Model))
	if err != nil {
		return nil, err
	}
	defer tap.Close()
	if o.MTU > 0 {
		if out, err := exec.Command("ip", "link", "set", "dev", o.Tap, "mtu", strconv.Itoa(o.MTU)).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("MTU %d on %s: %v: %s", o.MTU, o.Tap, err, strings.TrimSpace(string(out)))
		}
	}
	m, err := NewModel(o, tap)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(o.Socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(o.Socket) // a killed run's socket
	}
	ln, err := net.Listen("unix", o.Socket)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", o.Socket, err)
	}
	defer os.Remove(o.Socket)
	go func() { <-ctx.Done(); ln.Close() }()
	res := &Result{Options: o}
	var mu sync.Mutex
	var cur *Session
	snapshot := func() {
		mu.Lock()
		defer mu.Unlock()
		if cur != nil {
			res.Stats = add(res.Stats, cur.Stats())
		}
		writeResult(o.StatsFile, res, m)
		if cur != nil {
			res.Stats = sub(res.Stats, cur.Stats())
		}
	}
	stopTick := tick(time.Second, snapshot)
	defer stopTick()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return res, err
		}
		m.Reset()
		s := NewSession(usbredir.NewConn(c, usbredir.OurCaps), m, o.Faults, logf)
		s.Burst(o.Batch)
		mu.Lock()
		cur = s
		res.Sessions++
		mu.Unlock()
		err = s.Serve(ctx)
		c.Close()
		mu.Lock()
		res.Stats, cur = add(res.Stats, s.Stats()), nil
		mu.Unlock()
		if err != nil && !errors.Is(err, net.ErrClosed) && ctx.Err() == nil {
			logf("usbdev: session ended: %v", err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	stopTick()
	writeResult(o.StatsFile, res, m)
	return res, nil
}

func tick(d time.Duration, f func()) func() {
	stop := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				f()
			case <-stop:
				return
			}
		}
	}()
	return func() { once.Do(func() { close(stop) }) }
}

func writeResult(path string, r *Result, m Model) {
	r.Model = m.Counters()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		r.CPUUserS = float64(ru.Utime.Nano()) / 1e9
		r.CPUSysS = float64(ru.Stime.Nano()) / 1e9
	}
	if path == "" {
		return
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return
	}
	tmp := path + ".tmp"
	if os.WriteFile(tmp, append(b, '\n'), 0o644) == nil {
		os.Rename(tmp, path)
	}
}

// add and sub sum the counts of sessions (sub: b taken out of a); the
// maxima are kept, not summed.
func add(a, b Stats) Stats {
	return Stats{a.InTransfers + b.InTransfers, a.InBytes + b.InBytes, a.OutTransfers + b.OutTransfers,
		a.OutBytes + b.OutBytes, a.Cancelled + b.Cancelled, a.Stalled + b.Stalled, a.Replugs + b.Replugs,
		a.Controls + b.Controls, a.Interrupts + b.Interrupts, a.InWaitingSum + b.InWaitingSum,
		max(a.InWaitingMax, b.InWaitingMax), max(a.InRequestMax, b.InRequestMax), a.OutHeld + b.OutHeld,
		a.OutHeldNs + b.OutHeldNs, a.ReplugWaits + b.ReplugWaits, a.RXWaitingSum + b.RXWaitingSum,
		a.RXWaitingSamples + b.RXWaitingSamples, max(a.RXWaitingMax, b.RXWaitingMax)}
}

func sub(a, b Stats) Stats {
	return Stats{a.InTransfers - b.InTransfers, a.InBytes - b.InBytes, a.OutTransfers - b.OutTransfers,
		a.OutBytes - b.OutBytes, a.Cancelled - b.Cancelled, a.Stalled - b.Stalled, a.Replugs - b.Replugs,
		a.Controls - b.Controls, a.Interrupts - b.Interrupts, a.InWaitingSum - b.InWaitingSum,
		a.InWaitingMax, a.InRequestMax, a.OutHeld - b.OutHeld, a.OutHeldNs - b.OutHeldNs, a.ReplugWaits - b.ReplugWaits,
		a.RXWaitingSum - b.RXWaitingSum, a.RXWaitingSamples - b.RXWaitingSamples, a.RXWaitingMax}
}
