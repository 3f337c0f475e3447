#!/usr/bin/env python3
"""Resource and logic-depth report of the RTL for a Xilinx family, with Yosys alone (no Vivado).

Runs Yosys `synth_xilinx -family FAMILY` on rtl/*.sv with a config's generated
tessera_config.svh (the trace port removed, as the Vivado flow leaves it unconnected), then reads
the mapped netlist and prints, per module instance and in total: LUTs (logic and memory), flip-flops,
block RAMs (RAMB36/RAMB18), DSPs, distributed RAM, wide muxes and carry cells; how every memory
of the design was mapped; the longest register-to-register path in LUT levels; and each board's
part from scripts/fpga/boards.tcl with its capacity (hw/configs/space/parts.json) and the design's share of it. As a table on
stdout and as JSON (--json).

Hierarchy is kept (Yosys' default for synth_xilinx), so each module is counted on its own and the
total is their sum; no optimization crosses a module boundary, so the totals are an upper bound of
what a flattening tool (Vivado's default) would get. The depth is measured on the netlist flattened
after mapping.

With --check the run fails (exit 1) on: a latch, an SRAM (tessera_sram, tessera_sram_2p) memory not
mapped to block RAM, a resource over the capacity of a part of the family in the board table, or a
path deeper than --max-depth LUT levels (when given).

Logic depth: the longest combinational path between sequential elements (flip-flops, block RAMs,
registered DSP stages, LUT-RAM and shift-register writes) and the top-level ports, counting LUT
cells (LUT1-LUT6); a MUXF7/MUXF8 extends the LUT before it and an inverter is absorbed by its
neighbour, so neither counts; carry cells (CARRY4/CARRY8) count nothing but are listed with the
path; a DSP without pipeline registers is a combinational cell, listed with the path. Yosys has no
timing model: LUT levels are the usual proxy (8 levels for 100 MHz on a -1 speed grade).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict

SRAM_MODULES = ("tessera_sram", "tessera_sram_2p")

FAMILIES = {
    # family: (RAMB36, RAMB18, DSP) primitives
    "xc7": ("RAMB36E1", "RAMB18E1", "DSP48E1"),
    "xcup": ("RAMB36E2", "RAMB18E2", "DSP48E2"),
}

# LUTs a LUT-RAM or shift-register primitive occupies.
LUTRAM_LUTS = {
    "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8,
    "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8,
    "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8,
    "SRL16E": 1, "SRLC16E": 1, "SRLC32E": 1,
}
LUT_TYPES = {"LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6"}
FF_TYPES = {"FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1"}
LATCH_TYPES = {"LDCE", "LDPE", "LDCE_1", "LDPE_1"}
MUX_TYPES = {"MUXF7", "MUXF8", "MUXF9"}
BUF_TYPES = {"IBUF", "OBUF", "BUFG", "IOBUF", "OBUFT", "BUF", "INV"}
URAM_TYPES = {"URAM288", "URAM288_BASE"}


def die(msg):
    print("yosys_report: " + msg, file=sys.stderr)
    sys.exit(2)


def board_table(boards_tcl, parts_json):
    """The board table of scripts/fpga/boards.tcl (read by tclsh itself), each board's part with its
    capacity from hw/configs/space/parts.json (a board's part string starts with the part's name)."""
    script = ("source {%s}\n"
              "foreach b [lsort [dict keys $tessera_boards]] {\n"
              "  set d [dict get $tessera_boards $b]\n"
              "  puts [list $b [dict get $d part] [dict get $d family]]\n"
              "}\n") % boards_tcl
    try:
        out = subprocess.run(["tclsh"], input=script, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die("cannot read the board table %s with tclsh: %s" % (boards_tcl, getattr(e, "stderr", e)))
    try:
        with open(parts_json) as f:
            parts = json.load(f)["PARTS"]
    except (OSError, ValueError, KeyError) as e:
        die("cannot read the parts %s: %s" % (parts_json, e))
    boards = []
    for line in out.splitlines():
        f = line.split()
        part = next((p for p in parts if f[1].lower().startswith(p["NAME"])), None)
        if part is None:
            die("board %s: part %s is not in %s" % (f[0], f[1], parts_json))
        boards.append({"board": f[0], "part": f[1], "family": f[2], "luts": part["LUTS"], "ffs": part["FFS"],
                       "ramb36": part["BRAM36"], "dsps": part["DSPS"], "urams": part.get("URAMS", 0)})
    return boards


def yosys_version(yosys):
    try:
        return subprocess.run([yosys, "-V"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def run_yosys(args, work):
    rtl = sorted(os.path.join(args.rtl, f) for f in os.listdir(args.rtl) if f.endswith(".sv"))
    hier_json = os.path.join(work, "netlist_hier.json")
    flat_json = os.path.join(work, "netlist_flat.json")
    log = os.path.join(work, "yosys.log")
    script = os.path.join(work, "synth.ys")
    with open(script, "w") as f:
        f.write("read_verilog -sv -I%s -I%s %s\n" % (args.gen, args.rtl, " ".join(rtl)))
        f.write("hierarchy -check -top tessera_top\n")
        # The Vivado flow leaves the trace port unconnected: without it, its logic goes.
        f.write("delete -port tessera_top/trace_*\n")
        f.write("synth_xilinx -family %s -top tessera_top\n" % args.family)
        f.write("check\n")
        f.write("write_json %s\n" % hier_json)
        f.write("flatten\nopt_clean -purge\n")
        f.write("write_json %s\n" % flat_json)
    t0 = time.time()
    with open(log, "w") as lf:
        rc = subprocess.run([args.yosys, "-q", "-l", log, "-s", script], stdout=subprocess.DEVNULL,
                            stderr=lf).returncode
    if rc != 0:
        with open(log, errors="replace") as f:
            errors = sorted({line.strip() for line in f if "ERROR" in line})
        die("yosys failed (exit %d): %s; see %s" % (rc, "; ".join(errors[:3]) or "no ERROR line", log))
    return hier_json, flat_json, log, time.time() - t0


def short_module(name):
    """'$paramod$hash\\tessera_fifo' -> 'tessera_fifo'; '$paramod\\tessera_uop_pipe\\GemmPipe=1'1' -> ..."""
    if name.startswith("$paramod"):
        parts = name.split("\\")
        return parts[1] if len(parts) > 1 else name
    return name.lstrip("\\")


