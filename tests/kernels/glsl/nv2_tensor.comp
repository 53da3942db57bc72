#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

// Tensor addressing (GL_NV_cooperative_matrix2 with SPV_NV_tensor_addressing) at sub-group scope:
// a 16x16 f16 tile of the rows x cols row-major tensor A is loaded at the slice (r0, c0) under
// each clamp mode (Constant with clamp value 0.5, ClampToEdge, Repeat, RepeatMirrored) and
// stored, widened to f32, through a 16x16 layout into O[0], O[256], O[512] and O[768]; the
// Constant one is stored again transposed through a view permuting the dimensions (O[1024]),
// through a view with its own dimensions and a clip (rows 2..10, columns 4..12, O[1280]) and
// into a 3-dimensional layout of 2 x 16 x 8 with strides 160, 10, 1, sliced at (1, 0, 0) with
// spans 1 x 16 x 16, so that columns 8..15 fall outside and are discarded (O[1536..]). One
// sub-group of the dispatch works; the others return.
layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer A { float16_t a[]; };
layout(binding = 1) buffer O { float o[]; };
layout(push_constant) uniform P { uint rows; uint cols; uint r0; uint c0; } p;

#define MAT16 coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define MAT32 coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void store16(MAT32 m, uint at) {
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutDimensionNV(t, 16, 16);
    coopMatStoreTensorNV(m, o, at, t);
}

void main() {
    if (gl_SubgroupID != 0) {
        return;
    }
    MAT16 m;
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tc = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tc = setTensorLayoutDimensionNV(tc, p.rows, p.cols);
    tc = setTensorLayoutClampValueNV(tc, 0x3800u); // f16 0.5
    coopMatLoadTensorNV(m, a, 0, sliceTensorLayoutNV(tc, p.r0, 16, p.c0, 16));
    MAT32 constant_ = MAT32(m);
    store16(constant_, 0);

    tensorLayoutNV<2, gl_CooperativeMatrixClampModeClampToEdgeNV> te = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeClampToEdgeNV);
    te = setTensorLayoutDimensionNV(te, p.rows, p.cols);
    coopMatLoadTensorNV(m, a, 0, sliceTensorLayoutNV(te, p.r0, 16, p.c0, 16));
    store16(MAT32(m), 256);

    tensorLayoutNV<2, gl_CooperativeMatrixClampModeRepeatNV> tr = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeRepeatNV);
    tr = setTensorLayoutDimensionNV(tr, p.rows, p.cols);
    coopMatLoadTensorNV(m, a, 0, sliceTensorLayoutNV(tr, p.r0, 16, p.c0, 16));
    store16(MAT32(m), 512);

    tensorLayoutNV<2, gl_CooperativeMatrixClampModeMirrorRepeatNV> tm = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeMirrorRepeatNV);
    tm = setTensorLayoutDimensionNV(tm, p.rows, p.cols);
    coopMatLoadTensorNV(m, a, 0, sliceTensorLayoutNV(tm, p.r0, 16, p.c0, 16));
    store16(MAT32(m), 768);

    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutDimensionNV(t, 16, 16);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
    coopMatStoreTensorNV(constant_, o, 1024, t, transposed);
    tensorViewNV<2, true> clipped = createTensorViewNV(2, true);
    clipped = setTensorViewDimensionsNV(clipped, 16, 16);
    clipped = setTensorViewClipNV(clipped, 2, 8, 4, 8);
    coopMatStoreTensorNV(constant_, o, 1280, t, clipped);

    // Out-of-bounds stores are discarded in every clamp mode but Undefined.
    tensorLayoutNV<3, gl_CooperativeMatrixClampModeConstantNV> t3 = createTensorLayoutNV(3, gl_CooperativeMatrixClampModeConstantNV);
    t3 = setTensorLayoutDimensionNV(t3, 2, 16, 8);
    t3 = setTensorLayoutStrideNV(t3, 160, 10, 1);
    coopMatStoreTensorNV(constant_, o, 1536, sliceTensorLayoutNV(t3, 1, 1, 0, 16, 0, 16));
}
