#!/usr/bin/env python3
"""bench/scale.sh's helper (python3 standard library only).

  scale.py generate FILE TRUTH [--big]
      Writes a kbench.samples/1 set to FILE and the steps it planted to TRUTH
      (JSON: metric name -> index of the first stepped version).
      Default (set "scale"): 2,000 metrics x 100 identifiers (v0..v99, in
      version order) x 10 samples, values only, about 43 MB.
      --big (set "scale-big"): 3,600 metrics x 100 x 10 samples, each with
      value, iterations, at_ms and round, about 284 MB.
      --dash (set "scale-dash"): 10,000 metrics x 100 x 10 samples = 10 M,
      values only, about 215 MB: issue 17's dashboard set.
      Every tenth metric steps by +5 % at a version drawn (seeded) from
      v10..v90; every sample carries Gaussian noise of 1 % around its
      metric's level. Seeded: the same files every time.
  scale.py measure OUT -- COMMAND...
      Runs COMMAND under `/usr/bin/time -v` (its stdout discarded, its
      stderr kept in OUT.err) and appends "wall_s peak_rss_kb" to OUT;
      fails with COMMAND's stderr when it fails.
  scale.py summary OUT
      Prints "median_s max_peak_rss_mb runs" of OUT's lines.
  scale.py history-accuracy TRUTH JSON
      Scores a `kbench history --format json` report against TRUTH.
  scale.py compare-accuracy TRUTH JSON
      Scores a `kbench compare --format json` report (v99 against v0).
  scale.py machine
      Prints "nproc, CPU model" from /proc/cpuinfo.
"""

import json
import os
import random
import re
import statistics
import subprocess
import sys

VERSIONS = 100
SAMPLES = 10
STEP = 1.05
NOISE = 0.01


def metric_name(m):
    return f"metric-{m:04d}"


# Per kind of set: (name, metrics, samples with every field).
KINDS = {
    "": ("scale", 2000, False),
    "--big": ("scale-big", 3600, True),
    "--dash": ("scale-dash", 10000, False),
}


def generate(path, truth_path, kind):
    set_name, metrics, big = KINDS[kind]
    rng = random.Random(17)
    levels = [rng.uniform(10.0, 10000.0) for _ in range(metrics)]
    steps = {metric_name(m): rng.randint(10, 90) for m in range(0, metrics, 10)}
    names = [metric_name(m) for m in range(metrics)]
    tests = [
        {"test": n, "unit": "us", "direction": "lower" if m % 2 else "higher"}
        for m, n in enumerate(names)
    ]
    with open(path, "w") as out:
        out.write('{"schema": "kbench.samples/1", "result_set": "%s", "tests": %s, "identifiers": ['
                  % (set_name, json.dumps(tests)))
        for v in range(VERSIONS):
            out.write(", " if v else "")
            out.write('{"name": "v%d", "samples": {' % v)
            parts = []
            for m, name in enumerate(names):
                at = steps.get(name)
                level = levels[m] * (STEP if at is not None and v >= at else 1.0)
                values = [level * rng.gauss(1.0, NOISE) for _ in range(SAMPLES)]
                if big:
                    samples = ", ".join(
                        '{"value": %.6g, "iterations": 10000, "at_ms": %d, "round": %d}'
                        % (x, 1764465900000 + v * 100000 + k, k // 5)
                        for k, x in enumerate(values))
                else:
                    samples = ", ".join('{"value": %.6g}' % x for x in values)
                parts.append('"%s": [%s]' % (name, samples))
            out.write(", ".join(parts))
            out.write("}}")
        out.write("]}\n")
    with open(truth_path, "w") as out:
        json.dump(steps, out)


def measure(out_path, command):
    err_path = out_path + ".err"
    with open(err_path, "w") as err:
        status = subprocess.run(["/usr/bin/time", "-v"] + command,
                                stdout=subprocess.DEVNULL, stderr=err).returncode
    text = open(err_path).read()
    if status != 0:
        sys.exit(f"scale.py: {' '.join(command)} failed (status {status}):\n{text}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    with open(out_path, "a") as out:
        out.write(f"{seconds} {rss}\n")


def summary(out_path):
    rows = [line.split() for line in open(out_path) if line.strip()]
    wall = statistics.median(float(r[0]) for r in rows)
    rss = max(int(r[1]) for r in rows) / 1024
    # Sub-second times (the dashboard's GETs) keep their milliseconds.
    print(f"{wall:.{3 if wall < 1 else 2}f} {rss:.0f} {len(rows)}")


def history_accuracy(truth_path, report_path):
    """Stepped metrics with a change point at their step, out of all stepped,
    and change points anywhere else (false ones)."""
    truth = json.load(open(truth_path))
    report = json.load(open(report_path))
    found = false = 0
    for metric in report["metrics"]:
        at = truth.get(metric["test"])
        for change in metric["changes"]:
            if at is not None and change["index"] == at:
                found += 1
            else:
                false += 1
    print(f"{found}/{len(truth)} steps, {false} false")


def compare_accuracy(truth_path, report_path):
    """Stepped metrics judged a regression or improvement, out of all stepped,
    and unstepped metrics judged so (false ones)."""
    truth = json.load(open(truth_path))
    report = json.load(open(report_path))
    found = false = 0
    for metric in report["metrics"]:
        verdicts = [r["comparison"]["verdict"] for r in metric["results"] if r["comparison"]]
        changed = any(v in ("regression", "improvement") for v in verdicts)
        if metric["test"] in truth:
            found += changed
        else:
            false += changed
    print(f"{found}/{len(truth)} steps, {false} false")


def machine():
    model = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    print(f"{os.cpu_count()} CPUs, {model}")


def main(args):
    if args[:1] == ["generate"] and len(args) in (3, 4) and "".join(args[3:]) in KINDS:
        generate(args[1], args[2], "".join(args[3:]))
    elif args[:1] == ["measure"] and len(args) > 3 and args[2] == "--":
        measure(args[1], args[3:])
    elif args[:1] == ["summary"] and len(args) == 2:
        summary(args[1])
    elif args[:1] == ["history-accuracy"] and len(args) == 3:
        history_accuracy(args[1], args[2])
    elif args[:1] == ["compare-accuracy"] and len(args) == 3:
        compare_accuracy(args[1], args[2])
    elif args == ["machine"]:
        machine()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
