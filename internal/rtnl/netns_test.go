package rtnl

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// testNetns is a named network namespace ("ws-t<pid>-<n>") created for one
// test and deleted (with every device in it) in t.Cleanup.
type testNetns struct {
	name string
}

var netnsSeq atomic.Int32

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace and a veth pair")
	}
	for _, tool := range []string{"ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs root and %s(8): %v", tool, err)
		}
	}
}

func newTestNetns(t *testing.T) *testNetns {
	t.Helper()
	needRoot(t)
	ns := &testNetns{name: fmt.Sprintf("ws-t%d-%d", os.Getpid(), netnsSeq.Add(1))}
	if out, err := exec.Command("ip", "netns", "add", ns.name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns.name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns.name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns.name, err, out)
		}
	})
	return ns
}

// vethNames returns names for a veth pair unique to this test process.
func vethNames(t *testing.T) (string, string) {
	p := fmt.Sprintf("ws-t%d", os.Getpid())
	return p + "a", p + "b"
}

// run runs a command inside the namespace and returns its trimmed stdout.
func (ns *testNetns) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.name}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("in netns %s: %s: %v: %s", ns.name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// do runs fn on an OS thread switched into the namespace; the thread is
// switched back (or discarded if that fails) afterwards. fn runs on another
// goroutine, so it must not call t.Fatal/t.FailNow.
func (ns *testNetns) do(t *testing.T, fn func()) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			return // thread exits with the goroutine: still locked
		}
		defer orig.Close()
		target, err := os.Open("/run/netns/" + ns.name)
		if err != nil {
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns.name, err)
			return
		}
		fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns back: %w", err)
			return // leave the thread locked so it is destroyed
		}
		runtime.UnlockOSThread()
		errc <- nil
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// addVeth creates a veth pair inside the namespace and brings both ends up.
func (ns *testNetns) addVeth(t *testing.T) (a, b string) {
	t.Helper()
	a, b = vethNames(t)
	ns.run(t, "ip", "link", "add", a, "type", "veth", "peer", "name", b)
	ns.run(t, "ip", "link", "set", a, "up")
	ns.run(t, "ip", "link", "set", b, "up")
	return a, b
}

func lookPathEthtool() (string, error) { return exec.LookPath("ethtool") }
