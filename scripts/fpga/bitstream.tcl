# Vivado flow: block design (Zynq PS + the RTL IP or the four HLS stage IPs), synthesis, implementation, .bit/.hwh/.xsa export.
#
# vivado -mode batch -source scripts/fpga/bitstream.tcl -tclargs board=pynq-z1 flow=rtl \
#   gen_dir=build/generated/default ip_repo=build/fpga/pynq-z1-rtl-default/ip \
#   out_dir=build/fpga/pynq-z1-rtl-default [jobs=2]
# flow=hls: ip_repo="<out_dir>/hls_fetch/<board>/impl/ip <out_dir>/hls_load/<board>/impl/ip ..."
# (a list of directories, hls.tcl's four exports).
# Result: <out_dir>/tessera_<board>.bit, .hwh (PYNQ overlay pair) and .xsa.
#
# Design: PS general-purpose master -> SmartConnect -> every accelerator IP's AXI4-Lite slave;
# every accelerator AXI4 master -> SmartConnect -> PS high-performance slave (DDR); the PS PL
# clock drives everything; proc_sys_reset turns the PS reset into synchronous resets; the
# interrupts go to the PS. flow=rtl: one IP, tessera_top. flow=hls: the cells fetch, load,
# compute, store (VTA's arrangement); each AXI4-Stream master (an instruction queue or a
# dependency-token queue) -> axis_data_fifo as deep as the config's queue -> the stream slave of
# the same name on another stage; each bram port -> a blk_mem_gen of the config's geometry, true
# dual port when two stages share it (inp/wgt: load writes, compute reads; out: compute writes,
# store reads). Interfaces are found by type on each IP, so the wiring follows the IPs' ports, and
# the flow stops naming any port it cannot connect exactly once.
source [file join [file dirname [file normalize [info script]]] common.tcl]

set opts [::tessera::parse_args $argv {board flow gen_dir ip_repo out_dir} {jobs 2}]
set board_name [dict get $opts board]
set board [::tessera::board $board_name]
set gen_dir [file normalize [dict get $opts gen_dir]]
set ip_repos {}
foreach r [dict get $opts ip_repo] { lappend ip_repos [file normalize $r] }
set out_dir [file normalize [dict get $opts out_dir]]
set jobs [dict get $opts jobs]
set flow [dict get $opts flow]
# The accelerator's cells and their IPs.
set acc_ips {}
if {$flow eq "rtl"} {
  dict set acc_ips accel [::tessera::ip_vlnv rtl tessera_top]
} else {
  foreach stage [::tessera::hls_stages] { dict set acc_ips $stage [::tessera::ip_vlnv $flow $stage] }
}
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
set_property ip_repo_paths $ip_repos [current_project]
update_ip_catalog
foreach vlnv [dict values $acc_ips] {
  if {[llength [get_ipdefs $vlnv]] == 0} { error "tessera: IP $vlnv not found in $ip_repos" }
}

create_bd_design tessera
set ps_cell [create_bd_cell -type ip -vlnv [latest_ip [dict get $ps ip]] ps]
apply_bd_automation -rule [dict get $ps rule] \
  -config [concat [dict get $ps automation] [list apply_board_preset $presets]] $ps_cell
set_property -dict [ps_config $board $mhz $hp_width] $ps_cell

set rst [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:proc_sys_reset] rst_pl]
set ctrl_ic [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:smartconnect] ctrl_ic]
set mem_ic [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:smartconnect] mem_ic]

# Each accelerator IP's ports by type: one AXI4-Lite slave, AXI4 masters, one clock, one reset,
# an interrupt; HLS stages also AXI4-Stream queues and bram ports.
proc intf_type {name} { return "VLNV =~ \"xilinx.com:interface:${name}_rtl:*\"" }
set acc_cells {}
set acc_slaves {}
set acc_masters {}
set acc_clks {}
set acc_rsts {}
set acc_irqs {}
foreach {cell vlnv} $acc_ips {
  set c [create_bd_cell -type ip -vlnv $vlnv $cell]
  lappend acc_cells $c
  set slaves [get_bd_intf_pins -of_objects $c -filter "MODE == Slave && [intf_type aximm]"]
  set masters [get_bd_intf_pins -of_objects $c -filter "MODE == Master && [intf_type aximm]"]
  set clk [get_bd_pins -of_objects $c -filter {TYPE == clk}]
  set rstn [get_bd_pins -of_objects $c -filter {TYPE == rst}]
  if {[llength $slaves] != 1 || [llength $clk] != 1 || [llength $rstn] != 1} {
    error "tessera: $vlnv must have one AXI4-Lite slave, one clock and one reset\
           (slaves: $slaves; masters: $masters; clocks: $clk; resets: $rstn)"
  }
  lappend acc_slaves $slaves
  lappend acc_masters {*}$masters
  lappend acc_clks $clk
  lappend acc_rsts $rstn
  lappend acc_irqs {*}[get_bd_pins -of_objects $c -filter {TYPE == intr}]
}
if {[llength $acc_masters] < 1} { error "tessera: no accelerator IP has an AXI4 master ($acc_ips)" }
set_property -dict [list CONFIG.NUM_SI 1 CONFIG.NUM_MI [llength $acc_slaves]] $ctrl_ic
set_property -dict [list CONFIG.NUM_SI [llength $acc_masters] CONFIG.NUM_MI 1] $mem_ic

