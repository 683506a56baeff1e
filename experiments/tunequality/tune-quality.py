#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tuner quality in the host lab: an exhaustive search over the receiver's
knobs against 'wirespeed tune apply' from the same mistuned start.

  experiments/tunequality/tune-quality.py [--bin ./wirespeed] [--reps 2] [--pairs 3]
                          [--duration 2s] [--validate 6] [--out FILE]
                          [--tuner-args '--guard none']

Builds a persistent lab (wirespeed lab up --name tq --sender-offloads off
--qdisc pfifo_fast: GRO off, RPS off, threaded off), then
 1. exhaustive: every configuration of the knob space, --reps times,
    interleaved (each repetition a fresh random order); a configuration is
    set with 'tune apply --actions' (static) in the receiver namespace,
    measured with 'wirespeed bench --peer' from the sender namespace, and
    reverted with 'tune revert --all';
 2. tuner: 'tune apply --pairs N' with the candidate actions in order;
 3. validation: the exhaustive optimum and the tuner's result, measured in
    --validate interleaved pairs, for the ratio.
Needs root. Writes the raw JSON to --out; removes the lab at the end."""
import argparse, itertools, json, os, random, shutil, subprocess, sys, tempfile, time

RCV, SND = "ws-lab-tq-r", "ws-lab-tq-s"
DEV = "ws-rcv"
Q = "/sys/class/net/" + DEV + "/"


def act(id_, kind, target, value):
    return {"id": id_, "kind": kind, "device": DEV, "target": target, "value": value, "command": ""}


def knob_actions(k, v):
    if k == "gro":
        return [act("gro", "ethtool", "rx-gro", v)]
    if k == "rps":
        return [act("rps", "sysfs", Q + "queues/rx-0/rps_cpus", v)]
    if k == "threaded":
        return [act("threaded", "sysfs", Q + "threaded", v)]
    if k == "gft":
        return [act("gft", "sysfs", Q + "gro_flush_timeout", v)]
    if k == "defer":
        return [act("defer", "sysfs", Q + "napi_defer_hard_irqs", v)]
    raise ValueError(k)


# The space, in the order a configuration is applied (threaded needs GRO).
SPACE = [("gro", ["off", "on"]), ("rps", ["0", "1", "2", "3"]), ("threaded", ["0", "1"]),
         ("gft", ["0", "20000"]), ("defer", ["0", "2"])]
START = {"gro": "off", "rps": "0", "threaded": "0", "gft": "0", "defer": "0"}
# The tuner's candidates, in the order doctor would propose them.
CANDIDATES = [("gro", "on"), ("rps", "3"), ("threaded", "1"), ("gft", "20000"), ("defer", "2")]


def configs():
    names = [k for k, _ in SPACE]
    for vals in itertools.product(*[v for _, v in SPACE]):
        c = dict(zip(names, vals))
        if c["threaded"] == "1" and c["gro"] == "off":
            continue  # a veth has a NAPI (to thread) only with GRO
        yield c


def run(argv, check=True):
    p = subprocess.run(argv, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(argv), p.returncode, p.stdout, p.stderr))
    return p


class Lab:
    def __init__(self, bin_, dur):
        self.bin, self.dur = bin_, dur
        self.state = tempfile.mkdtemp(prefix="ws-tq-state-")
        self.tmp = tempfile.mkdtemp(prefix="ws-tq-")

    def tune(self, *args, check=True):
        return run(["ip", "netns", "exec", RCV, self.bin, "tune", *args, "--state-dir", self.state], check)

    def set(self, cfg):
        acts = []
        for k, _ in SPACE:
            if cfg[k] != START[k]:
                acts += knob_actions(k, cfg[k])
        if not acts:
            return
        f = os.path.join(self.tmp, "cfg.json")
        json.dump(acts, open(f, "w"))
        self.tune("apply", "--actions", f, "--json")

    def reset(self):
        self.tune("revert", "--all")

    def measure(self):
        for attempt in range(3):  # iperf3 -D resets the very first connection now and then
            try:
                return self.measure_once()
            except RuntimeError as e:
                err = e
                time.sleep(1)
        raise err

    def measure_once(self):
        p = run(["ip", "netns", "exec", SND, self.bin, "bench", "--peer", "198.18.0.2", "-t", self.dur, "--omit", "1s",
                 "--idle", "0s", "--observe", "off", "--no-inspect", "--out", "-", "--json", "--direction", "send"])
        m = json.loads(p.stdout)["runs"][0]["metrics"]
        return m["send_mbit"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="./wirespeed")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--duration", default="2s")
    ap.add_argument("--validate", type=int, default=6)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", default="experiments/tunequality/data/raw.json")
    ap.add_argument("--tuner-args", default="", help="extra 'tune apply' flags, e.g. '--guard none' (split on spaces)")
    ap.add_argument("--reuse", help="take the exhaustive search from this earlier result (same space and start)")
    a = ap.parse_args()
    bin_ = os.path.abspath(a.bin)
    rnd = random.Random(a.seed)
    run([bin_, "lab", "up", "--name", "tq", "--sender-offloads", "off", "--qdisc", "pfifo_fast"])
    out = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "args": vars(a),
           "space": SPACE, "start": START, "candidates": CANDIDATES}
    try:
        lab = Lab(bin_, a.duration)
        cfgs = list(configs())
        if a.reuse:
            out["exhaustive"] = json.load(open(a.reuse))["exhaustive"]
            out["exhaustive"]["reused_from"] = a.reuse
            cfgs = []
        # 1. exhaustive
        samples = {json.dumps(c, sort_keys=True): [] for c in cfgs}
        for rep in range(a.reps):
            order = cfgs[:]
            rnd.shuffle(order)
            for i, c in enumerate(order):
                lab.set(c)
                v = lab.measure()
                lab.reset()
                samples[json.dumps(c, sort_keys=True)].append(v)
                print("exhaustive rep %d %d/%d %s %.0f" % (rep + 1, i + 1, len(order), c, v), file=sys.stderr)
        means = {k: sum(v) / len(v) for k, v in samples.items()}
        best = max(means, key=means.get) if means else None
        if a.reuse:
            best = json.dumps(out["exhaustive"]["best"], sort_keys=True)
        else:
            out["exhaustive"] = {"trials": sum(len(v) for v in samples.values()), "configs": len(cfgs),
                                 "samples": samples, "best": json.loads(best), "best_mean_mbit": means[best]}
        # 2. tuner
        f = os.path.join(lab.tmp, "cand.json")
        json.dump([x for k, v in CANDIDATES for x in knob_actions(k, v)], open(f, "w"))
        p = lab.tune("apply", DEV, "--actions", f, "--lab-sender-ns", SND, "--pairs", str(a.pairs),
                     "--duration", a.duration, "--json", *a.tuner_args.split(), check=False)
        tj = json.loads(p.stdout)
        trials = sum(len(t["goal"]["before"]) + len(t["goal"]["after"]) for t in tj["trials"] if t.get("goal"))
        tuned = dict(START)
        for t in tj["trials"]:
            if t["verdict"] == "kept":
                tuned[t["action"]["id"]] = t["action"]["value"]
        out["tuner"] = {"exit": p.returncode, "trials": trials, "result": tj, "config": tuned, "stderr": p.stderr[-2000:]}
        lab.reset()
        # 3. validation: optimum vs tuner, interleaved
        val = {"optimum": [], "tuner": []}
        for i in range(a.validate):
            for name, c in (("optimum", json.loads(best)), ("tuner", tuned)):
                lab.set(c)
                val[name].append(lab.measure())
                lab.reset()
            print("validate %d: optimum %.0f tuner %.0f" % (i + 1, val["optimum"][-1], val["tuner"][-1]), file=sys.stderr)
        out["validation"] = val
    finally:
        run([bin_, "lab", "down", "tq"], check=False)
        if "lab" in locals():
            shutil.rmtree(lab.state, ignore_errors=True)
            shutil.rmtree(lab.tmp, ignore_errors=True)
        out["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        json.dump(out, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
