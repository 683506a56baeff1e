# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The usb-nic and usbdev scenarios' tune step (tune.go's tuneScript; $DIF
# is the device, bound by @DRIVER@): tune apply, persist, two re-plugs,
# revert. @TUNE_APPLY@ is the quoted 'wirespeed tune apply --peer ...'
# command of --tune, its peer the host namespace's end of the adapter.

ws_rps() {
  for f in /sys/class/net/"$1"/queues/rx-*/rps_cpus /sys/class/net/"$1"/queues/rx-*/rps_flow_cnt; do echo "$f=$(cat "$f")"; done
  echo "net.core.rps_sock_flow_entries=$(cat /proc/sys/net/core/rps_sock_flow_entries)"
  echo "address=$(cat "/sys/class/net/$1/address")"
}
# ws_replug deauthorizes the USB device under $DIF and authorizes it again,
# then waits for @DRIVER@'s new device (into DIF).
ws_replug() {
  U=$(readlink -f "/sys/class/net/$DIF/device"); U=${U%/*}
  [ -f "$U/authorized" ] || { ws note "no authorized file above $DIF"; return 1; }
  echo 0 > "$U/authorized"; sleep 1
  [ -e "/sys/class/net/$DIF" ] && ws note "$DIF still there after deauthorizing ${U##*/}"
  echo 1 > "$U/authorized"
  DIF=$(ws_wait_driver @DRIVER@ 30) || { ws note "no @DRIVER@ device after re-authorizing ${U##*/}"; return 1; }
  echo "replug_$1=${U##*/} -> $DIF" >> /results/facts.txt
}
ws stage tune
/usr/bin/wirespeed doctor --json "$DIF" > /results/doctor-before.json 2> /results/tune.err
/usr/bin/wirespeed tune plan --json "$DIF" > /results/tune-plan.json 2>> /results/tune.err
ws_rps "$DIF" > /results/rps-before.txt
cat /proc/interrupts > /results/interrupts-before-tune.txt
cp /proc/softirqs /results/softirqs-before-tune.txt
if ! @TUNE_APPLY@ "$DIF" > /results/tune-apply.json 2> /results/tune-apply.err; then
  ws note "wirespeed tune apply failed: $(tail -n 3 /results/tune-apply.err | tr '\n' ' ')"
fi
cat /proc/interrupts > /results/interrupts-after-tune.txt
cp /proc/softirqs /results/softirqs-after-tune.txt
/usr/bin/wirespeed tune status --json > /results/tune-status.json 2>> /results/tune.err
/usr/bin/wirespeed doctor --json "$DIF" > /results/doctor-after.json 2>> /results/tune.err
ws_rps "$DIF" > /results/rps-after-tune.txt
# persist writes what is in force; when the loop kept nothing there is
# nothing to persist, so doctor's actions are applied without a measurement
# (what 'tune apply' does without --peer), recorded apart, to show persist
# and the re-plug.
if ! grep -q '"kept": true' /results/tune-status.json; then
  ws note "the measured tune kept nothing; applying doctor's actions without a measurement to show persist and the re-plug"
  /usr/bin/wirespeed tune apply "$DIF" --json > /results/tune-apply-static.json 2>> /results/tune.err || ws note "static tune apply failed: $(tail -n 2 /results/tune.err | tr '\n' ' ')"
  /usr/bin/wirespeed tune status --json > /results/tune-status-static.json 2>> /results/tune.err
  ws_rps "$DIF" > /results/rps-after-static.txt
fi
ws stage tune-persist
/usr/bin/wirespeed tune persist --json > /results/tune-persist.json 2>> /results/tune.err || ws note "tune persist failed: $(tail -n 2 /results/tune.err | tr '\n' ' ')"
for f in /etc/udev/rules.d/90-wirespeed-tune.rules /etc/sysctl.d/90-wirespeed-tune.conf /usr/local/lib/wirespeed/tune-boot.sh; do
  [ -f $f ] && cp $f /results/persisted-${f##*/}
done
ws stage replug
ws_replug no-udevd && ws_rps "$DIF" > /results/rps-replug-no-udevd.txt
if [ -x /usr/bin/udevadm ]; then
  mkdir -p /run/udev /lib/systemd
  ln -sf /usr/bin/udevadm /lib/systemd/systemd-udevd
  /lib/systemd/systemd-udevd --daemon --resolve-names=never > /results/udevd.log 2>&1 || ws note "systemd-udevd did not start"
  sleep 1
  ws_replug udevd && /usr/bin/udevadm settle --timeout=10 && ws_rps "$DIF" > /results/rps-replug-udevd.txt
  /usr/bin/udevadm control --exit 2>> /results/udevd.log
else
  ws note "no udevadm in the guest (the host has none): re-plug with udevd not tried"
fi
ws stage tune-revert
/usr/bin/wirespeed tune revert --all --json > /results/tune-revert.json 2>> /results/tune.err || ws note "tune revert failed: $(tail -n 2 /results/tune.err | tr '\n' ' ')"
/usr/bin/wirespeed tune status --json > /results/tune-status-reverted.json 2>> /results/tune.err
ws_rps "$DIF" > /results/rps-after-revert.txt
