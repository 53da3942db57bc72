#version 450
// Written for sub-groups of 32: each invocation publishes a value in workgroup memory, waits at
// a sub-group barrier and reads its neighbour's in the same sub-group, then adds a clustered sum
// over groups of four lanes and the sub-group's id.
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_clustered : enable

layout(local_size_x = 128) in;
layout(set = 0, binding = 0) buffer Out { uint result[]; };

shared uint published[128];

void main() {
    uint lane = gl_SubgroupInvocationID;
    uint base = gl_SubgroupID * 32u;
    uint value = gl_GlobalInvocationID.x * 3u + 1u;
    published[base + lane] = value;
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    uint neighbour = published[base + (lane + 1u) % 32u];
    uint quad = subgroupClusteredAdd(value, 4u);
    result[gl_GlobalInvocationID.x] = neighbour * 1000u + quad + gl_SubgroupID * 1000000u;
}
