# Runs the FPGA flows in an interpreter whose Xilinx commands are stubs, and checks what they pass against the config and board table.
#
# tclsh flow_check.tcl scripts=<scripts/fpga> boards=<reference boards.tcl> rtl=<rtl dir>
#       work=<scratch dir> gen=<build/generated/<cfg>> [gen=...]
# For every config and board it runs hls.tcl, package_rtl.tcl and bitstream.tcl (both flows) and
# prints one line per disagreement; exit status 1 if there is any.

foreach w $argv {
  regexp {^([a-z]+)=(.*)$} $w -> k v
  lappend opt($k) $v
}
foreach k {scripts boards rtl work gen} {
  if {![info exists opt($k)]} { puts stderr "flow_check: missing $k=..."; exit 2 }
}
set scripts [file normalize [lindex $opt(scripts) 0]]
set rtl_dir [file normalize [lindex $opt(rtl) 0]]
set work [file normalize [lindex $opt(work) 0]]
source [lindex $opt(boards) 0]
set failures 0
set checks 0

proc fail {ctx msg} { global failures; incr failures; puts "FAIL $ctx: $msg" }
proc expect {ctx what got want} {
  global checks
  incr checks
  if {$got ne $want} { fail $ctx "$what is '$got', expected '$want'" }
}
proc expect_num {ctx what got want} {
  global checks
  incr checks
  if {![string is double -strict $got] || abs($got - $want) > 1e-9} { fail $ctx "$what is '$got', expected $want" }
}

# ---- The stub interpreter -------------------------------------------------------------------
# Every command a flow may call from the Xilinx tools. Anything else unknown is an error, so a
# flow cannot call a command the stubs (and this list) do not know of.
set xilinx_commands {
  open_project set_top add_files open_solution set_part create_clock config_interface csynth_design
  export_design close_project create_project set_property get_property get_files current_fileset
  update_compile_order current_project get_board_parts update_ip_catalog get_ipdefs
  create_bd_design create_bd_cell apply_bd_automation get_bd_intf_pins get_bd_pins connect_bd_net
  connect_bd_intf_net assign_bd_address validate_bd_design save_bd_design generate_target
  make_wrapper launch_runs wait_on_run get_runs write_hw_platform
  ipx::package_project ipx::current_core ipx::get_bus_interfaces ipx::remove_bus_interface
  ipx::add_bus_interface ipx::add_port_map ipx::add_bus_parameter ipx::add_memory_map
  ipx::add_address_block ipx::add_address_space ipx::create_xgui_files ipx::update_checksums
  ipx::check_integrity ipx::save_core
}

# The accelerator ports the stubbed block design reports for the IP of each flow.
set acc_ports {
  rtl {slave /accel/s_axil master /accel/m_axi clk /accel/clk_i rst /accel/rst_ni intr /accel/irq_o}
  hls {slave /accel/s_axi_control master {/accel/m_axi_gmem0 /accel/m_axi_gmem1}
       clk /accel/ap_clk rst /accel/ap_rst_n intr /accel/interrupt}
}

# Whether the stubbed Vivado has the board files installed.
set board_files 1

