//! Access-chain indices of every integer width. SPIR-V takes any integer type as an index, and
//! producers of OpenCL and 64-bit address code give 64-bit ones; the passes that move a matrix
//! pointer or a narrow element must widen such an index or its offset, not bit-cast it, and
//! must not add in 8 or 16 bits, where the sum would wrap. Each snapshot input and test kernel,
//! with the last index of some of its access chains converted to 8, 16 or 64 bits just before
//! the chain, translates into a module spirv-val accepts wherever it translates.

mod common;

use common::{snapshot_cases, Case};
use matbridge_translator::analysis::Types;
use matbridge_translator::ir::{Inst, Operand};
use matbridge_translator::{DeviceCaps, Module};
use rspirv::grammar::OperandKind;
use spirv::{Capability, Op};

/// Variants tried per module: chains spread over the module, widths taking turns.
const PER_MODULE: usize = 2;

/// The test kernels of the workspace, for the built-in targets.
fn kernel_cases() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|f| f.unwrap().path()).filter(|f| f.extension().is_some_and(|e| e == "spvasm")).collect();
    files.sort();
    let targets = ["h100", "lavapipe", "swiftshader", "generic-subgroup"].map(|t| DeviceCaps::builtin(t).unwrap());
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            let words = matbridge_translator::tools::assemble(&text, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            Case { name: file.file_name().unwrap().to_string_lossy().into_owned(), words, targets: targets.to_vec(), requests: Vec::new() }
        })
        .collect()
}

/// `words` with the last index of chosen access chains converted to another width, one chain
/// per variant.
fn variants(words: &[u32]) -> Vec<Vec<u32>> {
    let module = Module::from_words(words).unwrap();
    let types = Types::new(&module);
    let chain = |i: &Inst| matches!(i.op(), Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain));
    let mut sites = Vec::new();
    for (f, function) in module.functions.iter().enumerate() {
        for (b, block) in function.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                let last = inst.operands.last().and_then(Operand::id).filter(|_| chain(inst) && inst.operands.len() >= 2);
                if let Some(signed) = last.and_then(|l| types.int(types.type_of(l)?)).filter(|(w, _)| *w == 32).map(|(_, s)| s) {
                    sites.push((f, b, i, signed));
                }
            }
        }
    }
    let step = sites.len().div_ceil(PER_MODULE).max(1);
    sites
        .iter()
        .step_by(step)
        .enumerate()
        .map(|(n, &(f, b, i, signed))| {
            let (width, capability) = [(16, Capability::Int16), (8, Capability::Int8), (64, Capability::Int64)][n % 3];
            let mut m = module.clone();
            if !m.has_capability(capability) {
                m.capabilities.push(Inst::new(Op::Capability, None, None, vec![Operand::Enum(OperandKind::Capability, capability as u32)]));
            }
            let ty = m.type_int(width, signed);
            let id = m.alloc_id();
            let insts = &mut m.functions[f].blocks[b].insts;
            let index = insts[i].operands.last().and_then(Operand::id).unwrap();
            *insts[i].operands.last_mut().unwrap() = Operand::Id(id);
            insts.insert(i, Inst::new(if signed { Op::SConvert } else { Op::UConvert }, Some(ty), Some(id), vec![Operand::Id(index)]));
            m.to_words()
        })
        .collect()
}

#[test]
fn indices_of_every_width_translate_to_valid_modules() {
    if matbridge_translator::tools::find("spirv-val").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let kernels = kernel_cases();
    let cases: Vec<&Case> = snapshot_cases().iter().chain(&kernels).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let tried: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn({
                    let cases = &cases;
                    move || cases.iter().skip(t).step_by(threads).map(|case| try_variants(case)).sum::<usize>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).sum()
    });
    assert!(tried > 100, "only {tried} variants validated");
}

/// Translates the variants of `case` that validate for its targets; how many validated.
fn try_variants(case: &Case) -> usize {
    let mut tried = 0;
    for (v, words) in variants(&case.words).into_iter().enumerate() {
        // A struct member's index must stay a 32-bit constant: such variants are invalid.
        if matbridge_translator::tools::validate(&words, "vulkan1.3").is_err() {
            continue;
        }
        tried += 1;
        for target in &case.targets {
            if let Ok((out, _)) = matbridge_translator::translate_with(&words, target, &case.requests) {
                if let Err(e) = matbridge_translator::tools::validate(&out, "vulkan1.3") {
                    panic!("{} variant {v}: valid input, invalid output for {}: {e}", case.name, target.name);
                }
            }
        }
    }
    tried
}
