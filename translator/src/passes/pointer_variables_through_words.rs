//! `PointerVariablesThroughWords`: a Function or Private variable holding a
//! `PhysicalStorageBuffer` pointer becomes a variable of the address's two 32-bit words
//! (`uvec2`); a store bit-casts the pointer to words first, a load bit-casts the words back.
//!
//! SwiftShader crashes (SIGSEGV) compiling a load of a buffer pointer from a Function variable:
//! the form a structurizer gives a pointer that must outlive the block defining it (an OpenCL
//! merge sort's `global float4 *dst = &out[start]`, used in and after a loop), and the form
//! unoptimized producers keep pointer locals in. It compiles the same addresses held as `uvec2`.
//!
//! Preconditions: runs after every pass that may create such variables. Variables with other
//! uses than plain loads and stores (passed to a function, copied whole) are left alone.
//! Applies where the target's workarounds ask for it.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashMap;

pub struct PointerVariablesThroughWords;

impl Pass for PointerVariablesThroughWords {
    fn name(&self) -> &'static str {
        "pointer-variables-through-words"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.pointer_variables_through_words
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        let buffer_pointer = |ty: Word| types.pointer(ty).is_some_and(|(class, _)| class == StorageClass::PhysicalStorageBuffer as u32);
        // Variable -> the buffer pointer type it holds.
        let mut held: HashMap<Word, Word> = HashMap::new();
        let variables = module.globals().iter().chain(module.functions.iter().flat_map(|f| f.insts())).filter(|i| i.is(Op::Variable));
        for var in variables {
            let (Some(id), Some((class, pointee))) = (var.result_id, var.result_type.and_then(|t| types.pointer(t))) else { continue };
            if matches!(class, c if c == StorageClass::Function as u32 || c == StorageClass::Private as u32) && buffer_pointer(pointee) {
                held.insert(id, pointee);
            }
        }
        // Only variables that are loaded and stored and nothing else.
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            let plain = match inst.op() {
                Some(Op::Load) => inst.operands.iter().skip(1).all(|o| o.id().is_none_or(|v| !held.contains_key(&v))),
                Some(Op::Store) => inst.operands.get(1).and_then(Operand::id).is_none_or(|v| !held.contains_key(&v)),
                Some(Op::Variable) => true,
                _ => false,
            };
            if !plain {
                for v in inst.used_ids() {
                    held.remove(&v);
                }
            }
        }
        if held.is_empty() {
            return Ok(outcome);
        }
        let uint = module.type_int(32, false);
        let words = module.type_vector(uint, 2);
        let vars: Vec<&Inst> =
            module.globals().iter().chain(module.functions.iter().flat_map(|f| f.insts())).filter(|i| i.is(Op::Variable) && i.result_id.is_some_and(|id| held.contains_key(&id))).collect();
        let (any_private, any_initialized) = (vars.iter().any(|v| v.word_opt(0) == Some(StorageClass::Private as u32)), vars.iter().any(|v| v.operands.len() > 1));
        let function_words = module.type_pointer(StorageClass::Function, words);
        let private_words = any_private.then(|| module.type_pointer(StorageClass::Private, words));
        let null_words = any_initialized.then(|| module.constant_null(words));
        let retype = |var: &mut Inst, outcome: &mut Outcome| {
            let private = var.word_opt(0) == Some(StorageClass::Private as u32);
            var.result_type = Some(if private { private_words.unwrap_or(function_words) } else { function_words });
            // An initializer is a constant pointer: only a null one can be written as words.
            if let (Some(init), Some(null)) = (var.operands.get_mut(1), null_words) {
                *init = Operand::Id(null);
            }
            outcome.count(Op::Variable as u32);
        };
        for g in module.globals_mut() {
            if g.is(Op::Variable) && g.result_id.is_some_and(|id| held.contains_key(&id)) {
                retype(g, &mut outcome);
            }
        }
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for mut inst in insts {
                    let target = inst.operands.first().and_then(Operand::id).filter(|v| held.contains_key(v));
                    match (inst.op(), target) {
                        (Some(Op::Variable), _) if inst.result_id.is_some_and(|id| held.contains_key(&id)) => retype(&mut inst, &mut outcome),
                        (Some(Op::Store), Some(_)) => {
                            let value = inst.id(1)?;
                            let address = module.alloc_id();
                            out.push(Inst::new(Op::Bitcast, Some(words), Some(address), vec![Operand::Id(value)]).from_origin(inst.origin));
                            inst.operands[1] = Operand::Id(address);
                            outcome.count(Op::Store as u32);
                        }
                        (Some(Op::Load), Some(var)) => {
                            let address = module.alloc_id();
                            let mut load = inst.clone();
                            load.result_type = Some(words);
                            load.result_id = Some(address);
                            out.push(load);
                            inst = Inst::new(Op::Bitcast, Some(held[&var]), inst.result_id, vec![Operand::Id(address)]).from_origin(inst.origin);
                            outcome.count(Op::Load as u32);
                        }
                        _ => {}
                    }
                    out.push(inst);
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        // AliasedPointer and RestrictPointer apply to variables of pointer type only.
        module.annotations.retain(|a| {
            let target = a.operands.first().and_then(Operand::id);
            let decoration = a.word_opt(1);
            !(a.is(Op::Decorate) && target.is_some_and(|t| held.contains_key(&t)) && matches!(decoration, Some(d) if d == Decoration::AliasedPointer as u32 || d == Decoration::RestrictPointer as u32))
        });
        Ok(outcome)
    }
}
