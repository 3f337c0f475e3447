# Checks that `make bitstream-<board>` without Vivado/Vitis HLS on PATH fails at once, naming the missing tool.
# tclsh make_check.tcl <make> <source dir>
# Exits 77 (ctest's SKIP_RETURN_CODE for this test) when a Xilinx tool sits in /usr/bin or /bin,
# where no PATH can hide it: the check cannot run there, which is not a pass.
lassign $argv make src
# A PATH with the shell and coreutils but none of the Xilinx tools.
set env(PATH) /usr/bin:/bin
set bad 0
foreach {target flow want} {
  bitstream-pynq-z1 rtl {not on PATH: vivado}
  bitstream-ultra96v2 hls {not on PATH: vitis_hls vivado}
  bitstream-zcu104 rtl {not on PATH: vivado}
} {
  foreach tool {vivado vitis_hls} {
    if {[auto_execok $tool] ne ""} { puts "SKIP: $tool is in /usr/bin or /bin, so make cannot be run without it"; exit 77 }
  }
  set rc [catch {exec $make -C $src --no-print-directory $target FLOW=$flow 2>@1} out]
  if {$rc == 0} {
    puts "FAIL $target FLOW=$flow succeeded without the tools"; set bad 1
  } elseif {[string first $want $out] < 0} {
    puts "FAIL $target FLOW=$flow: output does not say '$want':\n$out"; set bad 1
  } else {
    puts "ok $target FLOW=$flow: [lindex [split $out \n] 0]"
  }
}
exit $bad
