#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build the device-class snapshot fixtures (README.md, "Device classes"):
hand-built, from the kernel's sysfs layout and driver source (Debian's
linux-source 6.12.117 and 6.1.192) and from what users' hosts show. Uses
mkfixtures.py's helpers; writes one NAME.txt per device class and builds
its .tar.gz from it.

    python3 testdata/snapshots/mkdevices.py
"""
import os

from mkfixtures import build, Tree, netdev, host, softnet_row, irq, features, FEATURES_USBNET, vl805

SYSCTLS = {"netdev_budget": 300, "netdev_budget_usecs": 2000, "netdev_max_backlog": 1000,
           "dev_weight": 64, "busy_poll": 0, "busy_read": 0, "rps_sock_flow_entries": 0,
           "gro_normal_batch": 8, "default_qdisc": "fq_codel"}  # systemd's sysctl.d sets fq_codel

# intel_pstate in active mode: two "governors", and the real knob is EPP.
PSTATE = {"scaling_governor": "powersave", "scaling_driver": "intel_pstate",
          "scaling_available_governors": "performance powersave",
          "energy_performance_preference": "balance_performance",
          "energy_performance_available_preferences": "default performance balance_performance balance_power power",
          "scaling_cur_freq": 3100000, "cpuinfo_max_freq": 4700000, "cpuinfo_min_freq": 400000}
# cpufreq-dt on a Raspberry Pi 4 with Raspberry Pi OS's governors.
PI_DT = {"scaling_governor": "ondemand", "scaling_driver": "cpufreq-dt",
         "scaling_available_governors": "conservative ondemand userspace powersave performance schedutil",
         "scaling_cur_freq": 1800000, "cpuinfo_max_freq": 1800000, "cpuinfo_min_freq": 600000}

# WiFi and wwan devices: no TSO, GRO on.
FEATURES_WIFI = dict(FEATURES_USBNET, **{"tx-tcp-segmentation": (False, True), "tx-tcp6-segmentation": (False, True)})
NOQUEUE_BQL = {"limit": 0, "limit_min": 0, "limit_max": 1879048192, "inflight": 0, "hold_time": 1000}


def interrupts(t, ncpu, lines):
    """lines: (irq, counts, chip, hwirq-and-type, action)."""
    out = "            " + "".join("CPU%-8d" % c for c in range(ncpu)).rstrip() + "\n"
    for n, counts, chip, how, action in lines:
        out += "%4d: %s  %s %s   %s\n" % (n, " ".join("%10d" % c for c in counts), chip, how, action)
    t.file("/proc/interrupts", out)


def kthread(t, pid, comm, cpu, allowed, state="S"):
    t.file("/proc/%d/comm" % pid, comm)
    t.file("/proc/%d/stat" % pid, "%d (%s) %s 2 0 0 0 -1 2129984 0 0 0 0 0 5123 0 0 -2 0 1 0 100 0 0 "
           "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 %d 1 1 0 0 0 0 0 0 0 0 0 0 0" % (pid, comm, state, cpu))
    t.file("/proc/%d/status" % pid, "Name:\t%s\nCpus_allowed_list:\t%s\n" % (comm, allowed))


def laptop(t, release, cpufreq=PSTATE, cpus=4, softnet=None):
    host(t, "laptop", release, "x86_64", cpus, 3000,
         softnet or [softnet_row(c, 200000 + 1000 * c) for c in range(cpus)], dict(SYSCTLS), cpufreq=cpufreq)
    t.dir("/proc/1")
    t.file("/proc/3000/comm", "wirespeed")


def xhci(t, path="/sys/devices/pci0000:00/0000:00:14.0", n=125):
    """Intel xHCI on PCI with one MSI that can move."""
    t.link(path + "/subsystem", "../../../bus/pci")
    t.link(path + "/driver", "../../../bus/pci/drivers/xhci_hcd")
    t.dir(path + "/msi_irqs/%d" % n)
    t.file(path + "/irq", n)
    t.file(path + "/usb1/speed", 480)
    t.file(path + "/usb2/speed", 5000)
    return path


def usbdev(t, devpath, attrs, iface, driver):
    for k, v in attrs.items():
        t.file(devpath + "/" + k, v)
    ip = devpath + "/" + iface
    up = "/".join([".."] * (ip.count("/") - 1))
    t.link(ip + "/subsystem", up + "/bus/usb")
    t.link(ip + "/driver", up + "/bus/usb/drivers/" + driver)
    return ip


def wifi(t, devpath, name, ifindex, phy, **kw):
    """A mac80211 netdev on 6.12: one TX queue (mac80211 allocates 1, 1
    since its internal TX queues became the only path), IFF_NO_QUEUE (root
    qdisc noqueue), an unused BQL directory, phy80211 and wireless/."""
    base = netdev(t, devpath, name, ifindex, rx=1, tx=1, bql=NOQUEUE_BQL, device_link=True,
                  uevent="DEVTYPE=wlan\nINTERFACE=%s\nIFINDEX=%d" % (name, ifindex), **kw)
    t.link(base + "/phy80211", "../../ieee80211/" + phy)
    t.dir(base + "/wireless")
    t.file(devpath + "/ieee80211/%s/index" % phy, phy[3:])
    t.file(devpath + "/ieee80211/%s/name" % phy, phy)
    t.link("/sys/class/ieee80211/" + phy, os.path.relpath(devpath + "/ieee80211/" + phy, "/sys/class/ieee80211"))
    return base


def lo(t):
    netdev(t, "/sys/devices/virtual/net/lo", "lo", 1, mtu=65536, operstate="unknown")


def answers(qdiscs, feats, drivers=None, napis=None, queues=None, probes=None, irqbalance="not running"):
    return {"euid": 0, "napis": napis or [], "queues": queues or [],
            "qdiscs": [{"ifindex": i, "kind": k, "handle": "0:", "parent": "root", "root": True} for i, k in qdiscs],
            "features": dict(feats, lo=features(FEATURES_USBNET)),
            "drivers": drivers or {},
            "driver_errors": {"lo": "ethtoolnl: ETHTOOL_GDRVINFO lo: not supported by this kernel or device: operation not supported"},
            "affinity_probes": probes or {}, "irqbalance": irqbalance}


def meta(created, kernel, what):
    return {"created": created, "hostname": "laptop", "kernel": kernel, "wirespeed": "fixture",
            "command": "hand-built: %s (testdata/snapshots/mkdevices.py)" % what}


WIFI_STATS = {"rx_packets": 9120344, "tx_packets": 3310021, "rx_bytes": 13024470112, "tx_bytes": 402113240}


def mt7921u(napi):
    """A laptop with a MediaTek MT7921AU USB WiFi adapter (mt7921u) on its
    USB 3 port. napi=False: a stock kernel, RX in the usb-rx worker;
    napi=True: a kernel with "wifi: mt76: mt76u: use a threaded NAPI for
    the RX path", a threaded NAPI on the internal netdev named phy0."""
    t = Tree()
    release = "7.2.0-rc1-wireless-next+" if napi else "6.12.117+deb12-amd64"
    laptop(t, release)
    hc = xhci(t)
    dev = hc + "/usb2/2-1"
    ip = usbdev(t, dev, {"speed": 5000, "version": " 3.20", "idVendor": "0e8d", "idProduct": "7961",
                         "manufacturer": "MediaTek Inc.", "product": "Wireless_Device", "busnum": 2, "devnum": 2},
                "2-1:1.0", "mt7921u")
    wifi(t, ip, "wlan0", 3, "phy0", stats=WIFI_STATS)
    # The xHCI MSI fires on CPU2 (where the kernel placed it); it can move.
    interrupts(t, 4, [(125, [1022, 310, 1893342, 455], "IR-PCI-MSI-0000:00:14.0", "0-edge", "xhci_hcd")])
    irq(t, 125, "IR-PCI-MSI", "xhci_hcd", 229376, "edge", "f", "0-3", "2")
    if napi:
        # alloc_netdev_dummy() named after the wiphy, threaded = 1, as
        # mt76_dma_init() does for PCIe; one RX NAPI (MT_RXQ_MAIN).
        kthread(t, 820, "napi/phy0-8194", 2, "0-3")
    else:
        # mt76_worker_setup(): "mt76-%s %s" -> "mt76-usb-rx phy0", cut to
        # 15 characters; sched_set_fifo_low().
        kthread(t, 812, "mt76-usb-rx phy", 2, "0-3")
    kthread(t, 813, "mt76-tx phy0", 1, "0-3")  # TX worker: not an RX path, not recorded
    lo(t)
    a = answers([(1, "noqueue"), (3, "noqueue")], {"wlan0": features(FEATURES_WIFI)},
                drivers={"wlan0": {"driver": "mt7921u", "version": release}}, probes={"125": "accepted"})
    name = "mt7921u-napi" if napi else "mt7921u-stock"
    t.write(name + ".tar.gz", meta("2026-08-10T12:00:00Z", release, "mt76 USB WiFi " + ("with mt76u threaded NAPI" if napi else "on a stock 6.12")), a)


