# cmake -DCOMPILER=... -DLANG=c|c++ -DINCLUDE=<include dir> -DSOURCE=<file> -DNAMES=<names> -P check_warnings.cmake
# Compiles SOURCE (syntax only) twice: as is, where every name in NAMES must
# draw a deprecation warning, and with PS_NO_DEPRECATION_WARNINGS, where the
# compile must be clean under -Werror.
set(ENV{LC_ALL} C) # plain quotes in the messages
execute_process(COMMAND ${COMPILER} -x ${LANG} -fsyntax-only -Wall -Wextra -I${INCLUDE} ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
# C prints 'name', C++ the whole signature 'ps_status name(...)': one line each.
string(REPLACE "\n" "@" flat "${out}")
foreach(name IN LISTS NAMES)
  if(NOT flat MATCHES "[ ']${name}[('][^@]*is deprecated: use ps_")
    message(FATAL_ERROR "no deprecation warning for ${name} (${LANG}):\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${COMPILER} -x ${LANG} -fsyntax-only -Wall -Wextra -Werror -DPS_NO_DEPRECATION_WARNINGS
                        -I${INCLUDE} ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "PS_NO_DEPRECATION_WARNINGS did not silence the warnings (${LANG}):\n${out}")
endif()
message(STATUS "${LANG}: a warning for each of the ${NAMES}; none with PS_NO_DEPRECATION_WARNINGS")
