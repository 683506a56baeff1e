// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// The QEMU monitor at a stall. A stall report (RCU stall, soft or hard
// lockup) prints the stuck CPU's registers and stack, but not what the
// other CPUs were doing, nor the value of the lock the stuck CPU spins on.
// Every boot therefore has QEMU's human monitor on a socket, and at the
// first line of the first stall report the lab stops the guest and reads
// every vCPU's registers and stack and the memory their argument registers
// point at (a spinning CPU's lock word), lets it go on, and reads it all
// again a second later: monitor-at-stall.txt beside the console log. On
// x86 it then sends alt-sysrq-l on the PC's keyboard, and the kernel prints
// every CPU's backtrace, symbolized, on the console. The first read is
// made at once because the report itself can end the stall (it sends the
// stuck CPU an NMI for its backtrace). The addresses are virtual: the lab
// boots with nokaslr, so they resolve against the kernel's symbols
// (System.map, or /proc/kallsyms of the same kernel).

// stallDumpFile is the dump's name in the run's directory.
const stallDumpFile = "monitor-at-stall.txt"

// monitorSocket is the monitor's socket for the QEMU named name.
func monitorSocket(name string) string {
	return filepath.Join(socketDir, name+"-monitor.sock")
}

// stallGuards are the guards whose report the monitor's dump completes.
var stallGuards = map[string]bool{"RCU stall": true, "soft lockup": true, "hard lockup": true}

// stallDump reads the monitor once, at the first stall guard.
type stallDump struct {
	sock, consolePath, outPath, arch string // arch: amd64 or arm64
	cpus                             int
	once                             sync.Once
	done                             chan struct{}
}

func newStallDump(sock, consolePath, outPath, arch string, cpus int) *stallDump {
	return &stallDump{sock: sock, consolePath: consolePath, outPath: outPath, arch: arch, cpus: cpus,
		done: make(chan struct{})}
}

// trigger starts the dump for hit h if it is a stall guard's first hit.
func (d *stallDump) trigger(h Hit) {
	if d == nil || !stallGuards[h.Guard] {
		return
	}
	d.once.Do(func() {
		go func() {
			defer close(d.done)
			if err := d.run(h); err != nil {
				_ = os.WriteFile(d.outPath, []byte(fmt.Sprintf("monitor dump at %s failed: %v\n", h.Guard, err)), 0o644)
			}
		}()
	})
}

// wait returns when a started dump has finished (or after limit).
func (d *stallDump) wait(limit time.Duration) {
	if d == nil {
		return
	}
	d.once.Do(func() { close(d.done) }) // none started: none will now
	select {
	case <-d.done:
	case <-time.After(limit):
	}
}

// argRe finds the argument registers of a CPU, in a stall report
// ("RDI: ...", "x0 : ...") or the monitor's "info registers" ("RDI=...",
// "X00=..."): the first two arguments on x86-64 (RDI, RSI) and the
// callee-saved RBX that qspinlock's slow path keeps the lock in; x0, x1
// and x19 on arm64.
var argRe = regexp.MustCompile(`(?i)\b(RDI|RSI|RBX|x0|x00|x1|x01|x19) ?[:=] ?([0-9a-f]{16})\b`)

// kernelAddresses adds to addrs the kernel addresses (top bit set) the
// argument registers in text hold, each once, at most 8 in all.
func kernelAddresses(addrs []string, text string) []string {
	for _, m := range argRe.FindAllStringSubmatch(text, -1) {
		v := "0x" + strings.ToLower(m[2])
		if m[2][0] >= '8' && !slices.Contains(addrs, v) && len(addrs) < 8 {
			addrs = append(addrs, v)
		}
	}
	return addrs
}

// stallAddresses are the kernel addresses in the argument registers of
// the report from console line first on (the lines that have arrived).
func stallAddresses(consolePath string, first int) []string {
	f, err := os.Open(consolePath)
	if err != nil {
		return nil
	}
	defer f.Close()
	var addrs []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if n >= first {
			addrs = kernelAddresses(addrs, sc.Text())
		}
	}
	return addrs
}

