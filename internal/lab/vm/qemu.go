// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab"
)

// Running QEMU: its command line, the usb-nic host end, the console watched
// by the guards, and the results read back.

// qemuArgs builds the QEMU command line.
func qemuArgs(name string, k *Kernel, initrd, accel string, cpus, memMB int, consoleArg, resultsFile string, usb usbAttach, extra string) []string {
	a := []string{"qemu-system-x86_64", "-name", name, "-nodefaults", "-display", "none", "-no-reboot",
		"-m", strconv.Itoa(memMB), "-smp", strconv.Itoa(cpus)}
	switch accel {
	case "kvm":
		a = append(a, "-accel", "kvm", "-cpu", "host")
	case "tcg-single":
		a = append(a, "-accel", "tcg,thread=single", "-cpu", "max")
	case "tcg-icount":
		// deterministic: one TCG thread, the guest's clock counts
		// instructions (shift=0: 1 ns each, so the emulated CPU is fast
		// in guest time and a capped bus, not the CPU, limits) and idle
		// time is skipped, so host load slows a run but does not change
		// what the guest measures
		a = append(a, "-accel", "tcg,thread=single", "-cpu", "max", "-icount", "shift=0,sleep=off")
	default:
		a = append(a, "-accel", "tcg,thread=multi", "-cpu", "max")
	}
	a = append(a, "-kernel", k.Image, "-initrd", initrd,
		"-append", strings.TrimSpace("console=ttyS0 panic=-1 loglevel=5 rdinit=/init net.ifnames=0 nokaslr tsc=reliable "+extra),
		"-serial", consoleArg, "-serial", "file:"+resultsFile)
	return append(a, usb.args("pc")...)
}

var markerRe = regexp.MustCompile(`^` + markerPrefix + ` (\S+) ?(.*?) t=([0-9.]+)$`)

// boot runs one scenario in QEMU: the usb-nic host end if it needs one,
// the QEMU command, the console watched until the guest is done (or a
// guard, the timeout or ctx stops it), then the results collected into out.
func (c *Config) boot(ctx context.Context, sc *Scenario, k *Kernel, initrd, accel string, timeout time.Duration, out *Outcome) error {
	name := fmt.Sprintf("ws-%d-vm", os.Getpid())
	consolePath := filepath.Join(c.OutDir, "console.log")
	resultsPath := filepath.Join(c.OutDir, "results.txt")
	stderrPath := filepath.Join(c.OutDir, "qemu-stderr.txt")
	_ = os.Remove(resultsPath)
	out.Stages, out.Hits, out.Files, out.Facts, out.BootS, out.Failure = nil, nil, nil, nil, 0, ""

	ns, usb, stopUSB, err := c.startUSB(ctx, sc, name)
	if err != nil {
		return err
	}
	defer stopUSB()
	if err := os.MkdirAll(socketDir, 0o700); err != nil {
		return err
	}
	monSock := monitorSocket(name)
	_ = os.Remove(monSock)
	defer os.Remove(monSock)
	cmd, err := c.qemuCommand(name, k, initrd, accel, ns, usb, resultsPath, monSock, out)
	if err != nil {
		return err
	}
	logf, err := os.Create(consolePath)
	if err != nil {
		return err
	}
	defer logf.Close()
	errf, err := os.Create(stderrPath)
	if err != nil {
		return err
	}
	defer errf.Close()
	dumpPath := filepath.Join(c.OutDir, stallDumpFile)
	_ = os.Remove(dumpPath)
	bw := &bootWatch{bootSeen: make(chan struct{}),
		dump: newStallDump(monSock, consolePath, dumpPath, machineOf(c.Options).Arch, c.CPUs)}
	ws := append([]io.Writer{logf}, c.consoleWriters(bw, out)...)
	if c.Console != nil {
		ws = append(ws, c.Console)
	}
	cmd.Stdout = io.MultiWriter(ws...)
	cmd.Stderr = errf
	c.logf("booting %s (%s, %d vCPUs) for scenario %s, timeout %s", k.Release, accel, c.CPUs, sc.Name, timeout.Round(time.Second))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start QEMU: %w", err)
	}
	if ns != "" {
		go addressTap(ns, usb.Tap)
	}
	stopReason, err := waitQEMU(ctx, cmd, bw, accel, timeout, consolePath)
	bw.dump.wait(5 * time.Second)
	if err != nil {
		return err
	}

	// Guards first: they are the most important news.
	if lf, err := os.Open(consolePath); err == nil {
		out.Hits, _ = ScanConsole(lf)
		lf.Close()
	}
	done, resErr := c.collectResults(sc, k, accel, resultsPath, out)
	if _, err := os.Stat(dumpPath); err == nil {
		out.Files = append(out.Files, stallDumpFile)
	}
	_ = os.Remove(resultsPath)
	if b, err := os.ReadFile(stderrPath); err == nil && len(strings.TrimSpace(string(b))) == 0 {
		_ = os.Remove(stderrPath)
	}
	return c.bootError(sc, cmd, out, consolePath, stopReason, done, resErr)
}