def ax210():
    """A laptop with an Intel AX210 (iwlwifi/iwlmvm) on PCIe: MSI-X
    vectors per RX queue, NAPIs polled in softirq on iwlwifi's internal
    netdev; on battery, EPP "power"."""
    t = Tree()
    release = "6.12.117+deb12-amd64"
    laptop(t, release, cpufreq=dict(PSTATE, energy_performance_preference="power", scaling_cur_freq=800000))
    pci = "/sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0"
    t.link(pci + "/subsystem", "../../../../bus/pci")
    t.link(pci + "/driver", "../../../../bus/pci/drivers/iwlwifi")
    vec = [(141, "iwlwifi:default_queue", 0), (142, "iwlwifi:queue_1", 0), (143, "iwlwifi:queue_2", 1),
           (144, "iwlwifi:queue_3", 2), (145, "iwlwifi:queue_4", 3), (146, "iwlwifi:exception", 0)]
    lines = []
    for n, act, cpu in vec:
        t.dir(pci + "/msi_irqs/%d" % n)
        counts = [0, 0, 0, 0]
        # default_queue is queue 0: firmware notifications, TX
        # completions among them, so it is busy under load too, beside
        # queue_1 on CPU0 (iwl_pcie_irq_set_affinity() places the RSS
        # queues one per CPU; the default and exception vectors keep CPU0)
        counts[cpu] = 2 if act.endswith("exception") else (800000 if act.endswith("default_queue") else 1500000 + 10000 * n)
        lines.append((n, counts, "IR-PCI-MSIX-0000:03:00.0", "%d-edge" % (n - 141), act))
        irq(t, n, "IR-PCI-MSIX", act, 1572864 + n - 141, "edge", "%x" % (1 << cpu), str(cpu), str(cpu))
    t.file(pci + "/irq", 16)
    interrupts(t, 4, lines)
    wifi(t, pci, "wlp3s0", 3, "phy0", stats=WIFI_STATS)
    lo(t)
    a = answers([(1, "noqueue"), (3, "noqueue")], {"wlp3s0": features(FEATURES_WIFI)},
                drivers={"wlp3s0": {"driver": "iwlwifi", "version": release}},
                probes={str(n): "accepted" for n, _, _ in vec})
    t.write("ax210-iwlwifi.tar.gz", meta("2026-08-10T12:00:00Z", release, "Intel AX210 PCIe WiFi on mac80211"), a)


