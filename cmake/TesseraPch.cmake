# Precompiled headers (TESSERA_PCH, on by default): the standard, Abseil and GoogleTest headers
# most files include are parsed once per target instead of once per file. On the 2-core CI
# machine header parsing was about half of a test file's compile time and a third of a
# library file's; the build is compiled three times in CI (Release, ASan, TSan), so this is the
# largest share of `.ci/run` (docs/benchmarks.md, "CI").
#
#   cmake -S . -B build -DTESSERA_PCH=OFF    # every file parses its own headers
#
# Which targets: libraries and programs of four or more C++ files (a PCH costs about as much
# as compiling two files); the GoogleTest suites (tests/, tessera_<folder>_tests) share one PCH,
# built with the first suite. The headers only add what a file would include anyway, so a file
# that compiles with the PCH compiles without it: public headers stay self-contained (the
# installed-package test, tests/install, builds a consumer without it). Not used with
# TESSERA_BUILD_FUZZERS (clang refuses a PCH built with other sanitizer flags, and the fuzz
# targets' flags differ from the libraries'). A PCH is a PRIVATE build property: nothing of it
# is installed or exported.
#
# ccache caches files built with a PCH only with CCACHE_SLOPPINESS=pch_defines,time_macros and
# -fpch-preprocess in CMAKE_CXX_FLAGS (otherwise it compiles them uncached; the result is the
# same).
option(TESSERA_PCH "Precompile the common standard, Abseil and GoogleTest headers" ON)

set(TESSERA_PCH_HEADERS
  <algorithm> <array> <atomic> <chrono> <cmath> <cstdint> <cstring> <filesystem> <fstream>
  <functional> <limits> <map> <memory> <numeric> <optional> <set> <sstream> <string> <thread>
  <utility> <vector>
  "absl/container/flat_hash_map.h" "absl/status/status.h" "absl/status/statusor.h"
  "absl/strings/match.h" "absl/strings/str_cat.h" "absl/strings/str_format.h"
  "absl/strings/str_join.h" "absl/strings/str_split.h" "absl/strings/string_view.h")
set(TESSERA_PCH_TEST_HEADERS <gtest/gtest.h> <gmock/gmock.h>)
set(TESSERA_PCH_MIN_FILES 4)

# `headers` as C++-only entries (CUDA files take no PCH): $<$<COMPILE_LANGUAGE:CXX>:...> each,
# with a system header's closing '>' written $<ANGLE-R>.
function(tessera_pch_cxx_only out)
  set(entries)
  foreach(header IN LISTS ARGN)
    string(REGEX REPLACE ">$" "$<ANGLE-R>" header "${header}")
    list(APPEND entries "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
  endforeach()
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()

# The C++ files of `target` (generated and CUDA files not counted).
function(tessera_pch_cxx_count target out)
  get_target_property(sources ${target} SOURCES)
  set(count 0)
  foreach(source IN LISTS sources)
    if(source MATCHES "\\.(cc|cpp|cxx)$")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  set(${out} ${count} PARENT_SCOPE)
endfunction()

# Applies the PCH to the targets of `dir` and below (called deferred, when every target exists).
function(tessera_pch_targets dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(imported ${target} IMPORTED)
    if(imported)
      continue()
    endif()
    tessera_pch_cxx_count(${target} files)
    if(target MATCHES "^tessera_[a-z_]+_tests$" AND dir MATCHES "/tests$")
      get_property(first GLOBAL PROPERTY TESSERA_PCH_FIRST_SUITE)
      if(first)
        target_precompile_headers(${target} REUSE_FROM ${first})
      else()
        set_property(GLOBAL PROPERTY TESSERA_PCH_FIRST_SUITE ${target})
        tessera_pch_cxx_only(entries ${TESSERA_PCH_HEADERS} ${TESSERA_PCH_TEST_HEADERS})
        target_precompile_headers(${target} PRIVATE ${entries})
      endif()
    elseif(files GREATER_EQUAL TESSERA_PCH_MIN_FILES)
      tessera_pch_cxx_only(entries ${TESSERA_PCH_HEADERS})
      target_precompile_headers(${target} PRIVATE ${entries})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    tessera_pch_targets(${sub})
  endforeach()
endfunction()

if(TESSERA_PCH AND NOT TESSERA_BUILD_FUZZERS)
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL tessera_pch_targets ${CMAKE_SOURCE_DIR})
endif()
