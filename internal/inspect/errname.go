package inspect

import "github.com/wirespeed/wirespeed/internal/hostfs"

// ReadAsRecorded reads a sysfs/procfs file as Collect records it: the
// trimmed value and "", or "" and the error's name ("EOPNOTSUPP", "ENOENT",
// "missing"), so a reader outside inspect can tell whether a file still
// answers what a snapshot holds.
func ReadAsRecorded(f *hostfs.FS, p string) (value, errName string) {
	return (&collector{fs: f}).str(p)
}

// ReadRawOrErr reads a file as Collect records the NAPI knobs: the value,
// or "error: NAME".
func ReadRawOrErr(f *hostfs.FS, p string) string {
	return (&collector{fs: f}).rawOrErr(p)
}