def phone_ncm():
    """A laptop tethered to an Android phone over USB (cdc_ncm, the phone
    a USB 2 device): the phone's NCM speed notification reports its USB
    bit rate (f_ncm's ncm_bitrate(): 425 Mbit/s at high speed), the xHCI
    MSI fires on CPU0 and can move, RPS off."""
    t = Tree()
    release = "6.12.117+deb12-amd64"
    laptop(t, release)
    hc = xhci(t)
    dev = hc + "/usb1/1-2"
    ip = usbdev(t, dev, {"speed": 480, "version": " 2.10", "idVendor": "18d1", "idProduct": "4eec",
                         "manufacturer": "Google", "product": "Pixel 6a", "busnum": 1, "devnum": 5},
                "1-2:1.0", "cdc_ncm")
    netdev(t, ip, "usb0", 4, speed=425, rps=["0"],
           bql=NOQUEUE_BQL, stats={"rx_packets": 2210344, "tx_packets": 803311, "rx_bytes": 3204470112, "tx_bytes": 60211324},
           device_link=True, uevent="DEVTYPE=wwan\nINTERFACE=usb0\nIFINDEX=4")
    t.dir("/sys/module/usbnet/holders/cdc_ncm")
    interrupts(t, 4, [(125, [2411021, 122, 80, 64], "IR-PCI-MSI-0000:00:14.0", "0-edge", "xhci_hcd")])
    irq(t, 125, "IR-PCI-MSI", "xhci_hcd", 229376, "edge", "f", "0-3", "0")
    lo(t)
    a = answers([(1, "noqueue"), (4, "fq_codel")], {"usb0": features(FEATURES_USBNET)},
                probes={"125": "accepted"})
    t.write("phone-cdc-ncm.tar.gz", meta("2026-08-10T12:00:00Z", release, "phone tethered over cdc_ncm"), a)


