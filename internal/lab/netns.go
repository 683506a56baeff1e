// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// InNetns runs fn on an OS thread that has joined the named network
// namespace, and returns the thread to this process's namespace afterwards.
// Sockets created in fn stay in ns for their whole life, whichever thread
// later uses them; so do /proc/thread-self/net/* reads done in fn.
// If the thread cannot return, it is left locked and dies with its goroutine.
func InNetns(ns string, fn func() error) error {
	target, err := unix.Open(filepath.Join(netnsDir, ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", ns, err)
	}
	defer unix.Close(target)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open own network namespace: %w", err)
			return
		}
		defer unix.Close(orig)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter network namespace %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			// Stay locked: the thread exits with this goroutine.
			errc <- fmt.Errorf("leave network namespace %s: %w", ns, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// ListenUDP opens a UDP socket bound to addr inside ns.
func ListenUDP(ns string, addr netip.AddrPort) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := InNetns(ns, func() error {
		var err error
		c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(addr))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("UDP socket on %s in %s: %w", addr, ns, err)
	}
	return c, nil
}

// echoServer answers every UDP datagram with itself.
type echoServer struct {
	conn *net.UDPConn
	wg   sync.WaitGroup
}

func startEcho(ns string, addr netip.AddrPort) (*echoServer, error) {
	c, err := ListenUDP(ns, addr)
	if err != nil {
		return nil, fmt.Errorf("UDP echo: %w", err)
	}
	e := &echoServer{conn: c}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		ServeEcho(c)
	}()
	return e, nil
}

func (e *echoServer) close() {
	_ = e.conn.Close()
	e.wg.Wait()
}

// ServeEcho echoes datagrams on c until c is closed. It stamps the echo
// server's receive time (unix ns) into bytes 16-24 when the datagram is at
// least 24 bytes long, so a client can split the RTT if it wants.
func ServeEcho(c *net.UDPConn) {
	buf := make([]byte, 2048)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
		if n >= 24 {
			binary.BigEndian.PutUint64(buf[16:24], uint64(time.Now().UnixNano()))
		}
		_, _ = c.WriteToUDPAddrPort(buf[:n], from)
	}
}

// Exists reports whether the named namespace exists.
func Exists(ns string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, ns))
	return err == nil
}
