// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/wirespeed/wirespeed/internal/testnet"
)

// Root tests of a session's life: cancelled while it starts, tracepoints
// that are missing or rejected, and the command interrupted - whatever ends
// it, no program or link of it is left in the kernel.

// TestRunCancelledDuringStart: a Ctrl-C that lands while observe is still
// attaching returns the (short) observation, not an error, and leaves
// nothing attached. Before, Start returned ctx's error with its links still
// open, and 'observe' exited 1 on an early Ctrl-C (seen as a flake of
// TestCommandDetachesOnInterrupt).
func TestRunCancelledDuringStart(t *testing.T) {
	testnet.NeedRoot(t)
	if _, err := exec.LookPath("bpftool"); err != nil {
		t.Skip("bpftool not installed")
	}
	for _, sample := range []float64{0, 0.2} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		o, err := Run(ctx, Options{Sample: sample, Period: 500 * time.Millisecond}, time.Minute)
		if err != nil || o == nil {
			t.Fatalf("sample %v: Run with a cancelled ctx: %v", sample, err)
		}
		if n := ourPerfBPF(t); n != 0 {
			t.Errorf("sample %v: %d of our programs still attached after Run returned", sample, n)
		}
	}
}

// progIDs returns the ids of the programs and links a session holds.
func sessionIDs(t *testing.T, s *Session) (progs []ebpf.ProgramID, links []uint32) {
	t.Helper()
	for _, p := range s.progs {
		info, err := p.Info()
		if err != nil {
			t.Fatal(err)
		}
		id, _ := info.ID()
		progs = append(progs, id)
	}
	for _, l := range s.links {
		info, err := l.Info()
		if err != nil {
			t.Fatal(err)
		}
		links = append(links, uint32(info.ID))
	}
	return progs, links
}

