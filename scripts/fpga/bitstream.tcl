# Vivado flow: block design (Zynq PS + accelerator IP), synthesis, implementation, .bit/.hwh/.xsa export.
#
# vivado -mode batch -source scripts/fpga/bitstream.tcl -tclargs board=pynq-z1 flow=rtl \
#   gen_dir=build/generated/default ip_repo=build/fpga/pynq-z1-rtl-default/ip \
#   out_dir=build/fpga/pynq-z1-rtl-default [top=<HLS top, flow=hls>] [jobs=2]
# Result: <out_dir>/tessera_<board>.bit, .hwh (PYNQ overlay pair) and .xsa.
#
# Design: PS general-purpose master -> SmartConnect -> accelerator AXI4-Lite slave; accelerator
# AXI4 master(s) -> SmartConnect -> PS high-performance slave (DDR); the PS PL clock drives
# everything; proc_sys_reset turns the PS reset into synchronous resets; the accelerator's
# interrupt goes to the PS. Accelerator interfaces are found by type, so the RTL IP and the HLS IP
# (whatever its port names) are wired the same way.
source [file join [file dirname [file normalize [info script]]] common.tcl]

set opts [::tessera::parse_args $argv {board flow gen_dir ip_repo out_dir} {top tessera_top jobs 2}]
set board_name [dict get $opts board]
set board [::tessera::board $board_name]
set gen_dir [file normalize [dict get $opts gen_dir]]
set ip_repo [file normalize [dict get $opts ip_repo]]
set out_dir [file normalize [dict get $opts out_dir]]
set jobs [dict get $opts jobs]
set vlnv [::tessera::ip_vlnv [dict get $opts flow] [dict get $opts top]]
::tessera::load_config $gen_dir
set mhz [dict get $board clock_mhz]
# The HP port is as wide as the accelerator's bus where the PS allows; SmartConnect converts the rest.
set hp_width [expr {min([::tessera::param BUS_WIDTH], [dict get $board hp_width])}]

# PS facts by PS type: IP, configuration and the pin names the design connects.
set ps_types {
  ps7 {
    ip xilinx.com:ip:processing_system7 rule xilinx.com:bd_rule:processing_system7
    automation {make_external "FIXED_IO, DDR" Master Disable Slave Disable}
    clk FCLK_CLK0 rstn FCLK_RESET0_N gp M_AXI_GP0 gp_clk M_AXI_GP0_ACLK
    hp S_AXI_HP0 hp_clk S_AXI_HP0_ACLK irq IRQ_F2P
  }
  psu {
    ip xilinx.com:ip:zynq_ultra_ps_e rule xilinx.com:bd_rule:zynq_ultra_ps_e automation {}
    clk pl_clk0 rstn pl_resetn0 gp M_AXI_HPM0_FPD gp_clk maxihpm0_fpd_aclk
    hp S_AXI_HP0_FPD hp_clk saxihp0_fpd_aclk irq pl_ps_irq0
  }
}
set ps [dict get $ps_types [dict get $board ps]]
proc ps_config {board mhz hp_width} {
  switch [dict get $board ps] {
    ps7 {
      return [list CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ $mhz CONFIG.PCW_USE_M_AXI_GP0 1 \
        CONFIG.PCW_USE_S_AXI_HP0 1 CONFIG.PCW_S_AXI_HP0_DATA_WIDTH $hp_width \
        CONFIG.PCW_USE_FABRIC_INTERRUPT 1 CONFIG.PCW_IRQ_F2P_INTR 1]
    }
    psu {
      # GP0 is M_AXI_HPM0_FPD, GP2 is S_AXI_HP0_FPD.
      return [list CONFIG.PSU__FPGA_PL0_ENABLE 1 CONFIG.PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ $mhz \
        CONFIG.PSU__USE__M_AXI_GP0 1 CONFIG.PSU__USE__M_AXI_GP1 0 CONFIG.PSU__USE__M_AXI_GP2 0 \
        CONFIG.PSU__USE__S_AXI_GP2 1 CONFIG.PSU__SAXIGP2__DATA_WIDTH $hp_width CONFIG.PSU__USE__IRQ0 1]
    }
  }
}

# The newest installed version of a Xilinx IP, e.g. xilinx.com:ip:smartconnect -> ...:1.0.
proc latest_ip {name} {
  set defs [lsort -dictionary [get_ipdefs -all ${name}:*]]
  if {[llength $defs] == 0} { error "tessera: IP $name is not in the catalog" }
  return [lindex $defs end]
}

set proj tessera_$board_name
set proj_dir [file join $out_dir project]
file mkdir $out_dir
create_project -force -part [dict get $board part] $proj $proj_dir
set presets 0
if {[llength [get_board_parts -quiet [dict get $board board_part]]] > 0} {
  set_property board_part [dict get $board board_part] [current_project]
  set presets 1
} else {
  puts "tessera: WARNING: board files for [dict get $board board_part] are not installed;\
        the PS keeps its default (non-board) DDR and MIO settings"
}
set_property ip_repo_paths [list $ip_repo] [current_project]
update_ip_catalog
if {[llength [get_ipdefs $vlnv]] == 0} { error "tessera: IP $vlnv not found in $ip_repo" }

