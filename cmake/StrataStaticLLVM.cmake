# STRATA_STATIC_LLVM=ON (tests/gpu/make-bundle.sh): binaries that carry
# their LLVM, MLIR, fmt and C++ runtime inside them, for a machine that has
# none of these (the GPU machine of tests/gpu/run.sh --bundle).
#
# Debian's LLVM 16 exports `LLVM` and `MLIR` as the shared libLLVM-16.so and
# libMLIR.so, and every static MLIR library's link interface names `LLVM`.
# Rather than renaming those targets in every CMakeLists.txt, this mode
# re-points the imported targets: `LLVM`, `MLIR` and `fmt::fmt` become an
# empty archive whose link interface is the static component libraries
# (/usr/lib/llvm-16/lib/lib{LLVM,MLIR}*.a) strata uses, or fmt's header-only
# target. The linker then takes only the objects strata references. The
# default build (OFF) is unchanged.
#
# libnvrtc stays a shared library (109 MiB; the GPU machine has its own):
# it is found through the RUNPATH below or LD_LIBRARY_PATH, which
# tests/gpu/run.sh sets. libcuda is dlopen'ed at run time, as always.

if(STRATA_SANITIZE OR STRATA_TSAN)
  message(FATAL_ERROR "STRATA_STATIC_LLVM excludes the sanitizer builds")
endif()
# Linked statically, strata's objects and LLVM's share one copy of each
# inline function of the LLVM/MLIR headers, the first the linker sees:
# strata's. Compiled by GCC, some are not interchangeable with the clang
# build of Debian's LLVM (the closure of a lambda capturing `this` in
# mlir::AsmParser::parseTypeList is laid out differently: strata-run
# crashed in MLIR's parser), so this mode needs clang.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "STRATA_STATIC_LLVM needs clang (Debian's LLVM 16 is "
    "built with it; GCC-compiled copies of LLVM's inline functions break "
    "it): -DCMAKE_CXX_COMPILER=clang++-16, or tests/gpu/make-bundle.sh")
endif()

# An archive with no members: what the re-pointed imported targets "are".
set(STRATA_EMPTY_ARCHIVE ${CMAKE_BINARY_DIR}/lib/libstrata-empty.a)
file(WRITE ${STRATA_EMPTY_ARCHIVE} "!<arch>\n")

# Makes imported target TARGET link as LIBS (its own file: the empty archive).
function(strata_repoint_imported target)
  get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
  foreach(config ${configs})
    set_target_properties(${target} PROPERTIES
      IMPORTED_LOCATION_${config} ${STRATA_EMPTY_ARCHIVE}
      IMPORTED_SONAME_${config} "")
  endforeach()
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION ${STRATA_EMPTY_ARCHIVE}
    INTERFACE_COMPILE_DEFINITIONS ""
    INTERFACE_LINK_LIBRARIES "${ARGN}")
endfunction()

# The LLVM components strata uses: the ORC JIT, the new pass manager's
# pipelines, the host's code generator. Their own dependencies come with
# them (the component targets' link interfaces).
llvm_map_components_to_libnames(STRATA_LLVM_STATIC_LIBS
  core support orcjit passes native targetparser irreader)
strata_repoint_imported(LLVM ${STRATA_LLVM_STATIC_LIBS})

# The MLIR libraries strata's sources include (the dialects it loads, the
# parser, the pass manager and its standard passes, mlir-opt's driver for
# strata-opt); each brings its dependencies, which end at `LLVM` above.
strata_repoint_imported(MLIR
  MLIRIR MLIRParser MLIRPass MLIRTransforms MLIRTransformUtils MLIRSupport
  MLIRFuncDialect MLIRArithDialect MLIRMathDialect MLIRInferTypeOpInterface
  MLIRSideEffectInterfaces MLIRViewLikeInterface MLIROptLib)

# LLVMSupport names shared system libraries: z3 (only its SMT solver uses
# it, which strata does not: not linked), zlib, zstd and terminfo. Static
# zlib and terminfo; zstd static where installed (libzstd-dev), else
# libzstd.so.1 (760 KiB; make-bundle.sh copies it into the bundle's lib/).
set(STRATA_LLVM_SYSTEM_LIBS rt dl m Threads::Threads)
foreach(lib z tinfo zstd)
  find_library(STRATA_STATIC_${lib} NAMES lib${lib}.a)
  if(STRATA_STATIC_${lib})
    list(APPEND STRATA_LLVM_SYSTEM_LIBS ${STRATA_STATIC_${lib}})
  else()
    find_library(STRATA_SHARED_${lib} NAMES lib${lib}.so lib${lib}.so.1
      REQUIRED)
    list(APPEND STRATA_LLVM_SYSTEM_LIBS ${STRATA_SHARED_${lib}})
  endif()
endforeach()
set_target_properties(LLVMSupport PROPERTIES
  INTERFACE_LINK_LIBRARIES "${STRATA_LLVM_SYSTEM_LIBS};LLVMDemangle")

# fmt: Debian has only libfmt.so; the header-only build is the same code.
strata_repoint_imported(fmt::fmt fmt::fmt-header-only)

# The C++ runtime inside too (the GPU machine's libstdc++ would do, being
# newer, but this keeps the NEEDED list to glibc); unused sections dropped;
# shared libraries listed but unused (librt, libdl ...) not recorded.
# Kernels the JIT compiles find their callees in the process's shared
# libraries (ORC's process search generator); with libgcc static its
# helpers (__udivti3, half-float conversions) are not among them, and
# strata's kernels (f32/f64/i32/i64/i1 arithmetic, libm calls) have needed
# none (every tests/lit/Reference program runs from the bundle).
add_link_options(-static-libstdc++ -static-libgcc -Wl,--gc-sections
  -Wl,--as-needed)
# No build-tree RUNPATH to /usr/lib/llvm-16 or the build directory: only
# where the bundle's own lib/ and a CUDA toolkit's NVRTC may be.
set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)
set(CMAKE_INSTALL_RPATH
  "\$ORIGIN/../lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/targets/x86_64-linux/lib")
message(STATUS "strata: LLVM, MLIR, fmt and libstdc++ linked statically "
  "(STRATA_STATIC_LLVM)")
