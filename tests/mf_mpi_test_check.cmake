# mf_mpi_test_check.cmake — checks mf_mpi_test (mf_mpi_test.cmake) in script mode:
#   cmake -P tests/mf_mpi_test_check.cmake
# add_test and set_tests_properties are stand-ins that record what would be registered. Each
# refusal runs in a child `cmake -DCASE=<case> -P` (a FATAL_ERROR ends its script), which must
# fail with the expected message before registering anything; then the recipes of the known
# fabrics are checked. Fails with a FATAL_ERROR naming the first wrong result.

cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/mf_mpi_test.cmake)
set(MF_MPIEXEC mpiexec)
set(MF_TEST_TIMEOUT 60)

function(add_test)
  set_property(GLOBAL APPEND PROPERTY MF_CHECK_ADDED "${ARGV1}")
endfunction()
function(set_tests_properties test)
  # By index: the ENVIRONMENT value is itself a list, which ARGN would flatten.
  math(EXPR last "${ARGC} - 2")
  foreach(i RANGE 1 ${last})
    if(ARGV${i} STREQUAL "ENVIRONMENT")
      math(EXPR v "${i} + 1")
      set_property(GLOBAL PROPERTY MF_CHECK_ENV_${test} "${ARGV${v}}")
    endif()
  endforeach()
endfunction()

if(DEFINED CASE)
  # The child: each case must stop at its check; registering a test first is a failure too.
  function(add_test)
    message(FATAL_ERROR "check: a test was registered before the refusal")
  endfunction()
  if(CASE STREQUAL "unknown")
    mf_mpi_test(prog NP 1 2 FABRICS shm verbs NAME check_verbs)
  elseif(CASE STREQUAL "norecipe")
    set_property(GLOBAL PROPERTY MF_TEST_FABRIC_ENV_shm) # unsets it
    mf_mpi_test(prog NP 2 FABRICS shm NAME check_norecipe)
  elseif(CASE STREQUAL "self_np")
    mf_mpi_test(prog NP 1 2 FABRICS self NAME check_self)
  elseif(CASE STREQUAL "env_clash")
    mf_mpi_test(prog NP 2 FABRICS shm ENV A=1 MANIFOLD_SHM=0 NAME check_clash)
  endif()
  message(FATAL_ERROR "check: case '${CASE}' was not refused")
endif()

foreach(case_want IN ITEMS
    "unknown|test 'check_verbs' names unknown fabric 'verbs'; known fabrics: [a-z0-9_, ]*tcp"
    "norecipe|test 'check_norecipe' names fabric 'shm', which is compiled in but has no recipe"
    "self_np|test 'check_self' runs fabric 'self' with NP 2, but it serves only NP 1"
    "env_clash|test 'check_clash' sets MANIFOLD_SHM=0 in ENV, but fabric 'shm' decides")
  string(REGEX REPLACE "\\|.*" "" case "${case_want}")
  string(REGEX REPLACE "^[^|]*\\|" "" want "${case_want}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DCASE=${case} -P ${CMAKE_CURRENT_LIST_FILE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "[ \n]+" " " out "${out}")
  if(rc EQUAL 0 OR NOT out MATCHES "mf_mpi_test: ${want}")
    message(FATAL_ERROR "check: case ${case}: expected a refusal matching '${want}', got (exit ${rc}): ${out}")
  endif()
  message(STATUS "refused as expected: ${case}")
endforeach()

# The recipes: what each known fabric sets, after the test's own ENV.
mf_test_fabrics(known)
foreach(f IN ITEMS self shm tcp)
  if(NOT f IN_LIST known)
    message(FATAL_ERROR "check: fabric ${f} is not among the known fabrics (${known})")
  endif()
endforeach()
mf_mpi_test(prog NP 1 2 FABRICS shm tcp ENV A=1)
mf_mpi_test(prog NP 1 FABRICS self NAME selfprog)
get_property(added GLOBAL PROPERTY MF_CHECK_ADDED)
set(want_added prog.np1.shm prog.np1.tcp prog.np2.shm prog.np2.tcp selfprog.np1.self)
if(NOT added STREQUAL want_added)
  message(FATAL_ERROR "check: registered '${added}', expected '${want_added}'")
endif()
foreach(test_env IN ITEMS "prog.np2.shm|A=1;MANIFOLD_SHM=1"
                          "prog.np2.tcp|A=1;MANIFOLD_SHM=0;MANIFOLD_FABRIC=tcp"
                          "selfprog.np1.self|MANIFOLD_SHM=0")
  string(REGEX REPLACE "\\|.*" "" test "${test_env}")
  string(REGEX REPLACE "^[^|]*\\|" "" want "${test_env}")
  get_property(env GLOBAL PROPERTY MF_CHECK_ENV_${test})
  if(NOT env STREQUAL want)
    message(FATAL_ERROR "check: ${test} has ENVIRONMENT '${env}', expected '${want}'")
  endif()
endforeach()
message(STATUS "mf_mpi_test: recipes and refusals as expected")