# Records a call; returns what the real tool would return, as far as the flows use it.
proc stub {flow cmd args} {
  global calls acc_ports
  lappend calls [list $cmd {*}$args]
  set last [lindex $args end]
  set ports [dict get $acc_ports $flow]
  switch -- $cmd {
    create_bd_cell { return /$last }
    get_bd_pins - get_bd_intf_pins {
      set of [lsearch $args -of_objects]
      if {$of < 0} { return /$last }
      set filter [lindex $args [expr {[lsearch $args -filter] + 1}]]
      foreach {pat key} {{MODE == Slave*} slave {MODE == Master*} master {TYPE == clk} clk {TYPE == rst} rst {TYPE == intr} intr} {
        if {[string match $pat $filter]} { return [dict get $ports $key] }
      }
      error "stub $cmd: unexpected filter '$filter'"
    }
    get_ipdefs {
      if {[string match *:* $last] && [string match {*:\*} $last]} {
        return [list [string range $last 0 end-2]:1.0 [string range $last 0 end-2]:2.1]
      }
      return $last
    }
    get_board_parts { global board_files; return [expr {$board_files ? $last : ""}] }
    get_property {
      switch -- [lindex $args 0] {
        PROGRESS { return 100% }
        STATS.WNS { return 0.25 }
        DIRECTORY { return /stub/runs/[lindex $args 1] }
        NAME { return $last }
      }
      return ""
    }
    ipx::current_core { return core }
    ipx::get_bus_interfaces { return {} }
    ipx::add_bus_interface { return bif:[lindex $args 0] }
    ipx::add_port_map { return pm:[lindex $args 1]:[lindex $args 0] }
    ipx::add_bus_parameter { return par:[lindex $args 1]:[lindex $args 0] }
    ipx::add_memory_map { return mm:[lindex $args 0] }
    ipx::add_address_block { return ab:[lindex $args 0] }
    ipx::add_address_space { return as:[lindex $args 0] }
    get_files - get_runs { return $last }
    current_fileset { return sources_1 }
    current_project { return project }
    make_wrapper { return /stub/tessera_wrapper.v }
  }
  return ""
}

# Runs `script` with argv `words` in a fresh interpreter; returns the recorded calls.
proc run_flow {script flow words} {
  global calls xilinx_commands
  set calls {}
  set i [interp create]
  $i eval {namespace eval ipx {}}
  foreach c $xilinx_commands { interp alias $i $c {} stub $flow $c }
  interp alias $i exit {} stub $flow exit
  interp alias $i puts {} stub $flow puts
  # Files the flows copy out of a Vivado project do not exist here: record the copy instead.
  $i eval {rename file tcl_file}
  interp alias $i file {} stub_file $i
  $i eval [list set argv $words]
  $i eval [list set argc [llength $words]]
  set cwd [pwd]
  set rc [catch {$i eval [list source $script]} err]
  cd $cwd
  interp delete $i
  if {$rc} { return -code error $err }
  return $calls
}
proc stub_file {i sub args} {
  global calls
  if {$sub eq "copy"} { lappend calls [list file copy {*}$args]; return "" }
  return [$i eval [list tcl_file $sub {*}$args]]
}

# Calls of one command; option value of a call.
proc calls_of {calls cmd} {
  set r {}
  foreach c $calls { if {[lindex $c 0] eq $cmd} { lappend r $c } }
  return $r
}
proc option {call name} {
  set k [lsearch -exact $call $name]
  if {$k < 0} { return "" }
  return [lindex $call [expr {$k + 1}]]
}
# Positional arguments of a call (options and their values removed; flags listed take no value).
proc positional {call {flags {}}} {
  set r {}
  for {set k 1} {$k < [llength $call]} {incr k} {
    set a [lindex $call $k]
    if {[string match -* $a]} { if {$a ni $flags} { incr k } ; continue }
    lappend r $a
  }
  return $r
}
proc index_of {calls cmd} {
  set k 0
  foreach c $calls { if {[lindex $c 0] eq $cmd} { return $k }; incr k }
  return -1
}
# set_property NAME VALUE OBJ and set_property -dict {...} OBJ, folded into one dict per object.
proc properties {calls} {
  set props {}
  foreach c [calls_of $calls set_property] {
    if {[lindex $c 1] eq "-dict"} {
      foreach {k v} [lindex $c 2] { dict set props [lindex $c 3] $k $v }
    } else {
      dict set props [lindex $c end] [lindex $c 1] [lindex $c 2]
    }
  }
  return $props
}
proc prop {props obj key} {
  if {[dict exists $props $obj $key]} { return [dict get $props $obj $key] }
  return "<unset>"
}

