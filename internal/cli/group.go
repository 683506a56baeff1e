// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/wirespeed/wirespeed/internal/tune"
)

// groupName is the hidden command that tune's measurements run under
// (see tune.GroupCommandName for why): it leads a process group of its
// own, runs the command in it, and kills the whole group when the process
// that started it dies.
const groupName = tune.GroupCommandName

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
