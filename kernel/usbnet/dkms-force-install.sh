#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# dkms-force-install.sh add|remove - DKMS's POST_ADD and POST_REMOVE (see
# dkms.conf). Our modules carry the same version as the stock ones they
# replace (most have none), and DKMS 3.0's version check then keeps the
# stock module: a plain "dkms install" - and every automatic rebuild for a
# new kernel - would install none of the 28 and still exit 0. Debian's DKMS
# skips that check for the modules named in modules_to_force_install/.
f=/usr/share/dkms/modules_to_force_install/wirespeed-usbnet
case "$1" in
add) mkdir -p "${f%/*}" && echo wirespeed-usbnet >"$f" ;;
remove) rm -f "$f" && { rmdir "${f%/*}" 2>/dev/null || true; } ;;
*) echo "usage: $0 add|remove" >&2; exit 2 ;;
esac
