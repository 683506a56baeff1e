// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/shellquote"
)

// Persist files, relative to the root they are written under.
const (
	PersistUdev    = "/etc/udev/rules.d/90-wirespeed-tune.rules"
	PersistSysctl  = "/etc/sysctl.d/90-wirespeed-tune.conf"
	PersistScript  = "/usr/local/lib/wirespeed/tune-boot.sh"
	PersistUnit    = "/etc/systemd/system/wirespeed-tune.service"
	PersistWants   = "/etc/systemd/system/multi-user.target.wants/wirespeed-tune.service"
	persistMark    = "# Written by 'wirespeed tune persist'; 'wirespeed tune persist --remove' removes it."
	manifestName   = "persist.json"
	manifestFormat = 1
)

// Manifest is the list of files persist wrote, kept in the state directory.
type Manifest struct {
	Version int      `json:"version"`
	RootDir string   `json:"root"` // the directory the files were written below (persist --root)
	Files   []string `json:"files"`
}

// PersistPlan is what persist writes: file -> content ("" for the unit's
// symlink), and what it cannot make permanent.
type PersistPlan struct {
	Files   map[string]string `json:"files"`
	Skipped []string          `json:"skipped,omitempty"`
}

func udevQuote(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }

// macAddr is a hardware address as sysfs shows it: lower-case hex bytes
// joined by colons (6 for Ethernet, up to 32 for others).
var macAddr = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){1,31}$`)

// udevMatch is how a rule finds the device again after a re-plug: its MAC,
// which a USB NIC keeps; without one, its name. It refuses (an error, the
// entry is not made permanent) a MAC that is not one, and a name a udev
// match would read as a pattern: udev globs * ? [ ] and | in match values
// and has no escape for them there (a device named t* would match every
// device whose name starts with t, at every boot).
func udevMatch(e Entry) (string, error) {
	if e.MAC != "" && e.MAC != "00:00:00:00:00:00" {
		if !macAddr.MatchString(e.MAC) {
			return "", fmt.Errorf("%s: its recorded hardware address %q is not one; not made permanent", e.Action.ID, e.MAC)
		}
		return fmt.Sprintf(`ACTION=="add", SUBSYSTEM=="net", ATTR{address}=="%s"`, e.MAC), nil
	}
	if strings.ContainsAny(e.Action.Device, "*?[]|\"\\") {
		return "", fmt.Errorf("%s: device %q has no hardware address and its name holds udev pattern characters (* ? [ ] | \" \\): a rule matching it would match other devices; rename the device, or set this by hand; not made permanent", e.Action.ID, e.Action.Device)
	}
	return fmt.Sprintf(`ACTION=="add", SUBSYSTEM=="net", KERNEL=="%s"`, e.Action.Device), nil
}

// PlanPersist turns the applied entries of j into files: sysfs knobs of a
// device as udev ATTR assignments matched on its MAC, ethtool features and
// the root qdisc as udev RUN, net.* sysctls in sysctl.d, IRQ affinity,
// governors and other sysfs files in a oneshot unit's script. Only the
// changes made in network namespace netns ("net:[N]", this process's) are
// planned: one made in another namespace is about that namespace's devices
// and sysctls, and is listed as skipped.
//
// A change of a device is planned only while that device is here as it
// was (same MAC, or ifindex without one) on s: rules written for a device
// that took another's name would set it at every boot.
func PlanPersist(s *System, j *Journal, netns string) PersistPlan {
	p := PersistPlan{Files: map[string]string{}}
	var l persistLines
	host := HostID()
	for _, e := range j.Entries {
		if e.State != StateApplied {
			continue
		}
		if why := persistSkip(s, &e, host, netns); why != "" {
			p.Skipped = append(p.Skipped, why)
			continue
		}
		if why := l.add(e); why != "" {
			p.Skipped = append(p.Skipped, why)
		}
	}
	if len(l.udev) > 0 {
		p.Files[PersistUdev] = persistMark + "\n" + strings.Join(l.udev, "\n") + "\n"
	}
	if len(l.sysctl) > 0 {
		p.Files[PersistSysctl] = persistMark + "\n" + strings.Join(l.sysctl, "\n") + "\n"
	}
	if len(l.boot) > 0 {
		p.Files[PersistScript] = "#!/bin/sh\n" + persistMark + "\n" + strings.Join(l.boot, "\n") + "\n"
		p.Files[PersistUnit] = persistMark + `
[Unit]
Description=wirespeed tune: IRQ affinity and other boot-time settings
After=network-pre.target

[Service]
Type=oneshot
ExecStart=/bin/sh ` + PersistScript + `

