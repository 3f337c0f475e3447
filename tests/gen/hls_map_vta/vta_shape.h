// Fixture for tessera-hls-map-gen: types shaped like Apache TVM VTA's HLS tops, whose register offsets VTA's pynq driver publishes.
#include <stdint.h>
typedef ap_uint<128> insn_T;
typedef ap_uint<32> uop_T;
typedef ap_uint<64> bus_T;
