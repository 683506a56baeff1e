// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SelftestNames are the drivers/net tests the selftests scenario runs by
// default, in this order: those that mean something on usbnet first
// (issue 43), then the rest, which skip or fail for want of a feature.
var SelftestNames = []string{"napi_id", "gro", "ping", "stats", "queues", "netpoll_basic", "napi_threaded",
	"hds", "macsec", "psp", "ring_reconfig", "shaper", "so_txtime", "xdp"}

// selftestModules are the modules of drivers/net's config (its =m lines
// but netdevsim, which no test here uses) that the scenario loads: the
// chroot has no /lib/modules, so a test's own modprobe or tc finds none.
// cls_fw is so_txtime's etf filter ("TC classifier not found" without it).
var selftestModules = []string{"netconsole", "sch_prio", "sch_fq", "sch_etf", "macsec", "8021q",
	"cls_fw", "cls_flower", "cls_matchall", "act_skbedit"}

// selftestLimit is each test's time limit in the guest: the tests' own
// settings say 360 s, and TCG runs them several times slower than a host.
const selftestLimit = 900

func init() {
	scenarios["selftests"] = &Scenario{
		Name: "selftests",
		Summary: "the kernel's driver selftests (tools/testing/selftests/drivers/net, built from the kernel's Debian source) on the NCM loop's " +
			"cdc_ncm (usbnet) device, the gadget namespace as the remote (REMOTE_TYPE=netns), in a Debian 13 root; KTAP parsed into selftests.json",
		Modules: func(o Options) []string {
			// The Debian root's ext4 has metadata_csum, for which ext4 asks the
			// crypto API for crc32c: before 7.x a module of its own (6.12:
			// "Cannot load crc32c driver" without it); 7.x resolves the alias
			// crc32c to crc32c_cryptoapi.
			return append([]string{"dummy_hcd", "libcomposite", "usb_f_ncm", "cdc_ncm", "configfs", "virtio_blk", "crc32c", "ext4"}, selftestModules...)
		},
		Params: func(o Options) map[string]string { return map[string]string{"dummy_hcd": busParams(o, o.Speed)} },
		Script: selftestsScript,
		MaxTime: func(o Options) time.Duration {
			return time.Duration(len(selftestList(o)))*selftestLimit*time.Second/3 + 2*time.Minute
		},
		NoBench:   true,
		Selftests: true,
		Collect:   WriteSelftestsJSON,
	}
}

// selftestList is --tests, or SelftestNames.
func selftestList(o Options) []string {
	if len(o.Tests) > 0 {
		return o.Tests
	}
	return SelftestNames
}

// checkTests refuses a test name that is not a plain file name.
func checkTests(tests []string) error {
	for _, t := range tests {
		if t == "" || strings.Trim(t, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			return fmt.Errorf("selftest %q: want the name of a tools/testing/selftests/drivers/net test without .py (%s)", t, strings.Join(SelftestNames, ","))
		}
	}
	return nil
}

func selftestsScript(o Options) string {
	return busRateCheck(o) +
		gadgetSetup(o) +
		guestScript("selftests.sh", "@PEER@", gadgetPeerAddr, "@HOST@", gadgetHostAddr,
			"@TESTS@", strings.Join(selftestList(o), " "), "@LIMIT@", strconv.Itoa(selftestLimit))
}

// selftestFiles adds the installed selftests below ksft/ in the run
// archive, with the per-NAPI threaded check as ksft/ws-napi-threaded.sh.
func selftestFiles(dir string, files map[string][]byte) error {
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files["ksft/"+filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return fmt.Errorf("the selftests in %s: %w", dir, err)
	}
	files["ksft/ws-napi-threaded.sh"] = []byte(guestScript("napi_threaded_nl.sh", "@PEER@", gadgetPeerAddr))
	return nil
}

// selftestsInputs builds (or finds in the cache) the Debian root image and
// the selftests of r's kernel, and adds the selftests to files.
func (r *runState) selftestsInputs(ctx context.Context, files map[string][]byte) error {
	c := r.c
	img, err := DebianRoot(ctx, c.CacheDir, c.Arch, c.logf)
	if err != nil {
		return err
	}
	c.disks = append(c.disks, img)
	ksft, err := Kselftests(ctx, c.CacheDir, r.k, c.logf)
	if err != nil {
		return err
	}
	c.logf("selftests %s, Debian root %s", ksft, img)
	return selftestFiles(ksft, files)
}
