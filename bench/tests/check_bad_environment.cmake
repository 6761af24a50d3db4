# SPDX-License-Identifier: MIT
# ctest -P script: a bench_<name> run with a bad value in an environment variable it reads must
# exit 2 with a message that names the variable, the bad value and one of the valid choices.
#   cmake -DBENCH=<binary> -DVAR=<name> -DVALUE=<bad value> -DCHOICE=<a valid value> -P this file
set(ENV{${VAR}} "${VALUE}")
execute_process(COMMAND ${BENCH} --workload submit --n 10 --reps 1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit code 2 for ${VAR}=${VALUE}, got '${rc}'\n${out}${err}")
endif()
if(NOT err MATCHES "${VAR}" OR NOT err MATCHES "${VALUE}" OR NOT err MATCHES "${CHOICE}")
  message(FATAL_ERROR "the error does not name the variable, the bad value and the choices:\n${err}")
endif()
message(STATUS "${VAR}=${VALUE} rejected: ${err}")