[Install]
WantedBy=multi-user.target
`
		p.Files[PersistWants] = "" // symlink to the unit
	}
	return p
}

// persistSkip says why an applied entry is not made permanent here (""
// when it is): made on another host, not a valid action, its device gone
// (unless its rules match its MAC) or another device now, or made in
// another network namespace than netns.
func persistSkip(s *System, e *Entry, host, netns string) string {
	a := e.Action
	if why := foreignHost(e, host); why != "" {
		return why + "; not made permanent here"
	}
	if err := Check(a); err != nil {
		// ParseJournal refuses these; a journal built in memory
		// is held to the same targets.
		return err.Error()
	}
	if a.Device != "" {
		idx, mac, err := s.identify(a.Device)
		if errors.Is(err, ErrGone) && e.MAC != "" && a.Kind != doctor.KindIRQAffinity {
			// Unplugged now: its rules match its MAC, so they
			// set that device only, when it comes back.
		} else if err != nil {
			return fmt.Sprintf("%s: %v; not made permanent", a.ID, err)
		} else if why := otherDevice(e, idx, mac); why != "" {
			return fmt.Sprintf("%s: %s; not made permanent", a.ID, why)
		}
	}
	if e.Netns != "" && netns != "" && e.Netns != netns {
		return fmt.Sprintf("%s: changed in network namespace %s, this is %s; run persist there (ip netns exec NAME wirespeed tune persist)", a.ID, e.Netns, netns)
	}
	return ""
}

// persistLines are the lines of the udev rules, the sysctl.d file and the
// boot script.
type persistLines struct{ udev, sysctl, boot []string }

// add adds the lines that make e's change at boot, or says why there are
// none (NAPI ids do not survive a boot).
func (l *persistLines) add(e Entry) string {
	a := e.Action
	var match string
	if a.Kind == doctor.KindEthtool || a.Kind == doctor.KindQdisc ||
		a.Kind == doctor.KindSysfs && a.Device != "" && strings.HasPrefix(a.Target, "/sys/class/net/"+a.Device+"/") {
		var err error
		if match, err = udevMatch(e); err != nil {
			return err.Error()
		}
	}
	switch a.Kind {
	case doctor.KindSysfs:
		prefix := "/sys/class/net/" + a.Device + "/"
		if a.Device != "" && strings.HasPrefix(a.Target, prefix) {
			l.udev = append(l.udev, fmt.Sprintf(`%s, ATTR{%s}="%s"`, match, strings.TrimPrefix(a.Target, prefix), udevQuote(a.Value)))
		} else {
			l.boot = append(l.boot, fmt.Sprintf("echo %s > %s", shellquote.Quote(a.Value), shellquote.Quote(a.Target)))
		}
	case doctor.KindEthtool:
		l.udev = append(l.udev, fmt.Sprintf(`%s, RUN+="/usr/sbin/ethtool -K $name %s %s"`, match, a.Target, a.Value))
	case doctor.KindQdisc:
		l.udev = append(l.udev, fmt.Sprintf(`%s, RUN+="/usr/sbin/tc qdisc replace dev $name root %s"`, match, a.Value))
	case doctor.KindSysctl:
		l.sysctl = append(l.sysctl, fmt.Sprintf("%s = %s", a.Target, a.Value))
	case doctor.KindIRQAffinity:
		l.boot = append(l.boot, fmt.Sprintf("echo %s > /proc/irq/%s/smp_affinity_list", shellquote.Quote(a.Value), a.Target))
	case doctor.KindGovernor:
		cpus, _ := cpumask.ParseList(a.Target)
		for _, c := range cpus {
			l.boot = append(l.boot, fmt.Sprintf("echo %s > %s", shellquote.Quote(a.Value), govPath(c)))
		}
	case doctor.KindNAPI:
		return a.ID + ": NAPI ids change with every boot and re-plug; not made permanent"
	}
	return ""
}

// maxManifest bounds the manifest read: it lists at most five files.
const maxManifest = 64 << 10

// persistFiles are the only files persist writes and removes.
var persistFiles = []string{PersistUdev, PersistSysctl, PersistScript, PersistUnit, PersistWants}

// ParseManifest decodes the persist manifest. It decides what --remove
// deletes, so it may name only the files persist writes: a manifest naming
// any other path is refused whole.
func ParseManifest(b []byte, path string) (*Manifest, error) {
	fix := "remove the files it should list by hand (" + strings.Join(persistFiles, ", ") + "), then remove it"
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("persist manifest %s cannot be read (%v): %s", path, err, fix)
	}
	if dec.More() {
		return nil, fmt.Errorf("persist manifest %s has data after the manifest: %s", path, fix)
	}
	if m.Version != manifestFormat {
		return nil, fmt.Errorf("persist manifest %s has version %d, this wirespeed writes %d: %s", path, m.Version, manifestFormat, fix)
	}
	for _, f := range m.Files {
		if !slices.Contains(persistFiles, f) {
			return nil, fmt.Errorf("persist manifest %s names %q, which is not a file persist writes: %s", path, f, fix)
		}
	}
	return &m, nil
}

func loadManifest(stateDir string) (*Manifest, error) {
	if _, err := os.Lstat(stateDir); errors.Is(err, os.ErrNotExist) {
		return &Manifest{Version: manifestFormat}, nil
	}
	if err := checkDir(stateDir); err != nil {
		return nil, err
	}
	p := filepath.Join(stateDir, manifestName)
	b, pr, err := readStateFile(p, "persist manifest", maxManifest)
	if pr != nil {
		return nil, fmt.Errorf("persist manifest %s %s; %s", p, pr.problem, pr.recover)
	}
	if errors.Is(err, os.ErrNotExist) {
		return &Manifest{Version: manifestFormat}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseManifest(b, p)
}

func ours(path string) bool {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t, _ := os.Readlink(path)
		return t == "../wirespeed-tune.service"
	}
	// the mark is on the first lines: read no more than a file of ours
	// holds, whatever another program put there
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return strings.Contains(string(b), persistMark)
}

// WritePersist writes plan under root and records every file in the state
// directory's manifest; files of an earlier persist that the plan no longer
// needs are removed. A file that exists and is not wirespeed's is left alone
// and is an error before anything is written.
func WritePersist(root, stateDir string, p PersistPlan) ([]string, error) {
	m, err := loadManifest(stateDir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(p.Files))
	for f := range p.Files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		full := filepath.Join(root, f)
		if err := noLinksBelow(root, filepath.Dir(full)); err != nil {
			return nil, err
		}
		if _, err := os.Lstat(full); err == nil && !ours(full) {
			return nil, fmt.Errorf("%s exists and was not written by wirespeed: move it aside or merge it by hand; nothing was written", full)
		}
	}
	for _, f := range names {
		full := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if f == PersistWants {
			os.Remove(full)
			if err := os.Symlink("../wirespeed-tune.service", full); err != nil {
				return nil, err
			}
			continue
		}
		mode := os.FileMode(0o644)
		if f == PersistScript {
			mode = 0o755
		}
		if err := writeDurable(full, []byte(p.Files[f]), mode); err != nil {
			return nil, err
		}
	}
	for _, f := range m.Files {
		if _, still := p.Files[f]; !still && ours(filepath.Join(root, f)) {
			os.Remove(filepath.Join(root, f))
		}
	}
	m.RootDir, m.Files = root, names
	b, _ := json.MarshalIndent(m, "", " ")
	if err := writeDurable(filepath.Join(stateDir, manifestName), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	return names, nil
}

// RemovePersist removes every file the manifest lists (if still wirespeed's)
// and the manifest.
func RemovePersist(root, stateDir string) ([]string, error) {
	m, err := loadManifest(stateDir)
	if err != nil {
		return nil, err
	}
	// The manifest's files are below the root they were written to: taken
	// below another, nothing would be found, the manifest would go and
	// the files stay, orphaned.
	if m.RootDir != "" && !sameDir(m.RootDir, root) {
		return nil, fmt.Errorf("the persisted files were written below %s, not %s: remove them with --root %s (nothing was changed)", m.RootDir, root, m.RootDir)
	}
	var removed []string
	var errs []error
	for _, f := range m.Files {
		full := filepath.Join(root, f)
		if _, err := os.Lstat(full); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if !ours(full) {
			errs = append(errs, fmt.Errorf("%s was changed by someone else (no wirespeed mark): left in place", full))
			continue
		}
		if err := os.Remove(full); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, f)
	}
	if len(errs) == 0 {
		if err := os.Remove(filepath.Join(stateDir, manifestName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// noLinksBelow refuses a symbolic link among the directories from root
// down to dir when root is not "/": in an image or a test tree, a link
// (often absolute) leads out of it, into this host's own /etc. On the
// live host (root "/") the system's own layout is followed.
func noLinksBelow(root, dir string) error {
	if filepath.Clean(root) == "/" {
		return nil
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%s is not below --root %s", dir, root)
	}
	cur := filepath.Clean(root)
	for _, part := range strings.Split(rel, "/") {
		if part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return nil // created by persist, as a directory
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			t, _ := os.Readlink(cur)
			return fmt.Errorf("%s is a symbolic link (to %s): below --root %s persist writes only into real directories, a link could lead out of it; nothing was written", cur, t, root)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory; nothing was written", cur)
		}
	}
	return nil
}

// writeDurable writes path through a new temporary file (never through
// a link or file left in its place), fsynced and renamed over path.
func writeDurable(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".wirespeed-tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// sameDir says whether a and b name one directory (a symbolic link and
// its target are one).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
