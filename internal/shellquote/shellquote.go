// SPDX-License-Identifier: Apache-2.0

// Package shellquote makes strings into POSIX shell words, for the
// scripts and command lines wirespeed writes (the VM lab's guest scripts,
// tune's persisted units, the completion script, commands it prints for
// the user to run).
package shellquote

import "strings"

// Quote returns s in single quotes, each ' in it written '\” : one word
// whatever s holds, with nothing expanded.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// QuoteIfNeeded returns s as it is when it is not empty and holds only
// characters no shell treats specially (letters, digits and -_./:,=+@%),
// else Quote(s): the shorter form for a command a person reads.
func QuoteIfNeeded(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=+@%", r))
	}) {
		return s
	}
	return Quote(s)
}
