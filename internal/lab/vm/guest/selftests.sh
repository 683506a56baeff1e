# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The selftests scenario's work (selftests.go), after gadget.sh made the
# NCM loop ($HIF, cdc_ncm on usbnet, at @HOST@; the gadget's end in the
# namespace "gadget" at @PEER@). It mounts the Debian root (/dev/vda,
# debroot.go), binds the run's /proc, /sys, /dev, /run and /tmp and the
# selftests (/ksft, from the run archive) into it, and runs each of @TESTS@
# (tools/testing/selftests/drivers/net/NAME.py) in a chroot with a limit of
# @LIMIT@ s, its KTAP output in /results/ksft-NAME.tap and its exit code in
# /results/ksft-exit.txt; then the per-NAPI threaded check through the
# netdev netlink family (ynl's cli.py) in /results/ksft-napi_threaded_nl.tap.
# shellcheck disable=SC2129 # one fact a line, appended where it is learnt

ws stage selftests
mkdir -p /deb
mount -t ext4 /dev/vda /deb || fail "cannot mount the Debian root (/dev/vda, ext4)"
for d in proc sys dev run tmp; do
  mount -o rbind "/$d" "/deb/$d" || fail "cannot bind /$d into the Debian root"
done
mkdir -p /deb/ksft
mount -o bind /ksft /deb/ksft || fail "cannot bind /ksft into the Debian root"
cat > /ksft/drivers/net/net.config <<EOF
NETIF=$HIF
LOCAL_V4=@HOST@
REMOTE_V4=@PEER@
REMOTE_TYPE=netns
REMOTE_ARGS=gadget
EOF
cp /ksft/drivers/net/net.config /results/ksft-net.config
echo "ksft_debian=$(cat /deb/etc/debian_version)" >> /results/facts.txt
echo "ksft_python=$(chroot /deb /usr/bin/python3 --version 2>&1)" >> /results/facts.txt
echo "ksft_channels=$(chroot /deb /usr/sbin/ethtool -l "$HIF" 2>&1 | tr '\n' ' ')" >> /results/facts.txt
# shellcheck disable=SC2043 # @TESTS@ is the list of tests, one or many
for t in @TESTS@; do
  ws stage "selftest-$t"
  chroot /deb /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    /bin/sh -c "cd /ksft/drivers/net && exec /usr/bin/timeout -k 10 @LIMIT@ /usr/bin/python3 ./$t.py" > "/results/ksft-$t.tap" 2>&1
  echo "$t $?" >> /results/ksft-exit.txt
  /sbin/ip link set "$HIF" up 2>/dev/null
done
ws stage selftest-napi_threaded_nl
chroot /deb /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root IF="$HIF" \
  /bin/sh /ksft/ws-napi-threaded.sh > /results/ksft-napi_threaded_nl.tap 2>&1
echo "napi_threaded_nl $?" >> /results/ksft-exit.txt
