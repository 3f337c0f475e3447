ALU.MAX deps=- uop_bgn=0 uop_end=1 iter_out=2 iter_in=2 dst_factor_out=1 src_factor_in=1
ALU.MIN deps=- uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 use_imm=1 imm=127
ALU.MUL deps=- uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 use_imm=1 imm=-128
LOAD.ACC8 deps=- sram_base=1 dram_base=0x300 y_size=1 x_size=2 x_stride=2
STORE.OUT deps=- sram_base=0 dram_base=0x3000 y_size=1 x_size=0 x_stride=1
FINISH deps=-
