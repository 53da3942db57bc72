// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+cl_intel_required_subgroup_size -include opencl-c.h
// llvm-spirv: --spirv-ext=+SPV_INTEL_subgroups
// cl_intel_subgroup_2d_block_io's built-ins, which llvm-spirv keeps as calls of imported
// functions (clang-19's opencl-c.h declares none of them): plain, transformed (VNNI) and
// transposed block reads, block writes and a prefetch, at sub-group sizes 16 and 8. The region
// (`width` bytes by `height` rows, `pitch` bytes apart) and the block coordinate come from the
// launch, so that blocks can reach past every edge. Each kernel is one sub-group; invocation l
// writes the k-th value it read to out[l * V + k] (V values each), a copy of its private array
// that clang makes whole. The region starts `offset` bytes into its buffer, so that an element
// left of or above it would read (or overwrite) real bytes.
#define OVLD __attribute__((overloadable))
#define ARGS __global void* base, int width, int height, int pitch, int2 coord
void OVLD intel_sub_group_2d_block_read_16b_8r16x2c(ARGS, __private ushort* dst);
void OVLD intel_sub_group_2d_block_read_transform_16b_16r16x1c(ARGS, __private uint* dst);
void OVLD intel_sub_group_2d_block_read_transform_8b_32r16x1c(ARGS, __private uint* dst);
void OVLD intel_sub_group_2d_block_read_transpose_32b_16r8x1c(ARGS, __private uint* dst);
void OVLD intel_sub_group_2d_block_read_8b_4r32x1c(ARGS, __private uchar* dst);
void OVLD intel_sub_group_2d_block_read_16b_5r12x1c(ARGS, __private ushort* dst);
void OVLD intel_sub_group_2d_block_read_16b_5r8x2c(ARGS, __private ushort* dst);
void OVLD intel_sub_group_2d_block_write_16b_8r16x1c(ARGS, __private ushort* values);
void OVLD intel_sub_group_2d_block_write_16b_3r12x1c(ARGS, __private ushort* values);
void OVLD intel_sub_group_2d_block_prefetch_16b_8r16x1c(ARGS);

#define READ(NAME, SG, T, V, CALL) \
    __kernel __attribute__((intel_reqd_sub_group_size(SG))) void NAME(__global uchar* buffer, int offset, int width, int height, int pitch, int cx, int cy, __global T* out) { \
        int2 coord = (int2)(cx, cy); \
        T v[V]; \
        CALL(buffer + offset, width, height, pitch, coord, v); \
        uint l = get_sub_group_local_id(); \
        for (int k = 0; k < V; k++) out[l * V + k] = v[k]; \
    }

READ(read_16b_8r16x2c, 16, ushort, 16, intel_sub_group_2d_block_read_16b_8r16x2c)
READ(transform_16b_16r16x1c, 16, uint, 8, intel_sub_group_2d_block_read_transform_16b_16r16x1c)
READ(transform_8b_32r16x1c, 16, uint, 8, intel_sub_group_2d_block_read_transform_8b_32r16x1c)
READ(transpose_32b_16r8x1c, 16, uint, 8, intel_sub_group_2d_block_read_transpose_32b_16r8x1c)
READ(read_8b_4r32x1c, 8, uchar, 16, intel_sub_group_2d_block_read_8b_4r32x1c)
// Blocks the sub-group does not fill: padding columns (12 of 16) and rows (5 of 6).
READ(read_16b_5r12x1c, 16, ushort, 5, intel_sub_group_2d_block_read_16b_5r12x1c)
READ(read_16b_5r8x2c, 16, ushort, 6, intel_sub_group_2d_block_read_16b_5r8x2c)

// As Intel's samples write it: the values land in a vector, through a pointer cast.
__kernel __attribute__((intel_reqd_sub_group_size(16))) void transform_vector(__global uchar* buffer, int offset, int width, int height, int pitch, int cx, int cy, __global uint8* out) {
    uint8 v;
    intel_sub_group_2d_block_read_transform_16b_16r16x1c(buffer + offset, width, height, pitch, (int2)(cx, cy), (__private uint*)&v);
    out[get_sub_group_local_id()] = v;
}

// Invocation l writes in[l * V + k] as its k-th value.
#define WRITE(NAME, V, CALL) \
    __kernel __attribute__((intel_reqd_sub_group_size(16))) void NAME(__global uchar* buffer, int offset, int width, int height, int pitch, int cx, int cy, __global const ushort* in) { \
        int2 coord = (int2)(cx, cy); \
        __global uchar* base = buffer + offset; \
        intel_sub_group_2d_block_prefetch_16b_8r16x1c(base, width, height, pitch, coord); \
        uint l = get_sub_group_local_id(); \
        ushort v[V]; \
        for (int k = 0; k < V; k++) v[k] = in[l * V + k]; \
        CALL(base, width, height, pitch, coord, v); \
    }

WRITE(write_16b_8r16x1c, 8, intel_sub_group_2d_block_write_16b_8r16x1c)
// Columns 12 to 15 are padding: those invocations write nothing.
WRITE(write_16b_3r12x1c, 3, intel_sub_group_2d_block_write_16b_3r12x1c)
