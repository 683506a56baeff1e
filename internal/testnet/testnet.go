// SPDX-License-Identifier: Apache-2.0

// Package testnet gives root integration tests a network namespace of their
// own ("ws-t<pid>-<n>", removed with everything in it when the test ends)
// and a veth pair in it. It is imported only by tests.
package testnet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// NS is a named network namespace ("ws-t<pid>-<n>") created for one
// test and deleted (with every device in it) in t.Cleanup.
type NS struct {
	Name string
}

var netnsSeq atomic.Int32

// NeedRoot skips the test unless it runs as root with every one of tools
// on PATH: root integration tests create namespaces, load eBPF and change
// other users' view, and make check runs them as root.
func NeedRoot(t *testing.T, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces, loads eBPF (run the tests as root, as make check does)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (make setup installs it): %v", tool, err)
		}
	}
}

func New(t *testing.T) *NS {
	t.Helper()
	NeedRoot(t, "ip")
	ns := &NS{Name: fmt.Sprintf("ws-t%d-%d", os.Getpid(), netnsSeq.Add(1))}
	if out, err := exec.Command("ip", "netns", "add", ns.Name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns.Name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns.Name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns.Name, err, out)
		}
	})
	return ns
}

// VethNames returns names for a veth pair unique to this test process.
func VethNames(t *testing.T) (string, string) {
	p := fmt.Sprintf("ws-t%d", os.Getpid())
	return p + "a", p + "b"
}

// Run runs a command inside the namespace and returns its trimmed stdout.
func (ns *NS) Run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.Name}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("in netns %s: %s: %v: %s", ns.Name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// Do runs fn on an OS thread switched into the namespace; the thread is
// switched back (or discarded if that fails) afterwards. fn runs on another
// goroutine, so it must not call t.Fatal/t.FailNow.
func (ns *NS) Do(t *testing.T, fn func()) {
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
		target, err := os.Open("/run/netns/" + ns.Name)
		if err != nil {
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns.Name, err)
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

// AddVeth creates a veth pair inside the namespace and brings both ends up.
func (ns *NS) AddVeth(t *testing.T) (a, b string) {
	t.Helper()
	a, b = VethNames(t)
	ns.Run(t, "ip", "link", "add", a, "type", "veth", "peer", "name", b)
	ns.Run(t, "ip", "link", "set", a, "up")
	ns.Run(t, "ip", "link", "set", b, "up")
	return a, b
}

// ReadSysfs reads a sysfs file as seen inside the namespace ns.
func ReadSysfs(ctx context.Context, ns, path string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "cat", path).Output()
	if err != nil {
		return "", fmt.Errorf("read %s in %s: %w", path, ns, err)
	}
	return strings.TrimSpace(string(out)), nil
}
