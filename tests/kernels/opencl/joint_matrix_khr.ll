; llvm-spirv: --spirv-ext=+SPV_KHR_cooperative_matrix,+SPV_INTEL_joint_matrix
; SPV_INTEL_joint_matrix in the KHR form current DPC++ reaches llvm-spirv with: SYCL's
; joint_matrix as target("spirv.CooperativeMatrixKHR", component, scope, rows, columns, use)
; values and __spirv_CooperativeMatrix*KHR/INTEL calls whose mangled names type their pointers,
; bf16 held in 16-bit integers and read as bf16, and f32 read as TF32, by the multiply-add's
; Cooperative Matrix Operands (0x40 A and B, 0x80 C, 0x100 the result; 0x20 TF32). The kernels
; are joint_matrix.ll's of the same names (D = A * B + C, A, B and C loaded at the strides and
; layouts given: 0 row-major, 1 column-major, 2 packed), element access through an access chain
; into a variable holding the matrix (__spirv_AccessChain), and mad_bf16_acc, whose C and D are
; bf16 too. The checked_* kernels compute the tile at (row, col) of D = A * B + C over an
; m x n x k problem with the bounds-checked loads, stores and fill (joint_matrix_load_checked and
; its kin: X and Y offsets, Height and Width of the region, in memory's rows and columns), C
; filled with 0.5 (1 for s8) inside the m x n region; A row-major or column-major, B row-major
; or packed; the tiles of A and C as the checked load and fill gave them are stored whole into
; ta and tc.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0), target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1), target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), i32)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 2) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_2PU3AS1DF16_il(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0), target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1), target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 2), i32)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1DF16_PU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_2il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 2), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1ail(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS1ail(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z77__spirv_CooperativeMatrixLoadKHR_R41__spirv_CooperativeMatrixKHR__int_3_8_8_2PU3AS1iil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS143__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0), target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1), target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2), i32)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS1ail(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z78__spirv_CooperativeMatrixLoadKHR_R42__spirv_CooperativeMatrixKHR__int_3_8_16_2PU3AS1iil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS144__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS142__spirv_CooperativeMatrixKHR__int_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0), target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1), target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2), i32)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS142__spirv_CooperativeMatrixKHR__int_3_8_16_2il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS1sil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) @_Z81__spirv_CooperativeMatrixLoadKHR_R45__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS1sil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS145__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0), target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1), target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), i32)
declare spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__short_3_8_16_2PU3AS1sil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS145__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0), target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1), target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 2), i32)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1sPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_2il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 2), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS1fil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS1fil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__float_3_8_8_2PU3AS1fil(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2i(target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0), target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1), target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2), i32)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2), i32, i64)
declare spir_func i32 @_Z34__spirv_CooperativeMatrixLengthKHR_float_8_16(target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2))
declare spir_func ptr addrspace(4) @_Z19__spirv_AccessChain_float_8_16(ptr addrspace(4), i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z73__spirv_CompositeConstruct_R43__spirv_CooperativeMatrixKHR__float_3_8_8_2f(float)
declare spir_func <2 x i32> @_Z39__spirv_JointMatrixGetElementCoordINTEL_float_8_16(target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), i32)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z94__spirv_CooperativeMatrixConstructCheckedINTEL_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2iiiif(i32, i32, i32, i32, float)
declare spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1), i32, i32, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), i32, i32, i32, i64)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1DF16_PU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS1siiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) @_Z90__spirv_CooperativeMatrixLoadCheckedINTEL_R45__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS1siiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1sPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS1fiiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS1fiiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z93__spirv_CooperativeMatrixConstructCheckedINTEL_R43__spirv_CooperativeMatrixKHR__float_3_8_8_2iiiif(i32, i32, i32, i32, float)
declare spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2iiil(ptr addrspace(1), i32, i32, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2), i32, i32, i32, i64)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_0il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1aiiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS1aiiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z92__spirv_CooperativeMatrixConstructCheckedINTEL_R42__spirv_CooperativeMatrixKHR__int_3_8_16_2iiiii(i32, i32, i32, i32, i32)
declare spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1iiiPU3AS142__spirv_CooperativeMatrixKHR__int_3_8_16_2iiil(ptr addrspace(1), i32, i32, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2), i32, i32, i32, i64)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1aPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0), i32, i64)