// startUSB starts what a usb-nic or usbdev scenario needs on the host: its
// namespace (ns, named after the QEMU) with the iperf3 server, and for
// usbdev the device process; stop undoes it all.
func (c *Config) startUSB(ctx context.Context, sc *Scenario, name string) (ns string, usb usbAttach, stop func(), err error) {
	var undo []func()
	stop = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if !sc.USBNIC && !sc.USBDev {
		return "", usb, stop, nil
	}
	ns, usb.Tap = name, "ws-tap0"
	stopHost, err := c.startHostEnd(ctx, ns)
	if err != nil {
		return "", usb, nil, err
	}
	undo = append(undo, stopHost)
	if sc.USBDev {
		sock, stopDev, err := c.startDevice(ctx, ns, usb.Tap, name)
		if err != nil {
			stop()
			return "", usb, nil, err
		}
		undo = append(undo, stopDev)
		usb.RedirSocket = sock
	}
	return ns, usb, stop, nil
}

// startHostEnd creates the namespace ns and starts the iperf3 server the
// usb-nic guest measures against; stop kills the server and removes ns.
func (c *Config) startHostEnd(ctx context.Context, ns string) (stop func(), err error) {
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			undoAll()
		}
	}()
	if out, err := exec.CommandContext(ctx, "ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip netns add %s: %w: %s", ns, err, strings.TrimSpace(string(out)))
	}
	undo = append(undo, func() {
		if err := lab.RemoveNamespace(ns); err != nil {
			c.logf("removing %s: %v", ns, err)
		}
	})
	_ = exec.Command("ip", "-n", ns, "link", "set", "lo", "up").Run()
	srv := lab.NetnsCommand(context.Background(), ns, "iperf3", "-s", "-p", "5201")
	srvLog, err := os.Create(filepath.Join(c.OutDir, "host-iperf3.log"))
	if err != nil {
		return nil, fmt.Errorf("iperf3 server log: %w", err)
	}
	srv.Stdout, srv.Stderr = srvLog, srvLog
	if err := srv.Start(); err != nil {
		srvLog.Close()
		return nil, fmt.Errorf("iperf3 -s in %s: %w (apt-get install iperf3)", ns, err)
	}
	undo = append(undo, func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		srvLog.Close()
	})
	return undoAll, nil
}

// qemuCommand builds the QEMU command for the configured machine (inside
// ns when there is one) and records its argv in out.
func (c *Config) qemuCommand(name string, k *Kernel, initrd, accel, ns string, usb usbAttach, resultsPath, monSock string, out *Outcome) (*exec.Cmd, error) {
	var argv []string
	if m := machineOf(c.Options); m.Arch == "amd64" {
		argv = qemuArgs(name, k, initrd, accel, c.CPUs, c.MemMB, "stdio", resultsPath, usb, c.Append)
	} else {
		var err error
		if argv, err = m.armArgs(name, k, initrd, accel, c.CPUs, c.MemMB, "stdio", resultsPath, usb, c.Append); err != nil {
			return nil, err
		}
	}
	for _, d := range c.disks {
		argv = append(argv, "-drive", "file="+d+",if=virtio,format=raw,snapshot=on")
	}
	if monSock != "" {
		argv = append(argv, "-monitor", "unix:"+monSock+",server=on,wait=off")
	}
	out.QEMU = argv
	var cmd *exec.Cmd
	if ns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
	} else {
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd, nil
}

