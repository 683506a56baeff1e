// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Tap is a Link on a tap (Ethernet frames) or tun (IP packets) device of
// the current network namespace, without packet information headers or
// offloads: the host's stack segments and checksums what it sends, as it
// does for a NIC that offers nothing.
type Tap struct {
	f    *os.File
	Name string
	buf  []byte
}

// OpenTap creates (or attaches to) the tap or tun device name.
func OpenTap(name string, tun bool) (*Tap, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w (is the tun module loaded, and are you root?)", err)
	}
	var req [unix.IFNAMSIZ + 64]byte
	if len(name) >= unix.IFNAMSIZ {
		unix.Close(fd)
		return nil, fmt.Errorf("interface name %q longer than %d bytes", name, unix.IFNAMSIZ-1)
	}
	copy(req[:], name)
	flags := uint16(unix.IFF_TAP | unix.IFF_NO_PI)
	if tun {
		flags = unix.IFF_TUN | unix.IFF_NO_PI
	}
	*(*uint16)(unsafe.Pointer(&req[unix.IFNAMSIZ])) = flags
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&req[0]))); e != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, e)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Tap{f: os.NewFile(uintptr(fd), "/dev/net/tun"), Name: name, buf: make([]byte, 65536)}, nil
}

// ReadFrame implements Link.
func (t *Tap) ReadFrame() ([]byte, error) {
	n, err := t.f.Read(t.buf)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), t.buf[:n]...), nil
}

// WriteFrame implements Link.
func (t *Tap) WriteFrame(b []byte) error {
	_, err := t.f.Write(b)
	return err
}

// Close implements Link; the device goes away with its last descriptor.
func (t *Tap) Close() error { return t.f.Close() }
