llvm.func @k(%tm: !llvm.ptr, %dst: !llvm.ptr<3>, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %a: i64, %b: i64) attributes {nvvm.kernel} {
  %c1 = llvm.mlir.constant(1 : i32) : i32
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %tx = llvm.mlir.constant(16384 : i32) : i32
  nvvm.setmaxregister increase 232
  nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
  nvvm.fence.mbarrier.init
  %s = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tm, %bar, box[%x, %y] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
  %dstc = llvm.addrspacecast %dst : !llvm.ptr<3> to !llvm.ptr<7>
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dstc, %tm, %bar, box[%x, %y] : !llvm.ptr<7>, !llvm.ptr
  nvvm.mbarrier.try_wait.parity %bar, %c0, %c0 : !llvm.ptr<3>, i32, i32
  %acc = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32)>
  nvwgmma.fence
  %d = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>, D [f32, zero], A [bf16, one, row], B [bf16, one, col] : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  llvm.return
}