def pi4_r8152(usb2):
    """A Raspberry Pi 4 (Raspberry Pi OS, 6.12) with an RTL8153 (r8152:
    its own NAPI + GRO, BQL) on a USB 3 port - healthy, RPS spreading the
    xHCI interrupt stuck on CPU0 - or (usb2) on a USB 2 port."""
    t = Tree()
    release = "6.12.47+rpt-rpi-v8"
    host(t, "pi4", release, "aarch64", 4, 2101,
         [softnet_row(0, 2143277, 0, 211), softnet_row(1, 912004, 0, 12, 898120),
          softnet_row(2, 888311, 0, 3, 880021), softnet_row(3, 901776, 0, 9, 894310)],
         dict(SYSCTLS, default_qdisc="pfifo_fast"), cpufreq=PI_DT)
    hc = vl805(t)
    dev = hc + ("/usb1/1-1/1-1.3" if usb2 else "/usb2/2-1")
    ip = usbdev(t, dev, {"speed": 480 if usb2 else 5000, "version": " 2.10" if usb2 else " 3.00",
                         "idVendor": "0bda", "idProduct": "8153", "manufacturer": "Realtek",
                         "product": "USB 10/100/1000 LAN", "busnum": 1 if usb2 else 2, "devnum": 3},
                ("1-1.3:1.0" if usb2 else "2-1:1.0"), "r8152")
    netdev(t, ip, "eth1", 3, speed=1000, duplex="full", rps=["e"],
           bql={"limit": 30280, "limit_min": 0, "limit_max": 1879048192, "inflight": 0, "hold_time": 1000,
                "stall_thrs": 0, "stall_cnt": 0, "stall_max": 0},
           stats={"rx_packets": 48110233, "tx_packets": 21773518, "rx_bytes": 72012345678, "tx_bytes": 1534567890},
           device_link=True)
    interrupts(t, 4, [(46, [9668625, 0, 0, 0], "BRCM STB PCIe MSI", "524288 Edge", "xhci_hcd")])
    irq(t, 46, "BRCM STB PCIe MSI", "xhci_hcd", 524288, "edge", "f", "0-3", "0")
    lo(t)
    a = answers([(1, "noqueue"), (3, "fq_codel")], {"eth1": features(FEATURES_USBNET)},
                drivers={"eth1": {"driver": "r8152", "version": "v1.12.13"}},
                napis=[{"id": 9, "ifindex": 3, "defer_hard_irqs": 0, "gro_flush_timeout_ns": 0,
                        "irq_suspend_timeout_ns": 0, "threaded": 0}],
                queues=[{"id": 0, "ifindex": 3, "type": "rx", "napi_id": 9}, {"id": 0, "ifindex": 3, "type": "tx"}],
                probes={"46": "accepted"})
    name = "pi4-r8152-usb2" if usb2 else "pi4-r8152"
    t.write(name + ".tar.gz", dict(meta("2026-08-10T12:00:00Z", release, "r8152 on a Pi 4" + (" USB 2 port" if usb2 else "")), hostname="pi4"), a)


