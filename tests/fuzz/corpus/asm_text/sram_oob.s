LOAD.INP deps=- sram_base=2040 dram_base=0x100 y_size=1 x_size=16 x_stride=16
FINISH
