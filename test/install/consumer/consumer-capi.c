/*===- consumer-capi.c - nvwgmma through its C API -----------------------===*/
/*
 * Parses a kernel with nvwgmma ops, lowers it with an nvwgmma pass, prints
 * it, asks the rule table about the lattice, and shows that an illegal op is
 * refused with nvwgmma's labelled diagnostic. Exit code 0 only if all hold.
 */

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "nvwgmma-c/Dialects.h"

#include <stdio.h>
#include <string.h>

static void print(MlirStringRef s, void *user) {
  (void)user;
  fwrite(s.data, 1, s.length, stdout);
}

static MlirLogicalResult onDiagnostic(MlirDiagnostic d, void *user) {
  int *count = (int *)user;
  ++*count;
  printf("diagnostic: ");
  mlirDiagnosticPrint(d, print, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

static const char *kGood =
    "func.func @k(%a: i64, %b: i64, %acc: !llvm.struct<(f32, f32, f32, f32)>)"
    " -> !llvm.struct<(f32, f32, f32, f32)> {\n"
    "  nvwgmma.fence\n"
    "  %d = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, "
    "k = 16>, D [f32, one], A [f16, one, row], B [f16, one, col] : i64, "
    "!llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>\n"
    "  nvwgmma.commit_group\n"
    "  nvwgmma.wait_group 0\n"
    "  return %d : !llvm.struct<(f32, f32, f32, f32)>\n"
    "}\n";

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  nvwgmmaRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(ctx);
  nvwgmmaRegisterAllPasses();
  int diagnostics = 0;
  mlirContextAttachDiagnosticHandler(ctx, onDiagnostic, &diagnostics, NULL);

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kGood));
  if (mlirModuleIsNull(module))
    return 1;
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
          opm,
          mlirStringRefCreateFromCString(
              "builtin.module(nvwgmma-check-protocol,convert-nvwgmma-to-nvvm)"),
          print, NULL)))
    return 2;
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))))
    return 3;
  mlirOperationPrint(mlirModuleGetOperation(module), print, NULL);
  printf("\n");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);

  NvwgmmaFamilyInfo info;
  /* ElemType f16 = 0. */
  if (!nvwgmmaGetFamilyInfo(0, 0, &info))
    return 4;
  printf("family %s: k = %lld, sparse k = %lld, registers(f32, n = 256) = "
         "%lld\n",
         info.name, (long long)info.k, (long long)info.sparseK,
         (long long)nvwgmmaGetAccumulatorRegisterCount(8, 256));

  /* n = 12 is not in the lattice: parsing verifies and reports the rule. */
  char bad[2048];
  strcpy(bad, kGood);
  *strstr(bad, "n = 8") = '\0';
  char rebuilt[2048];
  snprintf(rebuilt, sizeof rebuilt, "%sn = 12%s", bad,
           strstr(kGood, "n = 8") + 5);
  MlirModule refused =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(rebuilt));
  if (!mlirModuleIsNull(refused) || diagnostics == 0)
    return 5;
  mlirContextDestroy(ctx);
  return 0;
}
