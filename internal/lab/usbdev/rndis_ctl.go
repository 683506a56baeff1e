// SPDX-License-Identifier: Apache-2.0

package usbdev

// The RNDIS control messages (RNDIS 1.0, 2.2): what the host sends with
// SEND_ENCAPSULATED_COMMAND and what the device answers. Every message
// starts with MessageType, MessageLength and (but HALT's reply-less
// kind and RESET) a RequestID the answer repeats.

// OIDs the device answers (NDIS object identifiers; the general ones,
// the 802.3 ones and the statistics).
const (
	oidSupportedList   = 0x00010101
	oidHardwareStatus  = 0x00010102
	oidMediaSupported  = 0x00010103
	oidMediaInUse      = 0x00010104
	oidMaxFrameSize    = 0x00010106
	oidLinkSpeed       = 0x00010107
	oidTxBlockSize     = 0x0001010a
	oidRxBlockSize     = 0x0001010b
	oidVendorID        = 0x0001010c
	oidVendorDesc      = 0x0001010d
	oidPacketFilter    = 0x0001010e
	oidMaxTotalSize    = 0x00010111
	oidConnectStatus   = 0x00010114
	oidPhysicalMedium  = 0x00010202
	oidXmitOK          = 0x00020101
	oidRcvOK           = 0x00020102
	oidXmitError       = 0x00020103
	oidRcvError        = 0x00020104
	oidRcvNoBuffer     = 0x00020105
	oid8023PermAddr    = 0x01010101
	oid8023CurrAddr    = 0x01010102
	oid8023Multicast   = 0x01010103
	oid8023MaxListSize = 0x01010104
	rndisMTU           = 1500
	rndisMaxMcast      = 32
)

var rndisOIDs = []uint32{oidSupportedList, oidHardwareStatus, oidMediaSupported, oidMediaInUse, oidMaxFrameSize,
	oidLinkSpeed, oidTxBlockSize, oidRxBlockSize, oidVendorID, oidVendorDesc, oidPacketFilter, oidMaxTotalSize,
	oidConnectStatus, oidPhysicalMedium, oidXmitOK, oidRcvOK, oidXmitError, oidRcvError, oidRcvNoBuffer,
	oid8023PermAddr, oid8023CurrAddr, oid8023Multicast, oid8023MaxListSize}

// u32s is a little-endian message of 32-bit words.
func u32s(w ...uint32) []byte {
	b := make([]byte, 0, 4*len(w))
	for _, x := range w {
		b = le.AppendUint32(b, x)
	}
	return b
}

// command takes one encapsulated message; false stalls the request (a
// message too short for its own header or its MessageLength).
func (r *RNDIS) command(b []byte) bool {
	r.ctl.commands.Add(1)
	if len(b) < 12 || le.Uint32(b[4:]) < 12 || int(le.Uint32(b[4:])) > len(b) {
		r.ctl.badCommands.Add(1)
		return false
	}
	b = b[:le.Uint32(b[4:])]
	typ, id := le.Uint32(b), le.Uint32(b[8:])
	switch typ {
	case rndisMsgInit:
		if len(b) < 24 {
			r.ctl.badCommands.Add(1)
			return false
		}
		r.initialize(id, int(le.Uint32(b[20:])))
	case rndisMsgHalt:
		r.Reset()
	case rndisMsgQuery, rndisMsgSet:
		if len(b) < 24 {
			r.ctl.badCommands.Add(1)
			return false
		}
		r.oidRequest(typ, id, b)
	case rndisMsgReset:
		r.mu.Lock()
		r.resp = nil
		r.mu.Unlock()
		r.respond(u32s(rndisMsgReset|rndisCompletion, 16, rndisStatusSuccess, 0)) // addressing kept
	case rndisMsgKeepalive:
		r.respond(u32s(rndisMsgKeepalive|rndisCompletion, 16, id, rndisStatusSuccess))
	default:
		r.ctl.badCommands.Add(1)
	}
	return true
}

// initialize answers INITIALIZE: RNDIS 1.0, connectionless, 802.3, the
// OUT transfers the device takes (packets and bytes) and the alignment
// of its packets. The host's MaxTransferSize bounds the IN transfers.
func (r *RNDIS) initialize(id uint32, hostMax int) {
	r.mu.Lock()
	r.inited, r.hostMax, r.filter = true, hostMax, 0
	r.dataOn.Store(false)
	r.mu.Unlock()
	r.respond(u32s(rndisMsgInit|rndisCompletion, 52, id, rndisStatusSuccess, 1, 0,
		1, 0, rndisMaxPackets, rndisMaxXfer, rndisAlignShift, 0, 0))
}