// bootWatch is what the console has shown so far: when a fatal guard hit
// appeared, and whether the guest's init reported the boot stage.
type bootWatch struct {
	mu       sync.Mutex
	fatalAt  time.Time
	bootSeen chan struct{}
	dump     *stallDump // the monitor's dump at the first stall
	bootOnce sync.Once
}

// consoleWriters are the console's readers: the guard watch and the
// guest's stage/note/fail markers, recorded in out.
func (c *Config) consoleWriters(bw *bootWatch, out *Outcome) []io.Writer {
	watch := &consoleWatch{onHit: func(h Hit) {
		bw.dump.trigger(h)
		bw.mu.Lock()
		defer bw.mu.Unlock()
		if h.Fatal && bw.fatalAt.IsZero() {
			bw.fatalAt = time.Now()
		}
	}}
	markers := &lineFunc{fn: func(l string) {
		m := markerRe.FindStringSubmatch(strings.TrimRight(l, "\r"))
		if m == nil {
			return
		}
		bw.mu.Lock()
		defer bw.mu.Unlock()
		if m[1] == "stage" {
			out.Stages = append(out.Stages, m[2])
			if m[2] == "boot" {
				out.BootS, _ = strconv.ParseFloat(m[3], 64)
				bw.bootOnce.Do(func() { close(bw.bootSeen) })
			}
			c.logf("guest: %s (t=%ss)", m[2], m[3])
		} else if m[1] == "note" || m[1] == "fail" {
			out.Notes = append(out.Notes, m[1]+": "+m[2])
			c.logf("guest: %s %s", m[1], m[2])
		}
	}}
	return []io.Writer{watch, markers}
}

// addressTap gives the tap QEMU creates in ns an address as soon as it
// exists.
func addressTap(ns, tap string) {
	for i := 0; i < 200; i++ {
		if exec.Command("ip", "-n", ns, "link", "show", tap).Run() == nil {
			_ = exec.Command("ip", "-n", ns, "addr", "add", nicHostAddr+"/30", "dev", tap).Run()
			_ = exec.Command("ip", "-n", ns, "link", "set", tap, "up").Run()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitQEMU waits for the started QEMU to exit, killing it on ctx, at the
// timeout, 3 s after a fatal guard hit, or (under KVM) when the guest has
// not booted in 45 s. stopReason says why it was stopped, when that is news
// to the caller; err is errKVMBroken when KVM never booted the guest.
func waitQEMU(ctx context.Context, cmd *exec.Cmd, bw *bootWatch, accel string, timeout time.Duration, consolePath string) (stopReason, err error) {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Process.Kill()
		}
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-ctx.Done():
			kill()
			<-exited
			stopReason = fmt.Errorf("interrupted: QEMU stopped; console log kept in %s", consolePath)
			break wait
		case <-deadline.C:
			kill()
			<-exited
			stopReason = fmt.Errorf("%w after %s; the last console lines:\n%s\n(full log: %s)", ErrTimeout, timeout.Round(time.Second), tailFile(consolePath, 25), consolePath)
			break wait
		case <-tick.C:
			bw.mu.Lock()
			fa := bw.fatalAt
			bw.mu.Unlock()
			if !fa.IsZero() && time.Since(fa) > 3*time.Second {
				bw.dump.wait(10 * time.Second) // a hard lockup's dump first
				kill()
				<-exited
				break wait
			}
			if accel == "kvm" && time.Since(start) > 45*time.Second {
				select {
				case <-bw.bootSeen:
				default:
					kill()
					<-exited
					return nil, errKVMBroken
				}
			}
		}
	}
	if accel == "kvm" {
		select {
		case <-bw.bootSeen:
		default:
			if stopReason == nil {
				return nil, errKVMBroken
			}
		}
	}
	return stopReason, nil
}

