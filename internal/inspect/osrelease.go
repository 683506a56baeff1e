// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"strconv"
	"strings"
)

// OS is what the host says about its distribution: the fields of
// /etc/os-release (else /usr/lib/os-release, its fallback per
// os-release(5)) that decide which kernels it can install, and whether
// /etc/rpi-issue exists - Raspberry Pi OS's 64-bit images say ID=debian in
// os-release, and that file is how they differ from Debian. Snapshots
// taken before inspect read it have none (nil): doctor then infers the
// distribution from the kernel's name and says so.
type OS struct {
	ID         string   `json:"id,omitempty"`          // "debian", "ubuntu", "fedora", "raspbian"
	IDLike     []string `json:"id_like,omitempty"`     // ID_LIKE, split
	VersionID  string   `json:"version_id,omitempty"`  // "12", "24.04", "44"
	Codename   string   `json:"codename,omitempty"`    // VERSION_CODENAME: "bookworm", "noble"
	PrettyName string   `json:"pretty_name,omitempty"` // for people
	// RPiIssue: /etc/rpi-issue exists (Raspberry Pi OS images write it).
	RPiIssue bool `json:"rpi_issue,omitempty"`
	// File is the file read: /etc/os-release or /usr/lib/os-release.
	File string `json:"file"`
}

// osRelease reads the distribution's identity; nil when neither file is
// there (a container without one, or a snapshot of another version).
func (c *collector) osRelease() *OS {
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		b, err := c.fs.ReadFile(p)
		if err != nil {
			continue
		}
		o := ParseOSRelease(b)
		o.File = p
		o.RPiIssue = c.fs.Exists("/etc/rpi-issue")
		return o
	}
	return nil
}

// ParseOSRelease reads os-release(5): KEY=value lines, values optionally
// quoted with shell quoting; comments and lines it cannot read are
// skipped, never an error (the file is the host's, not ours).
func ParseOSRelease(b []byte) *OS {
	o := &OS{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			if v[0] == '"' {
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				} else {
					v = v[1 : len(v)-1]
				}
			} else {
				v = v[1 : len(v)-1]
			}
		}
		if len(v) > 200 {
			v = v[:200]
		}
		switch strings.TrimSpace(k) {
		case "ID":
			o.ID = strings.ToLower(v)
		case "ID_LIKE":
			o.IDLike = strings.Fields(strings.ToLower(v))
		case "VERSION_ID":
			o.VersionID = v
		case "VERSION_CODENAME":
			o.Codename = v
		case "PRETTY_NAME":
			o.PrettyName = v
		}
	}
	return o
}
