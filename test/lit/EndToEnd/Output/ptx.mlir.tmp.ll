; ModuleID = 'LLVMDialectModule'
source_filename = "LLVMDialectModule"

define ptx_kernel void @kernel(i64 %0, i64 %1, ptr addrspace(1) %2, i32 %3) {
  %5 = icmp ne i32 %3, 0
  call void @llvm.nvvm.wgmma.fence.sync.aligned()
  %6 = zext i1 %5 to i32
  %7 = call { float, float, float, float } asm sideeffect "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, $8, $9, p, $11,  $12, $13,  $14;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,l,l,r,n,n,n,n"(float 0.000000e+00, float 0.000000e+00, float 0.000000e+00, float 0.000000e+00, i64 %0, i64 %1, i32 %6, i32 1, i32 1, i32 0, i32 0)
  %8 = extractvalue { float, float, float, float } %7, 0
  %9 = extractvalue { float, float, float, float } %7, 1
  %10 = extractvalue { float, float, float, float } %7, 2
  %11 = extractvalue { float, float, float, float } %7, 3
  %12 = call { float, float, float, float } asm sideeffect "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, $8, $9, p, $11,  $12, $13,  $14;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,l,l,n,n,n,n,n"(float %8, float %9, float %10, float %11, i64 %0, i64 %1, i32 1, i32 1, i32 1, i32 0, i32 0)
  call void @llvm.nvvm.wgmma.commit_group.sync.aligned()
  call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 0)
  %13 = extractvalue { float, float, float, float } %12, 0
  store float %13, ptr addrspace(1) %2, align 4
  ret void
}

; Function Attrs: convergent nounwind
declare void @llvm.nvvm.wgmma.fence.sync.aligned() #0

; Function Attrs: convergent nounwind
declare void @llvm.nvvm.wgmma.commit_group.sync.aligned() #0

; Function Attrs: convergent nounwind
declare void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 immarg) #0

attributes #0 = { convergent nounwind }

!llvm.module.flags = !{!0}

!0 = !{i32 2, !"Debug Info Version", i32 3}
