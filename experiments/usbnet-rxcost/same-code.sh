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
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# each module once: one file per function of .text*, its instructions with
# addresses masked
split_funcs() { # MODULE DIR
	mkdir -p "$2"
	objdump -d --no-show-raw-insn "$1" |
		sed -E 's/^ *[0-9a-f]+:[[:space:]]*//; s/[0-9a-f]+ <([^>+]*)(\+0x[0-9a-f]+)?>/<\1>/g; s/0x[0-9a-f]+\(%rip\)/X(%rip)/g' |
		awk -v d="$2" '/^<.*>:$/ { f = $1; sub(/^</, "", f); sub(/>:$/, "", f); out = d "/" f; next }
			/^$/ { out = ""; next }
			out != "" { print > out }'
}
split_funcs "$1" "$t/a"
split_funcs "$2" "$t/b"
same=0 differ=0
while read -r f; do
	if [ ! -f "$t/b/$f" ]; then echo "only in A: $f"; differ=$((differ + 1)); continue; fi
	if [ ! -f "$t/a/$f" ]; then echo "only in B: $f"; differ=$((differ + 1)); continue; fi
	if cmp -s "$t/a/$f" "$t/b/$f"; then
		same=$((same + 1))
	else
		echo "differs: $f ($(wc -l <"$t/a/$f") -> $(wc -l <"$t/b/$f") instructions)"
		differ=$((differ + 1))
	fi
done < <(find "$t/a" "$t/b" -type f -printf '%f\n' | sort -u)
echo "same-code: $same functions the same, $differ differ ($(basename "$1"))"
