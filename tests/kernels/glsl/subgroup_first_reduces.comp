#version 450
// Written for sub-groups of 32, in the two-level form of work-group reductions: every sub-group
// sums its values and its first lane publishes the sum; after a barrier only the last sub-group
// sums the published sums, scans them and reverses its values, while the other odd sub-groups
// rotate theirs and take their maximum (branches uniform in each sub-group but not across the
// work-group); after another barrier every invocation reads the work-group's sum. Each
// invocation writes four values.
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable

layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer In { uint values[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint result[]; };

shared uint partial[4];
shared uint total;

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
    if (gl_SubgroupID == gl_NumSubgroups - 1u) {
        uint p = lane < gl_NumSubgroups ? partial[lane] : 0u;
        uint all = subgroupAdd(p);
        scanned = subgroupInclusiveAdd(p);
        reversed = subgroupShuffle(v, 31u - lane);
        if (lane == 0u) {
            total = all;
        }
    } else if (gl_SubgroupID % 2u == 1u) {
        scanned = subgroupShuffle(v, (lane + 1u) % 32u);
        reversed = subgroupMax(v);
    }
    barrier();
    result[4u * g] = sum;
    result[4u * g + 1u] = scanned;
    result[4u * g + 2u] = reversed;
    result[4u * g + 3u] = total;
}
