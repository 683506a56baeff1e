# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The usb-nic and usbdev scenarios' topology (nicScript, devScript): a USB
# adapter (@DEVICE@) bound by @DRIVER@ (usbnet's, or r8152) as $DIF at @GUEST@, the host
# namespace's tap at @HOST@; @DUT_KNOBS@ is dutKnobs' lines for
# $DIF. nicScript adds the bench and, with --tune, tune.sh.
# shellcheck disable=SC2129 # one fact a line, appended where it is learnt

ws stage @STAGE@
DIF=$(ws_wait_driver @DRIVER@ 30) || fail "no @DRIVER@ network device appeared within 30 s (is the @DEVICE@ device on the USB bus?)"
echo "dut_if=$DIF" >> /results/facts.txt
echo "dut_driver=@DRIVER@" >> /results/facts.txt
# usbnet's minidrivers hold it; r8152 (its own NAPI and GRO) does not
if [ -e /sys/module/usbnet/holders/@DRIVER@ ]; then echo "dut_usbnet=yes"; else echo "dut_usbnet=no"; fi >> /results/facts.txt
echo "usb_speed=$(cat "/sys/class/net/$DIF/device/../speed" 2>/dev/null)" >> /results/facts.txt
/sbin/ip addr add @GUEST@/30 dev "$DIF"
/sbin/ip link set "$DIF" up
@DUT_KNOBS@
ws_wait_ping @HOST@ 30 || fail "@HOST@ (the host namespace) does not answer ping over @DEVICE@"