// run writes the dump: two samples a second apart, the first as soon as
// the report's first line shows (the reporting CPU's backtrace NMI can
// end the stall it reports), then, on x86, sysrq l.
func (d *stallDump) run(h Hit) error {
	conn, err := net.DialTimeout("unix", d.sock, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	m := &hmp{conn: conn, r: bufio.NewReader(conn)}
	if _, err := m.readPrompt(); err != nil {
		return fmt.Errorf("monitor banner: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# QEMU monitor at the first %s (console line %d): %s\n", h.Guard, h.Line, h.Text)
	for n := 1; n <= 2; n++ {
		if n == 2 {
			time.Sleep(time.Second)
		}
		if err := d.sample(m, &b, n, h); err != nil {
			fmt.Fprintf(&b, "[monitor: %v]\n", err)
			return os.WriteFile(d.outPath, []byte(b.String()), 0o644)
		}
	}
	if d.arch == "amd64" {
		// the kernel's own backtrace of every CPU (sysrq l, enabled by
		// the guest's init), symbolized, on the console: the PC's
		// keyboard takes it whatever the stuck CPU does
		out, err := m.do("sendkey alt-sysrq-l")
		fmt.Fprintf(&b, "\n(qemu) sendkey alt-sysrq-l\n%s", out)
		if err == nil {
			b.WriteString("# sysrq l sent: the console shows every CPU's backtrace after this point\n")
		}
	}
	return os.WriteFile(d.outPath, []byte(b.String()), 0o644)
}

// sample stops the guest, reads every vCPU's registers and stack and the
// memory their argument registers (and the report's) point at, and lets
// the guest go on.
func (d *stallDump) sample(m *hmp, b *strings.Builder, n int, h Hit) error {
	fmt.Fprintf(b, "\n## sample %d at %s (the guest stopped while it is read)\n", n, time.Now().UTC().Format("15:04:05.000"))
	step := func(cmd string) (string, error) {
		out, err := m.do(cmd)
		fmt.Fprintf(b, "\n(qemu) %s\n%s", cmd, out)
		return out, err
	}
	if _, err := step("stop"); err != nil {
		return err
	}
	resumed := false
	defer func() {
		if !resumed { // never leave the guest stopped: the run would wait out its timeout
			_, _ = m.do("cont")
		}
	}()
	regs, err := step("info registers -a")
	if err != nil {
		return err
	}
	addrs := kernelAddresses(nil, regs)
	for _, a := range stallAddresses(d.consolePath, h.Line) {
		addrs = kernelAddresses(addrs, "rdi="+strings.TrimPrefix(a, "0x"))
	}
	fmt.Fprintf(b, "# addresses in the argument registers (the vCPUs', then the report's): %s\n", strings.Join(addrs, " "))
	for _, cmd := range d.commands(addrs) {
		if _, err := step(cmd); err != nil {
			return err
		}
	}
	_, err = step("cont")
	resumed = err == nil
	return err
}

// commands are one sample's monitor commands after the registers.
func (d *stallDump) commands(addrs []string) []string {
	cmds := []string{"info cpus"}
	if d.arch == "amd64" { // the arm monitor has no register names in expressions
		for i := 0; i < d.cpus; i++ {
			// $esp: the i386 monitor's name, 64 bits wide on x86-64
			cmds = append(cmds, fmt.Sprintf("cpu %d", i), "x /48gx $esp")
		}
		cmds = append(cmds, "cpu 0")
	}
	for _, a := range addrs {
		cmds = append(cmds, "x /8wx "+a)
	}
	return cmds
}

// hmp talks to QEMU's human monitor: a command, then its output up to
// the next prompt.
type hmp struct {
	conn net.Conn
	r    *bufio.Reader
}

var ansiRe = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

const hmpPrompt = "(qemu) "

func (m *hmp) readPrompt() (string, error) {
	_ = m.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	for {
		c, err := m.r.ReadByte()
		if err != nil {
			return b.String(), err
		}
		b.WriteByte(c)
		if strings.HasSuffix(b.String(), hmpPrompt) {
			s := strings.TrimSuffix(b.String(), hmpPrompt)
			return strings.ReplaceAll(ansiRe.ReplaceAllString(s, ""), "\r", ""), nil
		}
	}
}

func (m *hmp) do(cmd string) (string, error) {
	_ = m.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := m.conn.Write([]byte(cmd + "\n")); err != nil {
		return "", err
	}
	out, err := m.readPrompt()
	// the monitor echoes the command line first
	if i := strings.IndexByte(out, '\n'); i >= 0 && strings.Contains(out[:i], strings.Fields(cmd)[0]) {
		out = out[i+1:]
	}
	return out, err
}