def classify(cells, fam):
    ramb36, ramb18, dsp = FAMILIES[fam]
    r = defaultdict(int)
    for ctype, n in cells.items():
        if ctype in LUT_TYPES:
            r["lut_logic"] += n
        elif ctype in LUTRAM_LUTS:
            r["lut_memory"] += n * LUTRAM_LUTS[ctype]
            r["lutram_cells" if not ctype.startswith("SRL") else "srl_cells"] += n
        elif ctype in FF_TYPES:
            r["ff"] += n
        elif ctype in LATCH_TYPES:
            r["latch"] += n
        elif ctype == ramb36:
            r["ramb36"] += n
        elif ctype == ramb18:
            r["ramb18"] += n
        elif ctype == dsp:
            r["dsp"] += n
        elif ctype in URAM_TYPES:
            r["uram"] += n
        elif ctype.startswith("CARRY"):
            r["carry"] += n
        elif ctype == "MUXF7":
            r["muxf7"] += n
        elif ctype == "MUXF8":
            r["muxf8"] += n
        elif ctype == "MUXF9":
            r["muxf9"] += n
        elif ctype == "INV":
            r["inv"] += n
        elif ctype in BUF_TYPES:
            r["buf"] += n
        else:
            r["other:" + ctype] += n
    r["lut"] = r["lut_logic"] + r["lut_memory"]
    r["bram36_equiv"] = r["ramb36"] + r["ramb18"] / 2.0
    return dict(r)


def design_modules(netlist_json):
    """The design's own modules of a Yosys JSON netlist (cell library blackboxes left out)."""
    with open(netlist_json) as f:
        modules = json.load(f)["modules"]
    def is_cell_library(m):
        a = m.get("attributes", {})
        return any(k in a for k in ("blackbox", "whitebox", "lib_whitebox"))
    return {n: m for n, m in modules.items() if not is_cell_library(m)}


