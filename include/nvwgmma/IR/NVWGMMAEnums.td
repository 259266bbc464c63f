//===- NVWGMMAEnums.td - nvwgmma enum attributes -----------*- tablegen -*-===//
//
// Every enum case is spelled as its PTX suffix so IR, PTX and Python read the
// same. Cases that are never legal for an operand (e.g. f32 as an A type) are
// still representable: the verifier refuses them with a labelled diagnostic
// instead of the lowering reaching an unreachable.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_ENUMS_TD
#define NVWGMMA_ENUMS_TD

include "mlir/IR/EnumAttr.td"
include "nvwgmma/IR/NVWGMMADialect.td"

def NVWGMMA_TypeF16  : I32EnumAttrCase<"f16", 0>;
def NVWGMMA_TypeBF16 : I32EnumAttrCase<"bf16", 1>;
def NVWGMMA_TypeTF32 : I32EnumAttrCase<"tf32", 2>;
def NVWGMMA_TypeE4M3 : I32EnumAttrCase<"e4m3", 3>;
def NVWGMMA_TypeE5M2 : I32EnumAttrCase<"e5m2", 4>;
def NVWGMMA_TypeS8   : I32EnumAttrCase<"s8", 5>;
def NVWGMMA_TypeU8   : I32EnumAttrCase<"u8", 6>;
def NVWGMMA_TypeB1   : I32EnumAttrCase<"b1", 7>;
def NVWGMMA_TypeF32  : I32EnumAttrCase<"f32", 8>;
def NVWGMMA_TypeS32  : I32EnumAttrCase<"s32", 9>;

def NVWGMMA_ElemType : I32EnumAttr<"ElemType",
    "wgmma element type (the PTX .atype/.btype/.dtype suffix)",
    [NVWGMMA_TypeF16, NVWGMMA_TypeBF16, NVWGMMA_TypeTF32, NVWGMMA_TypeE4M3,
     NVWGMMA_TypeE5M2, NVWGMMA_TypeS8, NVWGMMA_TypeU8, NVWGMMA_TypeB1,
     NVWGMMA_TypeF32, NVWGMMA_TypeS32]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::nvwgmma";
}
def NVWGMMA_ElemTypeAttr : EnumAttr<NVWGMMA_Dialect, NVWGMMA_ElemType, "type"> {
  let assemblyFormat = "$value";
}

// Stored as 0/1: TableGen's unsigned enums cannot hold PTX's -1. The PTX
// immediate (1 or -1) is produced by the emitter, never by a cast.
def NVWGMMA_ScaleInOne : I32EnumAttrCase<"one", 0>;
def NVWGMMA_ScaleInNeg : I32EnumAttrCase<"neg", 1>;
def NVWGMMA_ScaleIn : I32EnumAttr<"ScaleIn",
    "imm-scale-a / imm-scale-b: 1 keeps the input, -1 negates it",
    [NVWGMMA_ScaleInOne, NVWGMMA_ScaleInNeg]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::nvwgmma";
}
def NVWGMMA_ScaleInAttr : EnumAttr<NVWGMMA_Dialect, NVWGMMA_ScaleIn, "scale_in"> {
  let assemblyFormat = "$value";
}

def NVWGMMA_ScaleDZero : I32EnumAttrCase<"zero", 0>;
def NVWGMMA_ScaleDOne  : I32EnumAttrCase<"one", 1>;
def NVWGMMA_ScaleD : I32EnumAttr<"ScaleD",
    "constant scale-d: zero computes D = A*B, one computes D = A*B + D",
    [NVWGMMA_ScaleDZero, NVWGMMA_ScaleDOne]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::nvwgmma";
}
def NVWGMMA_ScaleDAttr : EnumAttr<NVWGMMA_Dialect, NVWGMMA_ScaleD, "scale_d"> {
  let assemblyFormat = "$value";
}

// Upstream nvvm's convention: A is row-major and B column-major unless
// transposed, so `A [.., col]` means imm-trans-a = 1 and `B [.., row]` means
// imm-trans-b = 1.
def NVWGMMA_LayoutRow : I32EnumAttrCase<"row", 0>;
def NVWGMMA_LayoutCol : I32EnumAttrCase<"col", 1>;
def NVWGMMA_Layout : I32EnumAttr<"Layout",
    "operand layout; the non-default one is the PTX transpose immediate",
    [NVWGMMA_LayoutRow, NVWGMMA_LayoutCol]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::nvwgmma";
}
def NVWGMMA_LayoutAttr : EnumAttr<NVWGMMA_Dialect, NVWGMMA_Layout, "layout"> {
  let assemblyFormat = "$value";
}

#endif // NVWGMMA_ENUMS_TD
