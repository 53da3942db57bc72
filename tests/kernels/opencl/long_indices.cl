// Indices computed in 64 bits and narrowed to int before they index a buffer.
__kernel void gather_long(__global const float *in, __global float *out, long stride, long offset, int n) {
    int i = get_global_id(0);
    if (i >= n)
        return;
    int j = (int)(i * stride + offset);
    out[i] = in[j];
}
