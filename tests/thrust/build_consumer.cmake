# Installs the packscan build into a fresh prefix and builds a consumer project
# (tests/thrust, tests/c_consumer)
# against it through find_package, as a user's project would.
# cmake -DBUILD_DIR= -DPREFIX= -DCONSUMER_DIR= -DSOURCE_DIR= -DARGS= [-DFRESH=ON] -P build_consumer.cmake
# -DFRESH=ON: the consumer configured from scratch too (pkg-config's answers
# are cached in its CMake cache, and would outlive a change of packscan.pc).
file(REMOVE_RECURSE ${PREFIX})
if(FRESH)
  file(REMOVE_RECURSE ${CONSUMER_DIR})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
string(REPLACE "|" ";" consumer_args "${ARGS}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${CONSUMER_DIR} -DCMAKE_PREFIX_PATH=${PREFIX}
                        ${consumer_args} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${CONSUMER_DIR} -j2 COMMAND_ERROR_IS_FATAL ANY)
