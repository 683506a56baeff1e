#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# test-kver.sh - the kernel-name rule that build.sh and dkms.conf share:
# every name below must be accepted (or refused) by both, for the family
# given (7.0-7.3 are one family, 7.x); a refusal must name the families
# that are accepted and what to do; on 6.19 say that only the NAPI + GRO
# half is missing there, and on 7.4 and later that they are untested, with
# no KSRC override. Exit 1 on the first mismatch.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
# family:name - Debian 12 stock, security, backports, Debian 13 and its
# backports, Debian sid, Raspberry Pi OS, Armbian, Ubuntu, Fedora, self-built
accept="6.1:6.1.0-56-amd64 6.1:6.1.0-28-arm64 6.1:6.1.0-56-cloud-amd64 6.1:6.1.0-56-rt-arm64
	6.12:6.12.117+deb12-amd64 6.12:6.12.107+deb12-arm64 6.12:6.12.38+deb12-rt-amd64
	6.12:6.12.9+bpo-amd64 6.12:6.12.57+deb13-arm64 6.12:6.12.57+deb13-cloud-amd64
	6.12:6.12.47+rpt-rpi-v8 6.12:6.12.47+rpt-rpi-2712 6.12:6.12.40 6.1:6.1.158-custom
	6.1:6.1.21-v8+ 6.12:6.12.9+bpo-686
	6.18:6.18.15+deb13-amd64 6.18:6.18.20+rpt-rpi-v8 6.18:6.18.20+rpt-rpi-2712
	6.18:6.18.8-current-rockchip64 6.18:6.18.8-current-bcm2711 6.18:6.18.19
	7.x:7.0.0-15-generic 7.x:7.0.0-1012-raspi 7.x:7.1.4-200.fc44.x86_64 7.x:7.3.2-200.fc44.aarch64
	7.x:7.3.4+deb13-amd64 7.x:7.3.4+deb13-arm64 7.x:7.2.13+deb14-amd64 7.x:7.1.2-edge-rockchip64"
refuse="5.15.0-91-generic 5.15.4-0-rpi4 6.6.51+rpt-rpi-v8 6.6.74+rpt-rpi-2712 6.8.0-45-generic
	6.10.3 6.17.9 6.19.2-amd64 6.19.0-rc1 6.20.0 6.180.1 6.18 6.1 6.12 7.4.1 7.4.0-rc3 7.4.0-3-generic
	7.10.2 7.30.1+deb13-amd64 8.0 8.0.1 7.3 7 6.12+deb12-amd64 6.120.1+deb12-amd64
	16.12.1+deb12-amd64 x6.12.1+deb12-amd64 17.3.4+deb13-amd64"
fail=0
bad() { echo "test-kver: FAIL: $*" >&2; fail=1; }
dkms_says() { # KVER -> dkms.conf's message, then "yes" if BUILD_EXCLUSIVE_KERNEL matches
	(
		set +u
		kernelver=$1
		# shellcheck source=kernel/usbnet/dkms.conf # (the path from the top of the tree, where make lint runs)
		. "$here/dkms.conf"
		if [[ "$1" =~ $BUILD_EXCLUSIVE_KERNEL ]]; then echo yes; else echo no; fi
	) 2>&1
}
refusal_ok() { # KVER MESSAGE -> names the families and what to do
	case "$2" in *"6.1, 6.12 and 6.18 families and the 7.x family"*"7.0, 7.1, 7.2 and 7.3"*"6.1.0-N-FLAVOUR"*"+rpt-rpi-v8"*"7.0.0-N-generic"*"What to do:"*) ;; *) return 1 ;; esac
	case "$1" in
	# newer than the tested 7.x: untested, no KSRC override, wait or boot a tested kernel
	7.[4-9]*|7.[1-9][0-9]*|[8-9].*|[1-9][0-9].*)
		case "$2" in *"tested"*"no KSRC/--ksrc override"*"Wait for a wirespeed release"*"only the NAPI + GRO half"*) ;; *) return 1 ;; esac ;;
	6.19*|6.2[0-9]*|6.1[0-9][0-9]*) case "$2" in *"only the NAPI + GRO half"*) ;; *) return 1 ;; esac ;;
	*) case "$2" in *"--ksrc"*) ;; *) return 1 ;; esac ;;
	esac
}
for fk in $accept; do
	f=${fk%%:*} k=${fk#*:}
	if out="$("$here/build.sh" --kver "$k" --check-kver 2>&1)"; then
		case "$out" in *"the $f family"*) ;; *) bad "build.sh takes $k for another family than $f: $out" ;; esac
	else
		bad "build.sh refuses $k: $out"
	fi
	[ "$(dkms_says "$k" | tail -n 1)" = yes ] || bad "dkms.conf refuses $k: $(dkms_says "$k")"
done
for k in $refuse; do
	if out="$("$here/build.sh" --kver "$k" --check-kver 2>&1)"; then
		bad "build.sh accepts $k"
	else
		refusal_ok "$k" "$out" || bad "build.sh's refusal of $k does not say what is accepted and what to do: $out"
	fi
	d="$(dkms_says "$k")"
	case "$d" in *no) ;; *) bad "dkms.conf accepts $k" ;; esac
	refusal_ok "$k" "$d" || bad "dkms.conf's refusal of $k does not say what is accepted and what to do: $d"
done
# A Debian 13 7.x kernel without its headers installed: build.sh cannot
# fetch them (not in a Debian 12 host's lists; gcc-14), so it must stop at
# once and name the command that builds for it (issue 39's documented path).
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
for k in 7.3.4+deb13-amd64 7.3.4+deb13-arm64; do
	[ -e "/lib/modules/$k/build" ] && continue
	if out="$(WIRESPEED_CACHE="$cache" "$here/build.sh" --kver "$k" 2>&1 </dev/null)"; then
		bad "build.sh --kver $k without its headers succeeded: $out"
	else
		case "$out" in *"make -C kernel/usbnet/net-next modules-7.x"*) ;;
		*) bad "build.sh --kver $k without its headers does not point to net-next's modules-7.x: $out" ;; esac
	fi
done
[ $fail = 0 ] && echo "test-kver: ok ($(echo "$accept" | wc -w) accepted, $(echo "$refuse" | wc -w) refused, build.sh and dkms.conf agree)"
exit $fail
