package vm

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The usb-nic scenario's tune step (--tune ARGS): after its bench (the
// warm-up that gives doctor an interrupt count to judge), the guest runs 'wirespeed tune apply' on the USB NIC against the host
// namespace's iperf3 server, records doctor, plan, status and the RPS
// knobs before and after, runs 'tune persist', and re-plugs the USB device
// (deauthorize, authorize: usbcore disconnects and re-enumerates it, and
// cdc_ether makes a new usb0) twice: once without udevd, once with the
// host's systemd-udevd running in the guest, to see whether persist's
// udev rule brings the settings back; then 'tune revert --all' puts back
// what was there before.

// udevadmHost is the host's udevadm; systemd-udevd is the same program
// under another name.
const udevadmHost = "/usr/bin/udevadm"

// tuneArgs returns the extra 'tune apply' flags of --tune.
func tuneArgs(o Options) []string { return strings.Fields(o.Tune) }

// tuneFlag returns the value of flag name ("--pairs" or "-pairs", as
// "--x V" or "--x=V") in args, or def.
func tuneFlag(args []string, name, def string) string {
	v := def
	for i, a := range args {
		a = "-" + strings.TrimLeft(a, "-")
		if a == "-"+name && i+1 < len(args) {
			v = args[i+1]
		} else if strings.HasPrefix(a, "-"+name+"=") {
			v = strings.TrimPrefix(a, "-"+name+"=")
		}
	}
	return v
}

// tuneTime estimates a tune step: up to 4 actions, each pairs x 2
// measurements of the duration plus bench's omit and start-up, and the
// re-plugs.
func tuneTime(o Options) time.Duration {
	args := tuneArgs(o)
	pairs, err := strconv.Atoi(tuneFlag(args, "pairs", "3"))
	if err != nil || pairs < 2 {
		pairs = 3
	}
	d, err := time.ParseDuration(tuneFlag(args, "duration", "5s"))
	if err != nil || d < time.Second {
		d = 5 * time.Second
	}
	return time.Duration(4*pairs*2)*(d+6*time.Second) + 90*time.Second
}

// tuneScript is the tune step of the usb-nic script; $DIF is the device.
func tuneScript(o Options) string {
	args := []string{"/usr/bin/wirespeed", "tune", "apply", "--peer", nicHostAddr, "--json"}
	args = append(args, tuneArgs(o)...)
	var q []string
	for _, a := range args {
		q = append(q, shq(a))
	}
	var b strings.Builder
	b.WriteString(`ws_rps() {
  for f in /sys/class/net/$1/queues/rx-*/rps_cpus /sys/class/net/$1/queues/rx-*/rps_flow_cnt; do echo "$f=$(cat $f)"; done
  echo "net.core.rps_sock_flow_entries=$(cat /proc/sys/net/core/rps_sock_flow_entries)"
  echo "address=$(cat /sys/class/net/$1/address)"
}
# ws_replug deauthorizes the USB device under $DIF and authorizes it again,
# then waits for cdc_ether's new device (into DIF).
ws_replug() {
  U=$(readlink -f /sys/class/net/$DIF/device); U=${U%/*}
  [ -f $U/authorized ] || { ws note "no authorized file above $DIF"; return 1; }
  echo 0 > $U/authorized; sleep 1
  [ -e /sys/class/net/$DIF ] && ws note "$DIF still there after deauthorizing ${U##*/}"
  echo 1 > $U/authorized
  DIF=$(ws_wait_driver cdc_ether 30) || { ws note "no cdc_ether device after re-authorizing ${U##*/}"; return 1; }
  echo "replug_$1=${U##*/} -> $DIF" >> /results/facts.txt
}
ws stage tune
/usr/bin/wirespeed doctor --json "$DIF" > /results/doctor-before.json 2> /results/tune.err
/usr/bin/wirespeed tune plan --json "$DIF" > /results/tune-plan.json 2>> /results/tune.err
ws_rps "$DIF" > /results/rps-before.txt
cat /proc/interrupts > /results/interrupts-before-tune.txt
cp /proc/softirqs /results/softirqs-before-tune.txt
`)
	fmt.Fprintf(&b, "if ! %s \"$DIF\" > /results/tune-apply.json 2> /results/tune-apply.err; then\n", strings.Join(q, " "))
	b.WriteString(`  ws note "wirespeed tune apply failed: $(tail -n 3 /results/tune-apply.err | tr '\n' ' ')"
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
`)
	return b.String()
}

// tuneFiles are the run archive's extra files of a tune step: udevadm
// (systemd-udevd) and its libraries as /usr/bin/udevadm - the host's, or
// root's for a foreign architecture (GuestRoot; "" is this host) - when
// there is one.
func tuneFiles(o Options, root string) (map[string][]byte, error) {
	files := map[string][]byte{}
	if o.Tune == "" {
		return files, nil
	}
	udevadm := ""
	for _, c := range []string{udevadmHost, "/bin/udevadm"} {
		if fileExists(inRoot(root, c)) {
			udevadm = c
			break
		}
	}
	if udevadm == "" {
		return files, nil
	}
	libs, err := sharedLibsIn(root, inRoot(root, udevadm))
	if err != nil {
		return nil, fmt.Errorf("udevadm for the tune step: %w", err)
	}
	for _, p := range append([]string{udevadm}, libs...) {
		b, err := os.ReadFile(inRoot(root, p))
		if err != nil {
			return nil, err
		}
		g := strings.TrimPrefix(p, "/")
		if p == udevadm {
			g = strings.TrimPrefix(udevadmHost, "/")
		}
		files[g] = b
	}
	return files, nil
}
