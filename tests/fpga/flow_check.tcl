# Runs the FPGA flows in an interpreter whose Xilinx commands are stubs, and checks what they pass against the config, board table and HLS design.
#
# tclsh flow_check.tcl scripts=<scripts/fpga> boards=<reference boards.tcl> rtl=<rtl dir>
#       hls=<hls/design dir> work=<scratch dir> gen=<build/generated/<cfg>> [gen=...]
# For every config and board it runs hls.tcl, package_rtl.tcl and bitstream.tcl (both flows) and
# prints one line per disagreement; exit status 1 if there is any. The HLS IPs' ports are derived
# from the design's INTERFACE pragmas (as Vitis HLS names them), so the block design is checked
# against the stage functions as written.

foreach w $argv {
  regexp {^([a-z]+)=(.*)$} $w -> k v
  lappend opt($k) $v
}
foreach k {scripts boards rtl hls work gen} {
  if {![info exists opt($k)]} { puts stderr "flow_check: missing $k=..."; exit 2 }
}
set scripts [file normalize [lindex $opt(scripts) 0]]
set rtl_dir [file normalize [lindex $opt(rtl) 0]]
set hls_dir [file normalize [lindex $opt(hls) 0]]
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

# ---- The HLS design, read from its source ----------------------------------------------------
proc slurp {f} { set fh [open $f]; set t [read $fh]; close $fh; return $t }
set hls_cpp [slurp [file join $hls_dir tessera_hls.cpp]]
set hls_h [slurp [file join $hls_dir tessera_hls.h]]
# typedef name -> its definition text (ap_uint<W>, hls::stream<T, DEPTH>).
set typedefs {}
foreach {- def name} [regexp -all -inline {typedef\s+([^;]+?)\s+(\w+);} $hls_h] { dict set typedefs $name $def }
# Stage function -> {signature, body}: every function defined at column 0 of the .cpp.
set functions {}
set starts [regexp -all -indices -line -inline {^(?:int|void) (\w+)\(} $hls_cpp]
foreach {whole name} $starts {
  set from [lindex $whole 0]
  set end [string first "\n\}\n" $hls_cpp $from]
  set text [string range $hls_cpp $from $end]
  set open [string first "(" $text]
  set close [string first ") \{" $text]
  dict set functions [string range $hls_cpp {*}$name] [list [string range $text [expr {$open + 1}] [expr {$close - 1}]] $text]
}
# Synthesis tops: functions whose block control is on s_axilite (port = return).
set hls_tops {}
# Per top: its interface pins as Vitis HLS exports them, as {name vlnv mode} (intf) and {name type} (pins),
# and per stream port whether the stage reads it; per bram port its element type and depth.
set hls_intf {}
set hls_pins {}
set hls_stream_dir {}
set hls_ports {}
dict for {fn def} $functions {
  lassign $def sig body
  set pragmas [regexp -all -inline -line {#pragma HLS INTERFACE (\w+) port = (\w+)(.*)$} $body]
  if {[lsearch -exact $pragmas return] < 0} { continue }
  lappend hls_tops $fn
  set params {}
  foreach p [split $sig ,] {
    if {[regexp {(\w+_t)\s*[&*]?\s*(\w+)\s*(?:\[(\w+)\])?\s*$} [string trim $p] -> type pname dim]} {
      dict set params $pname [list $type $dim]
    }
  }
  set lite {}
  set axilite_ports {}
  set intf {}
  foreach {- mode port rest} $pragmas {
    set bundle ""
    regexp {bundle = (\w+)} $rest -> bundle
    switch -- $mode {
      s_axilite { lappend lite [expr {$bundle eq "" ? "control" : $bundle}]; lappend axilite_ports $port }
      m_axi { lappend intf [list m_axi_$bundle xilinx.com:interface:aximm_rtl:1.0 Master] }
      axis {
        set reads [expr {[regexp "\\m$port\\.read" $body] || [regexp "take\\(\[^,\]*,\\s*$port\\)" $body]}]
        dict set hls_stream_dir $fn $port [expr {$reads ? "in" : "out"}]
        lappend intf [list $port xilinx.com:interface:axis_rtl:1.0 [expr {$reads ? "Slave" : "Master"}]]
        dict set hls_ports $fn $port [dict get $params $port]
      }
      bram {
        lappend intf [list ${port}_PORTA xilinx.com:interface:bram_rtl:1.0 Master]
        dict set hls_ports $fn $port [dict get $params $port]
      }
    }
  }
  # An m_axi offset register without its own s_axilite pragma goes to the default bundle, control.
  foreach {- mode port rest} $pragmas {
    if {$mode eq "m_axi" && [string match "*offset = slave*" $rest] && $port ni $axilite_ports} { lappend lite control }
  }
  foreach b [lsort -unique $lite] { lappend intf [list s_axi_$b xilinx.com:interface:aximm_rtl:1.0 Slave] }
  dict set hls_intf $fn [lsort -unique $intf]
  dict set hls_pins $fn {{ap_clk clk} {ap_rst_n rst} {interrupt intr}}
}
# The value of a C width/depth expression: a number or VTA_X / TESSERA_X (TESSERA_X of the config).
proc cfg_value {cfg expr} {
  set e [string trim $expr]
  if {[string is integer -strict $e]} { return $e }
  regsub {^(VTA|TESSERA)_} $e {} e
  return [dict get $cfg $e]
}
# Element width in bits of an ap_uint typedef.
proc type_width {cfg type} {
  global typedefs
  regexp {^ap_u?int<\s*([^>]+)>$} [dict get $typedefs $type] -> w
  return [cfg_value $cfg $w]
}
# A stream typedef -> {element width, the config parameter naming the queue's depth}.
proc stream_geometry {cfg type} {
  global typedefs
  regexp {^hls::stream<\s*(\w+)\s*,\s*(?:VTA_|TESSERA_)(\w+)} [dict get $typedefs $type] -> elem depth_param
  return [list [type_width $cfg $elem] [dict get $cfg $depth_param]]
}

# The interface pins the stubbed block design reports for each accelerator cell, per flow.
set rtl_model {
  accel {intf {{s_axil xilinx.com:interface:aximm_rtl:1.0 Slave} {m_axi xilinx.com:interface:aximm_rtl:1.0 Master}}
         pins {{clk_i clk} {rst_ni rst} {irq_o intr}}}
}
set hls_model {}
foreach t $hls_tops { dict set hls_model $t [dict create intf [dict get $hls_intf $t] pins [dict get $hls_pins $t]] }
set pin_model [dict create rtl $rtl_model hls $hls_model]

# Whether a pin {name prop value ...} passes a Vivado -filter of `A == v` / `A =~ glob` joined by &&.
proc filter_match {props filter} {
  foreach clause [split [string map {&& \x01} $filter] \x01] {
    if {![regexp {^\s*(\w+)\s*(==|=~)\s*"?([^"]*?)"?\s*$} $clause -> key op want]} { error "stub: cannot parse filter clause '$clause'" }
    if {![dict exists $props $key]} { return 0 }
    set got [dict get $props $key]
    if {$op eq "==" && $got ne $want} { return 0 }
    if {$op eq "=~" && ![string match $want $got]} { return 0 }
  }
  return 1
}

# Whether the stubbed Vivado has the board files installed.
set board_files 1

# Records a call; returns what the real tool would return, as far as the flows use it.
proc stub {flow cmd args} {
  global calls pin_model
  lappend calls [list $cmd {*}$args]
  set last [lindex $args end]
  set cells [dict get $pin_model $flow]
  switch -- $cmd {
    create_bd_cell { return /$last }
    get_bd_pins - get_bd_intf_pins {
      set of [lsearch $args -of_objects]
      if {$of < 0} { return /[string trimleft $last /] }
      set cell [string trimleft [lindex $args [expr {$of + 1}]] /]
      set filter [lindex $args [expr {[lsearch $args -filter] + 1}]]
      if {![dict exists $cells $cell]} { error "stub $cmd: no pin model for cell '$cell'" }
      set r {}
      if {$cmd eq "get_bd_intf_pins"} {
        foreach p [dict get $cells $cell intf] {
          lassign $p name vlnv mode
          if {[filter_match [list NAME $name VLNV $vlnv MODE $mode] $filter]} { lappend r /$cell/$name }
        }
      } else {
        foreach p [dict get $cells $cell pins] {
          lassign $p name type
          if {[filter_match [list NAME $name TYPE $type] $filter]} { lappend r /$cell/$name }
        }
      }
      return $r
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

# Ports of tessera_top, from the RTL itself, but the instruction trace port (trace_*, debug
# outputs for simulation): the IP leaves those in no interface and the block design unconnected.
proc rtl_ports {rtl_dir} {
  set fh [open [file join $rtl_dir tessera_top.sv]]
  set text [read $fh]
  close $fh
  set ports {}
  foreach {- name} [regexp -all -inline -line {^\s*(?:input|output)\s+logic\s*(?:\[[^\]]*\]\s*)?(\w+)} $text] {
    if {![string match trace_*_o $name]} { lappend ports $name }
  }
  return [lsort $ports]
}
set ports [rtl_ports $rtl_dir]
set fh [open [file join $rtl_dir tessera_top.sv]]
set top_text [read $fh]
if {![regexp {\[(\d+):0\]\s+s_axil_awaddr_i} $top_text -> awaddr_msb]} {
  # The port is sized by the host-interface contract: read RegAddrWidth from tessera_host_pkg in a
  # generated .svh (the same in every config).
  if {![regexp {\[tessera_host_pkg::RegAddrWidth-1:0\]\s+s_axil_awaddr_i} $top_text]} {
    error "tessera_top.sv: cannot find the width of s_axil_awaddr_i"
  }
  set sfh [open [file join [lindex $opt(gen) 0] tessera_config.svh]]
  set found [regexp {localparam int unsigned RegAddrWidth = (\d+);} [read $sfh] -> reg_addr_width]
  close $sfh
  if {!$found} { error "tessera_config.svh: tessera_host_pkg has no RegAddrWidth" }
  set awaddr_msb [expr {$reg_addr_width - 1}]
}
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
  set cfgd {}
  foreach v [$ci eval {info vars TESSERA_*}] { dict set cfgd [string range $v 8 end] [$ci eval [list set $v]] }
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

    # -- HLS: one project and solution per synthesis top of the design, all alike.
    set ctx "$cfg/$board/hls.tcl"
    if {[catch {run_flow [file join $scripts hls.tcl] hls [list board=$board gen_dir=$gen \
          sources=$sources out_dir=$out/hls]} c]} {
      fail $ctx "flow error: $c"
    } else {
      # The calls of each project, from its open_project to the next.
      set projects {}
      foreach call $c {
        if {[lindex $call 0] eq "open_project"} { lappend projects {} }
        if {[llength $projects] > 0} { lset projects end [concat [lindex $projects end] [list $call]] }
      }
      set tops {}
      foreach pc $projects { lappend tops [positional [lindex [calls_of $pc set_top] 0]] }
      expect $ctx "synthesis tops" [lsort $tops] [lsort $hls_tops]
      set names {}
      foreach pc $projects { lappend names [positional [lindex [calls_of $pc open_project] 0] {-reset}] }
      expect $ctx "one project per top" [llength [lsort -unique $names]] [llength $hls_tops]
      foreach pc $projects top $tops {
        set pctx "$ctx top $top"
        expect $pctx "solutions" [llength [calls_of $pc open_solution]] 1
        expect $pctx "set_part" [positional [lindex [calls_of $pc set_part] 0]] [list [dict get $b part]]
        expect_num $pctx "clock period" [option [lindex [calls_of $pc create_clock] 0] -period] $period
        set added {}
        foreach a [calls_of $pc add_files] {
          set f [positional $a]
          lappend added {*}$f
          if {[file extension $f] eq ".cpp" && [string first "-I$gen " "[option $a -cflags] "] < 0} {
            fail $pctx "$f is compiled without -I$gen"
          }
        }
        expect $pctx "added files" [lsort $added] [lsort [concat $sources [list [file join $gen hls_config.h]]]]
        set ci [lindex [calls_of $pc config_interface] 0]
        expect $pctx "m_axi_max_widen_bitwidth" [option $ci -m_axi_max_widen_bitwidth] $bus
        expect $pctx "m_axi_alignment_byte_size" [option $ci -m_axi_alignment_byte_size] $bus_bytes
        expect $pctx "32-bit m_axi addresses" [expr {"-m_axi_addr64=false" in $ci}] 1
        expect $pctx "flow target" [option [lindex [calls_of $pc open_solution] 0] -flow_target] vivado
        set ex [lindex [calls_of $pc export_design] 0]
        expect $pctx "export format" [option $ex -format] ip_catalog
        expect $pctx "IP named after the top" [option $ex -ipname] $top
        expect $pctx "csynth before export" [expr {[index_of $pc csynth_design] >= 0 && [index_of $pc csynth_design] < [index_of $pc export_design]}] 1
        dict set ip_of hls $top "[option $ex -vendor]:[option $ex -library]:[option $ex -ipname]:[option $ex -version]"
      }
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
      # Every port of tessera_top but the trace outputs is in exactly one interface, each once.
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

    # -- Block design and bitstream, around the RTL IP and around the four HLS IPs
    foreach flow {rtl hls} {
      set ctx "$cfg/$board/bitstream.tcl flow=$flow"
      set model [dict get $pin_model $flow]
      if {$flow eq "hls"} {
        set repos {}
        foreach t $hls_tops { lappend repos $out/hls/hls_$t/$board/impl/ip }
      } else {
        set repos $out/rtl/ip
      }
      if {[catch {run_flow [file join $scripts bitstream.tcl] $flow [list board=$board flow=$flow gen_dir=$gen \
            ip_repo=$repos out_dir=$out/bit_$flow]} c]} {
        fail $ctx "flow error: $c"
        continue
      }
      set p [properties $c]
      expect $ctx "part" [option [lindex [calls_of $c create_project] 0] -part] [dict get $b part]
      expect $ctx "board part" [prop $p project board_part] [dict get $b board_part]
      set cells {}
      foreach cc [calls_of $c create_bd_cell] { dict set cells [lindex $cc end] [option $cc -vlnv] }
      expect $ctx "PS IP" [string match "[dict get $ps ip]:*" [dict get $cells ps]] 1
      expect $ctx "accelerator cells" [lsort [lmap x [dict keys $cells] {expr {[dict exists $model $x] ? $x : [continue]}}]] [lsort [dict keys $model]]
      if {[dict exists $ip_of $flow]} {
        foreach cell [dict keys $model] {
          set want [expr {$flow eq "rtl" ? [dict get $ip_of rtl] : [dict get $ip_of hls $cell]}]
          expect $ctx "IP of $cell (as exported)" [expr {[dict exists $cells $cell] ? [dict get $cells $cell] : "<none>"}] $want
        }
      }
      expect $ctx "proc_sys_reset present" [llength [lsearch -all -glob [dict values $cells] xilinx.com:ip:proc_sys_reset:*]] 1
      expect $ctx "PL clock MHz" [prop $p /ps [dict get $ps clock]] [dict get $b clock_mhz]
      expect $ctx "HP data width" [prop $p /ps [dict get $ps hp_width]] [expr {min($bus, [dict get $b hp_width])}]
      set auto [option [lindex [calls_of $c apply_bd_automation] 0] -config]
      expect $ctx "presets applied" [dict get $auto apply_board_preset] 1
      if {[dict get $b ps] eq "ps7"} { expect $ctx "DDR and MIO external" [dict get $auto make_external] "FIXED_IO, DDR" }
      set links {}
      foreach ic [calls_of $c connect_bd_intf_net] { lappend links [lrange $ic 1 2] }
      # The pins each interface pin is connected to.
      proc peers {links pin} {
        set r {}
        foreach l $links {
          if {[lindex $l 0] eq $pin} { lappend r [lindex $l 1] }
          if {[lindex $l 1] eq $pin} { lappend r [lindex $l 0] }
        }
        return $r
      }
      proc cell_of {pin} { return [string trimleft [file dirname $pin] /] }
      set nets [calls_of $c connect_bd_net]
      proc in_net_with {nets a b} {
        foreach n $nets { if {$a in $n && $b in $n} { return 1 } }
        return 0
      }
      # Every interface pin of every accelerator IP is connected exactly once, and to the right thing.
      set n_slaves 0
      set n_masters 0
      foreach cell [dict keys $model] {
        foreach ip [dict get $model $cell intf] {
          lassign $ip name vlnv mode
          set pin /$cell/$name
          set pp [peers $links $pin]
          expect $ctx "connections of $pin" [llength $pp] 1
          if {[llength $pp] != 1} { continue }
          set peer [lindex $pp 0]
          set pc [cell_of $peer]
          switch -glob -- "$vlnv $mode" {
            "*aximm* Slave" {
              incr n_slaves
              expect $ctx "$pin on the control interconnect" $pc [cell_of [lindex [peers $links [dict get $ps gp]] 0]]
            }
            "*aximm* Master" {
              incr n_masters
              expect $ctx "$pin on the memory interconnect" $pc [cell_of [lindex [peers $links [dict get $ps hp]] 0]]
            }
            "*axis* *" {
              set port $name
              lassign [stream_geometry $cfgd [lindex [dict get $hls_ports $cell $port] 0]] width depth
              expect $ctx "$pin goes through an axis_data_fifo" [string match xilinx.com:ip:axis_data_fifo:* [dict get $cells $pc]] 1
              expect $ctx "FIFO of $port: depth" [prop $p /$pc CONFIG.FIFO_DEPTH] $depth
              expect $ctx "FIFO of $port: TDATA bytes" [prop $p /$pc CONFIG.TDATA_NUM_BYTES] [expr {($width + 7) / 8}]
              if {$mode eq "Master"} {
                expect $ctx "$pin into the FIFO's slave" [file tail $peer] S_AXIS
                # The FIFO's other side reaches the stage that reads this queue.
                set far [peers $links /$pc/M_AXIS]
                set readers {}
                dict for {t dirs} $hls_stream_dir { if {[dict exists $dirs $port] && [dict get $dirs $port] eq "in"} { lappend readers /$t/$port } }
                expect $ctx "FIFO of $port reaches its reader" $far $readers
              } else {
                expect $ctx "$pin from the FIFO's master" [file tail $peer] M_AXIS
              }
            }
            "*bram* *" {
              set port [regsub {_PORTA$} $name ""]
              lassign [dict get $hls_ports $cell $port] type dim
              set width [type_width $cfgd $type]
              set depth [cfg_value $cfgd $dim]
              set users {}
              dict for {t tports} $hls_ports { if {[dict exists $tports $port]} { lappend users /$t/${port}_PORTA } }
              expect $ctx "$pin on a blk_mem_gen" [string match xilinx.com:ip:blk_mem_gen:* [dict get $cells $pc]] 1
              set dual [expr {[llength $users] == 2}]
              expect $ctx "memory $pc type" [prop $p /$pc CONFIG.Memory_Type] [expr {$dual ? "True_Dual_Port_RAM" : "Single_Port_RAM"}]
              expect $ctx "memory $pc depth" [prop $p /$pc CONFIG.Write_Depth_A] $depth
              foreach k [expr {$dual ? {Write_Width_A Read_Width_A Write_Width_B Read_Width_B} : {Write_Width_A Read_Width_A}}] {
                expect $ctx "memory $pc $k" [prop $p /$pc CONFIG.$k] $width
              }
              set mem_users [concat [peers $links /$pc/BRAM_PORTA] [peers $links /$pc/BRAM_PORTB]]
              expect $ctx "memory $pc users" [lsort $mem_users] [lsort $users]
            }
            default { fail $ctx "unexpected interface $pin ($vlnv $mode)" }
          }
        }
        foreach pin [dict get $model $cell pins] {
          lassign $pin name type
          switch -- $type {
            clk { expect $ctx "/$cell/$name on the PL clock" [in_net_with $nets [dict get $ps pl_clk] /$cell/$name] 1 }
            rst { expect $ctx "/$cell/$name from proc_sys_reset" [in_net_with $nets /rst_pl/peripheral_aresetn /$cell/$name] 1 }
            intr {
              set hit 0
              foreach n $nets { if {"/$cell/$name" in $n} { incr hit } }
              expect $ctx "/$cell/$name connected" $hit 1
            }
          }
        }
      }
      expect $ctx "control interconnect outputs" [prop $p /ctrl_ic CONFIG.NUM_MI] $n_slaves
      expect $ctx "memory interconnect inputs" [prop $p /mem_ic CONFIG.NUM_SI] $n_masters
      # Every FIFO and memory the flow made is used: FIFOs clocked and reset with the rest.
      dict for {cell vlnv} $cells {
        if {[string match xilinx.com:ip:axis_data_fifo:* $vlnv]} {
          expect $ctx "/$cell clocked" [in_net_with $nets [dict get $ps pl_clk] /$cell/s_axis_aclk] 1
          expect $ctx "/$cell reset" [in_net_with $nets /rst_pl/peripheral_aresetn /$cell/s_axis_aresetn] 1
          expect $ctx "/$cell both sides connected" [expr {[llength [peers $links /$cell/S_AXIS]] == 1 && [llength [peers $links /$cell/M_AXIS]] == 1}] 1
        }
        if {[string match xilinx.com:ip:blk_mem_gen:* $vlnv]} {
          expect $ctx "/$cell has a user" [expr {[llength [peers $links /$cell/BRAM_PORTA]] == 1}] 1
        }
      }
      expect $ctx "GP on the control interconnect" [llength [peers $links [dict get $ps gp]]] 1
      expect $ctx "PS reset into proc_sys_reset" [in_net_with $nets [dict get $ps pl_rstn] /rst_pl/ext_reset_in] 1
      set order {}
      foreach cmd {assign_bd_address validate_bd_design make_wrapper launch_runs write_hw_platform} { lappend order [index_of $c $cmd] }
      expect $ctx "step order" [expr {[lsort -integer $order] eq $order && [lindex $order 0] >= 0}] 1
      set bitrun [lsearch -inline -glob [calls_of $c launch_runs] {launch_runs impl_1*}]
      expect $ctx "impl runs to write_bitstream" [option $bitrun -to_step] write_bitstream
      set copied {}
      foreach fc [calls_of $c file] { lappend copied [file extension [lindex $fc end]] }
      expect $ctx "exported .bit and .hwh" [lsort $copied] {.bit .hwh}
      expect $ctx "IP repositories" [lsort [prop $p project ip_repo_paths]] [lsort $repos]
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
