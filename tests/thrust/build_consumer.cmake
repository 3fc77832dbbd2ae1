# Installs the packscan build into a fresh prefix and builds tests/thrust
# against it through find_package, as a user's project would.
# cmake -DBUILD_DIR= -DPREFIX= -DCONSUMER_DIR= -DSOURCE_DIR= -DARGS= -P build_consumer.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
string(REPLACE "|" ";" consumer_args "${ARGS}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${CONSUMER_DIR} -DCMAKE_PREFIX_PATH=${PREFIX}
                        ${consumer_args} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${CONSUMER_DIR} -j2 COMMAND_ERROR_IS_FATAL ANY)