# The HLS design's queues (hls/design/tessera_hls.h: insn_queue_t, token_queue_t): the config
# parameter giving each one's depth, and its element width in bits.
set queues [dict create \
  load_q {INSN_QUEUE_DEPTH INS_WIDTH} compute_q {INSN_QUEUE_DEPTH INS_WIDTH} store_q {INSN_QUEUE_DEPTH INS_WIDTH} \
  l2c {DEP_QUEUE_DEPTH 1} c2l {DEP_QUEUE_DEPTH 1} c2s {DEP_QUEUE_DEPTH 1} s2c {DEP_QUEUE_DEPTH 1}]
# Its SRAMs: the config parameters giving each one's row width in bits and depth in rows.
set memories [dict create \
  inp_mem {INP_MATRIX_WIDTH INP_BUFF_DEPTH} wgt_mem {WGT_MATRIX_WIDTH WGT_BUFF_DEPTH} \
  out_mem {OUT_MATRIX_WIDTH ACC_BUFF_DEPTH} uop_mem {UOP_WIDTH UOP_BUFF_DEPTH} \
  acc_mem {ACC_MATRIX_WIDTH ACC_BUFF_DEPTH}]
proc param_or_number {x} { return [expr {[string is integer -strict $x] ? $x : [::tessera::param $x]}] }

# Stream queues: each AXI4-Stream master -> a FIFO as deep as the config's queue -> the one stream
# slave of the same name on another IP. axis_data_fifo takes power-of-two depths 16..32768.
set fifos {}
set stream_slaves {}
foreach c $acc_cells {
  lappend stream_slaves {*}[get_bd_intf_pins -of_objects $c -filter "MODE == Slave && [intf_type axis]"]
}
foreach c $acc_cells {
  foreach m [get_bd_intf_pins -of_objects $c -filter "MODE == Master && [intf_type axis]"] {
    set q [file tail $m]
    if {![dict exists $queues $q]} { error "tessera: stream $m is not a queue of the design ([dict keys $queues])" }
    set readers [lsearch -all -inline -glob $stream_slaves */$q]
    if {[llength $readers] != 1} { error "tessera: stream $m needs one reader, found: $readers" }
    lassign [dict get $queues $q] depth_param width
    set depth [::tessera::param $depth_param]
    if {$depth < 16 || $depth > 32768 || ($depth & ($depth - 1)) != 0} {
      error "tessera: TESSERA_$depth_param = $depth; axis_data_fifo needs a power of two in 16..32768"
    }
    set fifo [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:axis_data_fifo] ${q}_fifo]
    set_property -dict [list CONFIG.FIFO_DEPTH $depth \
      CONFIG.TDATA_NUM_BYTES [expr {([param_or_number $width] + 7) / 8}] CONFIG.IS_ACLK_ASYNC 0] $fifo
    connect_bd_intf_net $m [get_bd_intf_pins ${q}_fifo/S_AXIS]
    connect_bd_intf_net [get_bd_intf_pins ${q}_fifo/M_AXIS] [lindex $readers 0]
    lappend fifos $fifo
    set stream_slaves [lsearch -all -inline -exact -not $stream_slaves [lindex $readers 0]]
  }
}
if {[llength $stream_slaves] > 0} { error "tessera: stream slaves without a writer: $stream_slaves" }

