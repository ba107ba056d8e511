//===- Jit.cpp - compile orchestration ------------------------------------===//
#include "strata/JIT/Jit.h"

const char *strata::jit::compilerVersion() { return "strata-0.1.0"; }