# Ports of tessera_top, from the RTL itself.
proc rtl_ports {rtl_dir} {
  set fh [open [file join $rtl_dir tessera_top.sv]]
  set text [read $fh]
  close $fh
  set ports {}
  foreach {- name} [regexp -all -inline -line {^\s*(?:input|output)\s+logic\s*(?:\[[^\]]*\]\s*)?(\w+)} $text] {
    lappend ports $name
  }
  return [lsort $ports]
}
set ports [rtl_ports $rtl_dir]
set fh [open [file join $rtl_dir tessera_top.sv]]
regexp {\[(\d+):0\]\s+s_axil_awaddr_i} [read $fh] -> awaddr_msb
set register_window [expr {1 << ($awaddr_msb + 1)}]
seek $fh 0
regexp {\[(\d+):0\]\s+m_axi_araddr_o} [read $fh] -> araddr_msb
close $fh
set dram_space [expr {1 << ($araddr_msb + 1)}]

# ---- Checks ----------------------------------------------------------------------------------
set ps_expect {
  ps7 {ip xilinx.com:ip:processing_system7 clock CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ
       hp_width CONFIG.PCW_S_AXI_HP0_DATA_WIDTH gp /ps/M_AXI_GP0 hp /ps/S_AXI_HP0 pl_clk /ps/FCLK_CLK0
       pl_rstn /ps/FCLK_RESET0_N}
  psu {ip xilinx.com:ip:zynq_ultra_ps_e clock CONFIG.PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ
       hp_width CONFIG.PSU__SAXIGP2__DATA_WIDTH gp /ps/M_AXI_HPM0_FPD hp /ps/S_AXI_HP0_FPD
       pl_clk /ps/pl_clk0 pl_rstn /ps/pl_resetn0}
}

