# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Run inside stress.sh (stress.go); the guest gets what follows the empty line.

# usbnet stress: the guest side of 'wirespeed lab vm usbnet-stress' (busybox
# sh, after /ws/lib.sh; the scenario sets N, STEPS and SYSTEM_SUSPEND, and
# the gadget function: FUNC (its configfs name), FUNC_NAME, FUNC_MODULE, HOSTDRV (the
# host's usbnet driver for it), VENDOR and PRODUCT), on the dummy_hcd
# gadget loop (NCM and cdc_ncm by default): N cycles, each under iperf3
# traffic in both directions, of one disruption in turn (STEPS names them,
# in order):
#   unbind/rebind the gadget (the host's $HOSTDRV device goes and comes back),
#   link down/up, MTU change and back, $HOSTDRV unload/reload (every other
#   time usbnet too), and runtime suspend/resume with a packet sent while the
#   device sleeps (usbnet defers it and submits it at resume: the BQL path
#   upstream crashed on); with SYSTEM_SUSPEND=1 also a system suspend
#   (s2idle, woken by the RTC alarm) every tenth cycle; and downsuspend:
#   runtime suspend with the interface down, which must finish within 5 s
#   (with FLAG_AVOID_UNLINK_URBS, RX URBs are still out when the interface
#   goes down and complete into usbnet's done queue while it is down).
# After each cycle the link must carry a ping again. The lab's console guard
# catches any WARNING, BUG, Oops, panic or lockup.
#
# The scenario loads dummy_hcd at high speed (dummy_hcd cannot suspend a
# SuperSpeed port), libcomposite, the function's usb_f_* and $HOSTDRV from
# /lib/modules/ws.
N=${N:-30}
FUNC=${FUNC:-ncm.usb0} FUNC_NAME=${FUNC_NAME:-ncm} FUNC_MODULE=${FUNC_MODULE:-usb_f_ncm} HOSTDRV=${HOSTDRV:-cdc_ncm}
VENDOR=${VENDOR:-0x1d6b} PRODUCT=${PRODUCT:-0x0104}
STEPS=${STEPS:-rebind linkflap mtu reload suspend downsuspend}
M=/lib/modules/ws
G=/sys/kernel/config/usb_gadget/ws
GADDR=198.18.4.2
HADDR=198.18.4.1

die() {
	echo "stress: FAIL: $*"
	echo "--- host"; /sbin/ip -s link; /sbin/ip addr; /sbin/ip neigh
	echo "--- gadget"; /sbin/ip -n gadget -s link; /sbin/ip -n gadget addr; /sbin/ip -n gadget neigh
	exit 1
}
# progress on the console (through the kernel log), so a hang shows where
say() { echo "<4>stress: $*" > /dev/kmsg; echo "stress: $*"; }

grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config
mkdir -p $G/strings/0x409 $G/configs/c.1 "$G/functions/$FUNC" || die "configfs gadget with $FUNC (libcomposite and $FUNC_MODULE loaded?)"
echo "$VENDOR" > $G/idVendor
echo "$PRODUCT" > $G/idProduct
echo wirespeed > $G/strings/0x409/manufacturer
echo "wirespeed $FUNC_NAME stress" > $G/strings/0x409/product
# remote wakeup, so that the host driver may autosuspend the link
echo 0xa0 > $G/configs/c.1/bmAttributes
ln -s "$G/functions/$FUNC" $G/configs/c.1/ 2>/dev/null
# shellcheck disable=SC2012 # UDC names are plain (dummy_udc.0)
UDC=$(ls /sys/class/udc | head -n 1)
[ -n "$UDC" ] || die "no UDC"
HIF=""
bind() {
	echo "$UDC" > $G/UDC || die "bind gadget"
}

