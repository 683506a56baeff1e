#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build the platform fixtures (README.md, "Platforms and datapaths"):
hand-built, snapshot format version 2, for the kinds of issue 44 - devices
that receive in another device's context (bridge, DSA user ports, a tap fed
by vhost-net, a tun fed by a userspace tunnel, a driver polling on a dummy
netdev), platforms other than the Debian family (OpenWrt, Proxmox VE, a
vendor BSP kernel on Armbian), heterogeneous CPUs (cpu_capacity) and
tunnels on a kernel with the UDP GSO corruption. Uses mkfixtures.py's and
mkdevices.py's helpers; counters, IRQ numbers and PIDs are illustrative.

    python3 testdata/snapshots/mkplatforms.py
"""
import os

from mkfixtures import build, Tree, netdev, host, softnet_row, irq, features, FEATURES_USBNET
from mkdevices import SYSCTLS, NOQUEUE_BQL, interrupts, kthread, usbdev, lo, answers, os_release, BQL_UNUSED_69

STATS = {"rx_packets": 21224871, "tx_packets": 7120044, "rx_bytes": 30012345678, "tx_bytes": 712345678}
FEATURES_PHY = dict(FEATURES_USBNET, **{"tx-udp-segmentation": (True, False)})
FEATURES_SW_USO = dict(FEATURES_USBNET, **{"tx-udp-segmentation": (True, False), "rx-gro": (True, False)})


def rel(link, target):
    return os.path.relpath(target, os.path.dirname(link))


def platform_dev(t, path, driver, bus="platform"):
    t.link(path + "/subsystem", rel(path + "/subsystem", "/sys/bus/" + bus))
    t.link(path + "/driver", rel(path + "/driver", "/sys/bus/%s/drivers/%s" % (bus, driver)))
    return path


def bridge(t, name, ifindex, ports, stats=None):
    base = netdev(t, "/sys/devices/virtual/net/" + name, name, ifindex, rps=["0"], stats=stats or STATS)
    t.file(base + "/bridge/stp_state", 0)
    for p, target in ports:
        t.link(base + "/brif/" + p, rel(base + "/brif/" + p, target + "/brport"))
        t.file(target + "/brport/state", 3)
    return base


def ax88179(t, hc, port, name, ifindex, bql=BQL_UNUSED_69):
    ip = usbdev(t, hc + "/usb2/" + port, {"speed": 5000, "version": " 3.00", "idVendor": "0b95", "idProduct": "1790",
                                          "manufacturer": "ASIX Elec. Corp.", "product": "AX88179", "busnum": 2, "devnum": 2},
                port + ":1.0", "ax88179_178a")
    netdev(t, ip, name, ifindex, speed=1000, duplex="full", rps=["0"], bql=bql, stats=STATS, device_link=True)
    t.dir("/sys/module/usbnet/holders/ax88179_178a")


def openwrt():
    """OpenWrt 24.10 on a MediaTek MT7621 router (ramips/mt7621, 2 cores x 2
    threads): mtk_soc_eth's conduit eth0 polls its NAPI on an internal
    netdev (kthreads napi/mtk_eth-*, as OpenWrt's packet-steering.uc
    matches them), DSA user ports lan1, lan2, wan (DEVTYPE=dsa, lower_eth0)
    on the MT7530 switch, the bridge br-lan over lan1 and lan2, and a USB 3
    AX88179 (usbnet) as a second uplink behind xhci-mtk. packet_steering is
    0 in /etc/config/network; netifd runs."""
    t = Tree()
    release = "6.6.110"
    host(t, "OpenWrt", release, "mips", 4, 1801, [softnet_row(c, 400000 + 1000 * c) for c in range(4)],
         dict(SYSCTLS, default_qdisc="fq_codel"))
    t.file("/etc/openwrt_release", "DISTRIB_ID='OpenWrt'\nDISTRIB_RELEASE='24.10.4'\nDISTRIB_REVISION='r28959-29397011cc'\n"
           "DISTRIB_TARGET='ramips/mt7621'\nDISTRIB_ARCH='mipsel_24kc'\nDISTRIB_DESCRIPTION='OpenWrt 24.10.4 r28959-29397011cc'\n")
    os_release(t, [("NAME", "OpenWrt"), ("VERSION", "24.10.4"), ("ID", "openwrt"), ("ID_LIKE", "lede openwrt"),
                   ("PRETTY_NAME", "OpenWrt 24.10.4"), ("VERSION_ID", "24.10.4")])
    t.file("/etc/config/network", "\nconfig interface 'loopback'\n\toption device 'lo'\n\toption proto 'static'\n\n"
           "config globals 'globals'\n\toption ula_prefix 'fd12:3456:789a::/48'\n\toption packet_steering '0'\n\n"
           "config device\n\toption name 'br-lan'\n\toption type 'bridge'\n\tlist ports 'lan1'\n\tlist ports 'lan2'\n")
    eth = platform_dev(t, "/sys/devices/platform/1e100000.ethernet", "mtk_soc_eth")
    e0 = netdev(t, eth, "eth0", 2, speed=1000, duplex="full", rps=["0"], stats=STATS, device_link=True, txqlen=1000)
    sw = platform_dev(t, eth + "/mdio_bus/mdio-bus/mdio-bus:1f", "mt7530-mdio", bus="mdio_bus")
    ports = []
    for i, name in enumerate(["lan1", "lan2", "wan"]):
        b = netdev(t, sw, name, 3 + i, speed=1000, duplex="full", rps=["0"], stats=STATS, device_link=True,
                   uevent="DEVTYPE=dsa\nINTERFACE=%s\nIFINDEX=%d" % (name, 3 + i))
        t.link(b + "/lower_eth0", rel(b + "/lower_eth0", e0))
        if name != "wan":
            ports.append((name, b))
    bridge(t, "br-lan", 7, ports)
    hc = platform_dev(t, "/sys/devices/platform/1e1c0000.xhci", "xhci-mtk")
    t.file(hc + "/usb1/speed", 480)
    t.file(hc + "/usb2/speed", 5000)
    ax88179(t, hc, "2-1", "eth1", 8, bql={"limit": 0, "limit_min": 0, "limit_max": 1879048192, "inflight": 0, "hold_time": 1000})
    interrupts(t, 4, [(21, [9812211, 0, 0, 0], "MIPS GIC", "10 Level", "1e100000.ethernet"),
                      (22, [4120455, 0, 0, 0], "MIPS GIC", "22 Level", "xhci-hcd:usb1")])
    irq(t, 21, "MIPS GIC", "1e100000.ethernet", 10, "level", "f", "0-3", "0")
    irq(t, 22, "MIPS GIC", "xhci-hcd:usb1", 22, "level", "f", "0-3", "0")
    lo(t)
    a = answers([(1, "noqueue"), (2, "fq_codel"), (3, "noqueue"), (4, "noqueue"), (5, "noqueue"), (7, "noqueue"), (8, "fq_codel")],
                {n: features(FEATURES_USBNET) for n in ["eth0", "eth1", "lan1", "lan2", "wan", "br-lan"]},
                drivers={"lan1": {"driver": "dsa"}, "lan2": {"driver": "dsa"}, "wan": {"driver": "dsa"}, "br-lan": {"driver": "bridge"}},
                probes={"21": "accepted", "22": "accepted"})
    a["services"] = ["netifd"]
    t.write("openwrt-mt7621-dsa.tar.gz", dict(meta_of(release, "OpenWrt 24.10 on MT7621: DSA, bridge, mtk_soc_eth, usbnet"), hostname="OpenWrt"), a, version=2)


def meta_of(release, what):
    return {"created": "2026-11-28T12:00:00Z", "hostname": "host", "kernel": release, "wirespeed": "fixture",
            "command": "hand-built: %s (testdata/snapshots/mkplatforms.py)" % what}


def proxmox():
    """Proxmox VE 8 (os-release: Debian 12) on its 6.8 kernel (6.8.12-4-pve):
    vmbr0 bridges the onboard r8169 enp1s0 and a VM's tap100i0 (tun_flags
    0x5002: IFF_TAP, IFF_NO_PI, IFF_VNET_HDR; vhost_net in use, refcnt 2);
    an RTL8156 2.5 GbE adapter bound to cdc_ncm (usbnet) reports 2500 Mbit/s
    through NCM speed notifications (duplex unknown: usbnet's
    get_link_ksettings without MII)."""
    t = Tree()
    release = "6.8.12-4-pve"
    host(t, "pve", release, "x86_64", 8, 3000, [softnet_row(c, 500000 + 1000 * c) for c in range(8)], dict(SYSCTLS))
    os_release(t, [("PRETTY_NAME", "Debian GNU/Linux 12 (bookworm)"), ("NAME", "Debian GNU/Linux"), ("VERSION_ID", "12"),
                   ("VERSION", "12 (bookworm)"), ("VERSION_CODENAME", "bookworm"), ("ID", "debian")])
    pci = platform_dev(t, "/sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0", "r8169", bus="pci")
    t.dir(pci + "/msi_irqs/130")
    e = netdev(t, pci, "enp1s0", 2, speed=1000, duplex="full", rps=["00"], stats=STATS, device_link=True)
    tap = netdev(t, "/sys/devices/virtual/net/tap100i0", "tap100i0", 10, rps=["00"], stats=STATS)
    t.file(tap + "/tun_flags", "0x5002")
    t.file("/sys/module/vhost_net/refcnt", 2)
    bridge(t, "vmbr0", 3, [("enp1s0", e), ("tap100i0", tap)])
    hc = platform_dev(t, "/sys/devices/pci0000:00/0000:00:14.0", "xhci_hcd", bus="pci")
    t.dir(hc + "/msi_irqs/125")
    t.file(hc + "/irq", 125)
    t.file(hc + "/usb1/speed", 480)
    t.file(hc + "/usb2/speed", 5000)
    ip = usbdev(t, hc + "/usb2/2-2", {"speed": 5000, "version": " 3.20", "idVendor": "0bda", "idProduct": "8156",
                                      "manufacturer": "Realtek", "product": "USB 10/100/1G/2.5G LAN", "busnum": 2, "devnum": 3},
                "2-2:2.0", "cdc_ncm")
    netdev(t, ip, "enx00e04c680001", 4, speed=2500, rps=["00"], bql=NOQUEUE_BQL, stats=STATS, device_link=True)
    t.dir("/sys/module/usbnet/holders/cdc_ncm")
    interrupts(t, 8, [(125, [3110233, 1022, 40, 11, 0, 0, 0, 0], "IR-PCI-MSI-0000:00:14.0", "0-edge", "xhci_hcd"),
                      (130, [512000, 498000, 0, 0, 0, 0, 0, 0], "IR-PCI-MSI-0000:01:00.0", "0-edge", "enp1s0")])
    irq(t, 125, "IR-PCI-MSI", "xhci_hcd", 229376, "edge", "ff", "0-7", "0")
    irq(t, 130, "IR-PCI-MSI", "enp1s0", 524288, "edge", "ff", "0-7", "1")
    lo(t)
    a = answers([(1, "noqueue"), (2, "fq_codel"), (3, "noqueue"), (4, "fq_codel"), (10, "fq_codel")],
                {n: features(FEATURES_USBNET) for n in ["enp1s0", "enx00e04c680001", "vmbr0", "tap100i0"]},
                drivers={"vmbr0": {"driver": "bridge"}, "tap100i0": {"driver": "tun"}},
                napis=[{"id": 8193, "ifindex": 2, "irq": 130, "defer_hard_irqs": 0, "gro_flush_timeout_ns": 0, "irq_suspend_timeout_ns": 0}],
                probes={"125": "accepted", "130": "accepted"}, irqbalance="running")
    a["services"] = ["irqbalance"]
    t.write("proxmox-vhost.tar.gz", dict(meta_of(release, "Proxmox VE 8: bridge, vhost-net tap, cdc_ncm"), hostname="pve"), a, version=2)


def rk3588():
    """An RK3588 board (Orange Pi 5 class) on Armbian with Rockchip's BSP
    kernel (branch vendor, family rk35xx: 6.1.115-vendor-rk35xx):
    Cortex-A55 CPUs 0-3 and Cortex-A76 CPUs 4-7; cpu_capacity 397 and
    1024, what the kernel derives from rk3588s.dtsi's capacity-dmips-mhz
    (530 and 1024) scaled by the clusters' top clocks (1.8 and 2.4 GHz).
    An AX88179 (usbnet) on the USB 3 port; its xHCI interrupt all on CPU0."""
    t = Tree()
    release = "6.1.115-vendor-rk35xx"
    host(t, "orangepi5", release, "aarch64", 8, 2101, [softnet_row(c, 300000 + 1000 * c) for c in range(8)],
         dict(SYSCTLS, default_qdisc="pfifo_fast"))
    for c in range(8):
        t.file("/sys/devices/system/cpu/cpu%d/cpu_capacity" % c, 397 if c < 4 else 1024)
    os_release(t, [("PRETTY_NAME", "Armbian 25.8.1 bookworm"), ("NAME", "Debian GNU/Linux"), ("VERSION_ID", "12"),
                   ("VERSION", "12 (bookworm)"), ("VERSION_CODENAME", "bookworm"), ("ID", "debian")])
    hc = platform_dev(t, "/sys/devices/platform/usbdrd3_0/fc000000.usb/xhci-hcd.0.auto", "xhci-hcd")
    t.file(hc + "/usb1/speed", 480)
    t.file(hc + "/usb2/speed", 5000)
    ax88179(t, hc, "2-1", "eth1", 3)
    interrupts(t, 8, [(76, [5120455, 0, 0, 0, 0, 0, 0, 0], "GICv3", "252 Level", "xhci-hcd:usb1")])
    irq(t, 76, "GICv3", "xhci-hcd:usb1", 252, "level", "ff", "0-7", "0")
    lo(t)
    a = answers([(1, "noqueue"), (3, "pfifo_fast")], {"eth1": features(FEATURES_USBNET)},
                drivers={"eth1": {"driver": "ax88179_178a", "version": release}}, probes={"76": "accepted"})
    a["services"] = []
    t.write("rk3588-armbian-vendor.tar.gz", dict(meta_of(release, "RK3588 big.LITTLE on Armbian's vendor kernel, AX88179"), hostname="orangepi5"), a, version=2)


def tailscale():
    """An Ubuntu 26.04 exit node on its 7.0 kernel (7.0.0-15-generic, inside
    the UDP GSO corruption's 7.0 - 7.1.4): igc eth0 (its NAPIs in napi-get,
    tx-udp-segmentation on), tailscale0 a tun with IFF_VNET_HDR written by
    tailscaled (tun_flags 0x5001), wg0 a kernel WireGuard device (software
    UDP segmentation: tx-udp-segmentation on, not fixed), forwarding on,
    rx-udp-gro-forwarding off."""
    t = Tree()
    release = "7.0.0-15-generic"
    host(t, "exit", release, "x86_64", 4, 3000, [softnet_row(c, 700000 + 1000 * c) for c in range(4)], dict(SYSCTLS))
    os_release(t, [("PRETTY_NAME", "Ubuntu 26.04 LTS"), ("NAME", "Ubuntu"), ("VERSION_ID", "26.04"),
                   ("VERSION", "26.04 LTS"), ("VERSION_CODENAME", "resolute"), ("ID", "ubuntu"), ("ID_LIKE", "debian")])
    pci = platform_dev(t, "/sys/devices/pci0000:00/0000:00:1c.0/0000:02:00.0", "igc", bus="pci")
    t.dir(pci + "/msi_irqs/140")
    netdev(t, pci, "eth0", 2, speed=2500, duplex="full", rps=["0"], stats=STATS, device_link=True,
           bql={"limit": 30280, "limit_min": 0, "limit_max": 1879048192, "inflight": 0, "hold_time": 1000, "stall_thrs": 0, "stall_cnt": 0, "stall_max": 0})
    ts = netdev(t, "/sys/devices/virtual/net/tailscale0", "tailscale0", 5, mtu=1280, txqlen=500, operstate="unknown", stats=STATS)
    t.file(ts + "/tun_flags", "0x5001")
    netdev(t, "/sys/devices/virtual/net/wg0", "wg0", 6, mtu=1420, operstate="unknown", stats=STATS)
    interrupts(t, 4, [(140, [812000, 790000, 801000, 799000], "IR-PCI-MSI-0000:02:00.0", "0-edge", "eth0-TxRx-0")])
    irq(t, 140, "IR-PCI-MSI", "eth0-TxRx-0", 1048576, "edge", "f", "0-3", "0")
    t.file("/proc/sys/net/ipv4/ip_forward", 1)
    lo(t)
    a = answers([(1, "noqueue"), (2, "fq_codel"), (5, "fq_codel"), (6, "noqueue")],
                {"eth0": features(FEATURES_PHY), "tailscale0": features(FEATURES_USBNET), "wg0": features(FEATURES_SW_USO)},
                drivers={"tailscale0": {"driver": "tun"}, "wg0": {"driver": "wireguard"}},
                napis=[{"id": 8200, "ifindex": 2, "irq": 140, "defer_hard_irqs": 0, "gro_flush_timeout_ns": 0, "irq_suspend_timeout_ns": 0}],
                probes={"140": "accepted"})
    a["services"] = ["tailscaled"]
    t.write("tailscale-exit-70.tar.gz", dict(meta_of(release, "Tailscale exit node and WireGuard on Ubuntu's 7.0"), hostname="exit"), a, version=2)


if __name__ == "__main__":
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    openwrt()
    proxmox()
    rk3588()
    tailscale()
    build()
