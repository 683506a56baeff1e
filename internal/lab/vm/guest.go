// SPDX-License-Identifier: Apache-2.0
package vm

import (
	"embed"
	"fmt"
	"regexp"
	"strings"
)

// The guest's shell (busybox sh) is kept in guest/*.sh, where shellcheck
// (make lint) reads it, and embedded here. Each file opens with a header
// for the reader of this tree - the licence, shellcheck's directives, what
// the file is and which placeholders it takes - that ends at the file's
// first empty line and that the guest never sees: the guest gets a leading
// #! line, if any, and what follows that empty line. A placeholder is
// @NAME@; one alone on its line stands for whole lines (its value is empty
// or ends in a newline), anywhere else for part of a line.

//go:embed guest/*.sh
var guestFiles embed.FS

var placeholderRe = regexp.MustCompile(`@[A-Z][A-Z0-9_]*@`)

// guestText is guest/NAME less its header.
func guestText(name string) string {
	b, err := guestFiles.ReadFile("guest/" + name)
	if err != nil {
		panic(err)
	}
	return stripHeader("guest/"+name, string(b))
}

// stripHeader is s less its header: a leading #! line stays, the comment
// lines after it go, up to and including the empty line that ends them.
func stripHeader(name, s string) string {
	var shebang string
	if strings.HasPrefix(s, "#!") {
		i := strings.IndexByte(s, '\n')
		shebang, s = s[:i+1], s[i+1:]
	}
	for strings.HasPrefix(s, "#") {
		s = s[strings.IndexByte(s, '\n')+1:]
	}
	if !strings.HasPrefix(s, "\n") {
		panic(name + ": the header does not end in an empty line")
	}
	return shebang + s[1:]
}

// guestScript is guest/NAME less its header, with its placeholders
// replaced: vals holds pairs of a placeholder and its value (see fill).
func guestScript(name string, vals ...string) string {
	return fill("guest/"+name, guestText(name), vals...)
}

// fill replaces text's placeholders: vals holds pairs of a placeholder and
// its value. Every placeholder of text needs a value and every value a
// placeholder, else it panics (a mistake in this package: the scenarios'
// tests render every script). Values are not searched for placeholders.
func fill(name, text string, vals ...string) string {
	if len(vals)%2 != 0 {
		panic(fmt.Sprintf("%s: odd number of placeholders and values", name))
	}
	want := map[string]string{}
	for i := 0; i < len(vals); i += 2 {
		want[vals[i]] = vals[i+1]
	}
	used := map[string]bool{}
	value := func(k string) string {
		v, ok := want[k]
		if !ok {
			panic(fmt.Sprintf("%s: no value for %s", name, k))
		}
		used[k] = true
		return v
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if k := strings.TrimSuffix(line, "\n"); placeholderRe.FindString(k) == k && k != "" {
			v := value(k)
			if v != "" && !strings.HasSuffix(v, "\n") {
				panic(fmt.Sprintf("%s: %s stands for whole lines and its value does not end in a newline", name, k))
			}
			b.WriteString(v)
			continue
		}
		b.WriteString(placeholderRe.ReplaceAllStringFunc(line, value))
	}
	for k := range want {
		if !used[k] {
			panic(fmt.Sprintf("%s has no placeholder %s", name, k))
		}
	}
	return b.String()
}
