//===- Version.cpp - the library version ----------------------------------===//
#include "strata/strata.h"

const char *strata::version() { return "0.1.0"; }