foreach gen $opt(gen) {
  set gen [file normalize $gen]
  # The config, read independently of the flows.
  set ci [interp create -safe]
  set fh [open [file join $gen tessera_config.tcl]]
  $ci eval [read $fh]
  close $fh
  set cfg [$ci eval {set TESSERA_CONFIG_NAME}]
  set bus [$ci eval {set TESSERA_BUS_WIDTH}]
  set bus_bytes [$ci eval {set TESSERA_BUS_BYTES}]
  interp delete $ci

  # HLS sources: two files (the hls/ code need not exist for this check).
  set src_dir [file join $work $cfg hls_src]
  file mkdir $src_dir
  set sources [list [file join $src_dir accel.cpp] [file join $src_dir modules.cpp]]
  foreach s $sources { close [open $s w] }

  foreach board [lsort [dict keys $tessera_boards]] {
    set b [dict get $tessera_boards $board]
    set ps [dict get $ps_expect [dict get $b ps]]
    set period [expr {1000.0 / [dict get $b clock_mhz]}]
    set out [file join $work $cfg $board]
    set ip_of {}

    # -- HLS
    set ctx "$cfg/$board/hls.tcl"
    if {[catch {run_flow [file join $scripts hls.tcl] hls [list board=$board gen_dir=$gen top=tessera_hls_top \
          sources=$sources out_dir=$out/hls]} c]} {
      fail $ctx "flow error: $c"
    } else {
      expect $ctx "set_part" [positional [lindex [calls_of $c set_part] 0]] [list [dict get $b part]]
      expect_num $ctx "clock period" [option [lindex [calls_of $c create_clock] 0] -period] $period
      expect $ctx "set_top" [positional [lindex [calls_of $c set_top] 0]] tessera_hls_top
      set added {}
      foreach a [calls_of $c add_files] {
        set f [positional $a]
        lappend added {*}$f
        if {[file extension $f] eq ".cpp" && [string first "-I$gen " "[option $a -cflags] "] < 0} {
          fail $ctx "$f is compiled without -I$gen"
        }
      }
      expect $ctx "added files" [lsort $added] [lsort [concat $sources [list [file join $gen hls_config.h]]]]
      set ci [lindex [calls_of $c config_interface] 0]
      expect $ctx "m_axi_max_widen_bitwidth" [option $ci -m_axi_max_widen_bitwidth] $bus
      expect $ctx "m_axi_alignment_byte_size" [option $ci -m_axi_alignment_byte_size] $bus_bytes
      expect $ctx "32-bit m_axi addresses" [expr {"-m_axi_addr64=false" in $ci}] 1
      expect $ctx "flow target" [option [lindex [calls_of $c open_solution] 0] -flow_target] vivado
      set ex [lindex [calls_of $c export_design] 0]
      expect $ctx "export format" [option $ex -format] ip_catalog
      expect $ctx "csynth before export" [expr {[index_of $c csynth_design] >= 0 && [index_of $c csynth_design] < [index_of $c export_design]}] 1
      dict set ip_of hls "[option $ex -vendor]:[option $ex -library]:[option $ex -ipname]:[option $ex -version]"
    }

    # -- RTL packaging
    set ctx "$cfg/$board/package_rtl.tcl"
    if {[catch {run_flow [file join $scripts package_rtl.tcl] rtl [list board=$board gen_dir=$gen rtl_dir=$rtl_dir \
          out_dir=$out/rtl]} c]} {
      fail $ctx "flow error: $c"
    } else {
      set p [properties $c]
      expect $ctx "part" [option [lindex [calls_of $c create_project] 0] -part] [dict get $b part]
      set added {}
      foreach a [calls_of $c add_files] { foreach x [positional $a {-norecurse}] { lappend added {*}$x } }
      set want [concat [glob -directory $rtl_dir *.sv] [list [file join $gen tessera_config.svh]]]
      expect $ctx "added files" [lsort $added] [lsort $want]
      expect $ctx "include_dirs has the config" [expr {$gen in [prop $p sources_1 include_dirs]}] 1
      expect $ctx "top" [prop $p sources_1 top] tessera_top
      # Every port of tessera_top is in exactly one interface, each once.
      set mapped {}
      foreach pm [dict keys $p pm:*] { lappend mapped [prop $p $pm physical_name] }
      expect $ctx "mapped ports" [lsort $mapped] $ports
      expect $ctx "s_axil mode" [prop $p bif:s_axil interface_mode] slave
      expect $ctx "m_axi mode" [prop $p bif:m_axi interface_mode] master
      expect $ctx "s_axil type" [prop $p bif:s_axil bus_type_vlnv] xilinx.com:interface:aximm:1.0
      expect $ctx "m_axi type" [prop $p bif:m_axi bus_type_vlnv] xilinx.com:interface:aximm:1.0
      expect $ctx "clock's buses" [lsort [split [prop $p par:bif:clk_i:ASSOCIATED_BUSIF value] :]] {m_axi s_axil}
      expect $ctx "clock's reset" [prop $p par:bif:clk_i:ASSOCIATED_RESET value] rst_ni
      expect $ctx "reset polarity" [prop $p par:bif:rst_ni:POLARITY value] ACTIVE_LOW
      expect $ctx "register window" [prop $p ab:regs range] $register_window
      expect $ctx "master data width" [prop $p as:m_axi width] $bus
      expect $ctx "master address space" [prop $p as:m_axi range] $dram_space
      expect $ctx "core saved" [expr {[index_of $c ipx::save_core] > [index_of $c ipx::add_address_space]}] 1
      set pk [lindex [calls_of $c ipx::package_project] 0]
      dict set ip_of rtl "[option $pk -vendor]:[option $pk -library]:[prop $p core name]:[prop $p core version]"
    }

    # -- Block design and bitstream, around each IP
    foreach flow {rtl hls} {
      set ctx "$cfg/$board/bitstream.tcl flow=$flow"
      set top [expr {$flow eq "hls" ? "tessera_hls_top" : "tessera_top"}]
      if {[catch {run_flow [file join $scripts bitstream.tcl] $flow [list board=$board flow=$flow gen_dir=$gen \
            ip_repo=$out/$flow/ip out_dir=$out/bit_$flow top=$top]} c]} {
        fail $ctx "flow error: $c"
        continue
      }
      set p [properties $c]
      expect $ctx "part" [option [lindex [calls_of $c create_project] 0] -part] [dict get $b part]
      expect $ctx "board part" [prop $p project board_part] [dict get $b board_part]
      set cells {}
      foreach cc [calls_of $c create_bd_cell] { dict set cells [lindex $cc end] [option $cc -vlnv] }
      expect $ctx "PS IP" [string match "[dict get $ps ip]:*" [dict get $cells ps]] 1
      if {[dict exists $ip_of $flow]} {
        expect $ctx "accelerator IP (as packaged)" [dict get $cells accel] [dict get $ip_of $flow]
      }
      expect $ctx "proc_sys_reset present" [llength [lsearch -all -glob [dict values $cells] xilinx.com:ip:proc_sys_reset:*]] 1
      expect $ctx "PL clock MHz" [prop $p /ps [dict get $ps clock]] [dict get $b clock_mhz]
      expect $ctx "HP data width" [prop $p /ps [dict get $ps hp_width]] [expr {min($bus, [dict get $b hp_width])}]
      set auto [option [lindex [calls_of $c apply_bd_automation] 0] -config]
      expect $ctx "presets applied" [dict get $auto apply_board_preset] 1
      if {[dict get $b ps] eq "ps7"} { expect $ctx "DDR and MIO external" [dict get $auto make_external] "FIXED_IO, DDR" }
      # Connectivity: PS GP -> interconnect -> accelerator slave; accelerator masters -> interconnect -> PS HP.
      set links {}
      foreach ic [calls_of $c connect_bd_intf_net] { lappend links [lrange $ic 1 2] }
      set acc [dict get $acc_ports $flow]
      proc peer_cell {links pin} {
        foreach l $links {
          if {[lindex $l 0] eq $pin} { return [file dirname [lindex $l 1]] }
          if {[lindex $l 1] eq $pin} { return [file dirname [lindex $l 0]] }
        }
        return <unconnected>
      }
      expect $ctx "GP and accelerator slave share an interconnect" \
        [peer_cell $links [dict get $ps gp]] [peer_cell $links [dict get $acc slave]]
      foreach m [dict get $acc master] {
        expect $ctx "$m and HP share an interconnect" [peer_cell $links $m] [peer_cell $links [dict get $ps hp]]
      }
      set nets [calls_of $c connect_bd_net]
      set clocked 0
      foreach n $nets { if {[dict get $ps pl_clk] in $n && [dict get $acc clk] in $n} { set clocked 1 } }
      expect $ctx "accelerator clocked by the PL clock" $clocked 1
      set reset 0
      foreach n $nets { if {[dict get $ps pl_rstn] in $n && "/rst_pl/ext_reset_in" in $n} { set reset 1 } }
      expect $ctx "PS reset into proc_sys_reset" $reset 1
      set order {}
      foreach cmd {assign_bd_address validate_bd_design make_wrapper launch_runs write_hw_platform} { lappend order [index_of $c $cmd] }
      expect $ctx "step order" [expr {[lsort -integer $order] eq $order && [lindex $order 0] >= 0}] 1
      set bitrun [lsearch -inline -glob [calls_of $c launch_runs] {launch_runs impl_1*}]
      expect $ctx "impl runs to write_bitstream" [option $bitrun -to_step] write_bitstream
      set copied {}
      foreach fc [calls_of $c file] { lappend copied [file extension [lindex $fc end]] }
      expect $ctx "exported .bit and .hwh" [lsort $copied] {.bit .hwh}
    }

    # -- Without the board files: no board part, no presets, the rest unchanged.
    set ctx "$cfg/$board/bitstream.tcl without board files"
    set board_files 0
    set rc [catch {run_flow [file join $scripts bitstream.tcl] rtl [list board=$board flow=rtl gen_dir=$gen \
          ip_repo=$out/rtl/ip out_dir=$out/bit_noboard]} c]
    set board_files 1
    if {$rc} {
      fail $ctx "flow error: $c"
    } else {
      set p [properties $c]
      expect $ctx "board part" [prop $p project board_part] <unset>
      expect $ctx "presets" [dict get [option [lindex [calls_of $c apply_bd_automation] 0] -config] apply_board_preset] 0
      expect $ctx "part" [option [lindex [calls_of $c create_project] 0] -part] [dict get $b part]
      expect $ctx "launch_runs" [llength [calls_of $c launch_runs]] 2
    }
  }
}
puts "flow_check: $checks checks, $failures failures"
exit [expr {$failures > 0}]
