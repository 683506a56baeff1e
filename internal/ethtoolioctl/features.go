// SPDX-License-Identifier: Apache-2.0

// Package ethtoolioctl asks the kernel's SIOCETHTOOL ioctl (not the ethtool
// netlink family, hence the name) two things about a network device: its
// offload feature flags (what `ethtool -k DEV` shows: rx-gro, rx-gro-hw,
// rx-gro-list, rx-lro, tx-tcp-segmentation and the other TSO bits,
// tx-generic-segmentation, rx-udp-gro-forwarding and every other name in the
// kernel's ETH_SS_FEATURES string set) and its driver (ETHTOOL_GDRVINFO,
// drvinfo.go).
//
// Features uses ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS and ETHTOOL_GFEATURES,
// which every kernel since 2.6.39 answers; the ioctl needs no
// CONFIG_ETHTOOL_NETLINK and reports the same state as the netlink
// FEATURES_GET request. The ioctl is answered in the network namespace of the calling thread.
package ethtoolioctl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Well-known feature names (keys of the map returned by Features).
const (
	RxGRO              = "rx-gro"                  // ethtool -k: generic-receive-offload
	RxGROHW            = "rx-gro-hw"               // hardware GRO
	RxGROList          = "rx-gro-list"             // fraglist GRO
	RxLRO              = "rx-lro"                  // large-receive-offload
	RxUDPGROForwarding = "rx-udp-gro-forwarding"   // UDP GRO for forwarded traffic
	TxGSO              = "tx-generic-segmentation" // generic-segmentation-offload
	TxTSO              = "tx-tcp-segmentation"     // TSO (IPv4)
	TxTSOECN           = "tx-tcp-ecn-segmentation"
	TxTSOMangleID      = "tx-tcp-mangleid-segmentation"
	TxTSO6             = "tx-tcp6-segmentation"
	TxTSOAccECN        = "tx-tcp-accecn-segmentation" // newer kernels only
	TxUDPSegmentation  = "tx-udp-segmentation"        // USO
)

// Feature is the state of one offload feature of a device.
type Feature struct {
	Name string `json:"name"`
	// Active: currently enabled (dev->features).
	Active bool `json:"active"`
	// Fixed: cannot be changed by the user (not in hw_features, or in
	// NETIF_F_NEVER_CHANGE); ethtool shows "[fixed]".
	Fixed bool `json:"fixed"`
	// Requested: what the user asked for (dev->wanted_features); differs
	// from Active when a dependency or the driver overrides it.
	Requested bool `json:"requested"`
}

// ioctl constants from include/uapi/linux/ethtool.h and sockios.h.
const (
	siocETHTOOL = 0x8946

	ethtoolGSTRINGS  = 0x0000001b
	ethtoolGSSetInfo = 0x00000037
	ethtoolGFeatures = 0x0000003a

	ethSSFeatures = 4  // ETH_SS_FEATURES
	ethGStringLen = 32 // ETH_GSTRING_LEN

	// Sanity bound on the feature count (the kernel has ~70).
	maxFeatures = 4096
)

// Features returns every feature the kernel knows, keyed by name, for the
// device ifname in the calling thread's network namespace. An unknown
// interface yields an error satisfying errors.Is(err, os.ErrNotExist).
func Features(ifname string) (map[string]Feature, error) {
	if ifname == "" || len(ifname) >= unix.IFNAMSIZ {
		return nil, fmt.Errorf("ethtoolioctl: interface %q: invalid name: %w", ifname, os.ErrNotExist)
	}
	fd, err := controlSocket()
	if err != nil {
		return nil, fmt.Errorf("ethtoolioctl: socket: %w", err)
	}
	defer unix.Close(fd)

	// 1. Number of strings in ETH_SS_FEATURES.
	info := make([]byte, 16+4)
	binary.NativeEndian.PutUint32(info[0:], ethtoolGSSetInfo)
	binary.NativeEndian.PutUint64(info[8:], 1<<ethSSFeatures)
	if err := ioctlEthtool(fd, ifname, info); err != nil {
		return nil, wrapErr(ifname, "ETHTOOL_GSSET_INFO", err)
	}
	count, err := parseSSetInfo(info)
	if err != nil {
		return nil, fmt.Errorf("ethtoolioctl: %s: %w", ifname, err)
	}

	// 2. Feature names.
	strs := make([]byte, 12+count*ethGStringLen)
	binary.NativeEndian.PutUint32(strs[0:], ethtoolGSTRINGS)
	binary.NativeEndian.PutUint32(strs[4:], ethSSFeatures)
	binary.NativeEndian.PutUint32(strs[8:], uint32(count))
	if err := ioctlEthtool(fd, ifname, strs); err != nil {
		return nil, wrapErr(ifname, "ETHTOOL_GSTRINGS", err)
	}
	names, err := parseGStrings(strs)
	if err != nil {
		return nil, fmt.Errorf("ethtoolioctl: %s: %w", ifname, err)
	}

	// 3. Feature bits.
	words := (count + 31) / 32
	feats := make([]byte, 8+words*16)
	binary.NativeEndian.PutUint32(feats[0:], ethtoolGFeatures)
	binary.NativeEndian.PutUint32(feats[4:], uint32(words))
	if err := ioctlEthtool(fd, ifname, feats); err != nil {
		return nil, wrapErr(ifname, "ETHTOOL_GFEATURES", err)
	}
	return decodeFeatures(names, feats)
}

