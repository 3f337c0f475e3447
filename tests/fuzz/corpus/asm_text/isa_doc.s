LOAD.INP deps=pop_next sram_base=0 dram_base=0x100 y_size=4 x_size=4 x_stride=16 y_pad_0=1 y_pad_1=1 x_pad_0=1 x_pad_1=1
GEMM deps=pop_prev|push_prev reset=0 uop_bgn=0 uop_end=16 iter_out=64 iter_in=16 dst_factor_out=16 src_factor_out=16 src_factor_in=1 wgt_factor_in=1
ALU.SHR deps=- uop_bgn=16 uop_end=17 iter_out=1 iter_in=64 dst_factor_in=1 src_factor_in=1 use_imm=1 imm=8
STORE.OUT deps=pop_prev|push_prev sram_base=0 dram_base=0x2000 y_size=64 x_size=16 x_stride=16
FINISH deps=-
UOP dst=0 src=0 wgt=0