def lte_qmi():
    """A small x86 router with a Quectel EC25 LTE modem on qmi_wwan
    (raw IP: wwan0 has no Ethernet header, no link speed), on Debian 12's
    6.1 kernel."""
    t = Tree()
    release = "6.1.0-56-amd64"
    host(t, "lte-gw", release, "x86_64", 4, 3000, [softnet_row(c, 90000 + 1000 * c) for c in range(4)], dict(SYSCTLS),
         cpufreq={"scaling_governor": "schedutil", "scaling_driver": "acpi-cpufreq",
                  "scaling_available_governors": "conservative ondemand userspace powersave performance schedutil",
                  "scaling_cur_freq": 1500000, "cpuinfo_max_freq": 2000000, "cpuinfo_min_freq": 800000})
    t.dir("/proc/1")
    hc = xhci(t, n=124)  # the MSI /proc/interrupts counts
    dev = hc + "/usb1/1-4"
    ip = usbdev(t, dev, {"speed": 480, "version": " 2.00", "idVendor": "2c7c", "idProduct": "0125",
                         "manufacturer": "Quectel", "product": "EC25-E", "busnum": 1, "devnum": 3},
                "1-4:1.4", "qmi_wwan")
    base = netdev(t, ip, "wwan0", 5, rps=["0"], bql=NOQUEUE_BQL,
                  stats={"rx_packets": 1210344, "tx_packets": 603311, "rx_bytes": 1604470112, "tx_bytes": 80211324},
                  device_link=True, uevent="DEVTYPE=wwan\nINTERFACE=wwan0\nIFINDEX=5")
    t.file(base + "/qmi/raw_ip", "Y")
    t.dir("/sys/module/usbnet/holders/qmi_wwan")
    interrupts(t, 4, [(124, [810233, 1022, 40, 11], "IR-PCI-MSI-0000:00:14.0", "0-edge", "xhci_hcd")])
    irq(t, 124, "IR-PCI-MSI", "xhci_hcd", 229376, "edge", "f", "0-3", "0")
    lo(t)
    t.file("/proc/sys/net/ipv4/ip_forward", 1)
    a = answers([(1, "noqueue"), (5, "fq_codel")], {"wwan0": features(FEATURES_USBNET)}, probes={"124": "accepted"})
    t.write("lte-qmi-wwan.tar.gz", dict(meta("2026-08-10T12:00:00Z", release, "LTE modem on qmi_wwan"), hostname="lte-gw"), a)


def os_release(t, fields, rpi_issue=None):
    """/etc/os-release as the distribution writes it; /etc/rpi-issue on
    Raspberry Pi OS images (whose 64-bit os-release says ID=debian)."""
    t.file("/etc/os-release", "".join('%s="%s"\n' % kv if " " in kv[1] or "/" in kv[1] else "%s=%s\n" % kv for kv in fields))
    if rpi_issue:
        t.file("/etc/rpi-issue", rpi_issue)


BQL_UNUSED_69 = dict(NOQUEUE_BQL, stall_thrs=0, stall_cnt=0, stall_max=0)


