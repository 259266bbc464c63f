//===- nvwgmma-ptx-check.cpp - the wgmma protocol checked on PTX files ----===//
//
// nvwgmma-ptx-check [--strict] FILE.ptx... ('-' reads stdin): the protocol
// findings of each file as "file:line: error: ...", exit status 1 when any
// is an error. The same checker as nvwgmma.check_ptx in Python.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/PTX/PtxProtocol.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::list<std::string> files(cl::Positional, cl::desc("<file.ptx>..."),
                                   cl::OneOrMore);
static cl::opt<bool>
    strict("strict",
           cl::desc("also warn about what the checker could not relate"));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "the wgmma protocol checked on PTX\n");
  bool failed = false;
  for (const std::string &file : files) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
        MemoryBuffer::getFileOrSTDIN(file, /*IsText=*/true);
    if (!buffer) {
      errs() << file
             << ": error: cannot read the file: " << buffer.getError().message()
             << "\n";
      failed = true;
      continue;
    }
    mlir::nvwgmma::ptx::CheckOptions options;
    options.strict = strict;
    auto findings =
        mlir::nvwgmma::ptx::checkPtx((*buffer)->getBuffer(), options);
    errs() << mlir::nvwgmma::ptx::formatFindings(
        findings, file == "-" ? "<stdin>" : file);
    for (const auto &f : findings)
      failed |= f.severity == mlir::nvwgmma::ptx::Finding::Error;
  }
  return failed ? 1 : 0;
}
