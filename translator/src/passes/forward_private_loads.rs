//! `ForwardPrivateLoads`: a load of private memory that repeats an earlier load of the same
//! location in the same block, with no store to that variable between them, becomes the
//! earlier load's value.
//!
//! OpenCL producers keep arrays whose address an opaque call takes (a 2D block read's
//! destination, a block write's source) in `Function` variables, and reload them at every use:
//! Intel's block GEMMs read each DPAS operand from the array the block read filled, once per
//! DPAS that uses it. With the loads merged, one value feeds every such DPAS, so
//! `lower-dpas-to-cooperative-matrix` stages it into the matrix units once.
//!
//! Rewrite, per block: a non-volatile `OpLoad` through a pointer derived from a `Function`
//! variable by bitcasts, copies and access chains with constant indices is replaced by an
//! earlier load of the same type through the same derivation, unless an `OpStore` or a memory
//! copy into any pointer derived from that variable lies between them. Only variables whose
//! pointers are used by nothing but those derivations, loads, stores (as the pointer), copies
//! and lifetime markers take part (`analysis::private_pointers`): no call, extended instruction
//! or stored pointer can write them unseen.
//!
//! Applies to kernels (OpenCL modules), after `lower-subgroup-2d-block-io` (whose lowering
//! turns the block accesses into such loads and stores); preconditions: none.

use crate::analysis::private_pointers::{index_constants, Path, PrivatePointers};
use crate::error::Result;
use crate::ir::{Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Capability, MemoryAccess, Op, Word};
use std::collections::{HashMap, HashSet};

pub struct ForwardPrivateLoads;

impl Pass for ForwardPrivateLoads {
    fn name(&self) -> &'static str {
        "forward-private-loads"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        let constants = index_constants(module);
        for f in 0..module.functions.len() {
            let function = &module.functions[f];
            let pointers = PrivatePointers::new(function, &constants);
            let mut replace: HashMap<Word, Word> = HashMap::new();
            let mut dead: HashSet<Word> = HashSet::new();
            for block in &function.blocks {
                let mut loaded: HashMap<(Path, Word), Word> = HashMap::new();
                for inst in &block.insts {
                    let pointer = inst.operands.first().and_then(Operand::id);
                    match inst.op() {
                        Some(Op::Load) => {
                            let volatile = inst.word_opt(1).is_some_and(|m| MemoryAccess::from_bits_truncate(m).contains(MemoryAccess::VOLATILE));
                            let (Some(id), Some(ty), Some(p)) = (inst.result_id, inst.result_type, pointer) else { continue };
                            let Some(path) = pointers.path.get(&p).filter(|_| !volatile && pointers.tracked_root(p).is_some()) else { continue };
                            match loaded.get(&(path.clone(), ty)) {
                                Some(&earlier) => {
                                    replace.insert(id, earlier);
                                    dead.insert(id);
                                }
                                None => {
                                    loaded.insert((path.clone(), ty), id);
                                }
                            }
                        }
                        Some(Op::Store | Op::CopyMemory | Op::CopyMemorySized) => {
                            if let Some(&r) = pointer.and_then(|p| pointers.root.get(&p)) {
                                loaded.retain(|(path, _), _| path.root != r);
                            }
                        }
                        _ => {}
                    }
                }
            }
            if replace.is_empty() {
                continue;
            }
            let function = &mut module.functions[f];
            for block in &mut function.blocks {
                block.insts.retain(|i| !i.result_id.is_some_and(|id| dead.contains(&id)));
                for inst in &mut block.insts {
                    inst.map_used_ids(|id| replace.get(&id).copied().unwrap_or(id));
                }
            }
            outcome.count_many(Op::Load as u32, replace.len());
        }
        Ok(outcome)
    }
}
