//! Pointers derived from one pointer value in a function, and whether anything writes through
//! them: what a struct passed by value (`FuncParamAttr ByVal`) needs to know to be read in
//! place or copied.

use crate::ir::{Function, Inst, Module, Operand};
use spirv::{Op, OpenclStd100Op as CL, Word};
use std::collections::HashSet;

/// Operations whose result points into the memory their first operand points into.
const DERIVING: [Op; 9] =
    [Op::Bitcast, Op::AccessChain, Op::InBoundsAccessChain, Op::PtrAccessChain, Op::InBoundsPtrAccessChain, Op::CopyObject, Op::PtrCastToGeneric, Op::GenericCastToPtr, Op::GenericCastToPtrExplicit];

/// The pointer operands of `inst` that its result is derived from: the first operand of a
/// cast, access chain or copy, the values of a phi, the two values of a select; empty for
/// anything else.
pub fn pointer_sources(inst: &Inst) -> Vec<Word> {
    match inst.op() {
        Some(op) if DERIVING.contains(&op) => inst.id(0).into_iter().collect(),
        Some(Op::Phi) => inst.operands.iter().step_by(2).filter_map(Operand::id).collect(),
        Some(Op::Select) => [1, 2].iter().filter_map(|k| inst.id(*k).ok()).collect(),
        _ => Vec::new(),
    }
}

/// `root` and every value of `function` derived from it through casts, access chains, copies,
/// phis and selects (a phi or select joining it with other pointers included).
pub fn derived_pointers(function: &Function, root: Word) -> HashSet<Word> {
    let mut set = HashSet::from([root]);
    loop {
        let before = set.len();
        for inst in function.insts() {
            if let Some(r) = inst.result_id.filter(|r| !set.contains(r)) {
                if pointer_sources(inst).iter().any(|s| set.contains(s)) {
                    set.insert(r);
                }
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// The first instruction of `function` that may write through a pointer in `derived`: a store,
/// a memory copy into it, an atomic, a call or an extended instruction taking it (other than
/// OpenCL's vector loads), or a store of the pointer itself into memory (whatever reads it back
/// may write). `None` when the memory is only read.
pub fn first_write<'f>(module: &Module, function: &'f Function, derived: &HashSet<Word>) -> Option<&'f Inst> {
    let opencl_std: HashSet<Word> = module.ext_inst_imports.iter().filter(|i| i.string(0).as_deref() == Some("OpenCL.std")).filter_map(|i| i.result_id).collect();
    let reads_only = |inst: &Inst| {
        inst.id(0).is_ok_and(|set| opencl_std.contains(&set))
            && inst.word_opt(1).and_then(CL::from_u32).is_some_and(|op| matches!(op, CL::vloadn | CL::vload_half | CL::vload_halfn | CL::vloada_halfn | CL::prefetch))
    };
    function.insts().find(|inst| {
        let uses = |k: usize| inst.id(k).is_ok_and(|v| derived.contains(&v));
        let any_use = || inst.operands.iter().filter_map(Operand::id).any(|v| derived.contains(&v));
        match inst.op() {
            Some(Op::Store) => uses(0) || uses(1),
            Some(Op::CopyMemory | Op::CopyMemorySized) => uses(0),
            Some(op) if crate::passes::lower_kernel_pointers::is_atomic(op) => uses(0),
            Some(Op::FunctionCall) => any_use(),
            Some(Op::ExtInst) => !reads_only(inst) && any_use(),
            _ => false,
        }
    })
}
