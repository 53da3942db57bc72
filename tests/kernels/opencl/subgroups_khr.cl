// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_khr_subgroup_ballot,+cl_khr_subgroup_non_uniform_vote,+cl_khr_subgroup_non_uniform_arithmetic,+cl_khr_subgroup_shuffle,+cl_khr_subgroup_shuffle_relative,+cl_khr_subgroup_clustered_reduce,+cl_intel_subgroups -include opencl-c.h
// The cl_khr_subgroup_* extensions' built-ins (ballots and their bit counts, masks, elect,
// shuffles, clustered and non-uniform reductions, all-equal votes, broadcasts), which llvm-spirv
// writes as Vulkan's OpGroupNonUniform* instructions, at a required sub-group size SG (a -D
// flag): 20 results per work-item.
#ifndef SG
#define SG 8
#endif

__attribute__((intel_reqd_sub_group_size(SG)))
__kernel void khr_subgroups(__global const uint* in, __global uint* out, __global float* fout) {
    size_t g = get_global_id(0);
    uint v = in[g];
    uint lid = get_sub_group_local_id();
    __global uint* o = out + 20 * g;
    uint4 bal = sub_group_ballot(v & 1);
    o[0] = bal.x;
    o[1] = sub_group_ballot_bit_count(bal);
    o[2] = sub_group_ballot_inclusive_scan(bal);
    o[3] = sub_group_ballot_exclusive_scan(bal);
    o[4] = sub_group_ballot_bit_extract(bal, (lid + 1) % SG);
    uint4 some = sub_group_ballot((v & 1) || lid == SG / 2); // never empty
    o[5] = sub_group_ballot_find_lsb(some) + 100 * sub_group_ballot_find_msb(some);
    o[6] = sub_group_inverse_ballot((uint4)(0x55555555u, 0, 0, 0));
    o[7] = get_sub_group_eq_mask().x + 2 * get_sub_group_lt_mask().x;
    o[8] = get_sub_group_ge_mask().x ^ (get_sub_group_gt_mask().x << 1) ^ (get_sub_group_le_mask().x << 2);
    o[9] = sub_group_elect();
    o[10] = sub_group_shuffle(v, (lid * 3) % SG);
    o[11] = sub_group_shuffle_xor(v, 1);
    // Under a branch that leaves the last work-item out (the source of none of the others).
    o[12] = lid < SG - 1 ? sub_group_shuffle_up(v, 1) : 7;
    o[13] = sub_group_clustered_reduce_add(v, 4);
    o[14] = sub_group_non_uniform_reduce_max(v);
    o[15] = sub_group_non_uniform_all_equal(v >> 30);
    o[16] = sub_group_non_uniform_broadcast(v, 2);
    o[17] = sub_group_broadcast_first(v + 5);
    o[18] = sub_group_non_uniform_scan_exclusive_xor(v);
    o[19] = sub_group_clustered_reduce_min(v, 2);
    fout[g] = sub_group_clustered_reduce_max((float)v * 0.5f, 2);
}
