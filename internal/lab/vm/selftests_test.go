// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"slices"
	"strings"
	"testing"
)

// drivers/net's config of 7.3.4 (tools/testing/selftests/drivers/net/config),
// its =m lines: what the tests expect to be able to load.
const ksftConfig73 = `CONFIG_MACSEC=m
CONFIG_NET_ACT_SKBEDIT=m
CONFIG_NET_CLS_FLOWER=m
CONFIG_NET_CLS_FW=m
CONFIG_NET_CLS_MATCHALL=m
CONFIG_NETCONSOLE=m
CONFIG_NETDEVSIM=m
CONFIG_NET_SCH_ETF=m
CONFIG_NET_SCH_FQ=m
CONFIG_NET_SCH_PRIO=m
CONFIG_VLAN_8021Q=m
`

// The selftests scenario loads every module the tests' config wants as a
// module (netdevsim aside): the guest's chroot cannot modprobe.
func TestSelftestModulesCoverConfig(t *testing.T) {
	module := map[string]string{"MACSEC": "macsec", "NET_ACT_SKBEDIT": "act_skbedit", "NET_CLS_FLOWER": "cls_flower",
		"NET_CLS_FW": "cls_fw", "NET_CLS_MATCHALL": "cls_matchall", "NETCONSOLE": "netconsole", "NET_SCH_ETF": "sch_etf",
		"NET_SCH_FQ": "sch_fq", "NET_SCH_PRIO": "sch_prio", "VLAN_8021Q": "8021q"}
	loaded := scenarios["selftests"].Modules(Options{})
	sc := bufio.NewScanner(strings.NewReader(ksftConfig73))
	for sc.Scan() {
		opt, ok := strings.CutSuffix(strings.TrimPrefix(sc.Text(), "CONFIG_"), "=m")
		if !ok || opt == "NETDEVSIM" {
			continue
		}
		m, known := module[opt]
		if !known {
			t.Errorf("CONFIG_%s=m: no module name known for it", opt)
			continue
		}
		if !slices.Contains(loaded, m) {
			t.Errorf("CONFIG_%s=m: the selftests scenario does not load %s", opt, m)
		}
	}
}

// The Debian root's ext4 (metadata_csum) mounts on 6.12 only with crc32c
// loaded first: the scenario loads the alias before ext4.
func TestSelftestModulesCrc32cBeforeExt4(t *testing.T) {
	mods := scenarios["selftests"].Modules(Options{})
	c, e := slices.Index(mods, "crc32c"), slices.Index(mods, "ext4")
	if c < 0 || e < 0 || c > e {
		t.Errorf("selftests modules %v: want crc32c before ext4", mods)
	}
}
