# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The usb-gadget and bql scenarios' topology (scenario_shell.go's
# gadgetScript): a configfs gadget with one network function on dummy_hcd
# (--gadget-function, gadgetfn.go: @FUNC@ of @FUNC_MODULE@), its end in
# the gadget namespace at @PEER@, the host's end (@HOSTDRV@ on usbnet) at
# @HOST@; @DUT_KNOBS@ is dutKnobs' lines for $HIF. gadgetScript adds
# bql.sh for bql, then the bench.
# shellcheck disable=SC2129 # one fact a line, appended where it is learnt

ws stage gadget
G=/sys/kernel/config/usb_gadget/ws
mkdir -p $G || fail "configfs has no usb_gadget (is libcomposite loaded?)"
echo @VENDOR@ > $G/idVendor
echo @PRODUCT@ > $G/idProduct
mkdir -p $G/strings/0x409
echo wirespeed > $G/strings/0x409/manufacturer
echo "wirespeed @FUNC_NAME@ loopback" > $G/strings/0x409/product
echo 0001 > $G/strings/0x409/serialnumber
mkdir -p $G/configs/c.1 $G/functions/@FUNC@ || fail "cannot create the @FUNC_NAME@ function @FUNC@ (@FUNC_MODULE@ missing?)"
echo 500 > $G/configs/c.1/MaxPower
ln -s $G/functions/@FUNC@ $G/configs/c.1/
# shellcheck disable=SC2012 # UDC names are plain (dummy_udc.0)
UDC=$(ls /sys/class/udc | head -n 1)
[ -n "$UDC" ] || fail "no UDC: dummy_hcd did not register dummy_udc"
echo "$UDC" > $G/UDC || fail "cannot bind the gadget to $UDC"
GIF=$(cat $G/functions/@FUNC@/ifname)
HIF=$(ws_wait_driver @HOSTDRV@ 20) || fail "--gadget-function @FUNC_NAME@: no @HOSTDRV@ network device appeared within 20 s: the host side did not bind ($(ws_net_drivers))"
echo "gadget_if=$GIF" >> /results/facts.txt
echo "dut_if=$HIF" >> /results/facts.txt
echo "dut_driver=@HOSTDRV@" >> /results/facts.txt
echo "gadget_function=@FUNC_NAME@" >> /results/facts.txt
echo "usb_speed=$(cat "/sys/class/udc/$UDC/current_speed" 2>/dev/null)" >> /results/facts.txt
/sbin/ip netns add gadget || fail "ip netns add gadget"
/sbin/ip link set "$GIF" netns gadget || fail "cannot move $GIF into the gadget namespace"
/sbin/ip -n gadget link set lo up
/sbin/ip -n gadget addr add @PEER@/30 dev "$GIF"
/sbin/ip -n gadget link set "$GIF" up
/sbin/ip addr add @HOST@/30 dev "$HIF"
/sbin/ip link set "$HIF" up
@DUT_KNOBS@
/sbin/ip netns exec gadget /usr/bin/iperf3 -s -D -B @PEER@ || fail "iperf3 -s in the gadget namespace"
if ! ws_wait_ping @PEER@ 10; then
  # Seen with NCM in about 1 of 10 boots: the link stays silent after
  # binding. Record its state, then reopen both ends (cdc_ncm resubmits
  # its interrupt URB, f_ncm sends a new connection notification).
  { /sbin/ip -s link show "$HIF"; /sbin/ip -n gadget -s link show "$GIF"; cat "/sys/class/net/$HIF/carrier"; } > /results/link-stuck.txt 2>&1
  ws note "no answer from the gadget side within 10 s; reopening the @FUNC_NAME@ link"
  /sbin/ip link set "$HIF" down; /sbin/ip -n gadget link set "$GIF" down
  sleep 1
  /sbin/ip -n gadget link set "$GIF" up; /sbin/ip link set "$HIF" up
  ws_wait_ping @PEER@ 20 || fail "@PEER@ (gadget side) does not answer ping over the @FUNC_NAME@ link, also after reopening it (see link-stuck.txt)"
fi