def resources(hier_json, fam):
    """Per module instance (path -> module, own resources) and per module type, from the hierarchy."""
    design = design_modules(hier_json)
    own = {}
    for mname, m in design.items():
        counts = defaultdict(int)
        for c in m["cells"].values():
            if c["type"] not in design:
                counts[c["type"]] += 1
        own[mname] = counts
    instances = []  # (path, module name, depth)

    def walk(mname, path, depth):
        instances.append((path, mname, depth))
        for cname, c in sorted(design[mname]["cells"].items()):
            if c["type"] in design:
                walk(c["type"], (path + "." if path else "") + cname.lstrip("\\"), depth + 1)

    top = [n for n, m in design.items() if m.get("attributes", {}).get("top")]
    if len(top) != 1:
        die("no single top module in %s" % hier_json)
    walk(top[0], "", 0)

    subtree = {}

    def subtotal(mname):
        if mname not in subtree:
            t = defaultdict(int, own[mname])
            for c in design[mname]["cells"].values():
                if c["type"] in design:
                    for k, v in subtotal(c["type"]).items():
                        t[k] += v
            subtree[mname] = t
        return subtree[mname]

    rows = []
    for path, mname, depth in instances:
        rows.append({"instance": path or "tessera_top", "module": short_module(mname), "depth": depth,
                     "own": classify(own[mname], fam), "total": classify(subtotal(mname), fam)})
    return rows, classify(subtotal(top[0]), fam), own, design


def memory_mapping(log):
    """How synth_xilinx mapped each memory: {(module, memory): kind} from memory_libmap/memory_map."""
    maps = {}
    cur_module = None
    with open(log, errors="replace") as f:
        for line in f:
            m = re.match(r"\s*mapping memory ([^.\s]+)\.(\S+) via (\S+)", line)
            if m:
                maps[(m.group(1), m.group(2))] = m.group(3)
                continue
            m = re.match(r"Mapping memory (\S+) in module (\S+):", line)
            if m:
                maps[(m.group(2), m.group(1))] = "FF"
    return maps


def memory_kind(via):
    if "BRAM" in via or "BLOCKRAM" in via or via.startswith("$__XILINX_RAMB"):
        return "block RAM"
    if "URAM" in via:
        return "UltraRAM"
    if "LUTRAM" in via:
        return "LUT RAM"
    if via == "FF":
        return "flip-flops"
    return via


# ---------------------------------------------------------------------------- logic depth

def comb_arcs(ctype, params, ports):
    """For a cell type: None if sequential (every input an endpoint, every output a startpoint), or
    a list of (output port, [input ports it depends on combinationally])."""
    ins = [p for p, d in ports.items() if d == "input"]
    outs = [p for p, d in ports.items() if d == "output"]
    if ctype in LUT_TYPES or ctype in MUX_TYPES or ctype in ("INV", "BUF", "IBUF", "OBUF"):
        return [(o, ins) for o in outs]
    if ctype.startswith("CARRY"):
        width = 4 if ctype == "CARRY4" else 8
        arcs = []
        for i in range(width):
            deps = ["CI", "CYINIT", "CI_TOP"] + ["S", "DI"]  # whole-bus ports, refined by bit below
            arcs.append(("O#%d" % i, deps, i))
            arcs.append(("CO#%d" % i, deps, i))
        return arcs
    if ctype.startswith("RAM") and not ctype.startswith("RAMB"):
        # LUT RAM: asynchronous read from its address inputs.
        addr = [p for p in ins if re.match(r"^(A\d*|ADDR[A-H]|DPRA\d*|RADR\d*|A)$", p)]
        return [(o, addr) for o in outs]
    if ctype.startswith("SRL"):
        return [("Q", [p for p in ins if re.match(r"^A\d*$", p)])]
    if ctype.startswith("DSP48"):
        regs = ["AREG", "BREG", "MREG", "PREG", "CREG"]
        vals = {r: int(str(params.get(r, "1")), 2) if set(str(params.get(r, "1"))) <= {"0", "1"} else 1
                for r in regs}
        if vals["MREG"] == 0 and vals["PREG"] == 0:
            return [(o, ins) for o in outs]  # combinational multiply(-add)
        return None
    return None