# SRAMs: the bram ports named <memory>_PORTx, grouped by memory; one blk_mem_gen per memory, its
# port A to the first stage using it, port B to the second. Stand-alone mode with 32-bit byte
# addresses and byte write enables, as an HLS bram port drives them; read latency 1.
set bram_users {}
foreach c $acc_cells {
  foreach b [get_bd_intf_pins -of_objects $c -filter "MODE == Master && [intf_type bram]"] {
    dict lappend bram_users [regsub {_PORT[A-Z]$} [file tail $b] ""] $b
  }
}
dict for {mem users} $bram_users {
  if {![dict exists $memories $mem]} { error "tessera: bram port(s) $users name no memory of the design ([dict keys $memories])" }
  if {[llength $users] > 2} { error "tessera: memory $mem has more than two users: $users" }
  lassign [dict get $memories $mem] width_param depth_param
  set width [::tessera::param $width_param]
  set depth [::tessera::param $depth_param]
  if {$width > 4608 || $width % 8 != 0} { error "tessera: $mem is $width bits wide; blk_mem_gen takes multiples of 8 up to 4608" }
  set bram [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:blk_mem_gen] $mem]
  set cfg [list CONFIG.use_bram_block Stand_Alone CONFIG.Enable_32bit_Address true \
    CONFIG.Use_Byte_Write_Enable true CONFIG.Byte_Size 8 CONFIG.Assume_Synchronous_Clk true \
    CONFIG.Write_Depth_A $depth CONFIG.Write_Width_A $width CONFIG.Read_Width_A $width \
    CONFIG.Enable_A Use_ENA_Pin CONFIG.Use_RSTA_Pin true CONFIG.Register_PortA_Output_of_Memory_Primitives false]
  if {[llength $users] == 2} {
    lappend cfg CONFIG.Memory_Type True_Dual_Port_RAM CONFIG.Write_Width_B $width CONFIG.Read_Width_B $width \
      CONFIG.Enable_B Use_ENB_Pin CONFIG.Use_RSTB_Pin true CONFIG.Register_PortB_Output_of_Memory_Primitives false
  } else {
    lappend cfg CONFIG.Memory_Type Single_Port_RAM
  }
  set_property -dict $cfg $bram
  connect_bd_intf_net [lindex $users 0] [get_bd_intf_pins $mem/BRAM_PORTA]
  if {[llength $users] == 2} { connect_bd_intf_net [lindex $users 1] [get_bd_intf_pins $mem/BRAM_PORTB] }
}

# One clock domain at the board's PL clock.
set fifo_clks {}
set fifo_rsts {}
foreach f $fifos {
  lappend fifo_clks [get_bd_pins $f/s_axis_aclk]
  lappend fifo_rsts [get_bd_pins $f/s_axis_aresetn]
}
connect_bd_net [get_bd_pins ps/[dict get $ps clk]] [get_bd_pins ps/[dict get $ps gp_clk]] \
  [get_bd_pins ps/[dict get $ps hp_clk]] [get_bd_pins rst_pl/slowest_sync_clk] \
  [get_bd_pins ctrl_ic/aclk] [get_bd_pins mem_ic/aclk] {*}$acc_clks {*}$fifo_clks
connect_bd_net [get_bd_pins ps/[dict get $ps rstn]] [get_bd_pins rst_pl/ext_reset_in]
connect_bd_net [get_bd_pins rst_pl/peripheral_aresetn] {*}$acc_rsts {*}$fifo_rsts
connect_bd_net [get_bd_pins rst_pl/interconnect_aresetn] [get_bd_pins ctrl_ic/aresetn] [get_bd_pins mem_ic/aresetn]

connect_bd_intf_net [get_bd_intf_pins ps/[dict get $ps gp]] [get_bd_intf_pins ctrl_ic/S00_AXI]
set i 0
foreach s $acc_slaves {
  connect_bd_intf_net [get_bd_intf_pins ctrl_ic/[format M%02d_AXI $i]] $s
  incr i
}
set i 0
foreach m $acc_masters {
  connect_bd_intf_net $m [get_bd_intf_pins mem_ic/[format S%02d_AXI $i]]
  incr i
}
connect_bd_intf_net [get_bd_intf_pins mem_ic/M00_AXI] [get_bd_intf_pins ps/[dict get $ps hp]]
# One interrupt goes straight to the PS; several are concatenated into its interrupt vector.
if {[llength $acc_irqs] == 1} {
  connect_bd_net [lindex $acc_irqs 0] [get_bd_pins ps/[dict get $ps irq]]
} elseif {[llength $acc_irqs] > 1} {
  set concat [create_bd_cell -type ip -vlnv [latest_ip xilinx.com:ip:xlconcat] irq_concat]
  set_property -dict [list CONFIG.NUM_PORTS [llength $acc_irqs]] $concat
  set i 0
  foreach irq $acc_irqs {
    connect_bd_net $irq [get_bd_pins irq_concat/In$i]
    incr i
  }
  connect_bd_net [get_bd_pins irq_concat/dout] [get_bd_pins ps/[dict get $ps irq]]
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
puts "tessera: $bit, $hwh ($flow flow, config $::tessera::cfg::TESSERA_CONFIG_NAME, $mhz MHz)"
exit
