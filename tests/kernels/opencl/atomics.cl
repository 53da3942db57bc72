// Atomics on local and global memory with barriers: a histogram built per work-group in
// local memory and merged into global bins, and the global maximum.
__kernel void histogram(__global const uint* in, __global uint* bins, __local uint* local_bins, uint nbins) {
    uint l = get_local_id(0);
    for (uint b = l; b < nbins; b += get_local_size(0))
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint v = in[get_global_id(0)];
    atomic_inc(&local_bins[v % nbins]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = l; b < nbins; b += get_local_size(0))
        atomic_add(&bins[b], local_bins[b]);
    atomic_max(&bins[nbins], v);
}
