// SPDX-License-Identifier: Apache-2.0

package inspect

// ErrName names a read error as Collect records it in place of a value
// ("EOPNOTSUPP", "ENOENT", "missing"), so a reader outside inspect can tell
// whether a file still answers what a snapshot holds.
func ErrName(err error) string { return errName(err) }