create_bd_design tessera
set ps_cell [create_bd_cell -type ip -vlnv [latest_ip [dict get $ps ip]] ps]
apply_bd_automation -rule [dict get $ps rule] \
  -config [concat [dict get $ps automation] [list apply_board_preset $presets]] $ps_cell
set_property -dict [ps_config $board $mhz $hp_width] $ps_cell

set acc [create_bd_cell -type ip -vlnv $vlnv accel]
set rst [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:proc_sys_reset] rst_pl]
set ctrl_ic [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:smartconnect] ctrl_ic]
set mem_ic [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:smartconnect] mem_ic]

# The accelerator's ports by type: one AXI4-Lite slave, one or more AXI4 masters, clock, reset.
set aximm {VLNV =~ "xilinx.com:interface:aximm_rtl:*"}
set acc_slaves [get_bd_intf_pins -of_objects $acc -filter "MODE == Slave && $aximm"]
set acc_masters [get_bd_intf_pins -of_objects $acc -filter "MODE == Master && $aximm"]
set acc_clk [get_bd_pins -of_objects $acc -filter {TYPE == clk}]
set acc_rst [get_bd_pins -of_objects $acc -filter {TYPE == rst}]
set acc_irq [get_bd_pins -of_objects $acc -filter {TYPE == intr}]
if {[llength $acc_slaves] != 1 || [llength $acc_masters] < 1 || [llength $acc_clk] != 1 || [llength $acc_rst] != 1} {
  error "tessera: $vlnv must have one AXI slave, AXI masters, one clock and one reset\
         (slaves: $acc_slaves; masters: $acc_masters; clocks: $acc_clk; resets: $acc_rst)"
}
set_property -dict [list CONFIG.NUM_SI 1 CONFIG.NUM_MI 1] $ctrl_ic
set_property -dict [list CONFIG.NUM_SI [llength $acc_masters] CONFIG.NUM_MI 1] $mem_ic

# One clock domain at the board's PL clock.
connect_bd_net [get_bd_pins ps/[dict get $ps clk]] [get_bd_pins ps/[dict get $ps gp_clk]] \
  [get_bd_pins ps/[dict get $ps hp_clk]] [get_bd_pins rst_pl/slowest_sync_clk] \
  [get_bd_pins ctrl_ic/aclk] [get_bd_pins mem_ic/aclk] $acc_clk
connect_bd_net [get_bd_pins ps/[dict get $ps rstn]] [get_bd_pins rst_pl/ext_reset_in]
connect_bd_net [get_bd_pins rst_pl/peripheral_aresetn] $acc_rst
connect_bd_net [get_bd_pins rst_pl/interconnect_aresetn] [get_bd_pins ctrl_ic/aresetn] [get_bd_pins mem_ic/aresetn]

connect_bd_intf_net [get_bd_intf_pins ps/[dict get $ps gp]] [get_bd_intf_pins ctrl_ic/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins ctrl_ic/M00_AXI] $acc_slaves
set i 0
foreach m $acc_masters {
  connect_bd_intf_net $m [get_bd_intf_pins mem_ic/[format S%02d_AXI $i]]
  incr i
}
connect_bd_intf_net [get_bd_intf_pins mem_ic/M00_AXI] [get_bd_intf_pins ps/[dict get $ps hp]]
if {[llength $acc_irq] == 1} {
  connect_bd_net $acc_irq [get_bd_pins ps/[dict get $ps irq]]
}

# Registers in the GP window, DDR in every accelerator master's space.
assign_bd_address
validate_bd_design
save_bd_design
set bd_file [get_files tessera.bd]
generate_target all $bd_file
set wrapper [make_wrapper -files $bd_file -top]
add_files -norecurse $wrapper
set_property top tessera_wrapper [current_fileset]
update_compile_order -fileset sources_1

launch_runs synth_1 -jobs $jobs
wait_on_run synth_1
if {[get_property PROGRESS [get_runs synth_1]] ne "100%"} { error "tessera: synthesis failed" }
launch_runs impl_1 -to_step write_bitstream -jobs $jobs
wait_on_run impl_1
if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} { error "tessera: implementation failed" }
set wns [get_property STATS.WNS [get_runs impl_1]]
if {$wns ne "" && $wns < 0} {
  puts "tessera: WARNING: timing not met at $mhz MHz (WNS $wns ns); the bitstream may misbehave"
}

set bit [file join $out_dir ${proj}.bit]
set hwh [file join $out_dir ${proj}.hwh]
file copy -force [file join [get_property DIRECTORY [get_runs impl_1]] tessera_wrapper.bit] $bit
file copy -force [file join $proj_dir ${proj}.gen sources_1 bd tessera hw_handoff tessera.hwh] $hwh
write_hw_platform -fixed -include_bit -force [file join $out_dir ${proj}.xsa]
close_project
puts "tessera: $bit, $hwh ([dict get $opts flow] flow, config $::tessera::cfg::TESSERA_CONFIG_NAME, $mhz MHz)"
exit