define spir_kernel void @mad_f16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %a, i32 0, i64 24)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %b, i32 1, i64 20)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 18)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i64 18)
  ret void
}

define spir_kernel void @mad_f16_sg8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %a, i32 1, i64 16)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %b, i32 0, i64 16)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 1, i64 16)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 1, i64 16)
  ret void
}

define spir_kernel void @mad_f16_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !32 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %a, i32 0, i64 24)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %b, i32 1, i64 20)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 18)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i64 18)
  ret void
}

define spir_kernel void @mad_half_acc(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %a, i32 0, i64 16)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %b, i32 0, i64 16)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 2) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_2PU3AS1DF16_il(ptr addrspace(1) %c, i32 0, i64 16)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 2) %mc, i32 0)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1DF16_PU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 2) %md, i32 0, i64 16)
  ret void
}

define spir_kernel void @mad_s8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1ail(ptr addrspace(1) %a, i32 0, i64 40)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS1ail(ptr addrspace(1) %b, i32 0, i64 12)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z77__spirv_CooperativeMatrixLoadKHR_R41__spirv_CooperativeMatrixKHR__int_3_8_8_2PU3AS1iil(ptr addrspace(1) %c, i32 0, i64 8)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS143__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) %ma, target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) %mb, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) %mc, i32 15)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) %md, i32 0, i64 8)
  ret void
}

define spir_kernel void @mad_su8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1ail(ptr addrspace(1) %a, i32 0, i64 40)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS1ail(ptr addrspace(1) %b, i32 0, i64 12)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z77__spirv_CooperativeMatrixLoadKHR_R41__spirv_CooperativeMatrixKHR__int_3_8_8_2PU3AS1iil(ptr addrspace(1) %c, i32 0, i64 8)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS143__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) %ma, target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) %mb, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) %mc, i32 13)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) %md, i32 0, i64 8)
  ret void
}

define spir_kernel void @mad_us8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1ail(ptr addrspace(1) %a, i32 0, i64 40)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS1ail(ptr addrspace(1) %b, i32 0, i64 12)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z77__spirv_CooperativeMatrixLoadKHR_R41__spirv_CooperativeMatrixKHR__int_3_8_8_2PU3AS1iil(ptr addrspace(1) %c, i32 0, i64 8)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS143__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) %ma, target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) %mb, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) %mc, i32 14)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) %md, i32 0, i64 8)
  ret void
}

define spir_kernel void @mad_uu8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1ail(ptr addrspace(1) %a, i32 0, i64 40)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS1ail(ptr addrspace(1) %b, i32 0, i64 12)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z77__spirv_CooperativeMatrixLoadKHR_R41__spirv_CooperativeMatrixKHR__int_3_8_8_2PU3AS1iil(ptr addrspace(1) %c, i32 0, i64 8)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS143__spirv_CooperativeMatrixKHR__char_3_32_8_1PU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) %ma, target("spirv.CooperativeMatrixKHR", i8, 3, 32, 8, 1) %mb, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) %mc, i32 0)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS141__spirv_CooperativeMatrixKHR__int_3_8_8_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 8, 2) %md, i32 0, i64 8)
  ret void
}

define spir_kernel void @mad_s8_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !32 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1ail(ptr addrspace(1) %a, i32 0, i64 32)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS1ail(ptr addrspace(1) %b, i32 0, i64 16)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z78__spirv_CooperativeMatrixLoadKHR_R42__spirv_CooperativeMatrixKHR__int_3_8_16_2PU3AS1iil(ptr addrspace(1) %c, i32 0, i64 16)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS144__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS142__spirv_CooperativeMatrixKHR__int_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) %ma, target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) %mc, i32 15)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS142__spirv_CooperativeMatrixKHR__int_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) %md, i32 0, i64 16)
  ret void
}

