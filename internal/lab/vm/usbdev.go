// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/selfexe"
)

// The device lab: a USB adapter emulated outside the guest by 'wirespeed
// lab usbdev' (internal/lab/usbdev), reached through QEMU's usb-redir on
// the guest's xHCI. The guest runs only what a host with the real adapter
// runs.

// deviceDrivers is the guest driver of each device model.
var deviceDrivers = map[string]string{"ncm": "cdc_ncm", "mbim": "cdc_mbim", "rndis": "rndis_host", "ax88179": "ax88179_178a", "aqc111": "aqc111", "rtl8153": "r8152", "eem": "cdc_eem"}

// DeviceModels lists the models the usbdev scenario takes.
func DeviceModels() []string {
	return []string{"ncm", "mbim", "ax88179", "aqc111", "rtl8153", "rndis", "eem"}
}

// checkDevice refuses a model the lab does not have.
func checkDevice(model, machine string) error {
	if model == "" {
		return nil
	}
	for _, m := range DeviceModels() {
		if m == model {
			return nil
		}
	}
	return fmt.Errorf("--device %q: want one of %s", model, strings.Join(DeviceModels(), ", "))
}

func deviceOf(o Options) string {
	if o.Device == "" {
		return "ncm"
	}
	return o.Device
}

// usbAttach is what hangs on the guest's USB: QEMU's usb-net on Tap, or
// with RedirSocket a usb-redir device served there; zero: nothing.
type usbAttach struct {
	Tap         string
	RedirSocket string
}

// args are QEMU's arguments for it on a board: the xHCI (the Pi 3's
// DWC2 on raspi3b, whose single root port needs port=1 or QEMU puts a
// full-speed hub in between) and the device.
func (u usbAttach) args(board string) []string {
	if u.Tap == "" && u.RedirSocket == "" {
		return nil
	}
	var a []string
	bus := ",bus=xhci.0"
	if board == "raspi3b" {
		bus = ""
	} else {
		a = append(a, "-device", "qemu-xhci,id=xhci")
	}
	if u.RedirSocket != "" {
		if board == "raspi3b" {
			bus = ",port=1"
		}
		return append(a, "-chardev", "socket,id=ud0,path="+u.RedirSocket, "-device", "usb-redir,chardev=ud0,id=usbdev0"+bus)
	}
	return append(a, "-netdev", "tap,id=n0,ifname="+u.Tap+",script=no,downscript=no", "-device", "usb-net,netdev=n0"+bus)
}

func init() {
	scenarios["usbdev"] = &Scenario{
		Name: "usbdev",
		Summary: "a USB adapter emulated outside the guest ('wirespeed lab usbdev', --device ncm) on the guest's xHCI " +
			"through QEMU's usb-redir; its Ethernet side a tap in a host namespace running iperf3 natively",
		Modules: func(o Options) []string {
			return append(append([]string(nil), machineOf(o).USBHost...), deviceDrivers[deviceOf(o)])
		},
		Script:  devScript,
		USBDev:  true,
		MaxTime: tuneMaxTime,
	}
	scenarios["usbdev-stress"] = &Scenario{
		Name: "usbdev-stress",
		Summary: "the usbdev adapter unplugged and plugged in by the device process at moments of its own (--replug-every, " +
			"default 4s) under iperf3 both ways, with link flaps, MTU changes and driver reloads, until --cycles new devices (unplugs and reloads)",
		Modules: scenarios["usbdev"].Modules,
		Script:  devStressScript,
		USBDev:  true,
		NoBench: true,
		MaxTime: func(o Options) time.Duration { return time.Duration(cycles(o))*cycleTime(o) + time.Minute },
	}
}

// cycleTime is usbdev-stress's budget per cycle: --cycle-time, or 12 s.
func cycleTime(o Options) time.Duration {
	if o.CycleTime > 0 {
		return o.CycleTime
	}
	return 12 * time.Second
}

// defaultReplug is usbdev-stress's unplug period when --device-args gives none.
const defaultReplug = "4s"

