#version 450
// Written for sub-groups of 32, in the two-level form of work-group reductions: every sub-group
// sums its values, its first lane publishes the sum, and after a barrier only the first
// sub-group sums the published sums, a scan of them and a reversed copy (branches uniform in
// each sub-group but not across the work-group). Odd sub-groups also rotate their values by a
// shuffle. Each work-group writes its sum, and each invocation three values.
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable

layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer In { uint values[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint result[]; };
layout(set = 0, binding = 2) writeonly buffer Sums { uint sums[]; };

shared uint partial[4];

void main() {
    uint lane = gl_SubgroupInvocationID;
    uint g = gl_GlobalInvocationID.x;
    uint v = values[g];
    uint sum = subgroupAdd(v);
    if (subgroupElect()) {
        partial[gl_SubgroupID] = sum;
    }
    barrier();
    uint scanned = 0u;
    uint reversed = 0u;
    if (gl_SubgroupID == 0u) {
        uint p = lane < gl_NumSubgroups ? partial[lane] : 0u;
        uint total = subgroupAdd(p);
        scanned = subgroupInclusiveAdd(p);
        reversed = subgroupShuffle(v, 31u - lane);
        if (lane == 0u) {
            sums[gl_WorkGroupID.x] = total;
        }
    } else if (gl_SubgroupID % 2u == 1u) {
        scanned = subgroupShuffle(v, (lane + 1u) % 32u);
        reversed = subgroupMax(v);
    }
    result[3u * g] = sum;
    result[3u * g + 1u] = scanned;
    result[3u * g + 2u] = reversed;
}
