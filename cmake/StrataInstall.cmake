# `cmake --install`: headers, libraries, tools, generated docs and the CMake
# package (find_package(strata) + target_link_libraries(app strata::strata)).
# The libraries are static; their link interface names MLIR, LLVM, fmt and
# Threads, which strataConfig.cmake finds again in the consumer (MLIR and
# LLVM as imported shared libraries at the paths this build used).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(STRATA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/strata)

# Public headers: the DSL's (what users include), the generated version, and
# the runtime's layout/storage headers (for code that works with buffers).
# strata/distributed.h stays out until strata_distributed (and its gloo and
# libtorch dependencies) is exported too (docs/distributed.md "Limits").
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dsl/include/strata
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h"
  PATTERN "distributed.h" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/strata
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/strata/Version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strata)

target_include_directories(strata_dsl PUBLIC
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_include_directories(strata_runtime PUBLIC
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(strata_dsl PROPERTIES EXPORT_NAME strata)
set_target_properties(strata_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(strata_jit PROPERTIES EXPORT_NAME jit)
set_target_properties(strata_codegen PROPERTIES EXPORT_NAME codegen)

install(TARGETS strata_dsl strata_runtime strata_jit strata_codegen
  EXPORT strataTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# The tools find libMLIR/libLLVM in /usr/lib/llvm-16/lib through their
# rpath after installation too.
set(STRATA_TOOLS strata-opt strata-run strata-translate)
set_target_properties(${STRATA_TOOLS} PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS ${STRATA_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The launcher depends on nothing of strata's: installed with the tools.
install(TARGETS strata-launch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT strataTargets NAMESPACE strata::
  DESTINATION ${STRATA_INSTALL_CMAKEDIR})
set(STRATA_CONFIG_HAVE_CUDA ${CUDAToolkit_FOUND})
get_target_property(STRATA_MLIR_LOCATION MLIR LOCATION)
get_target_property(STRATA_LLVM_LOCATION LLVM LOCATION)
set(STRATA_MLIR_INCLUDE_DIRS)
foreach(dir ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  if(EXISTS ${dir} AND NOT dir IN_LIST STRATA_MLIR_INCLUDE_DIRS)
    list(APPEND STRATA_MLIR_INCLUDE_DIRS ${dir})
  endif()
endforeach()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/strataConfig.cmake.in
  ${PROJECT_BINARY_DIR}/strataConfig.cmake
  INSTALL_DESTINATION ${STRATA_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/strataConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/strataConfig.cmake
  ${PROJECT_BINARY_DIR}/strataConfigVersion.cmake
  DESTINATION ${STRATA_INSTALL_CMAKEDIR})
