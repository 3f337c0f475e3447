# comment
0: LOAD.WGT deps=pop_next sram_base=0 dram_base=0x20 y_size=2 x_size=3 x_stride=4 y_pad_0=1 y_pad_1=1 x_pad_0=2 x_pad_1=0
1: .raw 0x0000000000000000000000000000000f