// oidRequest answers QUERY and SET: Oid, InformationBufferLength and
// InformationBufferOffset (from RequestID) at 12, 16 and 20. A QUERY's
// buffer is not looked at: rndis_host sends its padding at offset 16 but
// says 20, so that it ends 4 bytes past the message.
func (r *RNDIS) oidRequest(typ, id uint32, b []byte) {
	oid, n, off := le.Uint32(b[12:]), uint64(le.Uint32(b[16:])), uint64(le.Uint32(b[20:]))
	var in []byte
	switch {
	case n == 0 || typ == rndisMsgQuery:
	case off < 16 || 8+off+n > uint64(len(b)):
		r.ctl.badCommands.Add(1)
		r.complete(typ, id, rndisStatusInvalidData, nil)
		return
	default:
		in = b[8+off : 8+off+n]
	}
	if typ == rndisMsgSet {
		st, connected := r.set(oid, in)
		r.complete(typ, id, st, nil)
		if connected {
			r.indicate(rndisStatusMediaConnect)
		}
		return
	}
	v, ok := r.query(oid)
	if !ok {
		r.ctl.unsupported.Add(1)
		r.complete(typ, id, rndisStatusNotSupported, nil)
		return
	}
	r.complete(typ, id, rndisStatusSuccess, v)
}

// complete queues QUERY_CMPLT (with its buffer at offset 16 from the
// RequestID) or SET_CMPLT.
func (r *RNDIS) complete(typ, id, status uint32, v []byte) {
	if typ == rndisMsgSet {
		r.respond(u32s(rndisMsgSet|rndisCompletion, 16, id, status))
		return
	}
	off := uint32(16)
	if len(v) == 0 {
		off = 0
	}
	r.respond(append(u32s(rndisMsgQuery|rndisCompletion, uint32(24+len(v)), id, status, uint32(len(v)), off), v...))
}

// query is an OID's value.
func (r *RNDIS) query(oid uint32) ([]byte, bool) {
	c := r.cnt.snapshot()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch oid {
	case oidSupportedList:
		return u32s(rndisOIDs...), true
	case oidHardwareStatus, oidMediaSupported, oidMediaInUse, oidPhysicalMedium, oidXmitError, oidRcvError,
		oidRcvNoBuffer:
		return u32s(0), true // ready; 802.3; unspecified medium (as phones say); no errors
	case oidMaxFrameSize:
		return u32s(rndisMTU), true
	case oidLinkSpeed:
		mbit := r.mbit
		if mbit <= 0 {
			mbit = 5000 // the bus's
		}
		return u32s(uint32(min(int64(mbit)*10000, 1<<32-1))), true // units of 100 bit/s
	case oidTxBlockSize, oidRxBlockSize, oidMaxTotalSize:
		return u32s(rndisMTU + 14), true
	case oidVendorID:
		return u32s(0x00ffffff), true // no IEEE OUI
	case oidVendorDesc:
		return append([]byte("wirespeed usbdev RNDIS"), 0), true
	case oidPacketFilter:
		return u32s(r.filter), true
	case oidConnectStatus:
		return u32s(0), true // connected
	case oidXmitOK:
		return u32s(uint32(c["frames_to_host"])), true
	case oidRcvOK:
		return u32s(uint32(c["frames_from_host"])), true
	case oid8023PermAddr, oid8023CurrAddr:
		return r.mac[:], true
	case oid8023Multicast:
		return nil, true
	case oid8023MaxListSize:
		return u32s(rndisMaxMcast), true
	}
	return nil, false
}

// set takes an OID's new value: a non-zero packet filter starts the data
// path (connected: the device then indicates media connect, behind the
// SET's completion), a zero one stops it.
func (r *RNDIS) set(oid uint32, v []byte) (status uint32, connected bool) {
	switch oid {
	case oidPacketFilter:
		if len(v) != 4 {
			return rndisStatusInvalidData, false
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		was := r.filter
		r.filter = le.Uint32(v)
		r.dataOn.Store(r.filter != 0)
		return rndisStatusSuccess, was == 0 && r.filter != 0
	case oid8023Multicast:
		if len(v)%6 != 0 || len(v)/6 > rndisMaxMcast {
			return rndisStatusInvalidData, false
		}
		r.mu.Lock()
		r.mcastLen = len(v) / 6
		r.mu.Unlock()
		return rndisStatusSuccess, false
	}
	r.ctl.unsupported.Add(1)
	return rndisStatusNotSupported, false
}

// indicate queues REMOTE_NDIS_INDICATE_STATUS_MSG with no status buffer.
func (r *RNDIS) indicate(status uint32) {
	r.ctl.indications.Add(1)
	r.respond(u32s(rndisMsgIndicate, 20, status, 0, 0))
}
