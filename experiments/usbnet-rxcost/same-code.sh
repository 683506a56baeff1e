#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# same-code.sh A.ko B.ko - which functions of a module compile to different
# instructions in two builds (addresses and relocation targets masked):
# for issue 33's usb-nic question, cdc_ether.ko and usbnet.ko of patches/7.x
# 1-8 against 1-11 (the frags patches). Prints one line per function that
# differs, or per function only one build has, and a summary line.
set -euo pipefail
[ $# = 2 ] || { echo "usage: same-code.sh A.ko B.ko" >&2; exit 2; }
for f in "$1" "$2"; do [ -r "$f" ] || { echo "same-code: cannot read $f" >&2; exit 2; }; done
funcs() { objdump -t "$1" | awk '$3 == "F" && $4 ~ /^\.text/ { print $NF }' | sort -u; }
body() { # MODULE FUNCTION: its instructions, addresses masked
	objdump -d --no-show-raw-insn "$1" |
		awk -v f="<$2>:" '$2 == f { p = 1; next } p && /^$/ { p = 0 } p' |
		sed -E 's/^ *[0-9a-f]+:[[:space:]]*//; s/[0-9a-f]+ <([^>+]*)(\+0x[0-9a-f]+)?>/<\1>/g; s/0x[0-9a-f]+\(%rip\)/X(%rip)/g'
}
same=0 differ=0
while read -r f; do
	if ! funcs "$2" | grep -qx -- "$f"; then echo "only in A: $f"; differ=$((differ + 1)); continue; fi
	if ! funcs "$1" | grep -qx -- "$f"; then echo "only in B: $f"; differ=$((differ + 1)); continue; fi
	if cmp -s <(body "$1" "$f") <(body "$2" "$f"); then
		same=$((same + 1))
	else
		echo "differs: $f ($(body "$1" "$f" | wc -l) -> $(body "$2" "$f" | wc -l) instructions)"
		differ=$((differ + 1))
	fi
done < <(sort -u <(funcs "$1") <(funcs "$2"))
echo "same-code: $same functions the same, $differ differ ($(basename "$1"))"
