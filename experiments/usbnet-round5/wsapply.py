#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# wsapply.py TREE PATCH...: apply patches in order, locating each hunk by its preimage with all whitespace
# ignored, and writing the hunk's exact postimage (so the tree takes the patches' idea of the base's spelling).
import sys, re, os
tree = sys.argv[1]
def norm(l): return re.sub(r'\s+', '', l)
def parse(text):
    files = []; cur = None; h = None
    for line in text.split('\n'):
        if line.startswith('diff --git'):
            cur = {'path': None, 'hunks': []}; files.append(cur); h = None
        elif cur is not None and line.startswith('+++ '):
            cur['path'] = line[6:] if line.startswith('+++ b/') else None
        elif cur is not None and line.startswith('@@'):
            m = re.match(r'@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@', line)
            h = {'old': int(m.group(1)), 'lines': []}; cur['hunks'].append(h)
        elif h is not None and (line[:1] in (' ', '-', '+') or line == ''):
            if line.startswith('-- ') and line.strip() == '--':
                h = None; continue
            h['lines'].append(line if line else ' ')
        elif line.startswith('-- '):
            h = None
    return files
for p in sys.argv[2:]:
    text = open(p).read()
    text = text.split('\n-- \n')[0]
    for f in parse(text):
        fp = os.path.join(tree, f['path'])
        lines = open(fp).read().split('\n') if os.path.exists(fp) else []
        delta = 0
        for h in f['hunks']:
            hl = h['lines']
            pre = [x[1:] for x in hl if x[0] in ' -']
            post = [x[1:] for x in hl if x[0] in ' +']
            guess = h['old'] - 1 + delta
            best = None
            for d in sorted(range(-3000, 3000), key=abs):
                i = guess + d
                if i < 0 or i + len(pre) > len(lines): continue
                if all(norm(a) == norm(b) for a, b in zip(lines[i:i+len(pre)], pre)):
                    best = i; break
            if best is None:
                sys.exit(f'{os.path.basename(p)}: hunk at {h["old"]} of {f["path"]} not found')
            exact = lines[best:best+len(pre)] == pre
            if not exact:
                print(f'{os.path.basename(p)}: {f["path"]}:{h["old"]} matched modulo whitespace')
            lines[best:best+len(pre)] = post
            delta += len(post) - len(pre) + (best - guess)
        open(fp, 'w').write('\n'.join(lines))
