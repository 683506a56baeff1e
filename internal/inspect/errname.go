package inspect

// ErrName names a read error as a snapshot records it in place of a value
// ("EOPNOTSUPP", "ENOENT", ...), so a reader outside inspect can tell
// whether a file still answers what the snapshot holds.
func ErrName(err error) string { return errName(err) }
