// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The QEMU monitor at a stall. A stall report (RCU stall, soft or hard
// lockup) prints the stuck CPU's registers and stack, but not what the
// other CPUs were doing, nor the value of the lock the stuck CPU spins on.
// Every boot therefore has QEMU's human monitor on a socket, and the first
// stall guard that fires reads, through it, every vCPU's registers and
// stack and the memory the stuck CPU's first argument registers point at,
// twice a second apart (a lock word that changed, a CPU that moved on),
// into monitor-at-stall.txt beside the console log. The addresses are
// virtual: the lab boots with nokaslr, so they resolve against the
// kernel's symbols (System.map or /proc/kallsyms of the same kernel).

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
	sock, consolePath, outPath, arch string
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
			// let the report's register block reach the console first
			time.Sleep(1500 * time.Millisecond)
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

// regArgRe finds the argument registers of a stuck CPU's report: the
// first two arguments on x86-64 (RDI, RSI) and the callee-saved RBX that
// qspinlock's slow path keeps the lock in; x0, x1 and x19 on arm64.
var regArgRe = map[string]*regexp.Regexp{
	"amd64": regexp.MustCompile(`\b(RDI|RSI|RBX): ?([0-9a-f]{16})\b`),
	"arm64": regexp.MustCompile(`\b(x0|x1|x19) ?: ([0-9a-f]{16})\b`),
}

// stallAddresses are the kernel addresses (top bit set) the report's
// argument registers hold, from console line first on, each once.
func stallAddresses(consolePath, arch string, first int) []string {
	re := regArgRe[arch]
	f, err := os.Open(consolePath)
	if re == nil || err != nil {
		return nil
	}
	defer f.Close()
	var addrs []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if n < first {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(sc.Text(), -1) {
			if v := m[2]; v[0] >= '8' && !seen[v] && len(addrs) < 4 {
				seen[v] = true
				addrs = append(addrs, "0x"+v)
			}
		}
	}
	return addrs
}

// run writes the dump: two samples a second apart.
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
	addrs := stallAddresses(d.consolePath, d.arch, h.Line)
	var b strings.Builder
	fmt.Fprintf(&b, "# QEMU monitor at the first %s (console line %d): %s\n", h.Guard, h.Line, h.Text)
	fmt.Fprintf(&b, "# addresses from the report's argument registers: %s\n", strings.Join(addrs, " "))
	for sample := 1; sample <= 2; sample++ {
		if sample == 2 {
			time.Sleep(time.Second)
		}
		fmt.Fprintf(&b, "\n## sample %d at %s\n", sample, time.Now().UTC().Format("15:04:05.000"))
		for _, cmd := range d.commands(addrs) {
			out, err := m.do(cmd)
			fmt.Fprintf(&b, "\n(qemu) %s\n%s", cmd, out)
			if err != nil {
				fmt.Fprintf(&b, "[monitor: %v]\n", err)
				return os.WriteFile(d.outPath, []byte(b.String()), 0o644)
			}
		}
	}
	return os.WriteFile(d.outPath, []byte(b.String()), 0o644)
}

// commands are one sample's monitor commands.
func (d *stallDump) commands(addrs []string) []string {
	cmds := []string{"info cpus", "info registers -a"}
	sp := "$esp" // the i386 monitor's name, 64 bits wide on x86-64
	if d.arch != "amd64" {
		sp = "" // the arm monitor has no register names in expressions
	}
	for i := 0; i < d.cpus; i++ {
		if sp != "" {
			cmds = append(cmds, fmt.Sprintf("cpu %d", i), "x /48gx "+sp)
		}
	}
	if d.cpus > 0 {
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