func assertGone(t *testing.T, progs []ebpf.ProgramID) {
	t.Helper()
	// A raw tracepoint link's program is freed after an RCU tasks-trace
	// grace period once the link is released, so it may outlive Close
	// (or the process) by a while: it must be gone within 5 s.
	deadline := time.Now().Add(5 * time.Second)
	for _, id := range progs {
		for {
			p, err := ebpf.NewProgramFromID(id)
			if err != nil {
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("program id %d: %v", id, err)
				}
				break
			}
			p.Close()
			if time.Now().After(deadline) {
				t.Errorf("program id %d still loaded 5 s after Close", id)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// breakProgram makes the verifier reject program name of spec, if spec has
// it: it reads past the context.
func breakProgram(spec *ebpf.CollectionSpec, name string) {
	if p := spec.Programs[name]; p != nil {
		p.Instructions = asm.Instructions{
			asm.LoadMem(asm.R0, asm.R1, 4096, asm.DWord),
			asm.Return(),
		}
	}
}

// With the raw BTF programs: a record layout that moved does not matter to
// them; one that does not load falls back to its classic program by
// default and is reported failed when they were insisted on.
func TestRawProgramsFallBack(t *testing.T) {
	testnet.NeedRoot(t)
	if _, err := os.Stat(vmlinuxBTF); err != nil {
		t.Skip("no kernel BTF")
	}
	evs := append([]event(nil), events...)
	for i := range evs {
		if evs[i].name == "napi_poll" {
			evs[i].fields = same([]want{{"napi", 8, 8}, {"dev_name", 16, 4}, {"work", 24, 4}, {"budget", 24, 4}})
		}
	}
	breakProg := func(spec *ebpf.CollectionSpec) { breakProgram(spec, "btf_netif_rx") }
	for _, tc := range []struct {
		programs string
		want     map[string]string // event -> status: detail prefix
	}{
		{ProgramsAuto, map[string]string{
			"napi:napi_poll":             "attached: " + RawDetail,
			"net:netif_receive_skb":      "attached: " + RawDetail,
			"net:netif_rx":               "attached: classic tracepoint: the raw one (tp_btf) did not load",
			"net:napi_gro_receive_entry": "attached: ",
		}},
		{ProgramsBTF, map[string]string{
			"napi:napi_poll": "attached: " + RawDetail,
			"net:netif_rx":   "failed: raw tracepoint (tp_btf): loading btf_netif_rx",
		}},
	} {
		s, err := Start(context.Background(), Options{events: evs, mutateSpec: breakProg, Programs: tc.programs})
		if err != nil {
			t.Fatalf("%s: Start: %v", tc.programs, err)
		}
		status := map[string]EventStatus{}
		for _, e := range s.Events() {
			status[e.Event] = e
		}
		for ev, want := range tc.want {
			got := status[ev].Status + ": " + status[ev].Detail
			if !strings.HasPrefix(got, want) {
				t.Errorf("%s: %s is %q, want %q...", tc.programs, ev, got, want)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Sampled, auto picks the classic programs, whose perf events stay
	// open between windows; btf still links raw ones every window.
	for programs, raw := range map[string]bool{ProgramsAuto: false, ProgramsBTF: true} {
		s, err := Start(context.Background(), Options{Light: true, Sample: 0.5, Programs: programs})
		if err != nil {
			t.Fatalf("sampled %s: %v", programs, err)
		}
		for _, e := range s.Events() {
			if e.Event == "napi:napi_poll" && (e.Detail == RawDetail) != raw {
				t.Errorf("sampled %s: napi_poll attached as %q", programs, e.Detail)
			}
		}
		s.Close()
	}
	if _, err := Start(context.Background(), Options{Programs: "fast"}); err == nil || !strings.Contains(err.Error(), "want auto, btf") {
		t.Errorf("bad programs choice: %v", err)
	}
}

func TestBrokenTracepointsAreReported(t *testing.T) {
	testnet.NeedRoot(t)
	evs := append([]event(nil), events...)
	// A tracepoint this kernel does not have.
	evs = append(evs, event{"wirespeed_bogus", "no_such_event", "tp_napi_poll", [2][]want{}, true, ""})
	// A layout that moved: pretend napi_poll's work field is elsewhere.
	for i := range evs {
		if evs[i].name == "napi_poll" {
			evs[i].fields = same([]want{{"napi", 8, 8}, {"dev_name", 16, 4}, {"work", 24, 4}, {"budget", 24, 4}})
		}
	}
	// A program the verifier rejects: netif_rx's reads past the context.
	breakProg := func(spec *ebpf.CollectionSpec) { breakProgram(spec, "tp_netif_rx") }
	s, err := Start(context.Background(), Options{events: evs, mutateSpec: breakProg, Programs: ProgramsClassic})
	if err != nil {
		t.Fatalf("Start failed instead of reporting: %v", err)
	}
	status := map[string]EventStatus{}
	for _, e := range s.Events() {
		status[e.Event] = e
	}
	for ev, want := range map[string]string{
		"wirespeed_bogus:no_such_event": "missing",
		"napi:napi_poll":                "format-mismatch",
		"net:netif_rx":                  "failed",
		"net:netif_receive_skb":         "attached",
	} {
		if got := status[ev]; got.Status != want {
			t.Errorf("%s: status %q (%s), want %q", ev, got.Status, got.Detail, want)
		}
	}
	if !strings.Contains(status["napi:napi_poll"].Detail, "work at offset 20") {
		t.Errorf("mismatch detail does not say what moved: %q", status["napi:napi_poll"].Detail)
	}
	o, err := s.Total()
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Notes) < 3 {
		t.Errorf("observation notes do not report the skipped tracepoints: %v", o.Notes)
	}
	progs, _ := sessionIDs(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, progs)

	// Nothing usable at all: a clear error, not a panic.
	_, err = Start(context.Background(), Options{events: []event{{"wirespeed_bogus", "none", "tp_napi_poll", [2][]want{}, false, ""}}})
	if err == nil || !strings.Contains(err.Error(), "no tracepoint could be attached") {
		t.Errorf("Start with only a bogus tracepoint: err = %v", err)
	}
}

// TestCommandDetachesOnInterrupt runs the wirespeed binary, interrupts it and
// checks that the programs and links it held are gone.
func TestCommandDetachesOnInterrupt(t *testing.T) {
	testnet.NeedRoot(t)
	bin := filepath.Join(t.TempDir(), "wirespeed")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/wirespeed/wirespeed/cmd/wirespeed").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	for _, c := range []struct {
		sig  syscall.Signal
		args []string
	}{
		{syscall.SIGINT, []string{"--duration", "60"}},
		{0, []string{"--duration", "1"}},
		// Sampled: the links come and go; Ctrl-C may fall in a window or
		// between two.
		{syscall.SIGINT, []string{"--duration", "60", "--sample", "20%"}},
		{0, []string{"--duration", "2", "--sample", "20%"}},
	} {
		sig := c.sig
		sampled := len(c.args) > 2
		var out bytes.Buffer
		cmd := exec.Command(bin, append([]string{"observe", "--json"}, c.args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Every link seen: a sampled session makes new ones each window.
		var progs []uint64
		links := map[uint64]bool{}
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			p, l := fdIDs(cmd.Process.Pid)
			for _, id := range l {
				links[id] = true
			}
			if len(p) > 0 {
				progs = p
			}
			if len(links) >= len(events)-2 && (!sampled || len(progs) >= len(events)-2) {
				break
			}
		}
		if len(links) == 0 {
			t.Fatalf("no BPF links found in the fds of pid %d: %s", cmd.Process.Pid, out.String())
		}
		if sig != 0 {
			cmd.Process.Signal(sig)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("wirespeed observe %v (signal %v): %v: %s", c.args, sig, err, out.String())
		}
		if !strings.Contains(out.String(), `"schema": "wirespeed.observe/v1"`) {
			t.Errorf("no observation printed: %s", lastLines(out.String(), 5))
		}
		if sampled != strings.Contains(out.String(), `"attached_s":`) {
			t.Errorf("observe %v: sample block in the JSON %v, want %v", c.args, !sampled, sampled)
		}
		ids := make([]ebpf.ProgramID, len(progs))
		for i, p := range progs {
			ids[i] = ebpf.ProgramID(p)
		}
		assertGone(t, ids)
		bt, err := exec.Command("bpftool", "link", "show").CombinedOutput()
		if err == nil {
			for id := range links {
				if bytes.Contains(bt, []byte(fmt.Sprintf("\n%d: ", id))) || bytes.HasPrefix(bt, []byte(fmt.Sprintf("%d: ", id))) {
					t.Errorf("bpftool still lists link %d after exit", id)
				}
			}
		}
	}
}

// fdIDs reads prog_id and link_id from the fdinfo of a process's BPF fds.
func fdIDs(pid int) (progs, links []uint64) {
	infos, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fdinfo/*", pid))
	for _, p := range infos {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "link_id":
				links = append(links, n)
			case "prog_id":
				if !bytes.Contains(b, []byte("link_type")) {
					progs = append(progs, n)
				}
			}
		}
	}
	return progs, links
}
