// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"os"
	"syscall"
)

func sysStat(fi os.FileInfo) (*syscall.Stat_t, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return st, ok
}
