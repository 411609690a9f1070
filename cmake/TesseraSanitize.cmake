# TESSERA_SANITIZE: every target built with sanitizers (scripts/ci_sanitizers.sh runs both).
#
#   cmake -S . -B build-asan -DTESSERA_SANITIZE=address   # ASan + UBSan (+ LeakSanitizer)
#   cmake -S . -B build-tsan -DTESSERA_SANITIZE=thread    # ThreadSanitizer
#
# Libraries and programs build at -O1 with line tables (reports name file:line); the tests' own
# sources (tests/) at -O0, which halves their compile time (the code under test is the
# libraries'). UBSan leaves out `null` (ASan reports a null dereference itself) and `alignment`
# (x86 tolerates misaligned loads): together over a quarter of the ASan build's compile time.
# Included before any target is defined.
set(TESSERA_SANITIZE "" CACHE STRING "Sanitizer build: address (ASan + UBSan) or thread (TSan)")
if(TESSERA_SANITIZE STREQUAL "")
  return()
elseif(TESSERA_SANITIZE STREQUAL "address")
  set(tessera_sanitize_flags -fsanitize=address,undefined -fno-sanitize=null,alignment
      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
elseif(TESSERA_SANITIZE STREQUAL "thread")
  set(tessera_sanitize_flags -fsanitize=thread)
else()
  message(FATAL_ERROR "TESSERA_SANITIZE='${TESSERA_SANITIZE}': use address, thread or nothing")
endif()
list(JOIN tessera_sanitize_flags " " flags_text)
message(STATUS "Tessera: sanitizer build (${TESSERA_SANITIZE}): ${flags_text}")
add_compile_options(${tessera_sanitize_flags} -O1 -g1)  # -O1 after the build type's -O3 wins
add_link_options(${tessera_sanitize_flags})
# g++ links ASan and UBSan as two shared runtimes, and then UBSan ignores log_path (its reports
# go to stderr, where scripts/ci_sanitizers.sh cannot count them); with libubsan linked
# statically into each program they reach the log files (the self-test checks it).
if(TESSERA_SANITIZE STREQUAL "address" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_link_options(-static-libubsan)
endif()

# Debian's Abseil is not built with TSan, so TSan cannot see absl::Mutex lock or unlock:
# scripts/sanitizers/tsan_absl_sync.cc annotates them, linked into every program.
if(TESSERA_SANITIZE STREQUAL "thread")
  add_library(tessera_tsan_absl_sync OBJECT
    ${CMAKE_CURRENT_LIST_DIR}/../scripts/sanitizers/tsan_absl_sync.cc)
  target_link_libraries(tessera_tsan_absl_sync PRIVATE absl::synchronization)
endif()

# The self-test scripts/ci_sanitizers.sh runs before the suite (one known error per sanitizer,
# and one correct threaded program that must stay silent under TSan).
add_executable(tessera_sanitizer_selftest ${CMAKE_CURRENT_LIST_DIR}/../scripts/sanitizers/selftest.cc)
target_link_libraries(tessera_sanitizer_selftest PRIVATE absl::synchronization)

# At the end of the top-level CMakeLists.txt, when every target exists.
function(tessera_sanitize_targets dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    string(FIND "${dir}/" "${CMAKE_SOURCE_DIR}/tests/" in_tests)
    if(in_tests EQUAL 0 AND NOT type STREQUAL "INTERFACE_LIBRARY")
      target_compile_options(${target} PRIVATE -O0)
    endif()
    if(type STREQUAL "EXECUTABLE" AND TARGET tessera_tsan_absl_sync)
      target_link_libraries(${target} PRIVATE tessera_tsan_absl_sync)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    tessera_sanitize_targets(${sub})
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL tessera_sanitize_targets ${CMAKE_SOURCE_DIR})
