// RUN: nvwgmma-opt %s --convert-nvwgmma-to-llvm | FileCheck %s
// RUN: nvwgmma-opt %s --convert-nvwgmma-to-nvvm | FileCheck %s
// RUN: nvwgmma-opt %s --convert-nvwgmma-to-llvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
//
// A wait that carries values is one inline asm with side effects whose
// outputs are tied to every register it takes ("=f" for f32, "=r" for any
// other 32 bits, as i32), the values rebuilt from its outputs; both
// conversions emit it (upstream's wait op and the intrinsic take no
// registers).

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!frag = !llvm.struct<(i32, vector<2xf16>)>

// CHECK-LABEL: llvm.func @acc_and_fragment
// CHECK-SAME: (%[[D:.+]]: !llvm.struct<(f32, f32, f32, f32)>, %[[A:.+]]: !llvm.struct<(i32, vector<2xf16>)>)
// CHECK-NEXT: %[[D0:.+]] = llvm.extractvalue %[[D]][0] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[D1:.+]] = llvm.extractvalue %[[D]][1] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[D2:.+]] = llvm.extractvalue %[[D]][2] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[D3:.+]] = llvm.extractvalue %[[D]][3] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[A0:.+]] = llvm.extractvalue %[[A]][0] : !llvm.struct<(i32, vector<2xf16>)>
// CHECK-NEXT: %[[A1:.+]] = llvm.extractvalue %[[A]][1] : !llvm.struct<(i32, vector<2xf16>)>
// CHECK-NEXT: %[[A1I:.+]] = llvm.bitcast %[[A1]] : vector<2xf16> to i32
// CHECK-NEXT: %[[W:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 1;", "=f,=f,=f,=f,=r,=r,0,1,2,3,4,5" %[[D0]], %[[D1]], %[[D2]], %[[D3]], %[[A0]], %[[A1I]] : (f32, f32, f32, f32, i32, i32) -> !llvm.struct<(f32, f32, f32, f32, i32, i32)>
// CHECK-NEXT: %[[U:.+]] = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[R0:.+]] = llvm.extractvalue %[[W]][0] : !llvm.struct<(f32, f32, f32, f32, i32, i32)>
// CHECK-NEXT: %[[U0:.+]] = llvm.insertvalue %[[R0]], %[[U]][0] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK:      %[[R5:.+]] = llvm.extractvalue %[[W]][5] : !llvm.struct<(f32, f32, f32, f32, i32, i32)>
// CHECK-NEXT: %[[R5H:.+]] = llvm.bitcast %[[R5]] : i32 to vector<2xf16>
// CHECK-NEXT: %[[AR:.+]] = llvm.insertvalue %[[R5H]], %{{.+}}[1] : !llvm.struct<(i32, vector<2xf16>)>
// CHECK: llvm.insertvalue %[[AR]], %{{.+}}[1]
llvm.func @acc_and_fragment(%d: !f32x4, %a: !frag) -> !llvm.struct<(!f32x4, !frag)> {
  %dw, %aw = nvwgmma.wait_group 1 (%d, %a : !f32x4, !frag)
  %u = llvm.mlir.undef : !llvm.struct<(!f32x4, !frag)>
  %r0 = llvm.insertvalue %dw, %u[0] : !llvm.struct<(!f32x4, !frag)>
  %r1 = llvm.insertvalue %aw, %r0[1] : !llvm.struct<(!f32x4, !frag)>
  llvm.return %r1 : !llvm.struct<(!f32x4, !frag)>
}

// One register: the asm's result is that register, not a struct.
// CHECK-LABEL: llvm.func @one_register
// CHECK-NEXT: %[[W1:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 0;", "=f,0" %{{.+}} : (f32) -> f32
// CHECK-NEXT: llvm.return %[[W1]] : f32
llvm.func @one_register(%x: f32) -> f32 {
  %y = nvwgmma.wait_group 0 (%x : f32)
  llvm.return %y : f32
}

// LLVMIR-LABEL: define { { float, float, float, float }, { i32, <2 x half> } } @acc_and_fragment
// LLVMIR: call { float, float, float, float, i32, i32 } asm sideeffect "wgmma.wait_group.sync.aligned 1;", "=f,=f,=f,=f,=r,=r,0,1,2,3,4,5"(
