// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/lab"
	"github.com/wirespeed/wirespeed/internal/selfexe"
)

// LabSenderNSFlag is the internal flag of 'tune apply' with which RunInLab
// re-runs it inside the lab's receiver: measure from this namespace.
const LabSenderNSFlag = "lab-sender-ns"

// LabBench is the lab's measurement: bench from the sender namespace to the
// receiver's iperf3 server.
func LabBench(senderNS, dur string, streams int, extra []string) Bench {
	return Bench{Prefix: []string{"ip", "netns", "exec", senderNS}, Peer: lab.ReceiverAddr.String(),
		Duration: dur, Direction: bench.DirSend, Streams: streams, Extra: extra}
}

// RunInLab builds the host lab in cfg's state and runs 'wirespeed tune
// apply' again inside its receiver namespace (so /sys is that namespace's)
// with the user's args less --lab, measuring from the sender's; the lab and
// the run's journal are removed at the end. The child's exit status comes
// back as an *exec.ExitError in the chain.
func RunInLab(ctx context.Context, cfg lab.Config, args []string, stdout, stderr io.Writer) error {
	l, err := lab.Up(ctx, cfg)
	if err != nil {
		return err
	}
	defer l.Down()
	reapLabStates(os.TempDir())
	state, err := os.MkdirTemp("", fmt.Sprintf("wirespeed-tune-lab-%d-", os.Getpid()))
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	self, err := selfexe.Path()
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "lab %s up; tuning %s in %s\n", l.Base, l.ReceiverIf, l.ReceiverNS)
	cmd := lab.NetnsCommand(ctx, l.ReceiverNS, append([]string{self}, labChildArgv(l.ReceiverIf, state, l.SenderNS, args)...)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("tune apply in the lab: %w", err)
	}
	return nil
}

// reapLabStates removes the journal directories of lab tunes whose process
// is gone (killed with SIGKILL, its deferred removal never ran): their
// labs are reaped by lab.Up, their journals describe namespaces that no
// longer exist.
func reapLabStates(tmp string) {
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "wirespeed-tune-lab-")
		if !ok || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid <= 0 {
			continue // not ours to judge (an older layout): leave it
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(filepath.Join(tmp, e.Name()))
		}
	}
}

// labChildArgv is the re-run's command line: tune apply on the receiver
// device with a state directory of its own, measuring from the sender
// namespace, then the user's args without --lab.
func labChildArgv(dev, state, senderNS string, args []string) []string {
	argv := []string{"tune", "apply", dev, "--state-dir", state, "--" + LabSenderNSFlag, senderNS}
	for _, a := range args {
		if a == "--lab" || a == "-lab" || strings.HasPrefix(a, "--lab=") || strings.HasPrefix(a, "-lab=") {
			continue
		}
		argv = append(argv, a)
	}
	return argv
}