// collectResults writes the files the guest sent over its results serial
// port into c.OutDir and records them in out; done says the guest sent
// its end marker.
func (c *Config) collectResults(sc *Scenario, k *Kernel, accel, resultsPath string, out *Outcome) (done bool, resErr error) {
	rf, err := os.Open(resultsPath)
	if err != nil {
		return false, nil
	}
	var files []ResultFile
	files, done, resErr = ParseResults(rf)
	rf.Close()
	var seen map[string]RXSeen
	for _, f := range files {
		p := filepath.Join(c.OutDir, f.Name)
		if werr := os.WriteFile(p, f.Data, 0o644); werr != nil {
			resErr = errors.Join(resErr, werr)
			continue
		}
		out.Files = append(out.Files, f.Name)
		if f.Name == "facts.txt" {
			out.Facts = parseFacts(f.Data)
		}
		if strings.HasPrefix(f.Name, "bench-") && strings.HasSuffix(f.Name, ".json") {
			if seen == nil {
				seen = map[string]RXSeen{}
			}
			for d, s := range RXPaths(f.Data) {
				MergeRXPath(seen, d, s)
			}
			_ = annotateBench(p, c.benchNotes(sc, k, accel))
		}
	}
	if len(seen) > 0 {
		out.RXPaths = map[string]string{}
		for d, s := range seen {
			out.RXPaths[d] = s.Class
		}
	}
	return done, resErr
}

// benchNotes say where a bench result made in the guest came from.
func (c *Config) benchNotes(sc *Scenario, k *Kernel, accel string) []string {
	src := "package " + k.Package + " " + k.PackageVersion
	if k.Package == "" {
		src = "image " + k.Image
	}
	notes := []string{fmt.Sprintf("wirespeed lab vm %s: guest kernel %s (%s), QEMU %s, %d vCPUs", sc.Name, k.Release, src, accel, c.CPUs)}
	if sc.Name == "usb-gadget" || sc.Name == "bql" {
		notes = append(notes, "dummy_hcd speed "+c.Speed)
	}
	if c.BusRate > 0 {
		notes = append(notes, fmt.Sprintf("bus capped at %d Mbit/s", c.BusRate))
	}
	if c.ModulesDir != "" {
		notes = append(notes, "modules from "+c.ModulesDir)
	}
	return notes
}

// bootError is the run's error: guard hits first, then why QEMU was
// stopped, then - when neither - a guest that stopped early or reported
// a failure, and any trouble writing the results.
func (c *Config) bootError(sc *Scenario, cmd *exec.Cmd, out *Outcome, consolePath string, stopReason error, done bool, resErr error) error {
	var errs []error
	if len(out.Hits) > 0 {
		var parts []string
		for _, h := range out.Hits {
			parts = append(parts, h.String())
		}
		errs = append(errs, fmt.Errorf("%w: %s\n%s\n(full log: %s)", ErrGuard, strings.Join(parts, "; "), out.Hits[0].Excerpt, consolePath))
	}
	if stopReason != nil {
		errs = append(errs, stopReason)
	}
	if len(out.Hits) == 0 && stopReason == nil {
		if !done {
			errs = append(errs, fmt.Errorf("the guest stopped before sending its results (QEMU: %s); the last console lines:\n%s\n(full log: %s)", exitText(cmd), tailFile(consolePath, 25), consolePath))
		}
		if e := out.Facts["error"]; e != "" {
			errs = append(errs, errors.New(e))
		}
		if b, err := os.ReadFile(filepath.Join(c.OutDir, "error.txt")); err == nil {
			errs = append(errs, fmt.Errorf("scenario %s failed in the guest: %s", sc.Name, strings.TrimSpace(string(b))))
		}
	}
	if resErr != nil {
		errs = append(errs, resErr)
	}
	return errors.Join(errs...)
}

func exitText(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "not started"
	}
	return cmd.ProcessState.String()
}

// lineFunc calls fn for every complete line written to it.
type lineFunc struct {
	buf []byte
	fn  func(string)
}

func (l *lineFunc) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := indexNL(l.buf)
		if i < 0 {
			return len(p), nil
		}
		l.fn(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

func indexNL(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

func tailFile(p string, n int) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "(no console output)"
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r", ""), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
