# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The usbnet-stress scenario (stress.go's stressScript): usbnet_stress.sh
# (@USBNET_STRESS@) in a subshell with N=@N@ cycles of STEPS=@STEPS@ on the
# loop of one gadget function (--gadget-function, gadgetfn.go: @FUNC_NAME@,
# configfs @FUNC@ of @FUNC_MODULE@, host driver @HOSTDRV@, IDs
# @VENDOR@:@PRODUCT@), so that its failure ends in the scenario's fail (the
# run fails, with the reason) and not in an exit.
# shellcheck disable=SC2034 # N, STEPS, SYSTEM_SUSPEND and the FUNC ones are usbnet_stress.sh's

# memory before and after, caches dropped first, for a leak check
mem() { # SUFFIX
	sync
	echo 3 > /proc/sys/vm/drop_caches 2>/dev/null
	cat /proc/meminfo > "/results/meminfo-$1.txt" 2>/dev/null
	cat /proc/slabinfo > "/results/slabinfo-$1.txt" 2>/dev/null
	cat /proc/vmstat > "/results/vmstat-$1.txt" 2>/dev/null
}

ws stage stress
mem before
( N=@N@; STEPS="@STEPS@"; SYSTEM_SUSPEND=0
FUNC=@FUNC@ FUNC_NAME=@FUNC_NAME@ FUNC_MODULE=@FUNC_MODULE@ HOSTDRV=@HOSTDRV@ VENDOR=@VENDOR@ PRODUCT=@PRODUCT@
@USBNET_STRESS@

) > /results/stress.txt 2>&1 || fail "usbnet stress: $(grep 'stress: FAIL' /results/stress.txt | head -n 1)"
mem after
grep 'cycles done' /results/stress.txt | sed 's/^/stress_result=/' >> /results/facts.txt
