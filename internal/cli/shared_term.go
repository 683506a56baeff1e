// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// What the commands that draw on a terminal share (bench's progress bar,
// watch's screen).

// ansiOK says whether w takes screen control codes: a terminal, and not
// one that says it is dumb (TERM=dumb, as Emacs' shell and some CI logs).
func ansiOK(w io.Writer) bool {
	return isTTY(w) && os.Getenv("TERM") != "dumb"
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