def cell_instance(cname):
    """The instance a flattened cell lives in: '$flatten\\u_a.\\g_b[0].u_c.$auto$ff.cc:266:slice$1' -> 'u_a.g_b[0].u_c'."""
    name = cname[len("$flatten"):] if cname.startswith("$flatten") else cname
    name = name.replace("\\", "")
    cut = name.find(".$")
    if cut >= 0:
        return re.sub(r"\.g_lane\[\d+\]$", "", name[:cut]) or "tessera_top"
    if name.startswith("$"):
        return "tessera_top"
    name = re.sub(r"(\.\d+)+$", "", name)  # a memory's slices: mem_q.0.1
    inst = name.rsplit(".", 1)[0] if "." in name else "tessera_top"
    return re.sub(r"\.g_lane\[\d+\]$", "", inst)  # an SRAM's lanes count as the SRAM


class Depth:
    def __init__(self, flat_json):
        design = design_modules(flat_json)
        top = [n for n, m in design.items() if m.get("attributes", {}).get("top")]
        self.mod = design[top[0]]
        self.names = {}
        for name, n in self.mod["netnames"].items():
            for i, b in enumerate(n["bits"]):
                if isinstance(b, int):
                    label = name if len(n["bits"]) == 1 else "%s[%d]" % (name, i + n.get("offset", 0))
                    old = self.names.get(b)
                    if old is None or (old.startswith("$") and not name.startswith("$")) or \
                            (old.startswith("$") == name.startswith("$") and len(label) < len(old)):
                        self.names[b] = label

    def analyse(self):
        cells = self.mod["cells"]
        driver = {}      # bit -> (cell name, weight, [input bits])
        seq_cells = 0
        for cname, c in cells.items():
            ctype = c["type"]
            ports = c.get("port_directions", {})
            conns = c["connections"]
            arcs = comb_arcs(ctype, c.get("parameters", {}), ports)
            if arcs is None:
                seq_cells += 1
                continue
            weight = 1 if ctype in LUT_TYPES else 0
            if ctype.startswith("CARRY"):
                ci = [b for p in ("CI", "CYINIT", "CI_TOP") for b in conns.get(p, [])]
                s, di = conns.get("S", []), conns.get("DI", [])
                for o, _, i in arcs:
                    port, idx = o.split("#")
                    bits = conns.get(port, [])
                    if int(idx) < len(bits) and isinstance(bits[int(idx)], int):
                        deps = ci + s[:int(idx) + 1] + di[:int(idx) + 1]
                        driver[bits[int(idx)]] = (cname, 0, [b for b in deps if isinstance(b, int)])
                continue
            for o, deps in arcs:
                inb = [b for p in deps for b in conns.get(p, []) if isinstance(b, int)]
                for b in conns.get(o, []):
                    if isinstance(b, int):
                        driver[b] = (cname, weight, inb)
        # Longest path (LUT levels, then cells) ending at each bit, iteratively (no recursion limit);
        # a combinational loop (check -assert rules them out) would be cut where it closes.
        best = {}
        visiting = set()
        for start in list(driver.keys()):
            if start in best:
                continue
            stack = [(start, False)]
            while stack:
                bit, expanded = stack.pop()
                if bit in best:
                    continue
                d = driver.get(bit)
                if d is None:
                    best[bit] = (0, 0, None)
                    continue
                if not expanded:
                    if bit in visiting:
                        continue
                    visiting.add(bit)
                    stack.append((bit, True))
                    stack.extend((ib, False) for ib in d[2] if ib not in best and ib not in visiting)
                    continue
                visiting.discard(bit)
                lv, cl, pred = 0, 0, None
                for ib in d[2]:
                    e = best.get(ib, (0, 0, None))
                    if pred is None or (e[0], e[1]) > (lv, cl):
                        lv, cl, pred = e[0], e[1], ib
                best[bit] = (lv + d[1], cl + 1, pred)
        # Endpoints: the inputs of sequential cells (named by the register they load) and the ports.
        ends = {}
        # The deepest input of the sequential cells of each instance (from the cell's own name, which
        # says where it lives, unlike the net it drives): instance -> (bit, endpoint label).
        inst_end = {}
        for cname, c in cells.items():
            if comb_arcs(c["type"], c.get("parameters", {}), c.get("port_directions", {})) is not None:
                continue
            inst = cell_instance(cname)
            conns = c["connections"]
            if c["type"] in FF_TYPES or c["type"] in LATCH_TYPES:
                q = conns.get("Q", [None])[0]
                label = re.sub(r"\[\d+\]$", "", self.names.get(q, cname)) if isinstance(q, int) else cname
            else:
                label = "%s (%s)" % (re.sub(r"\.[^.]*$", "", cname), c["type"])
            for p, d in c.get("port_directions", {}).items():
                if d != "input":
                    continue
                for b in conns.get(p, []):
                    if isinstance(b, int) and b in best:
                        if label not in ends or best[b][:2] > best[ends[label]][:2]:
                            ends[label] = b
                        if inst not in inst_end or best[b][:2] > best[inst_end[inst][0]][:2]:
                            inst_end[inst] = (b, label)
        for pname, port in self.mod["ports"].items():
            if port["direction"] == "output":
                for b in port["bits"]:
                    if isinstance(b, int) and b in best:
                        if pname not in ends or best[b][:2] > best[ends[pname]][:2]:
                            ends[pname] = b
        if not ends:
            return {"lut_levels": 0, "cells": 0, "start": "", "end": "", "cell_types": {}, "path": [], "endpoints": [],
                "by_instance": []}

        def trace(b):
            path = []
            while b is not None and b in driver:
                cname = driver[b][0]
                c = cells[cname]
                path.append({"cell": cname, "type": c["type"], "net": self.names.get(b, str(b)),
                             "src": c.get("attributes", {}).get("src", "")})
                b = best[b][2]
            path.reverse()
            return path, (self.names.get(b, str(b)) if b is not None else "")

        ranked = sorted(ends.items(), key=lambda kv: best[kv[1]][:2], reverse=True)
        end_label, end = ranked[0]
        path, start_net = trace(end)
        kinds = defaultdict(int)
        for p in path:
            kinds[p["type"]] += 1
        endpoints = []
        for label, b in ranked[:300]:
            ep, sn = trace(b)
            endpoints.append({"end": label, "lut_levels": best[b][0], "cells": best[b][1], "start": sn,
                              "carry": sum(1 for p in ep if p["type"].startswith("CARRY")),
                              "dsp": sum(1 for p in ep if p["type"].startswith("DSP"))})
        # The deepest path into each instance (the endpoint's hierarchical prefix), so a unit's own
        # depth (the GEMM core's adder tree, the ALU) shows even when control paths rank above it.
        by_instance = {}
        for inst, (b, label) in inst_end.items():
            by_instance[inst] = {"instance": inst, "lut_levels": best[b][0], "end": label, "start": trace(b)[1]}
        return {"lut_levels": best[end][0], "cells": len(path), "start": start_net, "end": end_label,
                "cell_types": dict(kinds), "path": path, "endpoints": endpoints,
                "by_instance": sorted(by_instance.values(), key=lambda e: -e["lut_levels"])}