define spir_kernel void @mad_bf16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS1sil(ptr addrspace(1) %a, i32 0, i64 16)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) @_Z81__spirv_CooperativeMatrixLoadKHR_R45__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS1sil(ptr addrspace(1) %b, i32 0, i64 16)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 16)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS145__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i64 16)
  ret void
}

define spir_kernel void @mad_bf16_acc(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS1sil(ptr addrspace(1) %a, i32 0, i64 16)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) @_Z81__spirv_CooperativeMatrixLoadKHR_R45__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS1sil(ptr addrspace(1) %b, i32 0, i64 16)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__short_3_8_16_2PU3AS1sil(ptr addrspace(1) %c, i32 0, i64 16)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS145__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 2) %mc, i32 448)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1sPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 2) %md, i32 0, i64 16)
  ret void
}

define spir_kernel void @mad_tf32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS1fil(ptr addrspace(1) %a, i32 0, i64 8)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS1fil(ptr addrspace(1) %b, i32 0, i64 8)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__float_3_8_8_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 8)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2i(target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) %ma, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) %mc, i32 32)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) %md, i32 0, i64 8)
  ret void
}

define spir_kernel void @scale_elements(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %a, i32 0, i64 16)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %b, i32 0, i64 16)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 16)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  %var = alloca target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2)
  store target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, ptr %var
  %gvar = addrspacecast ptr %var to ptr addrspace(4)
  %len = call spir_func i32 @_Z34__spirv_CooperativeMatrixLengthKHR_float_8_16(target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md)
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %i64 = zext i32 %i to i64
  %p = call spir_func ptr addrspace(4) @_Z19__spirv_AccessChain_float_8_16(ptr addrspace(4) %gvar, i64 %i64)
  %x = load float, ptr addrspace(4) %p
  %y = fmul float %x, 2.0
  %z = fadd float %y, 1.0
  store float %z, ptr addrspace(4) %p
  %next = add nuw i32 %i, 1
  %more = icmp ult i32 %next, %len
  br i1 %more, label %loop, label %done
done:
  %upd = load target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), ptr %var
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %upd, i32 0, i64 16)
  ret void
}

define spir_kernel void @fill_f32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS1fil(ptr addrspace(1) %a, i32 0, i64 8)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS1fil(ptr addrspace(1) %b, i32 1, i64 8)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z73__spirv_CompositeConstruct_R43__spirv_CooperativeMatrixKHR__float_3_8_8_2f(float 0x3FE0000000000000)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2i(target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) %ma, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) %mc, i32 32)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) %md, i32 0, i64 8)
  ret void
}

define spir_kernel void @element_coords(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %a, i32 0, i64 16)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %b, i32 0, i64 16)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 16)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  %var = alloca target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2)
  store target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, ptr %var
  %gvar = addrspacecast ptr %var to ptr addrspace(4)
  %len = call spir_func i32 @_Z34__spirv_CooperativeMatrixLengthKHR_float_8_16(target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md)
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %i64 = zext i32 %i to i64
  %p = call spir_func ptr addrspace(4) @_Z19__spirv_AccessChain_float_8_16(ptr addrspace(4) %gvar, i64 %i64)
  %x = load float, ptr addrspace(4) %p
  %rc = call spir_func <2 x i32> @_Z39__spirv_JointMatrixGetElementCoordINTEL_float_8_16(target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 %i)
  %r = extractelement <2 x i32> %rc, i32 0
  %col = extractelement <2 x i32> %rc, i32 1
  %r64 = mul i32 %r, 64
  %pos = add i32 %r64, %col
  %posf = uitofp i32 %pos to float
  %z = fadd float %x, %posf
  store float %z, ptr addrspace(4) %p
  %next = add nuw i32 %i, 1
  %more = icmp ult i32 %next, %len
  br i1 %more, label %loop, label %done
done:
  %upd = load target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), ptr %var
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %upd, i32 0, i64 16)
  ret void
}

