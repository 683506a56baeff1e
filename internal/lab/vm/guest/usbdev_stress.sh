# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The usbdev-stress scenario (usbdev.go's devStressScript): the emulated
# adapter (driver @DRIVER@) is unplugged and plugged in again by the
# device process on the host at moments of its own (--replug-every, jittered),
# whatever is in flight; the guest meanwhile configures each new @DRIVER@
# device, runs iperf3 both ways against @HOST@ and takes a disruption of its
# own in turn (STEPS: idle, flap, mtu, reload; loadflap is a link flap
# while iperf3 sends from the guest), until it has seen @N@ new network
# devices of the driver (an unplug or a reload makes one).
# Then the link must carry a ping again. The console guards catch any
# WARNING, BUG, KASAN report, Oops or lockup.

ws stage usbdev-stress
say() { echo "<4>usbdev-stress: $*" > /dev/kmsg; echo "usbdev-stress: $*"; }
N="@N@" MAXS="@MAXS@"
set -- @STEPS@
NSTEPS=$#
# step I: the Ith word of the steps (from 0)
step() { i=$1; shift; while [ "$i" -gt 0 ]; do i=$((i - 1)); shift; done; echo "$1"; }
seen=0 last="" cycle=0
deadline=$(($(date +%s) + MAXS))
while [ "$seen" -lt "$N" ] && [ "$(date +%s)" -lt "$deadline" ]; do
	DIF=$(ws_wait_driver @DRIVER@ 20) || continue
	id="$DIF:$(cat "/sys/class/net/$DIF/ifindex" 2>/dev/null)"
	if [ "$id" != "$last" ]; then
		seen=$((seen + 1))
		last=$id
		say "new device $seen: $DIF"
	fi
	/sbin/ip addr add @GUEST@/30 dev "$DIF" 2> /dev/null
	/sbin/ip link set "$DIF" up 2> /dev/null
	cycle=$((cycle + 1))
	case $(step $((cycle % NSTEPS)) @STEPS@) in
	flap) /sbin/ip link set "$DIF" down 2> /dev/null; /sbin/ip link set "$DIF" up 2> /dev/null ;;
	mtu) /sbin/ip link set "$DIF" mtu 1400 2> /dev/null; /sbin/ip link set "$DIF" mtu 1500 2> /dev/null ;;
	reload) rmmod @DRIVER@ 2> /dev/null && insmod /lib/modules/ws/@DRIVER@.ko ;;
	loadflap)
		timeout -s KILL 8 iperf3 -c @HOST@ -t 3 -P 2 --connect-timeout 2000 > /dev/null 2>&1 &
		sleep 2
		say "link down under load ($(cat "/sys/class/net/$DIF/carrier" 2>/dev/null) carrier)"
		/sbin/ip link set "$DIF" down 2> /dev/null; /sbin/ip link set "$DIF" up 2> /dev/null
		wait
		;;
	esac
	timeout -s KILL 6 iperf3 -c @HOST@ -t 1 -P 2 --connect-timeout 2000 > /dev/null 2>&1
	timeout -s KILL 6 iperf3 -c @HOST@ -t 1 -P 2 -R --connect-timeout 2000 > /dev/null 2>&1
done
echo "plugins_seen=$seen" >> /results/facts.txt
echo "stress_cycles=$cycle" >> /results/facts.txt
[ "$seen" -ge "$N" ] || fail "saw $seen new @DRIVER@ devices in $MAXS s, wanted $N"
ws_wait_driver @DRIVER@ 30 > /dev/null || fail "no @DRIVER@ device after the stress"
# The device process goes on unplugging: each try takes the driver's
# device of the moment and configures it (a new one has no address).
end=$(($(date +%s) + 30)) ok=""
while [ -z "$ok" ] && [ "$(date +%s)" -lt "$end" ]; do
	DIF=$(ws_wait_driver @DRIVER@ 5) || continue
	/sbin/ip addr add @GUEST@/30 dev "$DIF" 2> /dev/null
	/sbin/ip link set "$DIF" up 2> /dev/null
	if ping -c 1 -W 1 @HOST@ > /dev/null 2>&1; then ok=1; else sleep 1; fi
done
[ -n "$ok" ] || fail "@HOST@ does not answer over @DRIVER@ after the stress (30 s)"
say "done: $seen new devices, $cycle cycles, ping ok"
