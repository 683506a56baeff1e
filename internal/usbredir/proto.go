// SPDX-License-Identifier: Apache-2.0

// Package usbredir speaks the USB redirection protocol (the spice
// project's usbredir, version 0.7) from the device's side: the side that
// owns a USB device and lends it to a guest. QEMU's usb-redir device is
// the other side; it connects to a socket this side serves.
//
// Every message is a header - type, length of what follows, and an id
// (32 bits until both sides announced 64-bit ids in their hello) - then a
// header of the type's own, then data. Integers are little-endian. Which
// fields a type's header has depends on capabilities both sides
// announced, so a Conn learns the peer's capabilities before it sends
// anything but its hello.
package usbredir

// Version is what this side announces in its hello.
const Version = "wirespeed usbdev 0.7"

// Message types (usb_redir_* of the protocol).
const (
	TypeHello                    = 0
	TypeDeviceConnect            = 1
	TypeDeviceDisconnect         = 2
	TypeReset                    = 3
	TypeInterfaceInfo            = 4
	TypeEPInfo                   = 5
	TypeSetConfiguration         = 6
	TypeGetConfiguration         = 7
	TypeConfigurationStatus      = 8
	TypeSetAltSetting            = 9
	TypeGetAltSetting            = 10
	TypeAltSettingStatus         = 11
	TypeStartISOStream           = 12
	TypeStopISOStream            = 13
	TypeISOStreamStatus          = 14
	TypeStartInterruptReceiving  = 15
	TypeStopInterruptReceiving   = 16
	TypeInterruptReceivingStatus = 17
	TypeAllocBulkStreams         = 18
	TypeFreeBulkStreams          = 19
	TypeBulkStreamsStatus        = 20
	TypeCancelDataPacket         = 21
	TypeFilterReject             = 22
	TypeFilterFilter             = 23
	TypeDeviceDisconnectAck      = 24
	TypeStartBulkReceiving       = 25
	TypeStopBulkReceiving        = 26
	TypeBulkReceivingStatus      = 27
	TypeControlPacket            = 100
	TypeBulkPacket               = 101
	TypeISOPacket                = 102
	TypeInterruptPacket          = 103
	TypeBufferedBulkPacket       = 104
	maxControlType               = TypeBulkReceivingStatus
	maxDataType                  = TypeBufferedBulkPacket
	typeHeaderVariable           = -1
	typeHeaderUnknown            = -2
	helloVersionLen              = 64
	interfaceInfoLen             = 4 + 4*32
	epInfoBaseLen                = 3 * 32
	epInfoMaxPacketLen           = 2 * 32
	epInfoStreamsLen             = 4 * 32
	deviceConnectBaseLen         = 8
	bulkPacketBaseLen            = 8
	controlPacketLen             = 10
	interruptPacketLen           = 4
	maxEndpoints                 = 32
	maxInterfaces                = 32
	MaxPacket                    = 64 << 20 // largest message accepted
)

// Statuses (usb_redir_success ...).
const (
	StatusSuccess   = 0
	StatusCancelled = 1
	StatusInval     = 2
	StatusIOError   = 3
	StatusStall     = 4
	StatusTimeout   = 5
	StatusBabble    = 6
)

// Transfer types, as in USB.
const (
	XferControl   = 0
	XferISO       = 1
	XferBulk      = 2
	XferInterrupt = 3
	XferInvalid   = 255
)

// Speeds of device_connect.
const (
	SpeedLow   = 0
	SpeedFull  = 1
	SpeedHigh  = 2
	SpeedSuper = 3
)

// Capability bits of the hello.
const (
	CapBulkStreams          = 0
	CapConnectDeviceVersion = 1
	CapFilter               = 2
	CapDeviceDisconnectAck  = 3
	CapEPInfoMaxPacketSize  = 4
	Cap64BitIDs             = 5
	Cap32BitBulkLength      = 6
	CapBulkReceiving        = 7
)

// OurCaps are the capabilities this side announces: what QEMU needs for
// a device on xHCI (64-bit ids, 32-bit bulk lengths, max packet sizes),
// a bcdDevice in device_connect and an acknowledged disconnect, which a
// re-plug waits for. Not bulk streams, filters or buffered bulk input:
// no network device needs them.
const OurCaps uint32 = 1<<CapConnectDeviceVersion | 1<<CapDeviceDisconnectAck |
	1<<CapEPInfoMaxPacketSize | 1<<Cap64BitIDs | 1<<Cap32BitBulkLength

