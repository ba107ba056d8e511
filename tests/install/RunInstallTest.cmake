# ctest install-consumer: installs the build into a temporary prefix,
# configures tests/install/consumer with find_package(strata REQUIRED),
# builds it and runs it.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... [-DLAUNCHER=ccache]
#         -P RunInstallTest.cmake
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install-consumer: ${what} failed (${rc}):\n${out}")
  endif()
  message(STATUS "install-consumer: ${what}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR}
  --prefix ${prefix})
foreach(f include/strata/strata.h include/strata/Version.h
    lib/cmake/strata/strataConfig.cmake bin/strata-opt)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install-consumer: ${prefix}/${f} was not installed")
  endif()
endforeach()
foreach(tool strata-opt strata-run strata-translate)
  run("${tool} --version" ${prefix}/bin/${tool} --version)
  if(NOT last_output MATCHES "${tool} \\(strata\\) [0-9]+\\.[0-9]+\\.[0-9]+")
    message(FATAL_ERROR "install-consumer: unexpected ${tool} --version "
      "output:\n${last_output}")
  endif()
endforeach()
# strata::strata carries C++20 for consumers that set no standard.
file(READ ${prefix}/lib/cmake/strata/strataTargets.cmake targets)
if(NOT targets MATCHES "INTERFACE_COMPILE_FEATURES \"cxx_std_20\"")
  message(FATAL_ERROR "install-consumer: strata::strata does not export "
    "cxx_std_20 as an interface compile feature")
endif()
# Every installed header declaration has a /// comment.
run("/// on every installed declaration" python3
  ${CMAKE_CURRENT_LIST_DIR}/check_doc_comments.py ${prefix}/include/strata)

set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}
  -B ${WORK_DIR}/consumer -G Ninja -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH=${prefix} ${launcher})
run("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run("run the consumer" ${WORK_DIR}/consumer/app)
message(STATUS "${last_output}")
