//===- NVWGMMAAttrs.td - nvwgmma attributes ----------------*- tablegen -*-===//
//
// The shape attribute; which shapes are legal is the rule table's business,
// so any integers parse and the verifier names the broken rule.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_ATTRS_TD
#define NVWGMMA_ATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "nvwgmma/IR/NVWGMMADialect.td"

def NVWGMMA_ShapeAttr : AttrDef<NVWGMMA_Dialect, "Shape"> {
  let mnemonic = "shape";
  let summary = "the m64nNkK shape of a wgmma.mma_async";
  let description = [{
    `#nvwgmma.shape<m = 64, n = 128, k = 16>`. Any integers parse; which
    combinations are legal depends on the element types and is checked by the
    op verifier (rules mma_async_c1, c4, c5, c6).
  }];
  let parameters = (ins "int64_t":$m, "int64_t":$n, "int64_t":$k);
  let assemblyFormat = "`<` `m` `=` $m `,` `n` `=` $n `,` `k` `=` $k `>`";
}

#endif // NVWGMMA_ATTRS_TD
