# ctest -P script: bench_reactor with a bad POOLS_REACTOR_STRATEGY must exit 2 and name the value.
set(ENV{POOLS_REACTOR_STRATEGY} "round_robin")
execute_process(COMMAND ${BENCH} --workload submit --n 10 --reps 1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit code 2 for POOLS_REACTOR_STRATEGY=round_robin, got '${rc}'\n${out}${err}")
endif()
if(NOT err MATCHES "POOLS_REACTOR_STRATEGY" OR NOT err MATCHES "round_robin" OR NOT err MATCHES "per_thread")
  message(FATAL_ERROR "the error does not name the variable, the bad value and the choices:\n${err}")
endif()
message(STATUS "bad strategy rejected: ${err}")
