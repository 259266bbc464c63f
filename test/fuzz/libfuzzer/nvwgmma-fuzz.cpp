//===- nvwgmma-fuzz.cpp - libFuzzer target over parse/verify/lower --------===//
//
// Feeds each input, as MLIR text, through what a user's input reaches in
// nvwgmma: parse and verify, the protocol check and repair, both
// conversions, the PTX printer and the full pipeline to LLVM dialect. The
// property is the process surviving: libFuzzer reports any crash, and under
// -fsanitize=address,undefined any memory or UB error.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Registration/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <string>

using namespace mlir;

static const char *const kPipelines[] = {
    "builtin.module(nvwgmma-check-protocol)",
    "builtin.module(nvwgmma-insert-synchronization,nvwgmma-check-protocol)",
    "builtin.module(convert-nvwgmma-to-nvvm,convert-nvvm-to-llvm)",
    "builtin.module(convert-nvwgmma-to-llvm)",
    "builtin.module(nvwgmma-print-ptx{inline-asm=true})",
    "builtin.module(nvwgmma-to-llvm-pipeline)",
};

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  nvwgmma::registerAllPasses();
  // --nvwgmma-print-ptx writes to stdout; libFuzzer reports on stderr.
  (void)std::freopen("/dev/null", "w", stdout);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    nvwgmma::registerAllDialects(*r);
    return r;
  }();
  MLIRContext context(*registry);
  context.loadAllAvailableDialects();
  context.disableMultithreading();
  // Diagnostics are the expected outcome of most inputs: keep them quiet.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  std::string text(reinterpret_cast<const char *>(data), size);
  for (const char *pipeline : kPipelines) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return 0;
    PassManager pm(&context);
    if (failed(parsePassPipeline(pipeline, pm, llvm::nulls())))
      __builtin_trap(); // the pipelines above always parse
    (void)pm.run(*module);
  }
  return 0;
}
