# Proves flow_check.tcl catches hard-coded values: copies of the flows, each with one value that disagrees with the config or board table, must fail it.
#
# tclsh mutation_check.tcl scripts=<scripts/fpga> rtl=<rtl dir> hls=<hls/design dir> work=<scratch dir> gen=<dir> [gen=...]
foreach w $argv {
  regexp {^([a-z]+)=(.*)$} $w -> k v
  lappend opt($k) $v
}
set here [file dirname [file normalize [info script]]]
set scripts [file normalize [lindex $opt(scripts) 0]]
set work [file normalize [lindex $opt(work) 0]]
set gens {}
foreach g $opt(gen) { lappend gens gen=$g }

# {file, text in the flow, hard-coded replacement, what the mistake is}
set mutations {
  {hls.tcl {[::tessera::param BUS_WIDTH]} 128 "HLS burst width hard-coded to 128 bits"}
  {hls.tcl {[::tessera::param BUS_BYTES]} 8 "HLS alignment hard-coded to 8 bytes"}
  {hls.tcl {-period [::tessera::period_ns [dict get $board clock_mhz]]} {-period 5} "HLS clock hard-coded to 5 ns"}
  {hls.tcl {set_part [dict get $board part]} {set_part xc7z020clg400-1} "HLS part hard-coded to the Pynq-Z1's"}
  {hls.tcl {add_files $header} {add_files [file join [file dirname $gen_dir] default hls_config.h]} "HLS header of the default config"}
  {package_rtl.tcl {width [::tessera::param BUS_WIDTH] $space} {width 64 $space} "RTL master width hard-coded to 64"}
  {package_rtl.tcl {-directory $rtl_dir *.sv} {-directory $rtl_dir tessera_top.sv} "RTL file list cut to the top"}
  {package_rtl.tcl {set_property range 4096 $block} {set_property range 65536 $block} "register window 64 KiB"}
  {bitstream.tcl {[dict get $board part] $proj $proj_dir} {xczu7ev-ffvc1156-2-e $proj $proj_dir} "Vivado part hard-coded to the ZCU104's"}
  {bitstream.tcl {min([::tessera::param BUS_WIDTH], [dict get $board hp_width])} {64} "HP width hard-coded to 64"}
  {bitstream.tcl {set mhz [dict get $board clock_mhz]} {set mhz 150} "PL clock hard-coded to 150 MHz"}
  {boards.tcl {clock_mhz 100 hp_width 64} {clock_mhz 125 hp_width 64} "copy's board table disagrees with the reference"}
  {common.tcl {return {fetch load compute store}} {return {fetch load compute}} "HLS stage store not synthesized"}
  {bitstream.tcl {set depth [::tessera::param $depth_param]} {set depth 1024} "queue FIFO depth hard-coded to 1024"}
  {bitstream.tcl {load_q {INSN_QUEUE_DEPTH INS_WIDTH}} {load_q {INSN_QUEUE_DEPTH 64}} "load queue FIFO 8 bytes wide"}
  {bitstream.tcl {wgt_mem {WGT_MATRIX_WIDTH WGT_BUFF_DEPTH}} {wgt_mem {INP_MATRIX_WIDTH WGT_BUFF_DEPTH}} "weight SRAM as wide as the input SRAM"}
  {bitstream.tcl {CONFIG.Write_Width_A $width CONFIG.Read_Width_A $width} {CONFIG.Write_Width_A 128 CONFIG.Read_Width_A 128} "SRAM port A width hard-coded to 128"}
  {bitstream.tcl {CONFIG.Write_Depth_A $depth} {CONFIG.Write_Depth_A 2048} "SRAM depth hard-coded to 2048"}
  {bitstream.tcl {CONFIG.Memory_Type True_Dual_Port_RAM} {CONFIG.Memory_Type Simple_Dual_Port_RAM} "shared SRAM simple dual port"}
}

proc copy_scripts {dst} {
  global scripts
  file delete -force $dst
  file mkdir [file dirname $dst]
  file copy $scripts $dst
}
proc run_check {dir tag} {
  global here scripts opt work gens
  set cmd [list [info nameofexecutable] [file join $here flow_check.tcl] scripts=$dir \
    boards=[file join $scripts boards.tcl] rtl=[lindex $opt(rtl) 0] hls=[lindex $opt(hls) 0] work=[file join $work run_$tag] {*}$gens]
  set rc [catch {exec {*}$cmd} out]
  return [list $rc $out]
}

set bad 0
# Control: an unchanged copy passes.
copy_scripts [file join $work control]
lassign [run_check [file join $work control] control] rc out
if {$rc} { puts "FAIL control copy does not pass flow_check:\n$out"; exit 1 }
puts "ok unchanged copy passes"

set n 0
foreach m $mutations {
  lassign $m file from to what
  incr n
  set dir [file join $work mutant_$n]
  copy_scripts $dir
  set path [file join $dir $file]
  set fh [open $path]; set text [read $fh]; close $fh
  set changed [string map [list $from $to] $text]
  if {$changed eq $text} { puts "FAIL mutation $n ($what): '$from' not found in $file"; set bad 1; continue }
  set fh [open $path w]; puts -nonewline $fh $changed; close $fh
  lassign [run_check $dir $n] rc out
  set first [lindex [lsearch -all -inline -glob [split $out \n] FAIL*] 0]
  if {$rc == 0 || $first eq ""} {
    puts "FAIL mutation $n ($what) was not detected"
    set bad 1
  } else {
    puts "ok mutation $n ($what) detected: $first"
  }
}
exit $bad
