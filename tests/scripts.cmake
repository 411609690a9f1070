# Tests that drive programs rather than link them.
if(TARGET tessera)
  # The installed package works for a user's project (find_package(Tessera)).
  add_test(NAME install.find_package
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install/run_install_test.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
  set_tests_properties(install.find_package PROPERTIES
    PASS_REGULAR_EXPRESSION "alexnet params 61100840\ntiny params 136\n" TIMEOUT 300 LABELS install)

  # The command itself: help, errors and exit codes.
  add_test(NAME cli.help COMMAND tessera --help)
  set_tests_properties(cli.help PROPERTIES PASS_REGULAR_EXPRESSION "usage: tessera COMMAND.*inspect")
  add_test(NAME cli.inspect_help COMMAND tessera inspect --help)
  set_tests_properties(cli.inspect_help PROPERTIES PASS_REGULAR_EXPRESSION "--batch B.*--format")
  add_test(NAME cli.inspect_gnmt COMMAND tessera inspect zoo:gnmt)
  set_tests_properties(cli.inspect_gnmt PROPERTIES PASS_REGULAR_EXPRESSION "parameters +[0-9]+")
  add_test(NAME cli.inspect_onnx_json
    COMMAND tessera inspect ${CMAKE_SOURCE_DIR}/tests/models/resnet50.onnx --format json --batch 4)
  set_tests_properties(cli.inspect_onnx_json PROPERTIES
    PASS_REGULAR_EXPRESSION "\"batch\": 4" LABELS tools)
endif()

# The HTML report of `tessera plan` renders in headless Chromium (skips when no
# chromium is installed; scripts/setup.sh installs it).
if(TARGET tessera AND EXISTS ${CMAKE_SOURCE_DIR}/tools/plan_command.cc)
  add_test(NAME partitioner.html_screenshot
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/partitioner/html_screenshot_test.sh
            $<TARGET_FILE:tessera> ${CMAKE_CURRENT_BINARY_DIR}/html_screenshot)
  set_tests_properties(partitioner.html_screenshot PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS partitioner
    PASS_REGULAR_EXPRESSION "screenshot ok: 1400x1000")
endif()
if(TARGET tessera AND EXISTS ${CMAKE_SOURCE_DIR}/tools/plan_command.cc)
  add_test(NAME cli.plan_help COMMAND tessera plan --help)
  set_tests_properties(cli.plan_help PROPERTIES
    PASS_REGULAR_EXPRESSION "--devices N.*--cluster NAME\\|FILE.*--trace FILE" LABELS tools)
  add_test(NAME cli.recommend_help COMMAND tessera recommend --help)
  set_tests_properties(cli.recommend_help PROPERTIES
    PASS_REGULAR_EXPRESSION "--samples N.*--max-hours H.*--max-cost C" LABELS tools)
endif()
if(TARGET tessera AND EXISTS ${CMAKE_SOURCE_DIR}/tools/memory_command.cc AND TARGET tessera_memory)
  add_test(NAME cli.memory_help COMMAND tessera memory --help)
  set_tests_properties(cli.memory_help PROPERTIES
    PASS_REGULAR_EXPRESSION "tessera memory MODEL.*--devices N.*--optimizer.*--buffers IN.csv.*-o OUT.csv.*--time-limit S"
    LABELS tools)
endif()
