// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/testnet"
)

func nsRun(t *testing.T, ns string, argv ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v in %s: %v: %s", argv, ns, err, out)
	}
	return string(out)
}

func feature(t *testing.T, ns, dev, name string) string {
	t.Helper()
	for _, line := range strings.Split(nsRun(t, ns, "ethtool", "-k", dev), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == name {
			f := strings.Fields(v)
			if len(f) > 0 {
				return f[0]
			}
		}
	}
	t.Fatalf("ethtool -k %s in %s: no %s", dev, ns, name)
	return ""
}

func TestUpKnobsDown(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool", "tc", "iperf3")
	ctx := context.Background()
	pin := 0
	cfg := Config{Name: "knobs", GRO: true, Threaded: true, SenderOffloadsOff: true, RPSMask: "1", RateMbit: 50, SenderQdisc: "pfifo_fast", Servers: 2, BasePort: 5301, PinReceiver: &pin}
	l, err := Up(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Down() })
	if !strings.HasPrefix(l.SenderNS, fmt.Sprintf("ws-%d-", os.Getpid())) {
		t.Errorf("namespace %s does not carry the owner pid", l.SenderNS)
	}
	// Knobs, read back from the kernel inside the namespaces.
	if got := feature(t, l.ReceiverNS, l.ReceiverIf, "generic-receive-offload"); got != "on" {
		t.Errorf("receiver gro = %s, want on", got)
	}
	for _, f := range []string{"tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload"} {
		if got := feature(t, l.SenderNS, l.SenderIf, f); got != "off" {
			t.Errorf("sender %s = %s, want off", f, got)
		}
	}
	if got, err := testnet.ReadSysfs(ctx, l.ReceiverNS, "/sys/class/net/"+l.ReceiverIf+"/threaded"); err != nil || got != "1" {
		t.Errorf("threaded = %q %v, want 1", got, err)
	}
	rps, err := testnet.ReadSysfs(ctx, l.ReceiverNS, "/sys/class/net/"+l.ReceiverIf+"/queues/rx-0/rps_cpus")
	if cpus, perr := cpumask.ParseMask(rps); err != nil || perr != nil || !reflect.DeepEqual(cpus, []int{0}) {
		t.Errorf("rps_cpus = %q (%v %v), want CPU 0", rps, err, perr)
	}
	if q := nsRun(t, l.SenderNS, "tc", "qdisc", "show", "dev", l.SenderIf); !strings.Contains(q, "tbf") || !strings.Contains(q, "rate 50Mbit") || !strings.Contains(q, "pfifo_fast") {
		t.Errorf("sender qdisc = %q, want tbf rate 50Mbit with pfifo_fast below", q)
	}
	// A NAPI kthread exists for the threaded receiver. cat exits 1 when a
	// process the glob named is gone by the time it reads it (any busy
	// host); what it printed is still the answer.
	if !strings.Contains(nsRun(t, l.ReceiverNS, "sh", "-c", "cat /proc/[0-9]*/comm 2>/dev/null; true"), "napi/"+l.ReceiverIf) {
		t.Errorf("no napi/%s-* kthread", l.ReceiverIf)
	}
	if !reflect.DeepEqual(l.ServerPorts, []int{5301, 5302}) {
		t.Errorf("server ports = %v", l.ServerPorts)
	}
	if ss := nsRun(t, l.ReceiverNS, "ss", "-ltnp"); !strings.Contains(ss, ":5301") || !strings.Contains(ss, ":5302") || !strings.Contains(ss, "iperf3") {
		t.Errorf("iperf3 servers not listening:\n%s", ss)
	}
	// The UDP echo answers from the receiver namespace.
	c, err := ListenUDP(l.SenderNS, netip.AddrPortFrom(l.SenderAddr, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := []byte("0123456789abcdef0123456789abcdef")
	if _, err := c.WriteToUDPAddrPort(msg, netip.AddrPortFrom(l.ReceiverAddr, uint16(l.EchoPort))); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil || n != len(msg) || from.Addr() != l.ReceiverAddr || string(buf[:16]) != string(msg[:16]) {
		t.Errorf("echo: %d bytes from %v: %v", n, from, err)
	}
	ns := []string{l.SenderNS, l.ReceiverNS}
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if err := l.Down(); err != nil {
		t.Errorf("second Down: %v", err)
	}
	for _, n := range ns {
		if Exists(n) {
			t.Errorf("namespace %s left behind", n)
		}
	}
}

func TestUpDefaults(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool", "tc", "iperf3")
	ctx := context.Background()
	l, err := Up(ctx, Config{Servers: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	if got := feature(t, l.ReceiverNS, l.ReceiverIf, "generic-receive-offload"); got != "off" {
		t.Errorf("receiver gro = %s, want off (netif_rx backlog path)", got)
	}
	if got := feature(t, l.SenderNS, l.SenderIf, "tcp-segmentation-offload"); got != "on" {
		t.Errorf("sender tso = %s, want on", got)
	}
	if q := nsRun(t, l.SenderNS, "tc", "qdisc", "show", "dev", l.SenderIf); strings.Contains(q, "tbf") {
		t.Errorf("unshaped lab has %q", q)
	}
	if len(l.ServerPorts) != 0 {
		t.Errorf("Servers -1 started servers on %v", l.ServerPorts)
	}
}

// TestHelperLabOwner is not a test: it is the process TestReapAfterKill
// kills. It builds a lab, prints the namespace and waits.
func TestHelperLabOwner(t *testing.T) {
	if os.Getenv("WS_LAB_HELPER") != "1" {
		t.Skip("helper process for TestReapAfterKill")
	}
	l, err := Up(context.Background(), Config{Name: "victim"})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("UP", l.SenderNS, l.ReceiverNS)
	time.Sleep(time.Minute)
	os.Exit(3)
}

func TestReapAfterKill(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool", "tc", "iperf3")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLabOwner$")
	cmd.Env = append(os.Environ(), "WS_LAB_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "UP" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	sns, rns := f[1], f[2]
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	t.Cleanup(func() { removeNetns(sns, rns) })
	if !Exists(sns) || !Exists(rns) {
		t.Fatal("kill -9 removed the namespaces; the test cannot tell whether Reap works")
	}
	// The owner is dead and the list says so.
	labs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, in := range labs {
		if in.Namespace == sns || in.Namespace == rns {
			seen++
			if in.Alive || in.Owner != cmd.Process.Pid {
				t.Errorf("%s: owner %d alive=%v, want dead %d", in.Namespace, in.Owner, in.Alive, cmd.Process.Pid)
			}
		}
	}
	if seen != 2 {
		t.Errorf("List shows %d of the 2 namespaces", seen)
	}
	// The iperf3 server of the dead owner died with it (PR_SET_PDEATHSIG).
	var pids []int
	for i := 0; i < 100; i++ {
		pids = nil
		labs, _ := List()
		for _, in := range labs {
			if in.Namespace == rns {
				pids = in.Pids
			}
		}
		if len(pids) == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(pids) > 0 {
		t.Errorf("processes %v survive in %s after their owner was killed", pids, rns)
	}
	// A live owner's lab (ours) is left alone.
	mine, err := Up(context.Background(), Config{Name: "alive", Servers: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Down()
	// Up reaps too; so whichever removed them, they must be gone, and a
	// second Reap finds nothing of ours.
	if Exists(sns) || Exists(rns) {
		t.Error("namespaces of the dead owner still there after Up (which reaps)")
	}
	reaped, err := Reap()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reaped {
		if r == mine.SenderNS || r == mine.ReceiverNS {
			t.Errorf("Reap removed %s of a live owner", r)
		}
	}
	if !Exists(mine.SenderNS) {
		t.Error("the live owner's lab is gone")
	}
}

func TestReapRemovesDead(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool", "tc", "iperf3")
	// A namespace named for a pid that cannot be alive (beyond pid_max).
	ns := "ws-4194305-dead-s"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Cleanup(func() { removeNetns(ns) })
	reaped, err := Reap()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(reaped, " "), ns) || Exists(ns) {
		t.Errorf("Reap = %v; %s exists: %v", reaped, ns, Exists(ns))
	}
}

func TestValidate(t *testing.T) {
	bad := []Config{
		{Name: "a/b"},
		{Threaded: true},
		{RPSMask: "xyz"},
		{RPSMask: "ffffffff,ffffffff,ffffffff"},
		{RateMbit: -1},
		{PinSender: ptr(-1)},
		{PinReceiver: ptr(100000)},
		{Servers: 100},
		{SenderQdisc: "htb"},
		{SenderQdisc: "noqueue", RateMbit: 10},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
	good := []Config{{}, {GRO: true, Threaded: true, SenderOffloadsOff: true, RPSMask: "1", RateMbit: 100, PinSender: ptr(0)}}
	for _, c := range good {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func ptr(i int) *int { return &i }

func TestOwnerPid(t *testing.T) {
	for name, want := range map[string]int{"ws-123-1-s": 123, "ws-9-x-r": 9, "ws-lab-0-s": 0, "ws-t77-1": 0, "other": 0, "ws--1": 0} {
		got, ok := ownerPid(name)
		if got != want || ok != (want != 0) {
			t.Errorf("ownerPid(%q) = %d %v, want %d", name, got, ok, want)
		}
	}
}

func TestTBFArgs(t *testing.T) {
	got := strings.Join(TBFArgs("ws-snd", 100), " ")
	if got != "tc qdisc replace dev ws-snd root handle 1: tbf rate 100000kbit burst 50000 latency 100ms" {
		t.Errorf("TBFArgs(100) = %q", got)
	}
	if got := strings.Join(TBFArgs("d", 1), " "); !strings.Contains(got, "burst 32768") {
		t.Errorf("TBFArgs(1) = %q, want the 32 KB minimum burst", got)
	}
}

func TestOwnerAlive(t *testing.T) {
	f := t.TempDir() + "/ns"
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !ownerAlive(os.Getpid(), f) {
		t.Error("this process counts as dead")
	}
	// A namespace older than the process with its pid: pid reused.
	old := time.Now().Add(-365 * 24 * time.Hour)
	os.Chtimes(f, old, old)
	if ownerAlive(os.Getpid(), f) {
		t.Error("a process younger than the namespace counts as its owner")
	}
	os.Chtimes(f, time.Now(), time.Now())
	// A killed process its parent has not waited for is a zombie: dead.
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	for i := 0; i < 100; i++ {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if strings.Contains(string(b), ") Z") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ownerAlive(cmd.Process.Pid, f) {
		t.Error("a zombie counts as alive")
	}
	cmd.Wait()
	if ownerAlive(cmd.Process.Pid, f) {
		t.Error("a reaped process counts as alive")
	}
}

// TestLabUnknownQdisc: a qdisc this kernel lacks is named as such, not as
// tc's raw error, and the half-built lab is removed.
func TestLabUnknownQdisc(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool", "tc", "iperf3")
	if err := QdiscError("cake", errors.New("tc: exit status 2: Error: Specified qdisc kind is unknown.")); err == nil || !strings.Contains(err.Error(), `this kernel has no qdisc "cake"`) {
		t.Errorf("tc's unknown-kind error: %v", err)
	}
	// sfq and fq are modules that a kernel without loadable modules (this
	// VM's) lacks; where they load, there is nothing to check.
	for _, q := range []string{"sfq", "fq"} {
		l, err := Up(context.Background(), Config{SenderQdisc: q, Servers: -1})
		if err == nil {
			l.Down()
			continue
		}
		if !strings.Contains(err.Error(), `this kernel has no qdisc "`+q+`"`) {
			t.Errorf("lab with qdisc %s: %v", q, err)
		}
	}
	labs, _ := List()
	for _, in := range labs {
		if in.Owner == os.Getpid() {
			t.Errorf("lab %s left behind", in.Namespace)
		}
	}
}