def pi5_ax88179():
    """A Raspberry Pi 5 on Raspberry Pi OS (trixie-based, kernel 6.18.y)
    with an ASIX AX88179 (ax88179_178a, usbnet) on a USB 3 port. The Pi 5's
    USB controllers sit in RP1, the southbridge behind PCIe: two DWC3 cores
    in host mode, each with an xhci-hcd platform child described by the
    device tree. Neither the controller nor any device above it has an
    irq file or msi_irqs/: the interrupt is RP1's, named by the USB core
    after the controller's first root hub ("xhci-hcd:usb1")."""
    t = Tree()
    release = "6.18.20+rpt-rpi-2712"
    host(t, "pi5", release, "aarch64", 4, 2101, [softnet_row(c, 300000 + 1000 * c) for c in range(4)],
         dict(SYSCTLS, default_qdisc="pfifo_fast"),
         cpufreq=dict(PI_DT, scaling_cur_freq=2400000, cpuinfo_max_freq=2400000, cpuinfo_min_freq=1500000))
    os_release(t, [("PRETTY_NAME", "Debian GNU/Linux 13 (trixie)"), ("NAME", "Debian GNU/Linux"), ("VERSION_ID", "13"),
                   ("VERSION", "13 (trixie)"), ("VERSION_CODENAME", "trixie"), ("ID", "debian")],
               rpi_issue="Raspberry Pi reference 2026-05-27")
    rp1 = "/sys/devices/platform/axi/1000120000.pcie/1f00000000.rp1"
    hc = rp1 + "/1f00200000.usb/xhci-hcd.0"
    t.link(hc + "/subsystem", "../../../../../../../bus/platform")
    t.link(hc + "/driver", "../../../../../../../bus/platform/drivers/xhci-hcd")
    t.file(hc + "/usb1/speed", 480)
    t.file(hc + "/usb2/speed", 5000)
    hc2 = rp1 + "/1f00300000.usb/xhci-hcd.1"  # the other port pair
    t.file(hc2 + "/usb3/speed", 480)
    t.file(hc2 + "/usb4/speed", 5000)
    ip = usbdev(t, hc + "/usb2/2-1", {"speed": 5000, "version": " 3.00", "idVendor": "0b95", "idProduct": "1790",
                                      "manufacturer": "ASIX Elec. Corp.", "product": "AX88179", "busnum": 2, "devnum": 2},
                "2-1:1.0", "ax88179_178a")
    netdev(t, ip, "eth1", 3, speed=1000, duplex="full", rps=["0"], bql=BQL_UNUSED_69,
           stats={"rx_packets": 31224871, "tx_packets": 9120044, "rx_bytes": 46012345678, "tx_bytes": 812345678},
           device_link=True)
    t.dir("/sys/module/usbnet/holders/ax88179_178a")
    interrupts(t, 4, [(161, [2891022, 0, 0, 0], "rp1_irq_chip", "31 Level", "xhci-hcd:usb1"),
                      (166, [212, 0, 0, 0], "rp1_irq_chip", "36 Level", "xhci-hcd:usb3")])
    irq(t, 161, "rp1_irq_chip", "xhci-hcd:usb1", 31, "level", "f", "0-3", "0")
    irq(t, 166, "rp1_irq_chip", "xhci-hcd:usb3", 36, "level", "f", "0-3", "0")
    lo(t)
    a = answers([(1, "noqueue"), (3, "pfifo_fast")], {"eth1": features(FEATURES_USBNET)},
                drivers={"eth1": {"driver": "ax88179_178a", "version": release}}, probes={"161": "accepted", "166": "accepted"})
    t.write("pi5-rp1-ax88179.tar.gz", dict(meta("2026-11-20T12:00:00Z", release, "AX88179 on a Raspberry Pi 5 (xHCI in RP1)"), hostname="pi5"), a)


