package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// groupName is the hidden command groupCommand runs: a supervisor that
// leads a process group of its own, runs argv in it, and kills the whole
// group when the process that started it dies.
//
// PR_SET_PDEATHSIG alone does not do this: it reaches only the direct child
// (sh for --verify-cmd, bench for --peer), and the kernel clears it in that
// child's own children (the load the shell started, iperf3), which then run
// on as orphans after a kill -9 of tune. The supervisor gets SIGTERM when
// its parent dies, and SIGTERM can be caught: it answers with SIGKILL to
// the group - itself, the command and everything the command started.
const groupName = "__group"

func init() {
	register(&Command{
		Name:    groupName,
		Summary: "internal: run a command in a process group that dies with its parent",
		Usage:   "wirespeed " + groupName + " PARENT-PID -- COMMAND [ARG...]   (internal, used by tune)",
		Hidden:  true,
		Run:     runGroup,
	})
}

func runGroup(ctx context.Context, env Env, args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return usageErrorf("%s is internal to wirespeed tune", groupName)
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil {
		return usageErrorf("%s: parent pid %q is not a number", groupName, args[0])
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	killGroup := func() { _ = syscall.Kill(0, syscall.SIGKILL) }
	if os.Getppid() != parent {
		killGroup() // the parent died before the signal could be caught
	}
	cmd := exec.Command(args[2], args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-sig:
		killGroup()
		return nil // not reached
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.ExitCode() & 0xff) // the command's own status, no message of ours
		}
		return err
	}
}

// groupCommand returns a command that runs argv in a process group of its
// own, led by the supervisor above: when this process dies, even by
// SIGKILL, the whole group is killed; when ctx ends, the group is killed.
func groupCommand(ctx context.Context, argv ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find wirespeed's own binary to supervise %s: %w", argv[0], err)
	}
	cmd := exec.CommandContext(ctx, self, append([]string{groupName, strconv.Itoa(os.Getpid()), "--"}, argv...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 3 * time.Second
	return cmd, nil
}