// controlSocket opens a socket to issue SIOCETHTOOL on, like ethtool does:
// AF_INET first, then AF_NETLINK (works with IPv4 disabled).
func controlSocket() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		return fd, nil
	}
	fd, err2 := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err2 == nil {
		return fd, nil
	}
	return -1, errors.Join(err, err2)
}

// ifreqData is struct ifreq with the ifr_data member of the union.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

func ioctlEthtool(fd int, ifname string, buf []byte) error {
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), siocETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return errno
	}
	return nil
}

func wrapErr(ifname, op string, err error) error {
	if errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("ethtoolioctl: %s %s: %w: %w", op, ifname, os.ErrNotExist, err)
	}
	if errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("ethtoolioctl: %s %s: %w: %w", op, ifname, ErrNotSupported, err)
	}
	return fmt.Errorf("ethtoolioctl: %s %s: %w", op, ifname, err)
}

// ErrNotSupported is matched by errors from a device or kernel that does not
// answer a request (EOPNOTSUPP).
var ErrNotSupported = errors.New("not supported by this kernel or device")

// parseSSetInfo decodes struct ethtool_sset_info after ETHTOOL_GSSET_INFO
// for a request with only the ETH_SS_FEATURES bit set.
func parseSSetInfo(b []byte) (int, error) {
	if len(b) < 20 {
		return 0, fmt.Errorf("short ethtool_sset_info (%d bytes)", len(b))
	}
	mask := binary.NativeEndian.Uint64(b[8:])
	if mask&(1<<ethSSFeatures) == 0 {
		return 0, fmt.Errorf("ETH_SS_FEATURES string set: %w", ErrNotSupported)
	}
	n := binary.NativeEndian.Uint32(b[16:])
	if n == 0 || n > maxFeatures {
		return 0, fmt.Errorf("implausible feature count %d", n)
	}
	return int(n), nil
}

// parseGStrings decodes struct ethtool_gstrings: cmd, string_set, len, then
// len NUL-padded strings of ETH_GSTRING_LEN bytes.
func parseGStrings(b []byte) ([]string, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("short ethtool_gstrings (%d bytes)", len(b))
	}
	n := int(binary.NativeEndian.Uint32(b[8:]))
	if n > (len(b)-12)/ethGStringLen {
		return nil, fmt.Errorf("ethtool_gstrings: %d strings do not fit in %d bytes", n, len(b))
	}
	names := make([]string, n)
	for i := range names {
		s := b[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		end := 0
		for end < len(s) && s[end] != 0 {
			end++
		}
		names[i] = string(s[:end])
	}
	return names, nil
}

// decodeFeatures decodes struct ethtool_gfeatures (cmd, size, then size
// blocks of {available, requested, active, never_changed} u32 words) and
// names bit i names[i].
func decodeFeatures(names []string, b []byte) (map[string]Feature, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("short ethtool_gfeatures (%d bytes)", len(b))
	}
	blocks := (len(b) - 8) / 16
	if kernelBlocks := int(binary.NativeEndian.Uint32(b[4:])); kernelBlocks < blocks {
		blocks = kernelBlocks
	}
	word := func(block, field int) uint32 {
		return binary.NativeEndian.Uint32(b[8+block*16+field*4:])
	}
	out := make(map[string]Feature, len(names))
	for i, name := range names {
		if name == "" {
			continue
		}
		blk, bit := i/32, uint(i%32)
		if blk >= blocks {
			break
		}
		on := func(field int) bool { return word(blk, field)&(1<<bit) != 0 }
		available, requested, active, never := on(0), on(1), on(2), on(3)
		out[name] = Feature{
			Name:      name,
			Active:    active,
			Fixed:     !available || never,
			Requested: requested,
		}
	}
	return out, nil
}
