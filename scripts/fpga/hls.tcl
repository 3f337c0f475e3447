# Vitis HLS flow: C synthesis of each HLS stage function (fetch, load, compute, store) as its own top, exported as four Vivado IPs.
#
# vitis_hls -f scripts/fpga/hls.tcl -tclargs board=pynq-z1 gen_dir=build/generated/default \
#   sources="hls/design/tessera_hls.cpp" out_dir=build/fpga/pynq-z1-hls-default
# Result: per stage S, one project <out_dir>/hls_S with one solution <board>; the IP
# tessera.org:hls:S:1.0 unpacked in <out_dir>/hls_S/<board>/impl/ip (bitstream.tcl takes the four
# directories as ip_repo) and zipped as <out_dir>/S.zip. Every stage gets the same part, clock,
# interface configuration and generated header, so the four IPs agree on the config.
source [file join [file dirname [file normalize [info script]]] common.tcl]

set opts [::tessera::parse_args $argv {board gen_dir sources out_dir} {cflags ""}]
set board [::tessera::board [dict get $opts board]]
set gen_dir [file normalize [dict get $opts gen_dir]]
set out_dir [file normalize [dict get $opts out_dir]]
::tessera::load_config $gen_dir
set sources {}
foreach s [dict get $opts sources] { lappend sources [file normalize $s] }
if {[llength $sources] == 0} { error "tessera: sources= names no file" }
set header [file join $gen_dir hls_config.h]
::tessera::require_files [concat $sources [list $header]]

file mkdir $out_dir
cd $out_dir
foreach stage [::tessera::hls_stages] {
  # Each source sees the generated header and its own directory's headers.
  open_project -reset hls_$stage
  set_top $stage
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
  lassign [split [::tessera::ip_vlnv hls $stage] :] vendor library name version
  export_design -format ip_catalog -rtl verilog -vendor $vendor -library $library -version $version \
    -ipname $name -output [file join $out_dir ${stage}.zip]
  close_project
  puts "tessera: HLS IP [::tessera::ip_vlnv hls $stage] in [file join $out_dir hls_$stage [dict get $opts board] impl ip]"
}
exit
