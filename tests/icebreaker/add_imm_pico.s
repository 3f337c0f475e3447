# add -3 to one accumulator entry and store it narrowed (config pico; every address inside the 128 KiB board window)
LOAD.UOP deps=- sram_base=0 dram_base=0x1000 y_size=1 x_size=1 x_stride=1
LOAD.ACC deps=- sram_base=0 dram_base=0x200 y_size=1 x_size=1 x_stride=1
ALU.ADD deps=push_next uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 use_imm=1 imm=-3
STORE.OUT deps=pop_prev|push_prev sram_base=0 dram_base=0x2000 y_size=1 x_size=1 x_stride=1
LOAD.UOP deps=pop_next
FINISH
UOP dst=0 src=0 wgt=0
