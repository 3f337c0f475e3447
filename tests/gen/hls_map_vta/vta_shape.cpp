// Fixture for tessera-hls-map-gen: the interfaces (argument kinds, order and pragmas) of VTA's four HLS tops; the bodies are empty.
void fetch(uint32_t insn_count, volatile insn_T* insns, hls::stream<insn_T>& load_queue,
           hls::stream<insn_T>& gemm_queue, hls::stream<insn_T>& store_queue) {
#pragma HLS INTERFACE s_axilite port = insn_count bundle = CONTROL_BUS
#pragma HLS INTERFACE m_axi port = insns offset = slave bundle = ins_port
#pragma HLS INTERFACE axis port = load_queue
#pragma HLS INTERFACE axis port = gemm_queue
#pragma HLS INTERFACE axis port = store_queue
#pragma HLS INTERFACE s_axilite port = return bundle = CONTROL_BUS
}

void load(volatile bus_T* inputs, volatile bus_T* weights, hls::stream<insn_T>& load_queue,
          hls::stream<bool>& g2l_dep_queue, hls::stream<bool>& l2g_dep_queue, bus_T inp_mem[2048][1],
          bus_T wgt_mem[1024][32]) {
#pragma HLS INTERFACE m_axi port = inputs offset = slave bundle = data_port
#pragma HLS INTERFACE m_axi port = weights offset = slave bundle = data_port
#pragma HLS INTERFACE axis port = load_queue
#pragma HLS INTERFACE axis port = g2l_dep_queue
#pragma HLS INTERFACE axis port = l2g_dep_queue
#pragma HLS INTERFACE bram port = wgt_mem
#pragma HLS INTERFACE bram port = inp_mem
#pragma HLS INTERFACE s_axilite port = return bundle = CONTROL_BUS
}

void compute(volatile uint32_t& done, volatile uop_T* uops, volatile bus_T* biases,
             hls::stream<insn_T>& gemm_queue, hls::stream<bool>& l2g_dep_queue, hls::stream<bool>& s2g_dep_queue,
             hls::stream<bool>& g2l_dep_queue, hls::stream<bool>& g2s_dep_queue, bus_T inp_mem[2048][1],
             bus_T wgt_mem[1024][32], bus_T out_mem[2048][2]) {
#pragma HLS INTERFACE s_axilite port = done bundle = CONTROL_BUS
#pragma HLS INTERFACE m_axi port = uops offset = slave bundle = uop_port
#pragma HLS INTERFACE m_axi port = biases offset = slave bundle = data_port
#pragma HLS INTERFACE axis port = gemm_queue
#pragma HLS INTERFACE s_axilite port = return bundle = CONTROL_BUS
}

void store(volatile bus_T* outputs, hls::stream<insn_T>& store_queue, hls::stream<bool>& g2s_dep_queue,
           hls::stream<bool>& s2g_dep_queue, bus_T out_mem[2048][2]) {
#pragma HLS INTERFACE m_axi port = outputs offset = slave bundle = data_port
#pragma HLS INTERFACE axis port = store_queue
#pragma HLS INTERFACE s_axilite port = return bundle = CONTROL_BUS
}