# The gadget's network device exists from the first bind on and survives
# unbind/rebind; it lives in its own namespace.
bind
GIF=$(cat "$G/functions/$FUNC/ifname")
/sbin/ip netns add gadget
/sbin/ip link set "$GIF" netns gadget || die "move $GIF to the gadget namespace"
/sbin/ip -n gadget link set lo up
/sbin/ip -n gadget addr add $GADDR/30 dev "$GIF"
/sbin/ip -n gadget link set "$GIF" up
/sbin/ip netns exec gadget /usr/bin/iperf3 -s -D -B $GADDR
host_up() { # find the (new) $HOSTDRV device and give it its address
	# (lib.sh's helpers use $i: the cycle counter is $cyc)
	t=0
	while :; do
		HIF=$(ws_wait_driver "$HOSTDRV" 20) || die "no $HOSTDRV device within 20 s (the $FUNC_NAME function; bound: $(ws_net_drivers))"
		/sbin/ip link set "$HIF" up 2>/dev/null && break
		t=$((t + 1))
		[ $t -lt 50 ] || die "cannot bring $HIF up"
		usleep 100000 # still registering or being renamed
	done
	/sbin/ip addr flush dev "$HIF" 2>/dev/null
	/sbin/ip addr add $HADDR/30 dev "$HIF" 2>/dev/null
	ws_wait_ping $GADDR 10 && return
	# The gadget side (f_ncm on dummy_hcd) sometimes stops moving data
	# after a rebind under load, with stock usbnet as much as with ours:
	# either the host's URBs complete but the gadget receives nothing, or
	# the gadget receives but transmits nothing. Rebind for those cases
	# only; anything else (the gadget sends and the host does not
	# receive) is the host's, and fails.
	stat() { echo "$(cat "/sys/class/net/$HIF/statistics/tx_packets") $(cat "/sys/class/net/$HIF/statistics/rx_packets")" \
		"$(/sbin/ip netns exec gadget cat "/sys/class/net/$GIF/statistics/rx_packets" "/sys/class/net/$GIF/statistics/tx_packets")"; }
	# shellcheck disable=SC2046 # the four counts, one argument each
	set -- $(stat)
	htx=$1 hrx=$2 grx=$3 gtx=$4
	ping -c 3 -W 1 $GADDR > /dev/null 2>&1
	# shellcheck disable=SC2046 # as above
	set -- $(stat)
	counts="host tx $htx->$1 rx $hrx->$2, gadget rx $grx->$3 tx $gtx->$4"
	if [ "${stalls:-0}" -lt 5 ] && { { [ "$1" -gt "$htx" ] && [ "$3" -eq "$grx" ]; } ||
		{ [ "$3" -gt "$grx" ] && [ "$4" -eq "$gtx" ]; }; }; then
		stalls=$((${stalls:-0} + 1))
		say "cycle $cyc: gadget side stalled ($counts); rebinding"
		echo "" > $G/UDC
		sleep 0.5
		bind
		host_up
		return
	fi
	diagnose
	# An answer to the diagnosis' ping (a few seconds after the window)
	# is a slow recovery, not a lost link or poll: counted, and the run
	# goes on, up to 5 times. Seen on the arm64 Pi 3-class guest after a
	# rebind under a loaded host, with stock usbnet as with ours.
	got=$(sed -n 's/.* \([0-9][0-9]*\) packets received.*/\1/p' /tmp/diag-ping.txt)
	if [ "${got:-0}" -gt 0 ] && [ "${slow:-0}" -lt 5 ]; then
		slow=$((${slow:-0} + 1))
		say "cycle $cyc: slow recovery after $what: no ping within the window ($counts), the diagnosis ping answered"
		return
	fi
	die "no ping over $HIF after cycle $cyc ($what): $counts"
}
# Before failing the ping check: is the host polling? observe (eBPF on the
# napi_poll and netif_rx tracepoints) for 4 s while pinging once more, and
# the counters around it. A usbnet with NAPI that shows no polls while the
# gadget transmits is a host that lost its poll; polls that find nothing
# point at the bus or the gadget side. (Both sides' devices are named usb0:
# the gadget's delivers through netif_rx.)
diagnose() {
	echo "--- diagnosis: counters, then wirespeed observe for 4 s while pinging"
	d0=$(stat)
	/usr/bin/wirespeed observe --duration 4s > /tmp/diag-observe.txt 2>&1 &
	op=$!
	sleep 1
	ping -c 3 -W 1 $GADDR > /tmp/diag-ping.txt 2>&1
	wait $op
	echo "counters (host tx rx, gadget rx tx): before $d0, after $(stat)"
	tail -n 2 /tmp/diag-ping.txt
	n=/sys/class/net/$HIF
	echo "host $HIF: carrier $(cat "$n/carrier" 2>/dev/null) operstate $(cat "$n/operstate") carrier_changes $(cat "$n/carrier_changes")" \
		"(up $(cat "$n/carrier_up_count" 2>/dev/null), down $(cat "$n/carrier_down_count" 2>/dev/null))"
	cat /tmp/diag-observe.txt
}
traffic() { # bidirectional load in the background for $1 seconds
	/usr/bin/iperf3 -c $GADDR -t "$1" -P 2 > /dev/null 2>&1 &
	/usr/bin/iperf3 -c $GADDR -t "$1" -P 1 -R > /dev/null 2>&1 &
	sleep 1
}
quiet() { # wait for the load to end
	for p in $(pidof iperf3); do
		[ -r "/proc/$p/cmdline" ] && grep -q -- '-c' "/proc/$p/cmdline" && kill "$p" 2>/dev/null
	done
	sleep 0.3
}
reload_usbnet=0
unload() { # the module may stay busy for a moment after its user went
	t=0
	until rmmod "$1" 2>/dev/null; do
		t=$((t + 1))
		[ $t -lt 50 ] || die "rmmod $1"
		usleep 100000
	done
}
count() { eval "n_$1=\$((\${n_$1:-0} + 1))"; }

