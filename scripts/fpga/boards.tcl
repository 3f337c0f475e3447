# The board table: the one place that names each board's part, board part, PS type and PL clock.
#
# part        device for synthesis and HLS
# board_part  Vivado board-file name; its presets are applied when the board files are installed
# ps          ps7 (Zynq-7000 processing_system7) or psu (Zynq UltraScale+ zynq_ultra_ps_e)
# clock_mhz   PL clock from the PS (FCLK_CLK0 / pl_clk0) that drives the accelerator and its buses
# hp_width    widest data width of the PS high-performance slave port the accelerator's master uses
#             (S_AXI_HP0 on Zynq-7000: 64; S_AXI_HP0_FPD on MPSoC: 128)
# family      Yosys synth_xilinx family of the part (xc7, xcup), for the resource report
# A part's capacity (LUTs, flip-flops, block RAMs, DSPs) is in hw/configs/space/parts.json, whose
# part names prefix these part strings; scripts/fpga/yosys_report.py checks fit against it.
set tessera_boards [dict create \
  pynq-z1 {
    part xc7z020clg400-1 board_part www.digilentinc.com:pynq-z1:part0:1.0 ps ps7
    clock_mhz 100 hp_width 64
    family xc7
  } \
  ultra96v2 {
    part xczu3eg-sbva484-1-i board_part avnet.com:ultra96v2:part0:1.2 ps psu
    clock_mhz 100 hp_width 128
    family xcup
  } \
  zcu104 {
    part xczu7ev-ffvc1156-2-e board_part xilinx.com:zcu104:part0:1.1 ps psu
    clock_mhz 100 hp_width 128
    family xcup
  }]
