// Two kernels of one program: one that every device runs, and one that reads a depth image,
// which matbridge refuses by name. Loading the first must not depend on the second.
__kernel void scale(__global float *x, float by) {
    const size_t i = get_global_id(0);
    x[i] *= by;
}

__kernel void depth(__read_only image2d_depth_t d, __global float *out) {
    const int2 p = (int2)(get_global_id(0), get_global_id(1));
    out[p.y * get_image_width(d) + p.x] = read_imagef(d, p);
}