def modem_5g_mbim():
    """A small x86 router on Debian 12 (6.1) with a 5G modem on cdc_mbim
    (Quectel RM520N-GL, 2c7c:0801, USB 3): usbnet, no BQL before 6.19,
    raw IP without a link speed, root qdisc pfifo_fast (no sysctl.d sets
    fq_codel on this image), forwarding for the LAN."""
    t = Tree()
    release = "6.1.0-56-amd64"
    host(t, "cpe", release, "x86_64", 4, 3000, [softnet_row(c, 120000 + 1000 * c) for c in range(4)],
         dict(SYSCTLS, default_qdisc="pfifo_fast"),
         cpufreq={"scaling_governor": "schedutil", "scaling_driver": "acpi-cpufreq",
                  "scaling_available_governors": "conservative ondemand userspace powersave performance schedutil",
                  "scaling_cur_freq": 1500000, "cpuinfo_max_freq": 2000000, "cpuinfo_min_freq": 800000})
    os_release(t, [("PRETTY_NAME", "Debian GNU/Linux 12 (bookworm)"), ("NAME", "Debian GNU/Linux"), ("VERSION_ID", "12"),
                   ("VERSION", "12 (bookworm)"), ("VERSION_CODENAME", "bookworm"), ("ID", "debian")])
    t.dir("/proc/1")
    hc = xhci(t, n=124)
    ip = usbdev(t, hc + "/usb2/2-2", {"speed": 5000, "version": " 3.20", "idVendor": "2c7c", "idProduct": "0801",
                                      "manufacturer": "Quectel", "product": "RM520N-GL", "busnum": 2, "devnum": 2},
                "2-2:1.4", "cdc_mbim")
    netdev(t, ip, "wwan0", 5, rps=["0"], bql=NOQUEUE_BQL,
           stats={"rx_packets": 8210344, "tx_packets": 2603311, "rx_bytes": 11604470112, "tx_bytes": 380211324},
           device_link=True, uevent="DEVTYPE=wwan\nINTERFACE=wwan0\nIFINDEX=5")
    t.dir("/sys/module/usbnet/holders/cdc_mbim")
    interrupts(t, 4, [(124, [3110233, 1022, 40, 11], "IR-PCI-MSI-0000:00:14.0", "0-edge", "xhci_hcd")])
    irq(t, 124, "IR-PCI-MSI", "xhci_hcd", 229376, "edge", "f", "0-3", "0")
    lo(t)
    t.file("/proc/sys/net/ipv4/ip_forward", 1)
    a = answers([(1, "noqueue"), (5, "pfifo_fast")], {"wwan0": features(FEATURES_USBNET)}, probes={"124": "accepted"})
    t.write("modem-5g-mbim.tar.gz", dict(meta("2026-11-20T12:00:00Z", release, "5G modem on cdc_mbim"), hostname="cpe"), a)


def mt7921u_73():
    """The mt7921u laptop on Debian 13 with trixie-backports' 7.3, which
    has "wifi: mt76: mt76u: use a threaded NAPI for the RX path"
    (5323d3e50c20): the RX NAPI sits on a dummy netdev named "mt76u-rx"
    (kthread "napi/mt76u-rx-<id>", cut to 15 characters), and the
    "mt76-usb-rx phyN" worker stays for the MCU queue."""
    t = Tree()
    release = "7.3.4+deb13-amd64"
    laptop(t, release)
    os_release(t, [("PRETTY_NAME", "Debian GNU/Linux 13 (trixie)"), ("NAME", "Debian GNU/Linux"), ("VERSION_ID", "13"),
                   ("VERSION", "13 (trixie)"), ("VERSION_CODENAME", "trixie"), ("ID", "debian")])
    hc = xhci(t)
    ip = usbdev(t, hc + "/usb2/2-1", {"speed": 5000, "version": " 3.20", "idVendor": "0e8d", "idProduct": "7961",
                                      "manufacturer": "MediaTek Inc.", "product": "Wireless_Device", "busnum": 2, "devnum": 2},
                "2-1:1.0", "mt7921u")
    wifi(t, ip, "wlan0", 3, "phy0", stats=WIFI_STATS)
    interrupts(t, 4, [(125, [1022, 310, 1893342, 455], "IR-PCI-MSI-0000:00:14.0", "0-edge", "xhci_hcd")])
    irq(t, 125, "IR-PCI-MSI", "xhci_hcd", 229376, "edge", "f", "0-3", "2")
    kthread(t, 820, "napi/mt76u-rx-8", 3, "0-3")
    kthread(t, 812, "mt76-usb-rx phy", 2, "0-3")
    kthread(t, 813, "mt76-tx phy0", 1, "0-3")
    lo(t)
    a = answers([(1, "noqueue"), (3, "noqueue")], {"wlan0": features(FEATURES_WIFI)},
                drivers={"wlan0": {"driver": "mt7921u", "version": release}}, probes={"125": "accepted"})
    t.write("mt7921u-73.tar.gz", meta("2026-11-20T12:00:00Z", release, "mt76 USB WiFi on 7.3 (mt76u threaded NAPI)"), a)


if __name__ == "__main__":
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    mt7921u(False)
    mt7921u(True)
    ax210()
    phone_ncm()
    pi4_r8152(False)
    pi4_r8152(True)
    lte_qmi()
    pi5_ax88179()
    modem_5g_mbim()
    mt7921u_73()
    build()
