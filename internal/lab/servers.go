// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The lab's servers: iperf3 and the UDP echo in the receiver, started and
// checked to listen.

func (l *Lab) startServers(ctx context.Context) error {
	if _, err := exec.LookPath("iperf3"); err != nil {
		return fmt.Errorf("iperf3 is not installed: apt-get install iperf3: %w", err)
	}
	n := l.Config.Servers
	if n == 0 {
		n = 1
	}
	base := l.Config.BasePort
	if base == 0 {
		base = 5201
	}
	for i := 0; i < n; i++ {
		port := base + i
		argv := []string{"iperf3", "-s", "-p", strconv.Itoa(port), "-B", l.ReceiverAddr.String()}
		if l.Config.PinReceiver != nil {
			argv = append(argv, "-A", strconv.Itoa(*l.Config.PinReceiver))
		}
		if l.Config.Persistent {
			argv = append(argv, "-D")
			if err := run(ctx, append([]string{"ip", "netns", "exec", l.ReceiverNS}, argv...)...); err != nil {
				return err
			}
		} else {
			cmd := l.Command(context.Background(), l.ReceiverNS, argv...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("start iperf3 server in %s: %w", l.ReceiverNS, err)
			}
			l.mu.Lock()
			l.procs = append(l.procs, cmd)
			l.mu.Unlock()
		}
		l.ServerPorts = append(l.ServerPorts, port)
	}
	// Wait until every port listens in the receiver namespace.
	deadline := time.Now().Add(5 * time.Second)
	for {
		missing, err := l.notListening(ctx)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("iperf3 server in %s does not listen on port(s) %v after 5 s; is another program using them?", l.ReceiverNS, missing)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (l *Lab) notListening(ctx context.Context) ([]int, error) {
	var missing []int
	var tables []byte
	err := InNetns(l.ReceiverNS, func() error {
		for _, f := range []string{"tcp", "tcp6"} {
			b, err := os.ReadFile("/proc/thread-self/net/" + f)
			if err == nil {
				tables = append(tables, b...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	listening := map[int]bool{}
	for _, line := range strings.Split(string(tables), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "0A" {
			continue
		}
		_, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(portHex, 16, 16); err == nil {
			listening[int(p)] = true
		}
	}
	for _, p := range l.ServerPorts {
		if !listening[p] {
			missing = append(missing, p)
		}
	}
	// A server that died (port in use, bad option) will never listen.
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.procs {
		if c.ProcessState != nil {
			return nil, fmt.Errorf("iperf3 server in %s exited: %v", l.ReceiverNS, c.ProcessState)
		}
	}
	_ = ctx
	return missing, nil
}
