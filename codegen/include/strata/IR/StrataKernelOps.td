//===- StrataKernelOps.td - fused kernels ------------------*- tablegen -*-===//
#ifndef STRATA_IR_STRATAKERNELOPS_TD
#define STRATA_IR_STRATAKERNELOPS_TD
#endif // STRATA_IR_STRATAKERNELOPS_TD
