# Helpers every FPGA flow sources: key=value arguments, the board table and the generated config.
namespace eval ::tessera {
  variable script_dir [file dirname [file normalize [info script]]]
}

# Parses key=value words; `required` lists keys that must appear, `defaults` is a dict of the rest.
# Unknown keys are refused so a misspelt option cannot be silently ignored.
proc ::tessera::parse_args {words required defaults} {
  set opts $defaults
  foreach w $words {
    set eq [string first = $w]
    if {$eq < 1} { error "tessera: argument '$w' is not key=value" }
    set key [string range $w 0 [expr {$eq - 1}]]
    if {$key ni $required && ![dict exists $defaults $key]} {
      error "tessera: unknown argument '$key' (known: [concat $required [dict keys $defaults]])"
    }
    dict set opts $key [string range $w [expr {$eq + 1}] end]
  }
  foreach key $required {
    if {![dict exists $opts $key] || [dict get $opts $key] eq ""} { error "tessera: missing argument $key=..." }
  }
  return $opts
}

# Returns the board table's entry for `name` (a dict: part, board_part, ps, clock_mhz, hp_width).
proc ::tessera::board {name} {
  variable script_dir
  source [file join $script_dir boards.tcl]
  if {![dict exists $tessera_boards $name]} {
    error "tessera: unknown board '$name' (boards: [dict keys $tessera_boards])"
  }
  return [dict get $tessera_boards $name]
}

# Sources build/generated/<cfg>/tessera_config.tcl into ::tessera::cfg; read values with param.
proc ::tessera::load_config {gen_dir} {
  set file [file join $gen_dir tessera_config.tcl]
  if {![file exists $file]} {
    error "tessera: $file not found; build the generated headers first (cmake --build <dir> --target tessera_generated_headers)"
  }
  namespace eval ::tessera::cfg {}
  namespace eval ::tessera::cfg [list source $file]
}

# One generated hardware parameter, by its name without the TESSERA_ prefix (e.g. BUS_WIDTH).
proc ::tessera::param {name} {
  if {![info exists ::tessera::cfg::TESSERA_$name]} { error "tessera: the config has no TESSERA_$name" }
  return [set ::tessera::cfg::TESSERA_$name]
}

# Clock period in ns for a clock in MHz, with three decimals.
proc ::tessera::period_ns {mhz} {
  return [format %.3f [expr {1000.0 / $mhz}]]
}

# Refuses to go on when a file a flow needs is missing.
proc ::tessera::require_files {files} {
  foreach f $files {
    if {![file exists $f]} { error "tessera: file not found: $f" }
  }
}

# The HLS design's stage functions (hls/design/tessera_hls.h), each synthesized as its own top and
# exported as the IP tessera.org:hls:<stage>:1.0; bitstream.tcl names the block-design cells after them.
proc ::tessera::hls_stages {} {
  return {fetch load compute store}
}

# The IP each flow produces: tessera.org:<flow>:<top>:1.0 (flow rtl: top tessera_top; flow hls: a stage).
proc ::tessera::ip_vlnv {flow top} {
  if {$flow ni {hls rtl}} { error "tessera: flow must be hls or rtl, not '$flow'" }
  return "tessera.org:$flow:$top:1.0"
}
