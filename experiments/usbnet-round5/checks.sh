#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# checks.sh OUT KSRC618 KSRC61 - round 5's static checks of the usbnet series, every family:
# git am on the family's base, at every prefix a build for x86_64 and arm64 (W=0, any warning
# fails) and checkpatch --strict; the staged patches on top of 7.x, 6.12 and 6.18. Writes
# OUT/checks.json: one record per check with each prefix's result, parsed from the check
# scripts' own lines (kernel/usbnet/net-next/check.sh, kernel/usbnet/check-tree.sh).
# KSRC618: a 6.18.19 tree (see README.md: how round 5 made one); KSRC61: Debian's
# linux-source-6.1 6.1.192 unpacked. Root (apt-get download, chroot).
set -euo pipefail
[ $# = 3 ] || { echo "usage: checks.sh OUT KSRC618 KSRC61" >&2; exit 2; }
out="$(mkdir -p "$1" && cd "$1" && pwd)"
k618="$(cd "$2" && pwd)" k61="$(cd "$3" && pwd)"
top="$(cd "$(dirname "$0")/../.." && pwd)"
u="$top/kernel/usbnet"
head="$(git -C "$top" rev-parse HEAD)"
[ -z "$(git -C "$top" status --porcelain -- kernel/usbnet)" ] || { echo "checks: kernel/usbnet has uncommitted changes: commit them first" >&2; exit 1; }
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
staged() { # FAMILY -> a directory with the family's series and its staged patches
	local d="$logs/staged-$1"
	mkdir -p "$d"
	cp "$u/patches/$1"/0*.patch "$u/staging/$1-frags"/0*.patch "$d/"
	rm -f "$d/0000-cover-letter.patch"
	echo "$d"
}
run() { # NAME BASE CMD...: run a check, keep its output
	local name="$1" base="$2" rc=0
	shift 2
	echo "checks: $name" >&2
	"$@" >"$logs/$name.log" 2>&1 || rc=$?
	printf '%s\t%s\t%s\n' "$name" "$base" "$rc" >>"$logs/index"
}
c612=(CACHE=/var/cache/wirespeed/c612 BASE_PKG=linux-source-6.12 BASE_VER=6.12.117-1~deb12u1
	HDR_ABI=6.12.117+deb13 HDR_VER=6.12.117-1)
run 7.x "linux-source-7.3 7.3.4-1~bpo13+1" env SERIES="$u/patches/7.x" "$u/net-next/check.sh"
run net-next "linux-source-7.3 7.3.4-1~bpo13+1" env SERIES="$u/net-next" "$u/net-next/check.sh"
run 7.x+staged "linux-source-7.3 7.3.4-1~bpo13+1" env SERIES="$(staged 7.x)" "$u/net-next/check.sh"
run 6.12 "linux-source-6.12 6.12.117-1~deb12u1, headers 6.12.117+deb13" env "${c612[@]}" SERIES="$u/patches/6.12" "$u/net-next/check.sh"
run 6.12+staged "linux-source-6.12 6.12.117-1~deb12u1, headers 6.12.117+deb13" env "${c612[@]}" SERIES="$(staged 6.12)" "$u/net-next/check.sh"
run 6.18 "6.18.19 rebuilt (README.md)" "$u/check-tree.sh" "$k618" "$u/patches/6.18"
run 6.18+staged "6.18.19 rebuilt (README.md)" "$u/check-tree.sh" "$k618" "$(staged 6.18)"
run 6.1 "linux-source-6.1 6.1.192-2" "$u/check-tree.sh" "$k61" "$u/patches/6.1"
python3 - "$logs" "$out/checks.json" "$head" <<'PY'
import json, re, sys
logs, dst, head = sys.argv[1:4]
recs = []
for line in open(f'{logs}/index'):
    name, base, rc = line.rstrip('\n').split('\t')
    text = open(f'{logs}/{name}.log').read()
    pre = []
    for m in re.finditer(r'^(\d+)/(\d+) (.*): build(.*); checkpatch --strict: (.*)$', text, re.M):
        builds = dict(x.split(':', 1) for x in m.group(4).split())
        cp = re.match(r'(\d+) errors, (\d+) warnings, (\d+) checks', m.group(5))
        pre.append({'patch': int(m.group(1)), 'of': int(m.group(2)), 'subject': m.group(3),
                    'build': {('x86_64' if a == 'amd64' else a): r for a, r in builds.items()},
                    'checkpatch': [int(cp.group(i)) for i in (1, 2, 3)] if cp else None})
    cover = re.search(r'^cover letter: checkpatch --strict: (\d+) errors, (\d+) warnings, (\d+) checks', text, re.M)
    modules = re.findall(r'^(?:check-tree: )?(?:modules|all 28 modules).*$', text, re.M)
    recs.append({'check': name, 'base': base, 'exit': int(rc), 'prefixes': pre,
                 'cover_checkpatch': [int(cover.group(i)) for i in (1, 2, 3)] if cover else None,
                 'last_line': text.strip().split('\n')[-1]})
json.dump({'wirespeed_commit': head, 'checks': recs}, open(dst, 'w'), indent=1)
print(f'checks: {len(recs)} checks -> {dst}')
PY