define spir_kernel void @element_coords_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !32 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %a, i32 0, i64 24)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %b, i32 1, i64 20)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 18)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  %var = alloca target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2)
  store target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, ptr %var
  %gvar = addrspacecast ptr %var to ptr addrspace(4)
  %len = call spir_func i32 @_Z34__spirv_CooperativeMatrixLengthKHR_float_8_16(target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md)
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %i64 = zext i32 %i to i64
  %p = call spir_func ptr addrspace(4) @_Z19__spirv_AccessChain_float_8_16(ptr addrspace(4) %gvar, i64 %i64)
  %x = load float, ptr addrspace(4) %p
  %rc = call spir_func <2 x i32> @_Z39__spirv_JointMatrixGetElementCoordINTEL_float_8_16(target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 %i)
  %r = extractelement <2 x i32> %rc, i32 0
  %col = extractelement <2 x i32> %rc, i32 1
  %r64 = mul i32 %r, 64
  %pos = add i32 %r64, %col
  %posf = uitofp i32 %pos to float
  %z = fadd float %x, %posf
  store float %z, ptr addrspace(4) %p
  %next = add nuw i32 %i, 1
  %more = icmp ult i32 %next, %len
  br i1 %more, label %loop, label %done
done:
  %upd = load target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), ptr %var
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %upd, i32 0, i64 18)
  ret void
}

define spir_kernel void @mad_bf16_packed(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS1sil(ptr addrspace(1) %a, i32 0, i64 16)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) @_Z81__spirv_CooperativeMatrixLoadKHR_R45__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS1sil(ptr addrspace(1) %b, i32 2, i64 36)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 16)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS145__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i64 16)
  ret void
}

define spir_kernel void @mad_f16_packed_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !32 {
entry:
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %a, i32 0, i64 24)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %b, i32 2, i64 34)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2PU3AS1fil(ptr addrspace(1) %c, i32 0, i64 18)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %d, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i64 18)
  ret void
}

define spir_kernel void @checked_f16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, ptr addrspace(1) %ta, ptr addrspace(1) %tc, i32 %m, i32 %n, i32 %k, i32 %row, i32 %col) !intel_reqd_sub_group_size !16 {
entry:
  %k64 = zext i32 %k to i64
  %m64 = zext i32 %m to i64
  %n64 = zext i32 %n to i64
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row, i32 0, i32 0, i32 %m, i32 %k, i64 %k64)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 0, i32 %col, i32 0, i32 %k, i32 %n, i64 %n64)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z94__spirv_CooperativeMatrixConstructCheckedINTEL_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2iiiif(i32 %row, i32 %col, i32 %m, i32 %n, float 0x3FE0000000000000)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row, i32 %col, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1DF16_PU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0il(ptr addrspace(1) %ta, target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, i32 0, i64 16)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %tc, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0, i64 16)
  ret void
}

define spir_kernel void @checked_f16_packed(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, ptr addrspace(1) %ta, ptr addrspace(1) %tc, i32 %m, i32 %n, i32 %k, i32 %row, i32 %col) !intel_reqd_sub_group_size !16 {
entry:
  %k64 = zext i32 %k to i64
  %m64 = zext i32 %m to i64
  %n64 = zext i32 %n to i64
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 0, i32 %row, i32 1, i32 %k, i32 %m, i64 %m64)
  %kp = udiv i32 %k, 2
  %np = mul i32 %n, 2
  %colp = mul i32 %col, 2
  %np64 = zext i32 %np to i64
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 0, i32 %colp, i32 2, i32 %kp, i32 %np, i64 %np64)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z94__spirv_CooperativeMatrixConstructCheckedINTEL_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2iiiif(i32 %row, i32 %col, i32 %m, i32 %n, float 0x3FE0000000000000)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row, i32 %col, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1DF16_PU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0il(ptr addrspace(1) %ta, target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, i32 0, i64 16)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %tc, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0, i64 16)
  ret void
}

