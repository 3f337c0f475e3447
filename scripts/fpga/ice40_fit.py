#!/usr/bin/env python3
"""Whether a config's RTL fits an iCE40 part: Yosys synth_ice40 cell counts against the part's capacity.

Runs `synth_ice40 -dsp -spram` on rtl/*.sv with a config's generated tessera_config.svh (the trace
port removed: a board top leaves it unconnected), then prints the mapped design's LUT4s, carries,
flip-flops, EBRs (SB_RAM40_4K), SPRAMs and MAC16s beside each part's capacity, as a table and as
JSON (--json). Exit status: 0 if the design fits the part given by --part, 1 if it does not (the
resources over capacity are named), 2 on a usage or tool error.

Cell counts before placement: nextpnr packs a LUT4 and a flip-flop into one logic cell, so the
logic cells needed are at least max(LUT4s, flip-flops); carries ride in the same cells.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

# Part: logic cells (LUT4+DFF), EBRs (4 Kbit), SPRAMs (256 Kbit), MAC16 DSPs.
PARTS = {
    "up5k": {"name": "iCE40 UltraPlus UP5K (iCEBreaker)", "lcs": 5280, "ebr": 30, "spram": 4, "dsp": 8},
    "up3k": {"name": "iCE40 UltraPlus UP3K", "lcs": 2800, "ebr": 20, "spram": 0, "dsp": 4},
    "hx8k": {"name": "iCE40 HX8K", "lcs": 7680, "ebr": 32, "spram": 0, "dsp": 0},
}


def die(msg):
    print("ice40_fit: " + msg, file=sys.stderr)
    sys.exit(2)


def synthesize(args):
    rtl = sorted(os.path.join(args.rtl, f) for f in os.listdir(args.rtl) if f.endswith(".sv"))
    if not rtl:
        die("no .sv files in %s" % args.rtl)
    svh = os.path.join(args.gen, "tessera_config.svh")
    if not os.path.isfile(svh):
        die("%s not found (generate the config's headers first: tessera-gen --config X.json --sv ...)" % svh)
    os.makedirs(args.work, exist_ok=True)
    script = os.path.join(args.work, "synth_ice40.ys")
    log = os.path.join(args.work, "yosys.log")
    stat_json = os.path.join(args.work, "stat.json")
    with open(script, "w") as f:
        f.write("read_verilog -sv -I%s -I%s %s\n" % (args.gen, args.rtl, " ".join(rtl)))
        f.write("hierarchy -check -top tessera_top\n")
        f.write("delete -port tessera_top/trace_*\n")
        f.write("synth_ice40 -dsp -spram -top tessera_top\n")
        f.write("check\n")
        f.write("tee -q -o %s stat -json\n" % stat_json)
    t0 = time.time()
    with open(log + ".stderr", "w") as err:
        rc = subprocess.run([args.yosys, "-q", "-l", log, "-s", script], stdout=subprocess.DEVNULL,
                            stderr=err).returncode
    if rc != 0:
        with open(log, errors="replace") as f:
            errors = sorted({line.strip() for line in f if "ERROR" in line})
        die("yosys failed (exit %d): %s; see %s" % (rc, "; ".join(errors[:3]) or "no ERROR line", log))
    with open(stat_json) as f:
        text = f.read()
    # `tee` may leave Yosys' own banner lines before the JSON object.
    start = text.find("{")
    if start < 0:
        die("no statistics in %s" % stat_json)
    stat = json.loads(text[start:])
    return stat, time.time() - t0, log


def count(stat):
    design = stat.get("design") or {}
    cells = design.get("num_cells_by_type")
    if cells is None:
        mods = stat.get("modules", {})
        if len(mods) != 1:
            die("expected one flattened module in the statistics, got %d" % len(mods))
        cells = next(iter(mods.values()))["num_cells_by_type"]
    ff = sum(n for t, n in cells.items() if re.match(r"^SB_DFF", t))
    r = {
        "lut4": cells.get("SB_LUT4", 0),
        "carry": cells.get("SB_CARRY", 0),
        "ff": ff,
        "ebr": cells.get("SB_RAM40_4K", 0),
        "spram": cells.get("SB_SPRAM256KA", 0),
        "dsp": cells.get("SB_MAC16", 0),
    }
    r["lcs"] = max(r["lut4"], r["ff"])
    known = {"SB_LUT4", "SB_CARRY", "SB_RAM40_4K", "SB_SPRAM256KA", "SB_MAC16"}
    r["other"] = {t: n for t, n in cells.items() if t not in known and not t.startswith("SB_DFF")}
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", required=True, help="the config's generated header directory (tessera_config.svh)")
    ap.add_argument("--rtl", required=True, help="the rtl/ directory")
    ap.add_argument("--work", required=True, help="directory for the script, log and statistics")
    ap.add_argument("--yosys", default="yosys")
    ap.add_argument("--part", default="up5k", choices=sorted(PARTS))
    ap.add_argument("--json", help="write the figures here as JSON")
    args = ap.parse_args()

    stat, seconds, log = synthesize(args)
    r = count(stat)
    config = os.path.basename(os.path.normpath(args.gen))
    print("iCE40 fit of config %s (Yosys synth_ice40 -dsp -spram, %.0f s; log %s)" % (config, seconds, log))
    print("%-36s %9s %9s %9s %9s %9s %9s %9s" % ("", "LUT4", "FF", "LCs", "carry", "EBR", "SPRAM", "MAC16"))
    print("%-36s %9d %9d %9d %9d %9d %9d %9d" % ("design", r["lut4"], r["ff"], r["lcs"], r["carry"], r["ebr"],
                                                 r["spram"], r["dsp"]))
    for key in sorted(PARTS):
        p = PARTS[key]
        print("%-36s %9s %9s %9d %9s %9d %9d %9d" % (p["name"], "", "", p["lcs"], "", p["ebr"], p["spram"], p["dsp"]))
    part = PARTS[args.part]
    over = []
    for k, label in (("lcs", "logic cells"), ("ebr", "EBRs"), ("spram", "SPRAMs"), ("dsp", "MAC16s")):
        if r[k] > part[k]:
            over.append("%s %d of %d (%.0f%%)" % (label, r[k], part[k], 100.0 * r[k] / part[k]))
    if r["other"]:
        print("other cells: %s" % ", ".join("%s %d" % kv for kv in sorted(r["other"].items())))
    fits = not over
    if fits:
        print("fits the %s" % part["name"])
    else:
        print("does NOT fit the %s: %s" % (part["name"], "; ".join(over)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": config, "part": args.part, "capacity": part, "design": r, "fits": fits,
                       "over": over, "yosys_seconds": round(seconds, 1)}, f, indent=2)
    sys.exit(0 if fits else 1)


if __name__ == "__main__":
    main()
