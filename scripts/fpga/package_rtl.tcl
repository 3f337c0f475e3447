# Vivado flow: packages rtl/*.sv with one config's tessera_config.svh (its packages) as the IP tessera.org:rtl:tessera_top:1.0.
#
# vivado -mode batch -source scripts/fpga/package_rtl.tcl -tclargs board=pynq-z1 \
#   gen_dir=build/generated/default rtl_dir=rtl out_dir=build/fpga/pynq-z1-rtl-default
# Result: <out_dir>/ip/ (component.xml and sources; the ip_repo for bitstream.tcl).
# Interfaces: s_axil (AXI4-Lite slave, 4 KiB register window), m_axi (AXI4 master, 32-bit
# addresses, data as wide as the config's bus), clk_i, rst_ni (active low), irq_o (level high).
# The instruction trace outputs (trace_*, docs/rtl.md) are in no interface: unconnected in a block
# design, so synthesis removes their logic.
source [file join [file dirname [file normalize [info script]]] common.tcl]

set opts [::tessera::parse_args $argv {board gen_dir rtl_dir out_dir} {}]
set board [::tessera::board [dict get $opts board]]
set gen_dir [file normalize [dict get $opts gen_dir]]
set rtl_dir [file normalize [dict get $opts rtl_dir]]
set out_dir [file normalize [dict get $opts out_dir]]
::tessera::load_config $gen_dir
set rtl [lsort [glob -nocomplain -directory $rtl_dir *.sv]]
if {[llength $rtl] == 0} { error "tessera: no *.sv in $rtl_dir" }
set svh [file join $gen_dir tessera_config.svh]
::tessera::require_files [list $svh [file join $rtl_dir tessera_top.sv]]

set ip_dir [file join $out_dir ip]
file mkdir $out_dir
create_project -force -part [dict get $board part] tessera_rtl_package [file join $out_dir package_project]
add_files -norecurse $rtl
add_files -norecurse $svh
# Every module includes "tessera_config.svh" (packages tessera_config_pkg and tessera_host_pkg); the config's copy is the only one on the path.
set_property file_type {Verilog Header} [get_files $svh]
set_property is_global_include true [get_files $svh]
set_property include_dirs [list $gen_dir $rtl_dir] [current_fileset]
set_property top tessera_top [current_fileset]
update_compile_order -fileset sources_1

lassign [split [::tessera::ip_vlnv rtl tessera_top] :] vendor library name version
ipx::package_project -root_dir $ip_dir -vendor $vendor -library $library -taxonomy /UserIP \
  -import_files -set_current true
set core [ipx::current_core]
set_property name $name $core
set_property version $version $core
set_property display_name "Tessera accelerator (RTL, config $::tessera::cfg::TESSERA_CONFIG_NAME)" $core
set_property description "VTA-compatible accelerator, tessera_top with hw/configs/$::tessera::cfg::TESSERA_CONFIG_NAME.json" $core

# The packager's inference does not know the _i/_o suffixes: drop what it guessed, declare all.
foreach bi [ipx::get_bus_interfaces -of_objects $core] {
  ipx::remove_bus_interface [get_property NAME $bi] $core
}

# Adds bus interface `bif` of type `type` (e.g. xilinx.com:interface:aximm) in `mode`, mapping
# each {LOGICAL direction} to the port <prefix><logical in lower case>_<i|o>.
proc add_interface {core bif type mode prefix signals} {
  set intf [ipx::add_bus_interface $bif $core]
  set_property abstraction_type_vlnv ${type}_rtl:1.0 $intf
  set_property bus_type_vlnv ${type}:1.0 $intf
  set_property interface_mode $mode $intf
  foreach {logical dir} $signals {
    set pm [ipx::add_port_map $logical $intf]
    set_property physical_name ${prefix}[string tolower $logical]_$dir $pm
  }
  return $intf
}

set s_axil [add_interface $core s_axil xilinx.com:interface:aximm slave s_axil_ {
  AWADDR i AWVALID i AWREADY o WDATA i WSTRB i WVALID i WREADY o BRESP o BVALID o BREADY i
  ARADDR i ARVALID i ARREADY o RDATA o RRESP o RVALID o RREADY i
}]
set m_axi [add_interface $core m_axi xilinx.com:interface:aximm master m_axi_ {
  ARADDR o ARLEN o ARSIZE o ARBURST o ARVALID o ARREADY i RDATA i RRESP i RLAST i RVALID i RREADY o
  AWADDR o AWLEN o AWSIZE o AWBURST o AWVALID o AWREADY i WDATA o WSTRB o WLAST o WVALID o WREADY i
  BRESP i BVALID i BREADY o
}]

# Clock, reset and interrupt: single-bit signal interfaces.
proc add_signal {core bif type mode logical port params} {
  set intf [ipx::add_bus_interface $bif $core]
  set_property abstraction_type_vlnv xilinx.com:signal:${type}_rtl:1.0 $intf
  set_property bus_type_vlnv xilinx.com:signal:${type}:1.0 $intf
  set_property interface_mode $mode $intf
  set_property physical_name $port [ipx::add_port_map $logical $intf]
  foreach {param value} $params {
    set_property value $value [ipx::add_bus_parameter $param $intf]
  }
}
add_signal $core clk_i clock slave CLK clk_i {ASSOCIATED_BUSIF s_axil:m_axi ASSOCIATED_RESET rst_ni}
add_signal $core rst_ni reset slave RST rst_ni {POLARITY ACTIVE_LOW}
add_signal $core irq_o interrupt master INTERRUPT irq_o {SENSITIVITY LEVEL_HIGH}

# The host registers: a 4 KiB window (12-bit AXI4-Lite address, docs/rtl.md) of 32-bit registers.
set mm [ipx::add_memory_map s_axil $core]
set_property slave_memory_map_ref s_axil $s_axil
set block [ipx::add_address_block regs $mm]
set_property range 4096 $block
set_property width 32 $block
# DRAM: 32-bit physical addresses, data as wide as the configured bus.
set space [ipx::add_address_space m_axi $core]
set_property master_address_space_ref m_axi $m_axi
set_property range [expr {1 << 32}] $space
set_property width [::tessera::param BUS_WIDTH] $space

ipx::create_xgui_files $core
ipx::update_checksums $core
ipx::check_integrity $core
ipx::save_core $core
close_project
puts "tessera: RTL IP [::tessera::ip_vlnv rtl tessera_top] in $ip_dir"
exit