// DevStressSteps are usbdev-stress's disruptions, one per cycle in turn
// (or in the order --steps gives): idle (none), flap (link down and up
// before the cycle's iperf3), mtu, reload (the driver), loadflap (link
// down and up while iperf3 sends from the guest: TX URBs in flight at
// the stop).
var DevStressSteps = []string{"idle", "flap", "mtu", "reload", "loadflap"}

// devStressDefault is the default turn: loadflap only when asked for.
var devStressDefault = []string{"idle", "flap", "mtu", "reload"}

func devStressScript(o Options) string {
	d := deviceOf(o)
	maxS := int((time.Duration(cycles(o))*cycleTime(o) + 30*time.Second) / time.Second)
	steps := o.Steps
	if len(steps) == 0 {
		steps = devStressDefault
	}
	return guestScript("usbdev_stress.sh", "@DRIVER@", deviceDrivers[d], "@STEPS@", strings.Join(steps, " "),
		"@GUEST@", nicGuestAddr, "@HOST@", nicHostAddr, "@N@", strconv.Itoa(cycles(o)), "@MAXS@", strconv.Itoa(maxS))
}

func devScript(o Options) string {
	d := deviceOf(o)
	return guestScript("nic.sh", "@STAGE@", "usbdev-"+d, "@DRIVER@", deviceDrivers[d], "@DEVICE@", "usbdev "+d,
		"@GUEST@", nicGuestAddr, "@HOST@", nicHostAddr, "@DUT_KNOBS@", dutKnobs(o, "DIF")) + nicLoad(o, deviceDrivers[d])
}

// socketDir holds the device processes' sockets.
const socketDir = "/run/wirespeed"

var socketRe = regexp.MustCompile(`^ws-(\d+)-vm-(usbdev|monitor)\.sock$`)

// reapSockets removes the sockets in dir of runs whose process is dead (a
// killed run's device died with it, by its parent-death signal, but its
// socket stays) and returns their names.
func reapSockets(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var gone []string
	for _, e := range ents {
		m := socketRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if pid, _ := strconv.Atoi(m[1]); pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
			if os.Remove(filepath.Join(dir, e.Name())) == nil {
				gone = append(gone, e.Name())
			}
		}
	}
	return gone
}

// deviceArgv is the device process's command line.
func (c *Config) deviceArgv(exe, ns, tap, sock string) []string {
	a := []string{"ip", "netns", "exec", ns, exe, "lab", "usbdev", "--model", deviceOf(c.Options),
		"--socket", sock, "--tap", tap, "--stats", filepath.Join(c.OutDir, "usbdev.json")}
	if c.Scenario == "usbdev-stress" && !strings.Contains(strings.Join(c.DeviceArgs, " "), "--replug-every") {
		a = append(a, "--replug-every", defaultReplug)
	}
	return append(a, c.DeviceArgs...)
}

// startDevice starts the device process in ns and waits for its socket;
// stop ends it (SIGTERM, so it writes its counts) and removes the socket.
func (c *Config) startDevice(ctx context.Context, ns, tap, name string) (string, func(), error) {
	exe, err := selfexe.Path()
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(socketDir, 0o700); err != nil {
		return "", nil, err
	}
	sock := filepath.Join(socketDir, name+"-usbdev.sock")
	logPath := filepath.Join(c.OutDir, "usbdev.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	argv := c.deviceArgv(exe, ns, tap, sock)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return "", nil, fmt.Errorf("start the device process: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		_ = os.Remove(sock)
	}
	for i := 0; i < 100; i++ {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			c.logf("device %s serving on %s (log %s)", deviceOf(c.Options), sock, logPath)
			return sock, stop, nil
		}
		select {
		case <-exited:
			logf.Close()
			b, _ := os.ReadFile(logPath)
			return "", nil, fmt.Errorf("the device process ended before serving: %s", strings.TrimSpace(string(b)))
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	stop()
	return "", nil, fmt.Errorf("the device process did not create %s within 5 s (its log: %s)", sock, logPath)
}
