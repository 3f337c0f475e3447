#!/usr/bin/env bash
# tessera-hls-map-gen's layout rule against an independent answer: on interfaces shaped like VTA's HLS tops it must give the offsets VTA's pynq driver uses with Vivado HLS's IPs.
# Usage: hls_map_vta_test.sh PATH/TO/tessera-hls-map-gen
set -u
GEN=${1:?usage: hls_map_vta_test.sh tessera-hls-map-gen}
FIX=$(dirname "${BASH_SOURCE[0]}")/hls_map_vta
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
if ! "$GEN" --design-cpp "$FIX/vta_shape.cpp" --design-h "$FIX/vta_shape.h" --hls-config "$FIX/hls_config.h" \
  --hls-tcl "$FIX/hls.tcl" --cpp "$OUT/map.h" --md "$OUT/map.md"; then
  echo "FAIL: tessera-hls-map-gen refused the VTA-shaped fixture"
  exit 1
fi
failed=0
# namespace, constant, offset: VTA_FETCH_INSN_COUNT_OFFSET 16, _INSN_ADDR_ 24, LOAD_INP 16, LOAD_WGT 24,
# COMPUTE_DONE_WR 16, COMPUTE_DONE_RD 24, COMPUTE_UOP 32, COMPUTE_BIAS 40, STORE_OUT 16.
while read -r ns name offset; do
  got=$(sed -n "/^namespace $ns {/,/^}/p" "$OUT/map.h" | sed -nE "s/^inline constexpr uint32_t $name = (0x[0-9a-f]+);.*/\1/p")
  if [ -z "$got" ] || [ "$((got))" -ne "$offset" ]; then echo "FAIL: $ns::$name is '${got:-missing}', VTA's is $offset"; failed=1; fi
done <<'TABLE'
fetch kInsnCount 16
fetch kInsns 24
load kInputs 16
load kWeights 24
compute kDoneI 16
compute kDoneO 24
compute kUops 32
compute kBiases 40
store kOutputs 16
TABLE
# No return value (void tops): no ap_return register.
if grep -q kApReturn "$OUT/map.h"; then echo "FAIL: void tops got an ap_return register"; failed=1; fi
[ $failed -eq 0 ] && echo "hls_map_vta_test: the layout rule gives VTA's pynq offsets"
exit $failed
