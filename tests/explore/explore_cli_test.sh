#!/bin/bash
# tessera explore from the command line: bad input refused naming what is wrong; and (MODE tsim) an
# exploration whose verified points' cycles equal tsim's own count (tessera bench on the same
# compiled model, config and sample), or (MODE yosys) whose verified resources equal a fresh Yosys
# run of scripts/fpga/yosys_report.py on the chosen config.
# Usage: explore_cli_test.sh TESSERA SOURCE_DIR MODE   (MODE: errors, tsim or yosys)
set -u
tessera=$1
src=$2
mode=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
m=$src/models/fashion_mnist
# refused WHAT EXPECTED ARGS...: the command fails (exit 1 or 2) and says EXPECTED.
refused() {
  local what=$1 expected=$2 out rc
  shift 2
  out=$("$tessera" explore "$@" 2>&1)
  rc=$?
  if [[ $rc -ne 1 && $rc -ne 2 ]]; then
    fail "$what: exit $rc, expected 1 or 2: $out"
  elif ! grep -qF -- "$expected" <<<"$out"; then
    fail "$what: the message does not say '$expected': $out"
  else
    echo "ok: $what: $(head -1 <<<"$out")"
  fi
}
# json_field FILE PYTHON_EXPRESSION_OF_j
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

case $mode in
  errors)
    refused "unknown part" "--part xc7a35t: is not a known part (known: xc7z020" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7a35t
    refused "no part" "needs --part P" "$m/fashion_cnn.onnx" --calibrate "$m/calib"
    refused "budget zero" "--budget 0: must be at least 1" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7z020 --budget 0
    refused "a part without an area model" "no fitted model for family ice40" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part ice40up5k
    refused "an unknown point" "--points b7_i4_o4_w6: is not a point of the space" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7z020 --points b7_i4_o4_w6
    refused "an unknown objective" "--objective speed: is not an objective" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7z020 --objective speed
    refused "an unknown verifier" "'vivado' is not yosys, tsim or none" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7z020 --verify vivado
    refused "a float model without samples" "is a float model: pass --calibrate" "$m/fashion_cnn.onnx" --part xc7z020
    refused "a compiled model" "is not an ONNX file" "$work/model.tsm" --part xc7z020
    refused "a missing model" "missing.onnx" "$work/missing.onnx" --part xc7z020
    refused "a missing area model" "--area-model $work/none.json: no such file" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7z020 --area-model "$work/none.json"
    # Points none of which fits the part: the error lists each with why.
    refused "nothing fits" "b2_i5_o5_w6: does not fit xc7z010: LUT" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7z010 --points b2_i5_o5_w6 --verify none
    # A previous exploration is not overwritten without --force.
    mkdir -p "$work/prev" && echo '{"mine": 1}' > "$work/prev/explore.json"
    refused "a previous exploration" "holds a previous exploration" "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7z020 --out "$work/prev"
    grep -q mine "$work/prev/explore.json" || fail "a previous exploration was overwritten without --force"
    ;;
  tsim)
    # Two points tsim is built for (default's shape and b1_i4_o3_w6), each with its largest buffers
    # (the budget leaves no compilation for the local search), both verified on tsim.
    out=$("$tessera" explore "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xczu7ev --points b0_i4_o4_w6,b1_i4_o3_w6 \
            --budget 2 --top 2 --verify tsim --input "$m/sample_0.npy" --out "$work/ex" 2>&1) || fail "explore: $out"
    echo "$out" | head -30
    for f in chosen.json model.tsm front.tsv front.dat front.gp front.svg FLOW.md explore.json generated/tessera_config.svh; do
      [[ -s $work/ex/$f ]] || fail "explore wrote no $f"
    done
    grep -q "<svg" "$work/ex/front.svg" 2>/dev/null || fail "front.svg is not an SVG (gnuplot)"
    n=0
    while read -r name cycles predicted exact; do
      n=$((n + 1))
      [[ $exact == True ]] || fail "$name: explore's tsim run was not bit-exact"
      if [[ $name == $(json "$work/ex/explore.json" 'j["chosen"]') ]]; then
        model=$work/ex/model.tsm cfg=$work/ex/chosen.json
      else
        model=$work/$name.tsm cfg=$name
        "$tessera" compile "$m/fashion_cnn.onnx" --calibrate "$m/calib" --config "$name" -o "$model" > /dev/null || fail "compile for $name"
      fi
      b=$("$tessera" bench --model "$model" --config "$cfg" --target tsim --input "$m/sample_0.npy" --json 2>&1) || fail "bench $name: $b"
      want=$(python3 -c "import json,sys; print(int(json.loads(sys.stdin.read())['cycles']))" <<<"$b")
      if [[ ${cycles%.*} != "$want" ]]; then fail "$name: explore verified $cycles cycles, tsim counts $want"; else echo "ok: $name: $want cycles on tsim, as explore verified"; fi
      awk -v p="$predicted" -v c="$want" 'BEGIN { e = (p - c) / c; exit !(e >= -0.05 && e <= 0.05) }' ||
        fail "$name: predicted $predicted cycles, tsim $want: beyond 5%"
    done < <(json "$work/ex/explore.json" '"\n".join("%s %s %s %s" % (c["config"], c["tsim_cycles"], c["predicted_cycles"], c["tsim_bit_exact"]) for c in j["candidates"] if "tsim_cycles" in c)')
    [[ $n -eq 2 ]] || fail "explore verified $n configs on tsim, expected 2"
    "$tessera" info --config "$work/ex/chosen.json" > /dev/null || fail "chosen.json does not load as a config"
    ;;
  yosys)
    # 1x8x8 with its largest buffers on the xc7z020; its verified resources against yosys_report.py's.
    out=$("$tessera" explore "$m/fashion_cnn.onnx" --calibrate "$m/calib" --part xc7z020 --points b0_i3_o3_w6 --budget 1 \
            --top 1 --verify yosys --out "$work/ex" 2>&1) || fail "explore: $out"
    echo "$out" | grep -A3 "verified"
    python3 "$src/scripts/fpga/yosys_report.py" --gen "$work/ex/generated" --rtl "$src/rtl" --boards "$src/scripts/fpga/boards.tcl" \
      --parts "$src/hw/configs/space/parts.json" --family xc7 --work "$work/report" --json "$work/report.json" > /dev/null ||
      fail "yosys_report.py on the chosen config"
    got=$(json "$work/ex/explore.json" '" ".join(str(float(c["yosys_resources"][k])) for c in j["candidates"] if "yosys_resources" in c for k in ("lut","ff","dsp","bram36"))')
    want=$(json "$work/report.json" '" ".join(str(float(j["total"].get(k, 0))) for k in ("lut","ff","dsp","bram36_equiv"))')
    if [[ -z $got || $got != "$want" ]]; then fail "explore's Yosys counts (LUT FF DSP BRAM36) '$got' differ from yosys_report.py's '$want'"; else echo "ok: Yosys counts $got, as yosys_report.py's"; fi
    ;;
  *) echo "usage: explore_cli_test.sh TESSERA SOURCE_DIR errors|tsim|yosys"; exit 2 ;;
esac
if [[ $failures -ne 0 ]]; then echo "$failures failure(s)"; exit 1; fi
echo "explore $mode: all passed"
