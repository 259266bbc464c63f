// Fragments as other front ends move them. CuTe DSL keeps the accumulator in
// a local array (llvm.alloca) that LLVM promotes to registers: its loads and
// stores around a wgmma move registers and access nothing, while a value
// computed from them is a real access. Mosaic GPU repacks A fragments through
// vectors (bitcast, extractelement) after the fence: plumbing too.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol -verify-diagnostics

llvm.func @accumulator_in_local_array(%desc: i64, %out: !llvm.ptr<1>) {
  %one = llvm.mlir.constant(1 : i32) : i32
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %acc = llvm.alloca %one x !llvm.array<4 x f32> : (i32) -> !llvm.ptr
  %p1 = llvm.getelementptr %acc[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
  %p2 = llvm.getelementptr %acc[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
  %p3 = llvm.getelementptr %acc[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
  llvm.store %zero, %acc : f32, !llvm.ptr
  llvm.store %zero, %p1 : f32, !llvm.ptr
  llvm.store %zero, %p2 : f32, !llvm.ptr
  llvm.store %zero, %p3 : f32, !llvm.ptr
  nvvm.wgmma.fence.aligned
  %a0 = llvm.load %acc : !llvm.ptr -> f32
  %a1 = llvm.load %p1 : !llvm.ptr -> f32
  %a2 = llvm.load %p2 : !llvm.ptr -> f32
  %a3 = llvm.load %p3 : !llvm.ptr -> f32
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !llvm.struct<(f32, f32, f32, f32)>
  %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
  %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
  %d2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32)>
  %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
  // The pending results go back into the array before the commit: moves.
  llvm.store %d0, %acc : f32, !llvm.ptr
  llvm.store %d1, %p1 : f32, !llvm.ptr
  llvm.store %d2, %p2 : f32, !llvm.ptr
  llvm.store %d3, %p3 : f32, !llvm.ptr
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %r = llvm.load %acc : !llvm.ptr -> f32
  llvm.store %r, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

llvm.func @local_array_read_before_wait(%desc: i64, %out: !llvm.ptr<1>) {
  %one = llvm.mlir.constant(1 : i32) : i32
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %acc = llvm.alloca %one x !llvm.array<4 x f32> : (i32) -> !llvm.ptr
  llvm.store %zero, %acc : f32, !llvm.ptr
  nvvm.wgmma.fence.aligned
  %a0 = llvm.load %acc : !llvm.ptr -> f32
  // expected-note@+1 {{mma_async issued here}}
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a0, %a0, %a0, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !llvm.struct<(f32, f32, f32, f32)>
  %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
  llvm.store %d0, %acc : f32, !llvm.ptr
  nvvm.wgmma.commit.group.sync.aligned
  %r = llvm.load %acc : !llvm.ptr -> f32
  // The array's value is a pending result: reading it is a use.
  // expected-error@+1 {{'llvm.fmul' the mma_async group must be completed by a wait_group 0 before this use of its result, but got its group still pending (protocol_c4)}}
  %x = llvm.fmul %r, %r : f32
  llvm.store %x, %out : f32, !llvm.ptr<1>
  nvvm.wgmma.wait.group.sync.aligned 0
  llvm.return
}

// -----

llvm.func @local_array_written_after_fence(%desc: i64, %out: !llvm.ptr<1>, %x: f32) {
  %one = llvm.mlir.constant(1 : i32) : i32
  %acc = llvm.alloca %one x !llvm.array<4 x f32> : (i32) -> !llvm.ptr
  nvvm.wgmma.fence.aligned
  // A computed value stored into the array writes the registers.
  %y = llvm.fadd %x, %x : f32
  // expected-note@+1 {{registers last accessed here}}
  llvm.store %y, %acc : f32, !llvm.ptr
  %a0 = llvm.load %acc : !llvm.ptr -> f32
  // expected-error@+1 {{'llvm.inline_asm' an nvwgmma.fence must separate the last non-wgmma access to the accumulator or A-fragment registers from this mma_async, but got none (protocol_c1)}}
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a0, %a0, %a0, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !llvm.struct<(f32, f32, f32, f32)>
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
  llvm.store %d0, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

// The A fragment computed before the fence, repacked after it.
llvm.func @a_fragment_repacked_after_fence(%descb: i64, %p: vector<8xf16>, %out: !llvm.ptr<1>) {
  %z = llvm.mlir.constant(0.0 : f32) : f32
  %i0 = llvm.mlir.constant(0 : i32) : i32
  %i1 = llvm.mlir.constant(1 : i32) : i32
  %i2 = llvm.mlir.constant(2 : i32) : i32
  %i3 = llvm.mlir.constant(3 : i32) : i32
  %half = llvm.fmul %p, %p : vector<8xf16>
  nvvm.wgmma.fence.aligned
  %words = llvm.bitcast %half : vector<8xf16> to vector<4xi32>
  %w0 = llvm.extractelement %words[%i0 : i32] : vector<4xi32>
  %w1 = llvm.extractelement %words[%i1 : i32] : vector<4xi32>
  %w2 = llvm.extractelement %words[%i2 : i32] : vector<4xi32>
  %w3 = llvm.extractelement %words[%i3 : i32] : vector<4xi32>
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, {$8,$9,$10,$11}, $12, 1, 1, 1, 0;", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l" %z, %z, %z, %z, %w0, %w1, %w2, %w3, %descb : (f32, f32, f32, f32, i32, i32, i32, i32, i64) -> !llvm.struct<(f32, f32, f32, f32)>
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
  llvm.store %d0, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

llvm.func @a_fragment_computed_after_fence(%descb: i64, %p: vector<8xf16>, %out: !llvm.ptr<1>) {
  %z = llvm.mlir.constant(0.0 : f32) : f32
  %i0 = llvm.mlir.constant(0 : i32) : i32
  nvvm.wgmma.fence.aligned
  // expected-note@+1 {{registers last accessed here}}
  %half = llvm.fmul %p, %p : vector<8xf16>
  %words = llvm.bitcast %half : vector<8xf16> to vector<4xi32>
  %w0 = llvm.extractelement %words[%i0 : i32] : vector<4xi32>
  // expected-error@+1 {{'llvm.inline_asm' an nvwgmma.fence must separate the last non-wgmma access to the accumulator or A-fragment registers from this mma_async, but got none (protocol_c1)}}
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, {$8,$9,$10,$11}, $12, 1, 1, 1, 0;", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l" %z, %z, %z, %z, %w0, %w0, %w0, %w0, %descb : (f32, f32, f32, f32, i32, i32, i32, i32, i64) -> !llvm.struct<(f32, f32, f32, f32)>
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
  llvm.store %d0, %out : f32, !llvm.ptr<1>
  llvm.return
}
