// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Taking labs down: Down and DownNamed, List, and Reap of the labs whose
// owner process is dead.

// Down stops the lab's processes and removes its namespaces (and with them
// the veth pair and qdiscs). It is safe to call more than once.
func (l *Lab) Down() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return l.downErr
	}
	l.down = true
	if l.echo != nil {
		l.echo.close()
	}
	for _, c := range l.procs {
		if c.Process != nil && c.ProcessState == nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	l.downErr = removeNetns(l.SenderNS, l.ReceiverNS)
	return l.downErr
}

// DownNamed removes a persistent lab made by 'wirespeed lab up --name NAME'.
func DownNamed(name string) error {
	if name == "" {
		name = "0"
	}
	base := "ws-lab-" + name
	found := false
	for _, ns := range []string{base + "-s", base + "-r"} {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("no lab %q (namespaces %s-s, %s-r): %w; see 'wirespeed lab status' for the labs there are", name, base, base, os.ErrNotExist)
	}
	return removeNetns(base+"-s", base+"-r")
}

// removeNetns kills every process inside the namespaces and deletes them.
func removeNetns(names ...string) error {
	var errs []error
	for _, ns := range names {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err != nil {
			continue
		}
		killNetnsPids(ns)
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip netns del %s: %w: %s", ns, err, strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

func killNetnsPids(ns string) {
	for attempt := 0; attempt < 20; attempt++ {
		out, err := exec.Command("ip", "netns", "pids", ns).Output()
		if err != nil {
			return
		}
		pids := strings.Fields(string(out))
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Info describes a lab namespace found on the host.
type Info struct {
	Namespace string `json:"namespace"`
	Base      string `json:"base"`
	// Kind is "bench" (ws-PID-..., removed when its owner ends), "persistent"
	// (ws-lab-NAME from 'wirespeed lab up') or "other" (a ws- name wirespeed's
	// lab did not make, e.g. another test's; never touched).
	Kind  string `json:"kind"`
	Owner int    `json:"owner_pid,omitempty"`
	Alive bool   `json:"owner_alive"`
	Pids  []int  `json:"pids,omitempty"`
}

// List returns the lab namespaces on this host (all "ws-" namespaces).
func List() ([]Info, error) {
	ents, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", netnsDir, err)
	}
	var out []Info
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "ws-") {
			continue
		}
		in := Info{Namespace: name, Base: strings.TrimSuffix(strings.TrimSuffix(name, "-s"), "-r")}
		if pid, ok := ownerPid(name); ok {
			in.Kind, in.Owner, in.Alive = "bench", pid, ownerAlive(pid, filepath.Join(netnsDir, name))
		} else if strings.HasPrefix(name, "ws-lab-") {
			in.Kind = "persistent"
		} else {
			in.Kind = "other"
		}
		if b, err := exec.Command("ip", "netns", "pids", name).Output(); err == nil {
			for _, f := range strings.Fields(string(b)) {
				if p, err := strconv.Atoi(f); err == nil {
					in.Pids = append(in.Pids, p)
				}
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// ownerPid extracts the owner from "ws-<pid>-...".
func ownerPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "ws-")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok || digits == "" {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// ownerAlive reports whether the process pid that created the namespace
// file nsFile still runs: it exists, is not a zombie (a killed process its
// parent has not waited for), and started before the namespace was made (a
// later process with the same pid is someone else).
func ownerAlive(pid int, nsFile string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return true
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	start, err1 := strconv.ParseUint(f[19], 10, 64) // field 22: starttime, ticks since boot
	fi, err2 := os.Stat(nsFile)
	boot, err3 := bootTime()
	if err1 != nil || err2 != nil || err3 != nil {
		return true
	}
	started := boot.Add(time.Duration(start) * time.Second / 100)
	return !started.After(fi.ModTime().Add(2 * time.Second))
}

func bootTime() (time.Time, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			return time.Unix(n, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("/proc/stat: no btime")
}

// Reap removes the namespaces (and the processes in them) of labs whose
// owner process is gone, and returns their names. Labs of live owners and
// persistent labs are left alone.
func Reap() ([]string, error) {
	labs, err := List()
	if err != nil {
		return nil, err
	}
	var reaped []string
	var errs []error
	for _, in := range labs {
		if in.Kind != "bench" || in.Alive {
			continue
		}
		if err := removeNetns(in.Namespace); err != nil {
			errs = append(errs, err)
			continue
		}
		reaped = append(reaped, in.Namespace)
	}
	return reaped, errors.Join(errs...)
}

// RemoveNamespace kills the processes in one lab namespace and deletes it.
// It refuses names that are not wirespeed's.
func RemoveNamespace(ns string) error {
	if !strings.HasPrefix(ns, "ws-") || strings.ContainsAny(ns, "/.") {
		return fmt.Errorf("%q is not a wirespeed lab namespace", ns)
	}
	return removeNetns(ns)
}
