# Vitis HLS flow: C synthesis of the HLS accelerator for one board and config, exported as a Vivado IP.
#
# vitis_hls -f scripts/fpga/hls.tcl -tclargs board=pynq-z1 gen_dir=build/generated/default \
#   top=<top function> sources="hls/a.cpp hls/b.cpp" out_dir=build/fpga/pynq-z1-hls-default
# Result: the IP tessera.org:hls:<top>:1.0, unpacked in <out_dir>/hls_project/<board>/impl/ip (the
# ip_repo for bitstream.tcl) and zipped as <out_dir>/<top>.zip.
source [file join [file dirname [file normalize [info script]]] common.tcl]

set opts [::tessera::parse_args $argv {board gen_dir top sources out_dir} {cflags ""}]
set board [::tessera::board [dict get $opts board]]
set gen_dir [file normalize [dict get $opts gen_dir]]
set top [dict get $opts top]
set out_dir [file normalize [dict get $opts out_dir]]
::tessera::load_config $gen_dir
set sources {}
foreach s [dict get $opts sources] { lappend sources [file normalize $s] }
if {[llength $sources] == 0} { error "tessera: sources= names no file" }
set header [file join $gen_dir hls_config.h]
::tessera::require_files [concat $sources [list $header]]

# Each source sees the generated header and its own directory's headers.
file mkdir $out_dir
cd $out_dir
open_project -reset hls_project
set_top $top
foreach s $sources {
  add_files $s -cflags "-I$gen_dir -I[file dirname $s] [dict get $opts cflags]"
}
add_files $header

open_solution -reset -flow_target vivado [dict get $opts board]
set_part [dict get $board part]
create_clock -period [::tessera::period_ns [dict get $board clock_mhz]] -name default
# The accelerator addresses 32-bit physical DRAM; bursts may be widened up to the configured bus.
config_interface -m_axi_addr64=false \
  -m_axi_max_widen_bitwidth [::tessera::param BUS_WIDTH] \
  -m_axi_alignment_byte_size [::tessera::param BUS_BYTES]

csynth_design
export_design -format ip_catalog -rtl verilog -vendor tessera.org -library hls -version 1.0 \
  -ipname $top -output [file join $out_dir ${top}.zip]
close_project
puts "tessera: HLS IP tessera.org:hls:${top}:1.0 in [file join $out_dir hls_project [dict get $opts board] impl ip]"
exit
