//! Specialization-constant instructions on narrow values become function code.
//!
//! An `OpSpecConstantOp` whose result or operands are 8- or 16-bit (glslang writes
//! `float16_t(alpha)` of a `float` specialization constant as `OpSpecConstantOp FConvert`) has no
//! widened form among constant instructions: a Shader module's specialization-constant
//! operations have no float arithmetic to round with. Each one, with the others of its kind it
//! depends on, is copied as a plain instruction to the start of every function that uses it, and
//! the legalizer then widens those like any other code. The global instructions are removed.
//! Used by another global (a composite constant, an array length) the operation is refused by
//! name.

use super::Legalize;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use spirv::{Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

impl Legalize<'_> {
    /// Moves the module's narrow `OpSpecConstantOp`s into the functions that use them. Returns
    /// how many global instructions moved.
    pub(super) fn materialize_spec_ops(&self, m: &mut Module) -> Result<usize> {
        let mut moved: Vec<Inst> = Vec::new();
        let mut ids: HashSet<Word> = HashSet::new();
        for g in m.globals().iter().filter(|g| g.is(Op::SpecConstantOp)) {
            let narrow_result = g.result_type.is_some_and(|t| self.narrow.contains(&t));
            let narrow_operand = g.operands.iter().skip(1).filter_map(Operand::id).any(|v| ids.contains(&v) || self.types.type_of(v).is_some_and(|t| self.narrow.contains(&t)));
            if let (true, Some(id)) = (narrow_result || narrow_operand, g.result_id) {
                ids.insert(id);
                moved.push(g.clone());
            }
        }
        if moved.is_empty() {
            return Ok(0);
        }
        for g in &moved {
            self.types.check_spec_constant_op(m, g)?;
        }
        if let Some(user) = m.globals().iter().find(|g| !(g.is(Op::SpecConstantOp) && g.result_id.is_some_and(|r| ids.contains(&r))) && g.used_ids().any(|v| ids.contains(&v))) {
            return Err(self.unsupported(m, user, "a specialization-constant operation on 8- or 16-bit values used outside function code".into()));
        }
        for f in 0..m.functions.len() {
            let used: HashSet<Word> = m.functions[f].insts().flat_map(|i| i.used_ids()).filter(|v| ids.contains(v)).collect();
            if used.is_empty() {
                continue;
            }
            // The operations this function needs, with those they read, in module order.
            let mut needed = used;
            for g in moved.iter().rev() {
                if g.result_id.is_some_and(|r| needed.contains(&r)) {
                    needed.extend(g.operands.iter().filter_map(Operand::id).filter(|v| ids.contains(v)));
                }
            }
            let mut renamed: HashMap<Word, Word> = HashMap::new();
            let mut code = Vec::new();
            for g in moved.iter().filter(|g| g.result_id.is_some_and(|r| needed.contains(&r))) {
                let (Some(old), Some(Operand::Literal(op))) = (g.result_id, g.operands.first()) else { continue };
                let Some(op) = Op::from_u32(*op) else { continue };
                let new = m.alloc_id();
                renamed.insert(old, new);
                let operands = g.operands[1..].iter().map(|o| match o {
                    Operand::Id(v) => Operand::Id(*renamed.get(v).unwrap_or(v)),
                    other => other.clone(),
                });
                code.push(Inst::new(op, g.result_type, Some(new), operands.collect()).from_origin(g.origin));
            }
            let function = &mut m.functions[f];
            for inst in function.blocks.iter_mut().flat_map(|b| b.insts.iter_mut()) {
                inst.map_used_ids(|v| *renamed.get(&v).unwrap_or(&v));
            }
            let Some(entry) = function.blocks.first_mut() else { continue };
            let at = entry.insts.iter().take_while(|i| i.is(Op::Variable) && i.word_opt(0) == Some(StorageClass::Function as u32)).count();
            entry.insts.splice(at..at, code);
        }
        m.globals_mut().retain(|g| !g.result_id.is_some_and(|r| ids.contains(&r)));
        m.debug_names.retain(|n| !n.operands.first().and_then(Operand::id).is_some_and(|t| ids.contains(&t)));
        m.annotations.retain(|a| !(a.is(Op::Decorate) && a.operands.first().and_then(Operand::id).is_some_and(|t| ids.contains(&t))));
        Ok(moved.len())
    }
}
