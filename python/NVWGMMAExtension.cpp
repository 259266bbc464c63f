//===- NVWGMMAExtension.cpp - nanobind module _nvwgmma --------------------===//
//
// Registration of nvwgmma and the upstream dialects and passes it is used
// with, the lattice and rule queries, the ShapeAttr class, enum attribute
// constructors and the PTX queries the pure-Python layer exposes. Each is a
// thin wrapper over the C API.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma-c/Dialects.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

namespace nb = nanobind;
using namespace mlir::python::nanobind_adaptors;

static void appendString(MlirStringRef s, void *userData) {
  static_cast<std::vector<std::string> *>(userData)->emplace_back(s.data,
                                                                  s.length);
}

static nb::object familyInfo(uint32_t typeA, uint32_t typeB) {
  NvwgmmaFamilyInfo info;
  if (!nvwgmmaGetFamilyInfo(typeA, typeB, &info))
    return nb::none();
  nb::dict d;
  d["name"] = info.name;
  d["k"] = info.k;
  d["sparse_k"] = info.sparseK;
  d["can_transpose"] = info.canTranspose;
  d["can_negate"] = info.canNegate;
  d["can_saturate"] = info.canSaturate;
  d["sparsity_selectors"] = info.numSparsitySelectors;
  nb::list ns;
  for (int i = 0; i < 32; ++i)
    if (info.legalNMask & (1u << i))
      ns.append(8 * (i + 1));
  d["n_values"] = nb::tuple(ns);
  nb::list ds;
  for (int t = 0; t < 32; ++t)
    if (info.legalDMask & (1u << t))
      ds.append(t);
  d["d_types"] = nb::tuple(ds);
  return d;
}

/// The enum attribute constructors share one shape: (value, context).
static void defEnumAttrGetter(nb::module_ &m, const char *name,
                              MlirAttribute (*get)(MlirContext, uint32_t)) {
  m.def(
      name,
      [get](uint32_t value, MlirContext ctx) -> nb::object {
        MlirAttribute attr = get(ctx, value);
        if (mlirAttributeIsNull(attr))
          return nb::none();
        return nb::cast(attr);
      },
      nb::arg("value"), nb::arg("context").none() = nb::none(),
      "The enum attribute of an integer case value, or None.");
}

NB_MODULE(_nvwgmma, m) {
  m.doc() = "nvwgmma native module: registration, lattice, rules, PTX";

  m.def(
      "register_dialects",
      [](MlirDialectRegistry registry) {
        nvwgmmaRegisterAllDialects(registry);
      },
      nb::arg("registry"),
      "Insert nvwgmma and the upstream dialects it is used with.");

  m.def("register_passes", &nvwgmmaRegisterAllPasses,
        "Register nvwgmma's passes and the upstream passes to reach LLVM.");

  m.def("family_info", &familyInfo, nb::arg("type_a"), nb::arg("type_b"),
        "The lattice's description of an input pair (a dict), or None.");
  m.def("accumulator_register_count", &nvwgmmaGetAccumulatorRegisterCount,
        nb::arg("type_d"), nb::arg("n"),
        "32-bit accumulator registers per thread for (typeD, n).");
  m.def(
      "accumulator_member_type",
      [](uint32_t typeD, MlirContext ctx) -> nb::object {
        MlirType t = nvwgmmaGetAccumulatorMemberType(ctx, typeD);
        if (mlirTypeIsNull(t))
          return nb::none();
        return nb::cast(t);
      },
      nb::arg("type_d"), nb::arg("context").none() = nb::none(),
      "The accumulator struct's member type for typeD.");

  m.def(
      "check_rules",
      [](MlirOperation op) -> nb::object {
        std::vector<std::string> parts;
        if (!nvwgmmaCheckOpRules(op, appendString, &parts))
          return nb::none();
        return nb::make_tuple(parts.at(0), parts.at(1));
      },
      nb::arg("op"),
      "(label, message) of the rule an nvwgmma op breaks, or None.");

  // ShapeAttr subclasses nvwgmma.ir.Attribute, which is not importable yet
  // when the site initializer loads this module during `nvwgmma.ir`'s own
  // import: the builders define it once the core is up.
  m.def("define_shape_attr", [](nb::module_ scope) {
    if (nb::hasattr(scope, "ShapeAttr"))
      return;
    mlir_attribute_subclass(scope, "ShapeAttr", nvwgmmaAttributeIsAShape,
                            nvwgmmaShapeAttrGetTypeID)
        .def_classmethod(
            "get",
            [](nb::object cls, int64_t mSize, int64_t nSize, int64_t kSize,
               MlirContext ctx) {
              return cls(nvwgmmaShapeAttrGet(ctx, mSize, nSize, kSize));
            },
            nb::arg("cls"), nb::arg("m"), nb::arg("n"), nb::arg("k"),
            nb::arg("context").none() = nb::none(),
            "#nvwgmma.shape<m = M, n = N, k = K>")
        .def_property_readonly("m", nvwgmmaShapeAttrGetM)
        .def_property_readonly("n", nvwgmmaShapeAttrGetN)
        .def_property_readonly("k", nvwgmmaShapeAttrGetK);
  });

  defEnumAttrGetter(m, "elem_type_attr", nvwgmmaElemTypeAttrGet);
  defEnumAttrGetter(m, "scale_in_attr", nvwgmmaScaleInAttrGet);
  defEnumAttrGetter(m, "scale_d_attr", nvwgmmaScaleDAttrGet);
  defEnumAttrGetter(m, "layout_attr", nvwgmmaLayoutAttrGet);

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
      "check_ptx",
      [](const std::string &text, bool strict) {
        std::vector<std::string> findings;
        nvwgmmaCheckPtx(mlirStringRefCreate(text.data(), text.size()), strict,
                        appendString, &findings);
        nb::list out;
        for (const std::string &f : findings)
          out.append(nb::str(f.data(), f.size()));
        return out;
      },
      nb::arg("text"), nb::arg("strict") = false,
      "The protocol findings of a PTX module, each as fields joined by "
      "'\\x1f' (notes after '\\x1e'); see nvwgmma.ptx_check.");

  m.def(
      "required_ptx_version",
      [](MlirOperation op) { return nvwgmmaGetRequiredPtxVersion(op); },
      nb::arg("op"),
      "PTX ISA version (major*10+minor) every nvwgmma op under op needs.");
}