cyc=0 what=start
host_up
echo "stress: link up on $HIF, $N cycles"
threaded=$(cat "/sys/class/net/$HIF/threaded")
echo "stress: $HIF threaded=$threaded"
# the lab build of cdc_ncm with FLAG_AVOID_UNLINK_URBS says so (kernel/usbnet/lab)
if dmesg | grep -q 'lab: FLAG_AVOID_UNLINK_URBS'; then avoid=1; else avoid=0; fi
echo "stress: FLAG_AVOID_UNLINK_URBS=$avoid steps: $STEPS"
step() { # STEP... -> the one for cycle $cyc, in turn
	k=$(( (cyc - 1) % $# + 1 ))
	eval "echo \${$k}"
}
autosuspend() { # UDEV -> runtime_status after waiting up to 5 s for suspended
	echo enabled > "$1/power/wakeup"
	echo 200 > "$1/power/autosuspend_delay_ms"
	echo auto > "$1/power/control"
	j=0
	while [ $j -lt 50 ] && [ "$(cat "$1/power/runtime_status")" != suspended ]; do
		usleep 100000; j=$((j + 1))
	done
	cat "$1/power/runtime_status"
}
while [ $cyc -lt "$N" ]; do
	cyc=$((cyc + 1))
	say "cycle $cyc"
	# shellcheck disable=SC2086 # the steps, one argument each
	what=$(step $STEPS)
	case $what in
	rebind)
		traffic 3
		echo "" > $G/UDC
		sleep 0.5
		quiet
		bind
		;;
	linkflap)
		traffic 3
		/sbin/ip link set "$HIF" down
		sleep 0.3
		/sbin/ip link set "$HIF" up
		quiet
		;;
	mtu)
		traffic 3
		/sbin/ip link set "$HIF" mtu 1400 || die "mtu 1400"
		sleep 0.5
		/sbin/ip link set "$HIF" mtu 1500 || die "mtu 1500"
		quiet
		;;
	reload)
		traffic 3
		unload "$HOSTDRV"
		reload_usbnet=$((reload_usbnet + 1))
		if [ $((reload_usbnet % 2)) -eq 0 ]; then
			what=reload_usbnet
			# cdc_ncm and rndis_host use cdc_ether's helpers: it
			# holds usbnet too
			holders=$(ls /sys/module/usbnet/holders)
			for h in $holders; do unload "$h"; done
			unload usbnet
			insmod $M/usbnet.ko || die "insmod usbnet"
			for h in $holders; do insmod "$M/$h.ko" || die "insmod $h"; done
		fi
		[ -d "/sys/module/$HOSTDRV" ] || insmod "$M/$HOSTDRV.ko" || die "insmod $HOSTDRV"
		quiet
		;;
	suspend)
		udev=$(readlink -f "/sys/class/net/$HIF/device/..")
		st=$(autosuspend "$udev")
		if [ "$st" = suspended ]; then
			count runtime_suspended
			# sent while asleep: deferred, submitted at resume
			ping -c 3 -W 2 $GADDR > /dev/null 2>&1
		else
			echo "stress: cycle $cyc: device did not autosuspend ($st)"
		fi
		echo on > "$udev/power/control"
		if [ "${SYSTEM_SUSPEND:-0}" = 1 ] && [ $((cyc % 10)) -eq 0 ] && grep -q freeze /sys/power/state 2>/dev/null &&
			[ -w /sys/class/rtc/rtc0/wakealarm ]; then
			traffic 6
			echo 0 > /sys/class/rtc/rtc0/wakealarm
			echo +2 > /sys/class/rtc/rtc0/wakealarm
			if echo freeze > /sys/power/state; then count system_suspend; fi
			quiet
		fi
		;;
	downsuspend)
		# traffic first, so that URBs are out when the link goes down
		traffic 2
		quiet
		/sbin/ip link set "$HIF" down
		udev=$(readlink -f "/sys/class/net/$HIF/device/..")
		st=$(autosuspend "$udev")
		# "suspending" that does not end is the hang: usbnet_suspend()
		# waiting for a done queue nothing drains
		[ "$st" = suspended ] || die "runtime suspend with $HIF down did not finish within 5 s ($st)"
		count down_suspended
		echo on > "$udev/power/control"
		/sbin/ip link set "$HIF" up
		;;
	*) die "unknown step $what" ;;
	esac
	count "$what"
	host_up
	say "cycle $cyc $what ok"
done
echo "stress: $N cycles done: rebind=${n_rebind:-0} linkflap=${n_linkflap:-0} mtu=${n_mtu:-0}" \
	"reload=${n_reload:-0} reload_usbnet=${n_reload_usbnet:-0} suspend=${n_suspend:-0}" \
	"runtime-suspended=${n_runtime_suspended:-0} system-suspend=${n_system_suspend:-0}" \
	"downsuspend=${n_downsuspend:-0} down-suspended=${n_down_suspended:-0}" \
	"avoid-unlink-urbs=$avoid gadget-stalls=${stalls:-0} slow-recoveries=${slow:-0}"
