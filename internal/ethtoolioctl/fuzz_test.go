// SPDX-License-Identifier: Apache-2.0

package ethtoolioctl

import (
	"encoding/binary"
	"testing"
)

// FuzzDecode feeds arbitrary ioctl answers to the decoders: whatever a
// kernel or driver returns, they must not panic, every feature must be one
// of the names, and names the answer covers must all be decoded.
func FuzzDecode(f *testing.F) {
	f.Add(gstrings([]string{"rx-gro", "", "tx-tcp-segmentation"}), gfeatures(1, [4]uint32{5, 1, 4, 0}))
	f.Add(gstrings(nil), gfeatures(0))
	f.Add([]byte{1, 2, 3}, gfeatures(7, [4]uint32{^uint32(0), 0, ^uint32(0), 2}))
	f.Fuzz(func(t *testing.T, strs, feats []byte) {
		if len(strs) >= 20 {
			parseSSetInfo(strs)
		}
		names, err := parseGStrings(strs)
		if err != nil {
			return
		}
		out, err := decodeFeatures(names, feats)
		if err != nil {
			return
		}
		blocks := (len(feats) - 8) / 16
		if k := int(binary.NativeEndian.Uint32(feats[4:])); k < blocks {
			blocks = k
		}
		for name, ft := range out {
			if ft.Name != name || name == "" {
				t.Fatalf("feature %q under key %q", ft.Name, name)
			}
		}
		for i, n := range names {
			if n == "" || i/32 >= blocks {
				continue
			}
			if _, ok := out[n]; !ok {
				t.Fatalf("name %q (bit %d of %d blocks) not decoded", n, i, blocks)
			}
		}
	})
}
