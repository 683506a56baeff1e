// SPDX-License-Identifier: Apache-2.0

package usbredir

import (
	"net"
	"os"
	"syscall"
)

// The host's side of the protocol (what QEMU's usb-redir sends), for
// tests that drive a device without a VM.

// SendBulkRequest asks for a bulk IN transfer of up to length bytes.
func (c *Conn) SendBulkRequest(id uint64, ep uint8, length uint32) error {
	return c.SendBulk(id, ep, StatusSuccess, length, nil)
}

// SendBulkOut sends a bulk OUT transfer.
func (c *Conn) SendBulkOut(id uint64, ep uint8, data []byte) error {
	return c.SendBulk(id, ep, StatusSuccess, uint32(len(data)), data)
}

// SendControlRequest sends a control request (data for an OUT one).
func (c *Conn) SendControlRequest(id uint64, s Control, data []byte) error {
	h := make([]byte, controlPacketLen)
	h[0], h[1], h[2] = s.RequestType&0x80, s.Request, s.RequestType
	le.PutUint16(h[4:], s.Value)
	le.PutUint16(h[6:], s.Index)
	le.PutUint16(h[8:], s.Length)
	return c.Send(TypeControlPacket, id, h, data)
}

// SendRequest sends a request whose header is a few bytes (set_configuration,
// set_alt_setting, start_interrupt_receiving, cancel_data_packet, ...).
func (c *Conn) SendRequest(t uint32, id uint64, hdr ...uint8) error {
	return c.Send(t, id, hdr, nil)
}

// SocketPair is a connected pair of unix stream sockets: buffered, as
// QEMU's chardev socket is (net.Pipe is not: two hellos sent at once
// would wait for each other).
func SocketPair() (net.Conn, net.Conn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var cs [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		cs[i], err = net.FileConn(f)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	return cs[0], cs[1], nil
}