# ---------------------------------------------------------------------------- report

COLUMNS = [("lut", "LUT"), ("lut_memory", "LUTmem"), ("ff", "FF"), ("ramb36", "RAMB36"), ("ramb18", "RAMB18"),
           ("dsp", "DSP"), ("muxf7", "MUXF7"), ("muxf8", "MUXF8"), ("carry", "CARRY"), ("latch", "latch")]


def fmt_row(name, r, width):
    return "%-*s" % (width, name) + "".join("%9s" % ("{:,}".format(int(r.get(k, 0)))) for k, _ in COLUMNS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gen", required=True, help="generated config directory (tessera_config.svh)")
    ap.add_argument("--rtl", required=True)
    ap.add_argument("--boards", required=True, help="scripts/fpga/boards.tcl")
    ap.add_argument("--parts", required=True, help="hw/configs/space/parts.json (each board part's capacity)")
    ap.add_argument("--family", default="xc7", choices=sorted(FAMILIES))
    ap.add_argument("--work", required=True, help="directory for the Yosys script, log and netlists")
    ap.add_argument("--yosys", default="yosys")
    ap.add_argument("--json", help="write the report as JSON here")
    ap.add_argument("--check", action="store_true", help="fail on latches, SRAMs not in block RAM, overflow")
    ap.add_argument("--max-depth", type=int, help="with --check: fail on a path deeper than this (LUT levels)")
    ap.add_argument("--endpoints", type=int, default=12, help="deepest endpoints listed")
    ap.add_argument("--instances", type=int, default=40, help="instances listed with their deepest path")
    ap.add_argument("--reuse", action="store_true", help="analyse the netlists a previous run left in --work")
    ap.add_argument("--module-depth", type=int, default=3, help="instance levels shown in the table")
    args = ap.parse_args()

    config = os.path.basename(os.path.normpath(args.gen))
    os.makedirs(args.work, exist_ok=True)
    boards = [b for b in board_table(args.boards, args.parts) if b["family"] == args.family]
    if args.reuse:
        hier_json, flat_json, log, secs = (os.path.join(args.work, n) for n in
                                           ("netlist_hier.json", "netlist_flat.json", "yosys.log", "0"))
        secs = 0.0
    else:
        hier_json, flat_json, log, secs = run_yosys(args, args.work)
    rows, total, own, design = resources(hier_json, args.family)

    # Memories: every SRAM instance's arrays must be block RAM.
    maps = memory_mapping(log)
    memories = []
    for (module, mem), via in sorted(maps.items()):
        memories.append({"module": short_module(module.lstrip("\\")), "module_id": module, "memory": mem,
                         "mapped_to": memory_kind(via), "via": via})
    # Count instances per module id.
    per_id = defaultdict(int)

    def count(mname):
        per_id[mname] += 1
        for c in design[mname]["cells"].values():
            if c["type"] in design:
                count(c["type"])
    count([n for n, m in design.items() if m.get("attributes", {}).get("top")][0])
    sram_total = sram_bram = 0
    for m in memories:
        key = m["module_id"] if m["module_id"] in design else "\\" + m["module_id"].lstrip("\\")
        m["instances"] = per_id.get(key, per_id.get(m["module_id"].lstrip("\\"), 0))
        m["sram"] = m["module"] in SRAM_MODULES
        if m["sram"]:
            sram_total += m["instances"]
            sram_bram += m["instances"] if m["mapped_to"] == "block RAM" else 0

    depth = Depth(flat_json).analyse()

    fits = []
    for b in boards:
        use = {"luts": total.get("lut", 0), "ffs": total.get("ff", 0), "ramb36": total.get("bram36_equiv", 0),
               "dsps": total.get("dsp", 0), "urams": total.get("uram", 0)}
        share = {k: (100.0 * use[k] / b[k] if b[k] else (0.0 if use[k] == 0 else float("inf"))) for k in use}
        fits.append({"board": b["board"], "part": b["part"], "capacity": {k: b[k] for k in use}, "used": use,
                     "percent": share, "fits": all(use[k] <= b[k] for k in use)})

    # ---- the table
    width = 44
    print("Tessera RTL, config %s, Yosys synth_xilinx -family %s (%.0f s; hierarchy kept: an upper bound)"
          % (config, args.family, secs))
    print()
    print("%-*s" % (width, "instance (module)") + "".join("%9s" % h for _, h in COLUMNS))
    for r in rows:
        if r["depth"] > args.module_depth:
            continue
        name = "  " * r["depth"] + (r["instance"].split(".")[-1] if r["depth"] else "tessera_top")
        name = "%s (%s)" % (name, r["module"]) if r["depth"] else name
        print(fmt_row(name[:width - 1], r["total"], width))
    print(fmt_row("total", total, width))
    print("  also: %d inverters (absorbed by Vivado), %d LUT-RAM and %d SRL cells, %s UltraRAM"
          % (total.get("inv", 0), total.get("lutram_cells", 0), total.get("srl_cells", 0), total.get("uram", 0)))
    print()
    print("Memories (per module; instances x mapping):")
    for m in memories:
        print("  %-28s %-34s x%-3d %s%s" % (m["module"], m["memory"], m["instances"], m["mapped_to"],
                                           "  (SRAM)" if m["sram"] else ""))
    print("  SRAM arrays in block RAM: %d of %d" % (sram_bram, sram_total))
    print()
    print("Longest combinational path: %d LUT levels, %d cells (%s)" % (
        depth["lut_levels"], depth["cells"], ", ".join("%s %d" % kv for kv in sorted(depth["cell_types"].items()))))
    print("  from %s to %s:" % (depth["start"], depth["end"]))
    for p in depth["path"]:
        if p["type"] not in ("INV",):
            print("    %-8s %s" % (p["type"], p["net"][:150]))
    print("Deepest endpoints (LUT levels, carry cells, DSPs on the path):")
    for e in depth["endpoints"][:args.endpoints]:
        print("  %3d  %3d  %d  %s  <-  %s" % (e["lut_levels"], e["carry"], e["dsp"], e["end"][:90], e["start"][:60]))
    print("Deepest path into each instance's registers and memories (LUT levels; %d of %d instances):"
          % (min(args.instances, len(depth["by_instance"])), len(depth["by_instance"])))
    for e in depth["by_instance"][:args.instances]:
        print("  %3d  %-60s  %s  <-  %s" % (e["lut_levels"], e["instance"][:60], e["end"].rsplit(".", 1)[-1][:40],
                                          e["start"][:50]))
    print()
    print("%-12s %-22s %18s %18s %14s %14s" % ("board", "part", "LUT", "FF", "RAMB36", "DSP"))
    for f in fits:
        cell = lambda k: "%s/%s %3.0f%%" % ("{:,.0f}".format(f["used"][k]) if k != "ramb36" else "%g" % f["used"][k],
                                           "{:,}".format(f["capacity"][k]), f["percent"][k])
        print("%-12s %-22s %18s %18s %14s %14s%s" % (f["board"], f["part"], cell("luts"), cell("ffs"),
                                                     cell("ramb36"), cell("dsps"), "" if f["fits"] else "  OVERFLOW"))

    report = {"config": config, "family": args.family, "seconds": round(secs, 1), "hierarchy_kept": True,
              "yosys_version": yosys_version(args.yosys),
              "total": total, "instances": rows, "memories": memories,
              "sram_arrays": sram_total, "sram_arrays_in_block_ram": sram_bram,
              "depth": depth, "boards": fits}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)

    if args.check:
        errors = []
        if total.get("latch", 0):
            errors.append("%d latches" % total["latch"])
        if sram_total == 0:
            errors.append("no SRAM memory found in the log (memory_libmap output changed?)")
        for m in memories:
            if m["sram"] and m["mapped_to"] != "block RAM":
                errors.append("SRAM %s.%s mapped to %s" % (m["module"], m["memory"], m["mapped_to"]))
        for f in fits:
            if not f["fits"]:
                over = [k for k in f["used"] if f["used"][k] > f["capacity"][k]]
                errors.append("overflows %s (%s): %s" % (f["board"], f["part"], ", ".join(over)))
        if not boards:
            errors.append("no board of family %s in %s" % (args.family, args.boards))
        if args.max_depth is not None and depth["lut_levels"] > args.max_depth:
            errors.append("longest path %d LUT levels > %d" % (depth["lut_levels"], args.max_depth))
        if errors:
            print("\nFAILED: " + "; ".join(errors))
            return 1
        print("\ncheck passed: no latches, %d/%d SRAM arrays in block RAM, fits %s%s" % (
            sram_bram, sram_total, ", ".join(f["board"] for f in fits),
            "" if args.max_depth is None else ", depth <= %d" % args.max_depth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
