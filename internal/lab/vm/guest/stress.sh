# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The usbnet-stress scenario (stress.go's stressScript): usbnet_stress.sh
# (@USBNET_STRESS@) in a subshell with N=@N@ cycles of STEPS=@STEPS@, so
# that its failure ends in the scenario's fail (the run fails, with the
# reason) and not in an exit.
# shellcheck disable=SC2034 # N, STEPS and SYSTEM_SUSPEND are usbnet_stress.sh's

ws stage stress
( N=@N@; STEPS="@STEPS@"; SYSTEM_SUSPEND=0
@USBNET_STRESS@

) > /results/stress.txt 2>&1 || fail "usbnet stress: $(grep 'stress: FAIL' /results/stress.txt | head -n 1)"
grep 'cycles done' /results/stress.txt | sed 's/^/stress_result=/' >> /results/facts.txt
