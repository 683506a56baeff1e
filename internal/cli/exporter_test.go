// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// TestExporterBadInput: refused listen addresses and flags exit 2 before
// anything is opened; a busy port exits 1 saying so.
func TestExporterBadInput(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--listen", "0.0.0.0:9977"}, ExitUsage, "--allow-remote"},
		{[]string{"--listen", ":9977"}, ExitUsage, "every interface"},
		{[]string{"--listen", "198.18.0.1:9977"}, ExitUsage, "not a loopback"},
		{[]string{"--listen", "127.0.0.1"}, ExitUsage, "HOST:PORT"},
		{[]string{"--observe", "heavy"}, ExitUsage, "light, full or off"},
		{[]string{"--observe-sample", "0.1%"}, ExitUsage, "shortest window"},
		{[]string{"--interval", "100ms"}, ExitUsage, "want 1s or more"},
		{[]string{"eth0"}, ExitUsage, "no arguments"},
		{[]string{"--web.max-requests", "-2"}, ExitUsage, "--web.max-requests -2: want 0"},
		{[]string{"--web.config.file", "/nonexistent/web.yml", "--observe", "off"}, ExitFail, "--web.config.file /nonexistent/web.yml: open"},
		// a web configuration cannot make a malformed address good
		{[]string{"--listen", "127.0.0.1", "--web.config.file", "/nonexistent/web.yml"}, ExitUsage, "HOST:PORT"},
		{[]string{"--listen", busy.Addr().String(), "--observe", "off"}, ExitFail, "the port is in use (another exporter?)"},
		// --allow-remote lets a non-loopback address through to the
		// listener, which finds no such address here. (The context is
		// cancelled: were it bound, the command would return, not hang.)
		{[]string{"--listen", "198.19.255.254:9977", "--allow-remote", "--observe", "off"}, ExitFail, "no interface of this host has that address"},
	} {
		var out, errb bytes.Buffer
		code := Main(ctx, append([]string{"exporter"}, c.args...), &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("exporter %v: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}
