//===- NVWGMMAExtension.cpp - nanobind module _nvwgmma --------------------===//
//
// Registration of nvwgmma and the upstream dialects and passes it is used
// with, plus the PTX queries the pure-Python layer exposes.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma-c/Dialects.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

namespace nb = nanobind;

static void appendString(MlirStringRef s, void *userData) {
  static_cast<std::vector<std::string> *>(userData)->emplace_back(s.data,
                                                                  s.length);
}

NB_MODULE(_nvwgmma, m) {
  m.doc() = "nvwgmma native module: registration and PTX queries";

  m.def(
      "register_dialects",
      [](MlirDialectRegistry registry) {
        nvwgmmaRegisterAllDialects(registry);
      },
      nb::arg("registry"),
      "Insert nvwgmma and the upstream dialects it is used with.");

  m.def("register_passes", &nvwgmmaRegisterAllPasses,
        "Register nvwgmma's passes and the upstream passes to reach LLVM.");

  m.def(
      "get_ptx",
      [](MlirOperation op, bool inlineAsm) -> nb::object {
        std::vector<std::string> parts;
        if (!nvwgmmaGetPtx(op, inlineAsm, appendString, &parts))
          return nb::none();
        if (inlineAsm)
          return nb::make_tuple(parts.at(0), parts.at(1));
        return nb::str(parts.at(0).c_str());
      },
      nb::arg("op"), nb::arg("inline_asm") = false,
      "PTX text of a verified nvwgmma op, or None.");

  m.def(
      "required_ptx_version",
      [](MlirOperation op) { return nvwgmmaGetRequiredPtxVersion(op); },
      nb::arg("op"),
      "PTX ISA version (major*10+minor) every nvwgmma op under op needs.");
}
