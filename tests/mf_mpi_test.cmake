# mf_mpi_test() and the fabrics it knows. Included by tests/CMakeLists.txt, and by
# tests/mf_mpi_test_check.cmake in script mode (cmake -P) to test the refusals below.
#
# A fabric a test may name is one compiled into libmpi (an MF_FABRIC(name) line of
# src/fabric/fabrics.def) for which this file says how a run is made to use it: the global
# property MF_TEST_FABRIC_ENV_<name> (the environment, K=V...) and optionally
# MF_TEST_FABRIC_NP_<name> (the only process counts it can serve). Global properties, because
# mf_mpi_test is called from directories beside tests/ (examples/, bench/). Any other name is a
# configure-time error naming the test: a test must never run silently on another fabric than
# the one in its name. A new fabric adds its recipe here when it adds its MF_FABRIC line.

# self reaches only the own rank: a one-process job, shm off so that nothing but self opens
# for local peers (the network fabric opens but has no peer to carry).
set_property(GLOBAL PROPERTY MF_TEST_FABRIC_ENV_self MANIFOLD_SHM=0)
set_property(GLOBAL PROPERTY MF_TEST_FABRIC_NP_self 1)
# shm between the ranks of one host: the default; set explicitly so that a MANIFOLD_SHM=0 in the
# caller's environment cannot move the test to tcp.
set_property(GLOBAL PROPERTY MF_TEST_FABRIC_ENV_shm MANIFOLD_SHM=1)
# tcp for every peer, same host included; MANIFOLD_FABRIC explicit for the same reason.
set_property(GLOBAL PROPERTY MF_TEST_FABRIC_ENV_tcp MANIFOLD_SHM=0 MANIFOLD_FABRIC=tcp)
# ofi (libfabric) for every peer, same host included, with provider tcp;ofi_rxm (named by its
# core provider: a ';' cannot travel in a CMake list; tests/fabric_ofi runs the shm provider) on
# domain lo (the default domain, the first non-loopback interface, may be a bridge that another
# job's test cluster removes meanwhile).
set_property(GLOBAL PROPERTY MF_TEST_FABRIC_ENV_ofi MANIFOLD_SHM=0 MANIFOLD_FABRIC=ofi
             MANIFOLD_OFI_PROVIDER=tcp MANIFOLD_OFI_DOMAIN=lo)
# sctp (usrsctp over UDP) for every peer, same host included.
set_property(GLOBAL PROPERTY MF_TEST_FABRIC_ENV_sctp MANIFOLD_SHM=0 MANIFOLD_FABRIC=sctp)

# mf_test_fabrics(<out>): the names of src/fabric/fabrics.def that have a recipe above.
function(mf_test_fabrics out)
  set(def ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../src/fabric/fabrics.def)
  file(STRINGS ${def} lines REGEX "^MF_FABRIC\\([A-Za-z0-9_]+\\)")
  set(names)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^MF_FABRIC\\(([A-Za-z0-9_]+)\\).*" "\\1" name "${line}")
    get_property(recipe GLOBAL PROPERTY MF_TEST_FABRIC_ENV_${name} SET)
    if(recipe)
      list(APPEND names ${name})
    endif()
  endforeach()
  if(NOT names)
    message(FATAL_ERROR "mf_mpi_test: no fabric with a test recipe found in ${def}")
  endif()
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# mf_test_fabric_check(<test> <fabric> <nps> <env>): a FATAL_ERROR unless the fabric is known,
# can serve every process count, and the test's own environment leaves its variables alone.
function(mf_test_fabric_check test fabric nps env)
  mf_test_fabrics(known)
  if(NOT fabric IN_LIST known)
    string(REPLACE ";" ", " known "${known}")
    set(why "unknown fabric '${fabric}'")
    file(STRINGS ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../src/fabric/fabrics.def compiled
         REGEX "^MF_FABRIC\\(${fabric}\\)")
    if(compiled)
      string(CONCAT why "fabric '${fabric}', which is compiled in but has no recipe (set "
             "MF_TEST_FABRIC_ENV_${fabric} in tests/mf_mpi_test.cmake)")
    endif()
    message(FATAL_ERROR "mf_mpi_test: test '${test}' names ${why}; known fabrics: ${known}")
  endif()
  get_property(only GLOBAL PROPERTY MF_TEST_FABRIC_NP_${fabric})
  foreach(np IN LISTS nps)
    if(only AND NOT np IN_LIST only)
      message(FATAL_ERROR "mf_mpi_test: test '${test}' runs fabric '${fabric}' with NP ${np}, "
                          "but it serves only NP ${only}")
    endif()
  endforeach()
  get_property(recipe GLOBAL PROPERTY MF_TEST_FABRIC_ENV_${fabric})
  foreach(setting IN LISTS recipe)
    string(REGEX REPLACE "=.*" "" var "${setting}")
    foreach(own IN LISTS env)
      if(own MATCHES "^${var}=")
        message(FATAL_ERROR "mf_mpi_test: test '${test}' sets ${own} in ENV, but fabric "
                            "'${fabric}' decides ${var} (${setting})")
      endif()
    endforeach()
  endforeach()
endfunction()

# mf_mpi_test(program NP n... [FABRICS name...] [ARGS a...] [ENV K=V...] [TIMEOUT s]
#             [PASS regex] [NAME name])
# Registers `mpiexec -n N program ARGS` for each N and fabric (default: shm tcp), named
# <name>.np<N>.<fabric>, with the fabric's environment after ENV (see the recipes above). After
# TIMEOUT seconds mpiexec prints where every rank hangs (--get-stack-traces) and ends the run;
# CTest's own limit comes 60 s later, so that it never cuts that short (gdb takes about 0.3 s per
# rank here, more in sanitizer builds, and at most 8 s: tools/mpiexec/stacks.c). A run
# passes when it exits 0; with PASS, when its output matches the regex whatever the exit status
# (for tests of fatal paths, which must end the job). Every fabric is checked before any test is
# added.
function(mf_mpi_test program)
  cmake_parse_arguments(T "" "TIMEOUT;PASS;NAME" "NP;FABRICS;ARGS;ENV" ${ARGN})
  if(NOT T_NP)
    set(T_NP 1 2 4)
  endif()
  if(NOT T_FABRICS)
    set(T_FABRICS shm tcp)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT ${MF_TEST_TIMEOUT})
  endif()
  if(NOT T_NAME)
    set(T_NAME ${program})
  endif()
  foreach(fabric IN LISTS T_FABRICS)
    mf_test_fabric_check(${T_NAME} ${fabric} "${T_NP}" "${T_ENV}")
  endforeach()
  foreach(np IN LISTS T_NP)
    foreach(fabric IN LISTS T_FABRICS)
      get_property(recipe GLOBAL PROPERTY MF_TEST_FABRIC_ENV_${fabric})
      set(env ${T_ENV} ${recipe})
      set(test ${T_NAME}.np${np}.${fabric})
      math(EXPR ctest_limit "${T_TIMEOUT} + 60")
      add_test(NAME ${test}
               COMMAND ${MF_MPIEXEC} -n ${np} --timeout ${T_TIMEOUT} --get-stack-traces
                       $<TARGET_FILE:${program}> ${T_ARGS})
      set_tests_properties(${test} PROPERTIES ENVIRONMENT "${env}" TIMEOUT ${ctest_limit}
                           LABELS "mpi;${fabric}")
      if(T_PASS)
        set_tests_properties(${test} PROPERTIES PASS_REGULAR_EXPRESSION "${T_PASS}")
      endif()
    endforeach()
  endforeach()
endfunction()
