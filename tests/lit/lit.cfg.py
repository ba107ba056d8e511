# lit configuration for strata's compiler tests (FileCheck over the tools).
import os
import lit.formats

config.name = "strata"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.strata_obj_root, "tests", "lit")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]

# The build's tools first, then LLVM 16's FileCheck/not/count (the
# unversioned ones on PATH are another LLVM).
path = os.pathsep.join([config.strata_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.substitutions.append(("%strata_src", config.strata_src_root))
config.substitutions.append(("%python", "python3"))
config.substitutions.append(("%strata_bin", config.strata_tools_dir))
# `ptxas`: the CUDA toolkit's PTX assembler, to validate emitted PTX.
import shutil
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas"
    if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
# Kernels compiled by tests go to the build tree, not the user's cache.
config.environment["STRATA_CACHE_DIR"] = os.path.join(config.strata_obj_root,
                                                      "test-kernel-cache")
config.environment["STRATA_NUM_THREADS"] = "2"
