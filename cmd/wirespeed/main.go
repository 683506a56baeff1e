// SPDX-License-Identifier: Apache-2.0

// Command wirespeed inspects, observes, benchmarks and tunes the network
// datapath of a Linux host. All work happens in internal/cli; main only wires
// signals and the exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wirespeed/wirespeed/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
