# Parses every Tcl file under a directory with tclsh: whole file, each command, each proc body and nested script.
# Usage: tclsh syntax_check.tcl <dir>   (exit 1 and one line per problem if any file fails)

# Splits a script into its commands (text, first line); errors if the script is incomplete.
proc commands {script} {
  set cmds {}
  set cur ""
  set line 0
  set start 0
  foreach l [split $script \n] {
    incr line
    if {$cur eq ""} {
      set t [string trim $l]
      if {$t eq "" || [string index $t 0] eq "#"} { continue }
      set start $line
    }
    append cur $l \n
    if {[info complete $cur] && ![regexp {(^|[^\\])(\\\\)*\\\n$} $cur]} {
      lappend cmds [list $cur $start]
      set cur ""
    }
  }
  if {$cur ne ""} { error "line $start: command never completes" }
  return $cmds
}

# Words of a command when it parses as a Tcl list (braced bodies stay one word); {} otherwise.
proc words {cmd} {
  if {[catch {set w [lrange $cmd 0 end]}]} { return {} }
  return $w
}

# Checks a script and, recursively, the bodies of proc, namespace eval, foreach, while, for, if, switch.
proc check_script {script where offset} {
  set problems {}
  if {[catch {commands $script} cmds]} { return [list "$where: $cmds"] }
  foreach c $cmds {
    lassign $c text line
    set at "$where:[expr {$line + $offset}]"
    set w [words $text]
    set bodies {}
    switch -- [lindex $w 0] {
      proc { if {[llength $w] != 4} { lappend problems "$at: proc takes name, args, body" } else { lappend bodies [lindex $w 3] } }
      while - foreach - for - catch { lappend bodies [lindex $w end] }
      namespace { if {[lindex $w 1] eq "eval"} { lappend bodies [lindex $w end] } }
      if {
        for {set i 2} {$i < [llength $w]} {incr i} {
          set x [lindex $w $i]
          if {$x in {else elseif then}} { continue }
          if {[lindex $w [expr {$i - 1}]] in {if elseif}} { continue }
          lappend bodies $x
        }
      }
    }
    foreach b $bodies {
      if {![info complete $b]} { lappend problems "$at: incomplete body"; continue }
      if {[string first \n $b] >= 0} {
        set problems [concat $problems [check_script $b $where [expr {$line + $offset - 1}]]]
      }
    }
  }
  return $problems
}

set dir [lindex $argv 0]
set files {}
proc walk {d} {
  global files
  foreach f [lsort [glob -nocomplain -directory $d *.tcl]] { lappend files $f }
  foreach s [lsort [glob -nocomplain -directory $d -type d *]] { walk $s }
}
walk $dir
if {[llength $files] == 0} { puts "no Tcl files under $dir"; exit 1 }
set bad 0
foreach f $files {
  set fh [open $f]
  set text [read $fh]
  close $fh
  set problems {}
  if {![info complete $text]} { lappend problems "$f: the file is not a complete Tcl script" }
  set problems [concat $problems [check_script $text $f 0]]
  # The file's first line says what it is for.
  if {![string match "# *" [lindex [split $text \n] 0]]} { lappend problems "$f:1: no one-line role comment" }
  foreach p $problems { puts $p; set bad 1 }
  if {[llength $problems] == 0} { puts "ok $f" }
}
exit $bad
