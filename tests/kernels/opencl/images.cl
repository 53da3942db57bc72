// Images and samplers: reads with a constant sampler at integer coordinates, reads at float
// coordinates through a sampler the launch passes (every addressing and filter mode), integer
// images, image queries, 1D, 3D and array images, half texels.

__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__constant sampler_t border = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;

// A 3x3 box filter of an 8-bit image into a float image; the edges repeat the edge texel.
__kernel void box3(__read_only image2d_t src, __write_only image2d_t dst) {
    int x = get_global_id(0), y = get_global_id(1);
    float4 sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += read_imagef(src, edge, (int2)(x + dx, y + dy));
    write_imagef(dst, (int2)(x, y), sum / 9.0f);
}

// Reads at float coordinates through the launch's sampler; out[i] for the i-th coordinate pair.
__kernel void sample2d(__read_only image2d_t src, sampler_t s, __global const float2 *coords, __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(src, s, coords[i]);
}

// Integer coordinates with the border color, and writes outside the image (skipped).
__kernel void shifted(__read_only image2d_t src, __write_only image2d_t dst, int shift) {
    int x = get_global_id(0), y = get_global_id(1);
    float4 v = read_imagef(src, border, (int2)(x - shift, y + shift));
    write_imagef(dst, (int2)(x + shift, y), v);
}

// Unsigned and signed integer images, and what a kernel can ask of an image.
__kernel void integers(__read_only image2d_t a, __read_write image2d_t b, __global int *info) {
    int x = get_global_id(0), y = get_global_id(1);
    uint4 u = read_imageui(a, (int2)(x, y));
    int4 v = read_imagei(b, (int2)(x, y));
    write_imagei(b, (int2)(x, y), v * 3 - (int4)(u.x, u.y, u.z, u.w));
    if (x == 0 && y == 0) {
        int2 d = get_image_dim(a);
        info[0] = get_image_width(a);
        info[1] = get_image_height(b);
        info[2] = d.x * 100 + d.y;
        info[3] = get_image_channel_order(a);
        info[4] = get_image_channel_data_type(a);
        info[5] = get_image_channel_order(b);
        info[6] = get_image_channel_data_type(b);
    }
}

// A 3D image sampled at normalized coordinates, layers of a 2D array and a 1D image.
__kernel void shapes(__read_only image3d_t vol, sampler_t s, __read_only image2d_array_t layers, __write_only image1d_t line, __global float4 *out) {
    int i = get_global_id(0);
    float4 c = (float4)((i % 4 + 0.5f) / 4.0f, (i / 4 % 4 + 0.5f) / 4.0f, (i / 16 + 0.25f) / 2.0f, 0.0f);
    float4 v = read_imagef(vol, s, c);
    float4 l = read_imagef(layers, (int4)(i % 4, i / 4 % 2, i / 8 % 3, 0));
    out[i] = v + l * 1000.0f;
    write_imagef(line, i, (float4)(i, get_image_depth(vol), get_image_array_size(layers), 1.0f));
}

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// Half texels, through a helper function that takes the image (inlined by the translation).
static half4 doubled(read_only image2d_t img, int2 p) {
    return read_imageh(img, p) * (half)2.0f;
}

__kernel void halves(__read_only image2d_t src, __write_only image2d_t dst) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imageh(dst, p, doubled(src, p) + (half4)(0.25f, 0.5f, -1.0f, 0.0f));
}

// Reads by the image's channel type, chosen at run time (as image-processing libraries write
// kernels that take any image): read_imagef, read_imageui and read_imagei on one image.
__kernel void any_type(__read_only image2d_t img, __global float4 *out) {
    int x = get_global_id(0);
    int type = get_image_channel_data_type(img);
    float4 v;
    if (type == CLK_FLOAT || type == CLK_UNORM_INT8)
        v = read_imagef(img, (int2)(x, 0));
    else if (type == CLK_UNSIGNED_INT8 || type == CLK_UNSIGNED_INT16 || type == CLK_UNSIGNED_INT32)
        v = convert_float4(read_imageui(img, (int2)(x, 0)));
    else
        v = convert_float4(read_imagei(img, (int2)(x, 0)));
    out[x] = v;
}

// Image buffers (storage texel buffers).
__kernel void texels(__read_only image1d_buffer_t a, __write_only image1d_buffer_t b) {
    int i = get_global_id(0);
    write_imageui(b, i, read_imageui(a, i) * 2u + (uint4)(get_image_width(a), 0, 0, 0));
}
