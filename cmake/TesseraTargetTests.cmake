# How runtime tests name the target they run on, for gtest filters and ctest labels derived from the targets the build registered.
# Usable at configure time and from ctest include files (script mode).
#
# A runtime test runs on target T when it is parameterized as .../<T as a C identifier>_<config>
# (OnTarget.Gemm/rtl_sc_default) or its suite is named after T in CamelCase (RtlScTiming for rtl-sc).

# The CamelCase form of a target name: rtl-sc -> RtlSc.
function(tessera_target_camel out target)
  string(MAKE_C_IDENTIFIER "${target}" id)
  string(REPLACE "_" ";" parts "${id}")
  set(camel "")
  foreach(part IN LISTS parts)
    string(SUBSTRING "${part}" 0 1 head)
    string(SUBSTRING "${part}" 1 -1 tail)
    string(TOUPPER "${head}" head)
    string(APPEND camel "${head}${tail}")
  endforeach()
  set(${out} "${camel}" PARENT_SCOPE)
endfunction()

# gtest filter patterns (joined by ':') matching the tests on any of the given targets; with
# PARAMETERIZED_ONLY first, only the parameterized ones (those that take the environment's
# target options rather than setting their own).
function(tessera_target_gtest_patterns out)
  set(targets ${ARGN})
  set(suites ON)
  if(targets AND "${ARGV1}" STREQUAL "PARAMETERIZED_ONLY")
    list(REMOVE_AT targets 0)
    set(suites OFF)
  endif()
  set(patterns "")
  foreach(target IN LISTS targets)
    string(MAKE_C_IDENTIFIER "${target}" id)
    tessera_target_camel(camel "${target}")
    list(APPEND patterns "*/${id}_*")
    if(suites)
      list(APPEND patterns "${camel}*" "*/${camel}*")
    endif()
  endforeach()
  string(JOIN ":" joined ${patterns})
  set(${out} "${joined}" PARENT_SCOPE)
endfunction()

# The target a test name runs on, longest target names first (hls-sc before hls); empty if none
# of the given targets.
function(tessera_target_of_test out test)
  set(ordered "")
  foreach(target IN LISTS ARGN)
    string(LENGTH "${target}" n)
    math(EXPR key "1000 - ${n}")
    list(APPEND ordered "${key}|${target}")
  endforeach()
  list(SORT ordered)
  foreach(entry IN LISTS ordered)
    string(REGEX REPLACE "^[0-9]+\\|" "" target "${entry}")
    string(MAKE_C_IDENTIFIER "${target}" id)
    tessera_target_camel(camel "${target}")
    if(test MATCHES "/${id}_" OR test MATCHES "(^|/)${camel}[A-Z.]")
      set(${out} "${target}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()