define spir_kernel void @checked_bf16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, ptr addrspace(1) %ta, ptr addrspace(1) %tc, i32 %m, i32 %n, i32 %k, i32 %row, i32 %col) !intel_reqd_sub_group_size !16 {
entry:
  %k64 = zext i32 %k to i64
  %m64 = zext i32 %m to i64
  %n64 = zext i32 %n to i64
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS1siiiiil(ptr addrspace(1) %a, i32 %row, i32 0, i32 0, i32 %m, i32 %k, i64 %k64)
  %kp = udiv i32 %k, 2
  %np = mul i32 %n, 2
  %colp = mul i32 %col, 2
  %np64 = zext i32 %np to i64
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) @_Z90__spirv_CooperativeMatrixLoadCheckedINTEL_R45__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS1siiiiil(ptr addrspace(1) %b, i32 0, i32 %colp, i32 2, i32 %kp, i32 %np, i64 %np64)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z94__spirv_CooperativeMatrixConstructCheckedINTEL_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2iiiif(i32 %row, i32 %col, i32 %m, i32 %n, float 0x3FE0000000000000)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS145__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row, i32 %col, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1sPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0il(ptr addrspace(1) %ta, target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, i32 0, i64 16)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %tc, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0, i64 16)
  ret void
}

define spir_kernel void @checked_tf32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, ptr addrspace(1) %ta, ptr addrspace(1) %tc, i32 %m, i32 %n, i32 %k, i32 %row, i32 %col) !intel_reqd_sub_group_size !8 {
entry:
  %k64 = zext i32 %k to i64
  %m64 = zext i32 %m to i64
  %n64 = zext i32 %n to i64
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS1fiiiiil(ptr addrspace(1) %a, i32 0, i32 %row, i32 1, i32 %k, i32 %m, i64 %m64)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS1fiiiiil(ptr addrspace(1) %b, i32 0, i32 %col, i32 0, i32 %k, i32 %n, i64 %n64)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z93__spirv_CooperativeMatrixConstructCheckedINTEL_R43__spirv_CooperativeMatrixKHR__float_3_8_8_2iiiif(i32 %row, i32 %col, i32 %m, i32 %n, float 0x3FE0000000000000)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_0PU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_1PU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2i(target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) %ma, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) %mc, i32 32)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2iiil(ptr addrspace(1) %d, i32 %row, i32 %col, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) %md, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_0il(ptr addrspace(1) %ta, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 0) %ma, i32 0, i64 8)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS143__spirv_CooperativeMatrixKHR__float_3_8_8_2il(ptr addrspace(1) %tc, target("spirv.CooperativeMatrixKHR", float, 3, 8, 8, 2) %mc, i32 0, i64 8)
  ret void
}

define spir_kernel void @checked_s8_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, ptr addrspace(1) %ta, ptr addrspace(1) %tc, i32 %m, i32 %n, i32 %k, i32 %row, i32 %col) !intel_reqd_sub_group_size !32 {
entry:
  %k64 = zext i32 %k to i64
  %m64 = zext i32 %m to i64
  %n64 = zext i32 %n to i64
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS1aiiiiil(ptr addrspace(1) %a, i32 %row, i32 0, i32 0, i32 %m, i32 %k, i64 %k64)
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS1aiiiiil(ptr addrspace(1) %b, i32 0, i32 %col, i32 0, i32 %k, i32 %n, i64 %n64)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z92__spirv_CooperativeMatrixConstructCheckedINTEL_R42__spirv_CooperativeMatrixKHR__int_3_8_16_2iiiii(i32 %row, i32 %col, i32 %m, i32 %n, i32 1)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0PU3AS144__spirv_CooperativeMatrixKHR__char_3_32_16_1PU3AS142__spirv_CooperativeMatrixKHR__int_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) %ma, target("spirv.CooperativeMatrixKHR", i8, 3, 32, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) %mc, i32 15)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1iiiPU3AS142__spirv_CooperativeMatrixKHR__int_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row, i32 %col, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) %md, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1aPU3AS143__spirv_CooperativeMatrixKHR__char_3_8_32_0il(ptr addrspace(1) %ta, target("spirv.CooperativeMatrixKHR", i8, 3, 8, 32, 0) %ma, i32 0, i64 32)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1iPU3AS142__spirv_CooperativeMatrixKHR__int_3_8_16_2il(ptr addrspace(1) %tc, target("spirv.CooperativeMatrixKHR", i32, 3, 8, 16, 2) %mc, i32 0, i64 16)
  ret void
}

