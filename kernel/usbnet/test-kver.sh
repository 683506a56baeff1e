#!/bin/bash
# test-kver.sh - the kernel-name rule that build.sh and dkms.conf share:
# every name below must be accepted (or refused) by both, and a refusal
# must name the kernels that are accepted. Exit 1 on the first mismatch.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
accept="6.12.117+deb12-amd64 6.12.107+deb12-arm64 6.12.38+deb12-rt-amd64 6.12.57+deb12-cloud-arm64
	6.12.9+bpo-amd64 6.12.12+bpo-arm64 6.12.9+bpo-cloud-amd64 6.12.9+bpo-rt-arm64"
refuse="6.1.0-28-amd64 6.18.44-fc-v657 6.12.117+deb13-amd64 6.12.117+deb12-amd64-unsigned
	6.12+deb12-amd64 6.12.9+bpo-686 6.12.9-amd64 6.120.1+deb12-amd64 16.12.1+deb12-amd64 x6.12.1+deb12-amd64"
fail=0
bad() { echo "test-kver: FAIL: $*" >&2; fail=1; }
dkms_says() { # KVER -> "yes" if dkms.conf's BUILD_EXCLUSIVE_KERNEL matches, and its message
	( set +u; kernelver=$1; . "$here/dkms.conf"; [[ "$1" =~ $BUILD_EXCLUSIVE_KERNEL ]] && echo yes || echo no ) 2>&1
}
for k in $accept; do
	out="$("$here/build.sh" --kver "$k" --check-kver 2>&1)" || bad "build.sh refuses $k: $out"
	[ "$(dkms_says "$k" | tail -n 1)" = yes ] || bad "dkms.conf refuses $k: $(dkms_says "$k")"
done
for k in $refuse; do
	if out="$("$here/build.sh" --kver "$k" --check-kver 2>&1)"; then
		bad "build.sh accepts $k"
	else
		case "$out" in *"6.12.N+deb12-FLAVOUR"*"6.12.N+bpo-FLAVOUR"*) ;; *) bad "build.sh's refusal of $k does not name the accepted kernels: $out" ;; esac
	fi
	d="$(dkms_says "$k")"
	case "$d" in *no) ;; *) bad "dkms.conf accepts $k" ;; esac
	case "$d" in *"6.12.N+deb12-FLAVOUR"*"6.12.N+bpo-FLAVOUR"*) ;; *) bad "dkms.conf's refusal of $k does not name the accepted kernels: $d" ;; esac
done
[ $fail = 0 ] && echo "test-kver: ok ($(echo $accept | wc -w) accepted, $(echo $refuse | wc -w) refused, build.sh and dkms.conf agree)"
exit $fail
