#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tree-6.18.sh MIRROR OUT - the 6.18.19 tree round 5 checked patches/6.18 on (README.md,
# "Bases"): kernel.org and Debian serve no 6.18 source here, so it starts from a public
# 6.18.19 mirror (MIRROR: a git directory, e.g. the library's fetch of
# github:6952350/linux-6.18.y at f3fce0151), takes upstream's BQL out of usbnet.c/usbnet.h,
# gives every context the series touches the series' own spelling (wsapply.py: each hunk
# placed with whitespace ignored, its exact post-image written), reverses the series out
# again, and checks that it then applies with git am exactly. Blobs the mirror lacks
# (large generated headers) are skipped; their Kconfig and Makefiles are kept.
set -euo pipefail
[ $# = 2 ] || { echo "usage: tree-6.18.sh MIRROR OUT" >&2; exit 2; }
m="$1" out="$2" here="$(cd "$(dirname "$0")" && pwd)"
series="$here/../../kernel/usbnet/patches/6.18"
[ ! -e "$out" ] || { echo "tree-6.18: $out exists" >&2; exit 1; }
mkdir -p "$out"
# take PATH whole, or, when the mirror lacks a blob under it, each entry below it
take() {
	if git -C "$m" archive HEAD -- "$1" 2>/dev/null | tar -x -C "$out" 2>/dev/null &&
		git -C "$m" archive HEAD -- "$1" >/dev/null 2>&1; then
		return
	fi
	if [ "$(git -C "$m" cat-file -t "HEAD:$1")" = tree ]; then
		local e
		git -C "$m" ls-tree --name-only "HEAD:$1" | while IFS= read -r e; do take "$1/$e"; done
	else
		echo "tree-6.18: the mirror lacks $1: skipped" >&2
	fi
}
git -C "$m" ls-tree --name-only HEAD | while IFS= read -r e; do take "$e"; done
u="$out/drivers/net/usb/usbnet.c" h="$out/include/linux/usb/usbnet.h"
python3 - "$u" "$h" <<'PY'
import sys
u, h = sys.argv[1:3]
s = open(u).read()
for a, b in [("\tcancel_work_sync(&dev->kevent);\n\n\tnetdev_reset_queue(net);\n\n\tif (!pm)", "\tcancel_work_sync(&dev->kevent);\n\n\tif (!pm)"),
             ("\tset_bit(EVENT_DEV_OPEN, &dev->flags);\n\tnetdev_reset_queue(net);\n", "\tset_bit(EVENT_DEV_OPEN, &dev->flags);\n"),
             ("\t\t__usbnet_queue_skb(&dev->txq, skb, tx_start);\n\t\tnetdev_sent_queue(net, skb->len);\n", "\t\t__usbnet_queue_skb(&dev->txq, skb, tx_start);\n"),
             ("\tunsigned int bytes_compl = 0, pkts_compl = 0;\n", ""),
             ("\t\tcase tx_done:\n\t\t\tbytes_compl += skb->len;\n\t\t\tpkts_compl++;\n", "\t\tcase tx_done:\n"),
             ("\tspin_lock_bh(&dev->bql_spinlock);\n\tnetdev_completed_queue(dev->net, pkts_compl, bytes_compl);\n\tspin_unlock_bh(&dev->bql_spinlock);\n\n", ""),
             ("\tspin_lock_init(&dev->bql_spinlock);\n", ""),
             ("\t\t\t\t__skb_queue_tail(&dev->txq, skb);\n\t\t\t\tnetdev_sent_queue(dev->net, skb->len);\n", "\t\t\t\t__skb_queue_tail(&dev->txq, skb);\n")]:
    assert s.count(a) == 1, a
    s = s.replace(a, b)
open(u, 'w').write(s)
t = open(h).read()
assert t.count("\tspinlock_t\t\tbql_spinlock;\n") == 1
open(h, 'w').write(t.replace("\tspinlock_t\t\tbql_spinlock;\n", ""))
PY
ps=()
for p in "$series"/0*.patch; do
	case "$(basename "$p")" in 0000-*) ;; *) ps+=("$p") ;; esac
done
python3 "$here/wsapply.py" "$out" "${ps[@]}"
for ((i = ${#ps[@]} - 1; i >= 0; i--)); do
	patch -R -p1 -F0 -s --no-backup-if-mismatch -d "$out" <"${ps[$i]}"
done
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
cp -a "$out/drivers" "$out/include" "$t/" 2>/dev/null
git -C "$t" init -q && git -C "$t" add -A && git -C "$t" -c user.name=t -c user.email=t@invalid commit -qm base
git -C "$t" -c user.name=t -c user.email=t@invalid am -q "${ps[@]}" ||
	{ echo "tree-6.18: the series does not apply exactly to the rebuilt tree" >&2; exit 1; }
echo "tree-6.18: $out: the ${#ps[@]} patches of patches/6.18 apply to it with git am"