define spir_kernel void @checked_f16_packed_sg8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, ptr addrspace(1) %ta, ptr addrspace(1) %tc, i32 %m, i32 %n, i32 %k, i32 %row, i32 %col) !intel_reqd_sub_group_size !8 {
entry:
  %k64 = zext i32 %k to i64
  %m64 = zext i32 %m to i64
  %n64 = zext i32 %n to i64
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 0, i32 %row, i32 1, i32 %k, i32 %m, i64 %m64)
  %kp = udiv i32 %k, 2
  %np = mul i32 %n, 2
  %colp = mul i32 %col, 2
  %np64 = zext i32 %np to i64
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 0, i32 %colp, i32 2, i32 %kp, i32 %np, i64 %np64)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z94__spirv_CooperativeMatrixConstructCheckedINTEL_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2iiiif(i32 %row, i32 %col, i32 %m, i32 %n, float 0x3FE0000000000000)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row, i32 %col, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1DF16_PU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0il(ptr addrspace(1) %ta, target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma, i32 0, i64 16)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %tc, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0, i64 16)
  ret void
}

define spir_kernel void @checked_bf16_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, ptr addrspace(1) %ta, ptr addrspace(1) %tc, i32 %m, i32 %n, i32 %k, i32 %row, i32 %col) !intel_reqd_sub_group_size !32 {
entry:
  %k64 = zext i32 %k to i64
  %m64 = zext i32 %m to i64
  %n64 = zext i32 %n to i64
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS1siiiiil(ptr addrspace(1) %a, i32 %row, i32 0, i32 0, i32 %m, i32 %k, i64 %k64)
  %kp = udiv i32 %k, 2
  %np = mul i32 %n, 2
  %colp = mul i32 %col, 2
  %np64 = zext i32 %np to i64
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) @_Z90__spirv_CooperativeMatrixLoadCheckedINTEL_R45__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS1siiiiil(ptr addrspace(1) %b, i32 0, i32 %colp, i32 2, i32 %kp, i32 %np, i64 %np64)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z94__spirv_CooperativeMatrixConstructCheckedINTEL_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2iiiif(i32 %row, i32 %col, i32 %m, i32 %n, float 0x3FE0000000000000)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS145__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row, i32 %col, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1sPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0il(ptr addrspace(1) %ta, target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, i32 0, i64 16)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %tc, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0, i64 16)
  ret void
}

define spir_kernel void @checked_bf16_sg8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, ptr addrspace(1) %ta, ptr addrspace(1) %tc, i32 %m, i32 %n, i32 %k, i32 %row, i32 %col) !intel_reqd_sub_group_size !8 {
entry:
  %k64 = zext i32 %k to i64
  %m64 = zext i32 %m to i64
  %n64 = zext i32 %n to i64
  %ma = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS1siiiiil(ptr addrspace(1) %a, i32 %row, i32 0, i32 0, i32 %m, i32 %k, i64 %k64)
  %kp = udiv i32 %k, 2
  %np = mul i32 %n, 2
  %colp = mul i32 %col, 2
  %np64 = zext i32 %np to i64
  %mb = call spir_func target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) @_Z90__spirv_CooperativeMatrixLoadCheckedINTEL_R45__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS1siiiiil(ptr addrspace(1) %b, i32 0, i32 %colp, i32 2, i32 %kp, i32 %np, i64 %np64)
  %mc = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z94__spirv_CooperativeMatrixConstructCheckedINTEL_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2iiiif(i32 %row, i32 %col, i32 %m, i32 %n, float 0x3FE0000000000000)
  %md = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0PU3AS145__spirv_CooperativeMatrixKHR__short_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, target("spirv.CooperativeMatrixKHR", i16, 3, 16, 16, 1) %mb, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row, i32 %col, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %md, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1sPU3AS144__spirv_CooperativeMatrixKHR__short_3_8_16_0il(ptr addrspace(1) %ta, target("spirv.CooperativeMatrixKHR", i16, 3, 8, 16, 0) %ma, i32 0, i64 16)
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %tc, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %mc, i32 0, i64 16)
  ret void
}

!8 = !{i32 8}
!16 = !{i32 16}
!32 = !{i32 32}