// TypeName names a message type for logs and errors.
func TypeName(t uint32) string {
	names := map[uint32]string{
		TypeHello: "hello", TypeDeviceConnect: "device_connect", TypeDeviceDisconnect: "device_disconnect",
		TypeReset: "reset", TypeInterfaceInfo: "interface_info", TypeEPInfo: "ep_info",
		TypeSetConfiguration: "set_configuration", TypeGetConfiguration: "get_configuration",
		TypeConfigurationStatus: "configuration_status", TypeSetAltSetting: "set_alt_setting",
		TypeGetAltSetting: "get_alt_setting", TypeAltSettingStatus: "alt_setting_status",
		TypeStartISOStream: "start_iso_stream", TypeStopISOStream: "stop_iso_stream",
		TypeISOStreamStatus: "iso_stream_status", TypeStartInterruptReceiving: "start_interrupt_receiving",
		TypeStopInterruptReceiving: "stop_interrupt_receiving", TypeInterruptReceivingStatus: "interrupt_receiving_status",
		TypeAllocBulkStreams: "alloc_bulk_streams", TypeFreeBulkStreams: "free_bulk_streams",
		TypeBulkStreamsStatus: "bulk_streams_status", TypeCancelDataPacket: "cancel_data_packet",
		TypeFilterReject: "filter_reject", TypeFilterFilter: "filter_filter",
		TypeDeviceDisconnectAck: "device_disconnect_ack", TypeStartBulkReceiving: "start_bulk_receiving",
		TypeStopBulkReceiving: "stop_bulk_receiving", TypeBulkReceivingStatus: "bulk_receiving_status",
		TypeControlPacket: "control_packet", TypeBulkPacket: "bulk_packet", TypeISOPacket: "iso_packet",
		TypeInterruptPacket: "interrupt_packet", TypeBufferedBulkPacket: "buffered_bulk_packet",
	}
	if n, ok := names[t]; ok {
		return n
	}
	return "unknown"
}

// typeHeaderLen is the length of a type's own header under the
// capabilities both sides have (both: ours AND the peer's), or
// typeHeaderVariable for types whose whole payload is the header (hello,
// filter_filter), or typeHeaderUnknown.
func typeHeaderLen(t uint32, both uint32) int {
	has := func(c int) bool { return both&(1<<c) != 0 }
	switch t {
	case TypeHello, TypeFilterFilter:
		return typeHeaderVariable
	case TypeDeviceConnect:
		if has(CapConnectDeviceVersion) {
			return deviceConnectBaseLen + 2
		}
		return deviceConnectBaseLen
	case TypeDeviceDisconnect, TypeReset, TypeGetConfiguration, TypeCancelDataPacket,
		TypeFilterReject, TypeDeviceDisconnectAck:
		return 0
	case TypeInterfaceInfo:
		return interfaceInfoLen
	case TypeEPInfo:
		n := epInfoBaseLen
		if has(CapEPInfoMaxPacketSize) {
			n += epInfoMaxPacketLen
		}
		if has(CapBulkStreams) {
			n += epInfoStreamsLen
		}
		return n
	case TypeSetConfiguration, TypeGetAltSetting, TypeStopISOStream,
		TypeStartInterruptReceiving, TypeStopInterruptReceiving:
		return 1
	case TypeConfigurationStatus, TypeSetAltSetting, TypeISOStreamStatus, TypeInterruptReceivingStatus:
		return 2
	case TypeAltSettingStatus, TypeStartISOStream:
		return 3
	case TypeAllocBulkStreams:
		return 8
	case TypeFreeBulkStreams:
		return 4
	case TypeBulkStreamsStatus:
		return 9
	case TypeStartBulkReceiving, TypeBufferedBulkPacket:
		return 10
	case TypeStopBulkReceiving:
		return 5
	case TypeBulkReceivingStatus:
		return 6
	case TypeControlPacket:
		return controlPacketLen
	case TypeBulkPacket:
		if has(Cap32BitBulkLength) {
			return bulkPacketBaseLen + 2
		}
		return bulkPacketBaseLen
	case TypeISOPacket, TypeInterruptPacket:
		return interruptPacketLen
	}
	return typeHeaderUnknown
}

// hasData says whether a type carries data after its header.
func hasData(t uint32) bool {
	switch t {
	case TypeControlPacket, TypeBulkPacket, TypeISOPacket, TypeInterruptPacket, TypeBufferedBulkPacket:
		return true
	}
	return false
}
