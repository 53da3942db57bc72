//! 64-bit integers that need all their bits, held as pairs of 32-bit words: the part of
//! `narrow-kernel-int64` that keeps data exact where indices are narrowed.
//!
//! **Groups.** Values and pointers to 64-bit integers that meet in an instruction (its operands
//! and its result) form groups; access-chain indices, shift amounts and constants join none. A
//! struct member or array element that holds a 64-bit integer is a member of the group of every
//! value and pointer that reaches it (through chains, extracts, inserts and constructs). A group
//! needs all 64 bits where one of its values is read from or written to buffer memory (a `long`
//! array, a struct's bytes copied as one `long`, as LLVM copies small structs), is bit cast to
//! or from another type, is shifted by 32 or more, or meets a constant wider than 32 bits (a
//! hash, a random-number generator), and where it holds a member of an aggregate in buffer
//! memory (the host's layout). Every other group is an index, narrowed.
//!
//! **Pairs.** Each value of a group that needs 64 bits becomes a `uvec2` (low word, high word:
//! the bytes of a little-endian 64-bit integer, so memory keeps its layout), each pointer a
//! pointer to one, each aggregate member a `uvec2` member (constant aggregates follow). Loads,
//! stores, copies, phis and selects change type; add, subtract and multiply carry between the
//! words; bitwise operations act on both; shifts move bits across; comparisons compare the high
//! words first; division and remainders call a helper that divides bit by bit; conversions from
//! and to narrower integers extend and truncate; conversions to and from 32-bit floats round as
//! the 64-bit conversion rounds. A buffer pointer whose definition cannot change type (loaded
//! from memory) is bit-cast; a scalar kernel argument in such a group travels as a `uvec2`
//! member named `arg<k>.u64` (or `.i64`). Where such a value is used as an index, its low word
//! is. Sub-group shuffles and broadcasts move the pair; bitwise reductions and scans act on
//! both words; sums and their scans add the low words' 16-bit halves and the high words in
//! three 32-bit reductions, then carry; minimum and maximum reductions take the extreme high
//! word, then the extreme low word among the lanes that hold it.
//!
//! Refused by name: other instructions on such values (atomics, minimum and maximum scans,
//! extended instructions, vectors of them other than those `vectors.rs` takes apart) and
//! pointers to them that cannot be retyped outside buffer memory.

use super::fits;
use crate::analysis::union_find::UnionFind;
use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::grammar::op_name;
use crate::ir::{Inst, Module, Operand};
use crate::pass::Outcome;
use spirv::{GlslStd450Op as GLOp, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// Rewrites `data`, the values and pointers of groups that need 64 bits, into word pairs.
pub(super) fn emulate(module: &mut Module, wide: &HashSet<Word>, data: &Data, target: &str, outcome: &mut Outcome) -> Result<()> {
    let types = Types::new(module);
    if data.ids.is_empty() && data.slots.is_empty() {
        return Ok(());
    }
    let uint = module.type_int(32, false);
    let boolean = module.type_bool();
    let mut pairs = Pairs {
        constants: module.globals().iter().filter(|g| !g.is(Op::Variable)).filter_map(|g| Some((g.result_id?, g.clone()))).collect(),
        defs: module.functions.iter().flat_map(|f| f.insts()).filter_map(|i| Some((i.result_id?, i.clone()))).collect(),
        args: crate::kernel::args_structs(module).into_iter().collect(),
        types,
        wide: wide.clone(),
        data: data.ids.clone(),
        slots: data.slots.clone(),
        aggregates: data.slots.iter().map(|(t, _)| *t).collect(),
        uint,
        uvec2: module.type_vector(uint, 2),
        boolean,
        bvec2: module.type_vector(boolean, 2),
        glsl: module.ext_inst_import("GLSL.std.450"),
        products: None,
    };
    pairs.retype_aggregates(module);
    for f in 0..module.functions.len() {
        let mut b = 0;
        while b < module.functions[f].blocks.len() {
            let mut i = 0;
            while i < module.functions[f].blocks[b].insts.len() {
                let inst = module.functions[f].blocks[b].insts[i].clone();
                if !pairs.touches(&inst) {
                    i += 1;
                    continue;
                }
                module.functions[f].blocks[b].insts.remove(i);
                let mut at = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                let done = pairs.rewrite(&mut at, &inst);
                let cursor = at.cursor;
                if let Err(why) = done {
                    module.functions[f].blocks[b].insts.insert(i, inst.clone());
                    return Err(Error::Unsupported { site: module.site(&inst), target: target.to_string(), missing: format!("64-bit integers: {why}") });
                }
                outcome.count(inst.opcode);
                (b, i) = (cursor.block, cursor.index);
            }
            b += 1;
        }
    }
    // Vectors of 64-bit integers whose elements were all taken as pairs are left unused.
    let types = Types::new(module);
    let wide_vector = |i: &Inst| {
        matches!(i.op(), Some(Op::Bitcast | Op::CopyObject | Op::UConvert | Op::SConvert)) && i.result_type.and_then(|t| types.vector(t)).and_then(|(c, _)| types.int(c)).is_some_and(|(w, _)| w == 64)
    };
    for _ in 0..3 {
        module.remove_unused_values(wide_vector);
    }
    Ok(())
}

/// What needs all 64 bits: values and pointers, and members of aggregate types (a struct's
/// member, an array's elements) that hold 64-bit integers.
#[derive(Default)]
pub(super) struct Data {
    pub ids: HashSet<Word>,
    /// (struct type, member) or (array type, 0).
    pub slots: HashSet<(Word, u32)>,
}

/// The aggregate member a chain of `indices` from type `ty` ends in, where it holds a 64-bit
/// integer: `index` reads each index as a member number (a constant or a literal).
fn slot_of(types: &Types, wide: &HashSet<Word>, mut ty: Word, indices: &[Operand], index: impl Fn(&Operand) -> Option<u32>) -> Option<(Word, u32)> {
    let mut slot = None;
    for i in indices {
        let d = types.defs.get(&ty)?;
        match d.op()? {
            Op::TypeStruct => {
                let m = index(i)?;
                slot = Some((ty, m));
                ty = d.operands.get(m as usize)?.id()?;
            }
            Op::TypeArray | Op::TypeRuntimeArray => {
                slot = Some((ty, 0));
                ty = d.operands.first()?.id()?;
            }
            _ => return None,
        }
    }
    slot.filter(|_| wide.contains(&ty))
}

/// The aggregate member a chain instruction's result points to, if it holds a 64-bit integer.
fn chain_slot(types: &Types, wide: &HashSet<Word>, inst: &Inst) -> Option<(Word, u32)> {
    let base = inst.operands.first()?.id()?;
    let (_, pointee) = types.pointer(types.type_of(base)?)?;
    let skip = if matches!(inst.op(), Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) { 2 } else { 1 };
    slot_of(types, wide, pointee, inst.operands.get(skip..)?, |o| o.id().and_then(|c| types.const_u32(c)))
}

/// The aggregate member `CompositeExtract` or `CompositeInsert` reaches, if it holds a 64-bit
/// integer.
fn composite_slot(types: &Types, wide: &HashSet<Word>, inst: &Inst) -> Option<(Word, u32)> {
    let (composite, from) = if inst.is(Op::CompositeInsert) { (inst.operands.get(1)?.id()?, 2) } else { (inst.operands.first()?.id()?, 1) };
    slot_of(types, wide, types.type_of(composite)?, inst.operands.get(from..)?, |o| if let Operand::Literal(k) = o { Some(*k) } else { None })
}

/// Every value, pointer and aggregate member of a group that needs all 64 bits. `extensions`
/// maps the left shifts of extension shifts (`(x << 32) >> k`, folded where values are
/// narrowed) to their operands: those shifts alone do not need 64 bits.
/// The member number that stands for the pointers kept in memory of a pointer type.
const SPILLED: u32 = u32::MAX;

pub(super) fn data_ids(module: &Module, types: &Types, wide: &HashSet<Word>, extensions: &HashMap<Word, Word>) -> Data {
    let constants: HashMap<Word, &Inst> = module.globals().iter().filter(|g| !g.is(Op::Variable)).filter_map(|g| Some((g.result_id?, g))).collect();
    let scalar = |v: Word| types.type_of(v).is_some_and(|t| wide.contains(&t));
    let pointer = |v: Word| types.type_of(v).and_then(|t| types.pointer(t)).is_some_and(|(_, p)| wide.contains(&p));
    let node = |v: Word| !constants.contains_key(&v) && (scalar(v) || pointer(v));
    let buffer = |v: Word| types.type_of(v).and_then(|t| types.pointer(t)).is_some_and(|(class, p)| class == StorageClass::PhysicalStorageBuffer as u32 && wide.contains(&p));
    let wider_constant = |v: Word| scalar(v) && constants.get(&v).is_some_and(|d| d.is(Op::Constant) && !fits(d.word_opt(0).unwrap_or(0), d.word_opt(1).unwrap_or(0)));
    // Aggregates in buffer memory hold 64-bit members in the host's layout: those need 64 bits.
    let psb = StorageClass::PhysicalStorageBuffer as u32;
    let in_buffers = super::buffer_reach(types, module.globals().iter().filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb)).filter_map(|g| g.result_id));
    // Aggregate members take ids past the module's bound in the groups.
    let mut slot_ids: HashMap<(Word, u32), Word> = HashMap::new();
    let mut slot_id = |slot: (Word, u32)| {
        let next = module.header.bound.saturating_add(slot_ids.len() as u32);
        *slot_ids.entry(slot).or_insert(next)
    };
    let mut groups = UnionFind::default();
    let mut nodes = Vec::new();
    let mut roots = Vec::new();
    for inst in module.functions.iter().flat_map(|f| f.insts()) {
        let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
        let joined = match inst.op() {
            Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain | Op::ShiftLeftLogical | Op::ShiftRightLogical | Op::ShiftRightArithmetic) => {
                &ids[..ids.len().min(1)]
            }
            // The aggregate is no member of the group; its member is (below).
            Some(Op::CompositeExtract) => &[][..],
            Some(Op::CompositeInsert) => &ids[..ids.len().min(1)],
            Some(Op::CompositeConstruct) if inst.result_type.is_some_and(|t| types.vector(t).is_none()) => &[][..],
            _ => &ids[..],
        };
        let mut members: Vec<Word> = joined.iter().copied().filter(|v| node(*v)).collect();
        members.extend(inst.result_id.filter(|r| node(*r)));
        let slot = match inst.op() {
            Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => chain_slot(types, wide, inst),
            Some(Op::CompositeExtract | Op::CompositeInsert) => composite_slot(types, wide, inst),
            _ => None,
        };
        // A 128-bit product's halves are its struct's members.
        if matches!(inst.op(), Some(Op::UMulExtended | Op::SMulExtended)) && ids.iter().any(|v| scalar(*v)) {
            if let Some(ty) = inst.result_type {
                members.push(slot_id((ty, 0)));
                members.push(slot_id((ty, 1)));
                roots.extend(members.iter().copied());
            }
        }
        // Pointers to 64-bit data kept in memory (unoptimized code spills them to variables):
        // every such pointer stored to or loaded from memory of one type is one group, so that
        // the pointers a kernel stores are pairs where the ones it loads back are.
        if let (Some(Op::Load), Some(r)) = (inst.op(), inst.result_id.filter(|r| pointer(*r))) {
            if let Some(memory) = ids.first().and_then(|p| types.type_of(*p)) {
                groups.union(r, slot_id((memory, SPILLED)));
            }
        }
        if let (Some(Op::Store), Some(&v)) = (inst.op(), ids.get(1).filter(|v| pointer(**v))) {
            if let Some(memory) = ids.first().and_then(|p| types.type_of(*p)) {
                groups.union(v, slot_id((memory, SPILLED)));
            }
        }
        if let Some(slot) = slot {
            let id = slot_id(slot);
            members.push(id);
            if in_buffers.contains(&slot.0) {
                roots.push(id);
            }
        }
        if inst.is(Op::CompositeConstruct) {
            if let Some(ty) = inst.result_type.filter(|t| types.vector(*t).is_none()) {
                for (k, v) in ids.iter().enumerate().filter(|(_, v)| node(**v)) {
                    let member = if types.defs.get(&ty).is_some_and(|d| d.is(Op::TypeStruct)) { k as u32 } else { 0 };
                    let id = slot_id((ty, member));
                    groups.union(*v, id);
                    nodes.push(*v);
                }
            }
        }
        for pair in members.windows(2) {
            groups.union(pair[0], pair[1]);
        }
        let amount = ids.get(1).and_then(|a| constants.get(a)).filter(|d| d.is(Op::Constant)).and_then(|d| d.word_opt(0));
        let root = match inst.op() {
            Some(Op::Bitcast) => {
                let operand = ids.first().copied().unwrap_or(0);
                let other = |v: Word| types.type_of(v).is_some_and(|t| types.pointer(t).is_none());
                (inst.result_id.is_some_and(scalar) && other(operand) && !scalar(operand)) || (scalar(operand) && inst.result_id.is_some_and(|r| other(r) && !scalar(r)))
            }
            Some(Op::ShiftLeftLogical | Op::ShiftRightLogical | Op::ShiftRightArithmetic) => {
                let extension = inst.result_id.is_some_and(|r| extensions.contains_key(&r)) || ids.first().is_some_and(|x| extensions.contains_key(x));
                inst.result_id.is_some_and(scalar) && amount.is_some_and(|k| k >= 32) && !extension
            }
            Some(Op::Load | Op::Store) => ids.first().is_some_and(|p| buffer(*p)),
            _ => false,
        } || ids.iter().any(|v| wider_constant(*v));
        if root {
            roots.extend(members.iter().copied());
        }
        nodes.extend(members);
    }
    // Every 64-bit member of an aggregate in buffer memory keeps its 8 bytes, read or not: the
    // aggregate's size and later members' offsets are the host's.
    for ty in &in_buffers {
        let Some(d) = types.defs.get(ty) else { continue };
        let members: Vec<(u32, Word)> = match d.op() {
            Some(Op::TypeStruct) => d.operands.iter().enumerate().filter_map(|(m, o)| Some((m as u32, o.id()?))).collect(),
            Some(Op::TypeArray | Op::TypeRuntimeArray) => d.operands.first().and_then(Operand::id).map(|e| vec![(0, e)]).unwrap_or_default(),
            _ => Vec::new(),
        };
        for (m, member) in members {
            if wide.contains(&member) {
                roots.push(slot_id((*ty, m)));
            }
        }
    }
    let needed: HashSet<Word> = roots.into_iter().map(|r| groups.find(r)).collect();
    let ids = nodes.into_iter().filter(|n| *n < module.header.bound && needed.contains(&groups.find(*n))).collect();
    let slots = slot_ids.into_iter().filter(|(slot, id)| slot.1 != SPILLED && needed.contains(&groups.find(*id))).map(|(slot, _)| slot).collect();
    Data { ids, slots }
}

/// What the rewrite needs to know.
struct Pairs {
    /// Definitions of constants, as they were.
    constants: HashMap<Word, Inst>,
    /// Definitions of function values, as they were.
    defs: HashMap<Word, Inst>,
    /// The kernel-argument structs.
    args: HashSet<Word>,
    types: Types,
    wide: HashSet<Word>,
    data: HashSet<Word>,
    slots: HashSet<(Word, u32)>,
    /// The aggregate types with members in `slots`.
    aggregates: HashSet<Word>,
    uint: Word,
    uvec2: Word,
    boolean: Word,
    bvec2: Word,
    glsl: Word,
    /// `struct { uint, uint }`, the result of `OpUMulExtended`, once made.
    products: Option<Word>,
}

type Why = std::result::Result<(), String>;

impl Pairs {
    fn touches(&self, inst: &Inst) -> bool {
        inst.result_id.is_some_and(|r| self.data.contains(&r))
            || inst.operands.iter().filter_map(Operand::id).any(|v| self.data.contains(&v))
            || (matches!(inst.op(), Some(Op::CompositeConstruct | Op::CompositeInsert)) && inst.result_type.is_some_and(|t| self.aggregates.contains(&t)))
    }

    /// Aggregate members that hold 64-bit data become `uvec2`s, in their types and in constant
    /// aggregates; a kernel argument's name says its width.
    fn retype_aggregates(&self, module: &mut Module) {
        for (ty, m) in &self.slots {
            let was = self.types.defs.get(ty).and_then(|d| d.operands.get(*m as usize)).and_then(Operand::id);
            if let Some(def) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(*ty)) {
                if let Some(o) = def.operands.get_mut(*m as usize) {
                    *o = Operand::Id(self.uvec2);
                }
            }
            if self.args.contains(ty) {
                let suffix = if was.and_then(|t| self.types.int(t)).is_some_and(|(_, s)| s) { "i64" } else { "u64" };
                for n in module.debug_names.iter_mut().filter(|n| n.is(Op::MemberName) && n.word_opt(0) == Some(*ty) && n.word_opt(1) == Some(*m)) {
                    let name = n.string(2).unwrap_or_default();
                    if let (false, Some(o)) = (name.contains('.'), n.operands.get_mut(2)) {
                        *o = Operand::string(&format!("{name}.{suffix}"));
                    }
                }
            }
        }
        let composites: Vec<usize> =
            module.globals().iter().enumerate().filter(|(_, g)| g.is(Op::ConstantComposite) && g.result_type.is_some_and(|t| self.aggregates.contains(&t))).map(|(k, _)| k).collect();
        for k in composites {
            let g = module.globals()[k].clone();
            let ty = g.result_type.unwrap_or_default();
            let mut operands = g.operands.clone();
            for (m, o) in operands.iter_mut().enumerate() {
                let member = if self.types.defs.get(&ty).is_some_and(|d| d.is(Op::TypeStruct)) { m as u32 } else { 0 };
                if let (true, Operand::Id(v)) = (self.slots.contains(&(ty, member)), &o) {
                    if let Some(p) = self.pair_constant(module, *v) {
                        *o = Operand::Id(p);
                    }
                }
            }
            module.globals_mut()[k].operands = operands;
        }
    }

    /// A 64-bit constant as a `uvec2` constant.
    fn pair_constant(&self, module: &mut Module, v: Word) -> Option<Word> {
        let d = self.constants.get(&v)?;
        match d.op()? {
            Op::Constant => {
                let (lo, hi) = (module.constant_u32(d.word_opt(0).unwrap_or(0)), module.constant_u32(d.word_opt(1).unwrap_or(0)));
                Some(module.intern(Op::ConstantComposite, Some(self.uvec2), vec![Operand::Id(lo), Operand::Id(hi)]))
            }
            Op::ConstantNull => Some(module.intern(Op::ConstantNull, Some(self.uvec2), vec![])),
            Op::Undef => Some(module.intern(Op::Undef, Some(self.uvec2), vec![])),
            _ => None,
        }
    }

    fn is_data(&self, v: Word) -> bool {
        self.data.contains(&v)
    }

    fn wide_scalar(&self, v: Word) -> bool {
        self.types.type_of(v).is_some_and(|t| self.types.int(t).is_some_and(|(w, _)| w == 64))
    }

    /// The type a data id takes: `uvec2`, or a pointer to one in the same storage class.
    fn pair_type(&self, at: &mut Builder<'_>, v: Word) -> Word {
        match self.types.type_of(v).and_then(|t| self.types.pointer(t)) {
            Some((class, _)) => at.module.type_pointer(StorageClass::from_u32(class).unwrap_or(StorageClass::Function), self.uvec2),
            None => self.uvec2,
        }
    }

    /// `v` as a pair: data ids are, 64-bit constants become `uvec2` constants, other 64-bit
    /// values (narrowed indices) are zero-extended.
    fn pair(&self, at: &mut Builder<'_>, v: Word) -> std::result::Result<Word, String> {
        if self.is_data(v) || !self.wide_scalar(v) {
            return Ok(v);
        }
        if let Some(p) = self.pair_constant(at.module, v) {
            return Ok(p);
        }
        match self.constants.get(&v).and_then(Inst::op) {
            Some(op) => Err(format!("the specialization constant %{v} ({}) is used as a 64-bit value that needs all its bits", op_name(op as u32))),
            None => {
                let lo = at.op(Op::UConvert, self.uint, &[v]);
                let zero = at.module.constant_u32(0);
                Ok(at.op(Op::CompositeConstruct, self.uvec2, &[lo, zero]))
            }
        }
    }

    fn words(&self, at: &mut Builder<'_>, v: Word) -> std::result::Result<(Word, Word), String> {
        let p = self.pair(at, v)?;
        Ok((at.composite_extract(self.uint, p, 0), at.composite_extract(self.uint, p, 1)))
    }

    fn join(&self, at: &mut Builder<'_>, result: Option<Word>, lo: Word, hi: Word) {
        at.insert(Inst::new(Op::CompositeConstruct, Some(self.uvec2), result, vec![Operand::Id(lo), Operand::Id(hi)]));
    }

    /// A 64-bit value used as an index or shift amount, of the narrowed type `ty`: its low word.
    fn low_word(&self, at: &mut Builder<'_>, v: Word, ty: Word) -> Word {
        if !self.is_data(v) {
            return v;
        }
        let lo = at.composite_extract(self.uint, v, 0);
        let signed = self.types.int(ty).is_some_and(|(_, s)| s);
        at.op(if signed { Op::SConvert } else { Op::UConvert }, ty, &[lo])
    }

    /// A shift amount as a 32-bit unsigned value.
    fn amount(&self, at: &mut Builder<'_>, v: Word) -> Word {
        if self.is_data(v) {
            return at.composite_extract(self.uint, v, 0);
        }
        match self.types.type_of(v).and_then(|t| self.types.int(t)) {
            // Made here: a word already.
            None | Some((32, false)) => v,
            Some((32, true)) => at.bitcast(self.uint, v),
            _ => at.op(Op::UConvert, self.uint, &[v]),
        }
    }

    /// The constant value of 64-bit or 32-bit integer `v`, if it is one.
    fn constant(&self, v: Word) -> Option<u32> {
        self.constants.get(&v).filter(|d| d.is(Op::Constant)).and_then(|d| d.word_opt(0))
    }

    fn rewrite(&mut self, at: &mut Builder<'_>, inst: &Inst) -> Why {
        let result = inst.result_id;
        let data_result = result.is_some_and(|r| self.is_data(r));
        let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
        let arg = |k: usize| ids.get(k).copied().ok_or_else(|| format!("{} lacks operand {k}", op_name(inst.opcode)));
        let op = inst.op().ok_or("an unknown opcode")?;
        let named = || format!("{} on a 64-bit value that needs all its bits has no 32-bit equivalent here", op_name(inst.opcode));
        match op {
            Op::Variable | Op::Load | Op::CopyObject | Op::Phi | Op::Undef | Op::Select if data_result => {
                let r = result.unwrap_or_default();
                if op == Op::Load && self.types.type_of(r).and_then(|t| self.types.pointer(t)).is_some() {
                    return self.cast_pointer(at, inst);
                }
                let mut new = inst.clone();
                new.result_type = Some(self.pair_type(at, r));
                let from = if op == Op::Variable { 1 } else { 0 };
                for o in new.operands.iter_mut().skip(from) {
                    if let Operand::Id(v) = o {
                        *v = self.pair(at, *v)?;
                    }
                }
                if op == Op::Select && self.types.type_of(arg(0)?) == Some(self.boolean) && self.types.type_of(r).and_then(|t| self.types.pointer(t)).is_none() {
                    let c = arg(0)?;
                    new.operands[0] = Operand::Id(at.op(Op::CompositeConstruct, self.bvec2, &[c, c]));
                }
                at.insert(new);
            }
            Op::Store => {
                let mut new = inst.clone();
                let v = arg(1)?;
                let spilled = self.types.type_of(v).filter(|t| self.is_data(v) && self.types.pointer(*t).is_some());
                // A pointer to pairs stored where pointers to 64-bit integers are kept goes back
                // to its type there (loads cast it again).
                new.operands[1] = Operand::Id(match spilled {
                    Some(ty) if self.types.pointer(ty).is_some_and(|(class, _)| class == StorageClass::PhysicalStorageBuffer as u32) => at.bitcast(ty, v),
                    Some(_) => return Err("OpStore keeps a pointer to 64-bit data that needs all its bits outside buffer memory".into()),
                    None => self.pair(at, v)?,
                });
                at.insert(new);
            }
            Op::Bitcast => {
                let v = arg(0)?;
                let pointer = |t: Option<Word>| t.and_then(|t| self.types.pointer(t)).is_some();
                if pointer(inst.result_type) != pointer(self.types.type_of(v)) {
                    return Err("a bit cast between a pointer and a 64-bit value that needs all its bits".into());
                }
                let mut new = inst.clone();
                if data_result {
                    new.result_type = Some(self.pair_type(at, result.unwrap_or_default()));
                }
                at.insert(new);
            }
            Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                let mut new = inst.clone();
                for o in new.operands.iter_mut().skip(1) {
                    if let Operand::Id(v) = o {
                        let ty = self.types.type_of(*v).unwrap_or(self.uint);
                        *v = self.low_word(at, *v, ty);
                    }
                }
                if data_result {
                    let base = arg(0)?;
                    if !self.is_data(base) && !chain_slot(&self.types, &self.wide, inst).is_some_and(|slot| self.slots.contains(&slot)) {
                        return self.cast_pointer(at, &new);
                    }
                    new.result_type = Some(self.pair_type(at, result.unwrap_or_default()));
                }
                at.insert(new);
            }
            Op::BitwiseAnd | Op::BitwiseOr | Op::BitwiseXor | Op::Not if data_result => {
                let mut new = inst.clone();
                new.result_type = Some(self.uvec2);
                for o in new.operands.iter_mut() {
                    if let Operand::Id(v) = o {
                        *v = self.pair(at, *v)?;
                    }
                }
                at.insert(new);
            }
            Op::IAdd | Op::ISub if data_result => {
                let (a, b) = (self.pair(at, arg(0)?)?, self.pair(at, arg(1)?)?);
                let (lo, hi) = self.carried(at, op, a, b);
                self.join(at, result, lo, hi);
            }
            Op::SNegate if data_result => {
                let null = at.module.intern(Op::ConstantNull, Some(self.uvec2), vec![]);
                let a = self.pair(at, arg(0)?)?;
                let (lo, hi) = self.carried(at, Op::ISub, null, a);
                self.join(at, result, lo, hi);
            }
            Op::IMul if data_result => {
                let ((alo, ahi), (blo, bhi)) = (self.words(at, arg(0)?)?, self.words(at, arg(1)?)?);
                let products = *self.products.get_or_insert_with(|| at.module.type_struct(&[self.uint, self.uint]));
                let low = at.op(Op::UMulExtended, products, &[alo, blo]);
                let lo = at.composite_extract(self.uint, low, 0);
                let carry = at.composite_extract(self.uint, low, 1);
                let cross = at.op(Op::IMul, self.uint, &[alo, bhi]);
                let cross2 = at.op(Op::IMul, self.uint, &[ahi, blo]);
                let hi = at.op(Op::IAdd, self.uint, &[carry, cross]);
                let hi = at.op(Op::IAdd, self.uint, &[hi, cross2]);
                self.join(at, result, lo, hi);
            }
            Op::ShiftLeftLogical | Op::ShiftRightLogical | Op::ShiftRightArithmetic if data_result => self.shift(at, op, result, arg(0)?, arg(1)?)?,
            Op::ShiftLeftLogical | Op::ShiftRightLogical | Op::ShiftRightArithmetic => {
                // A narrowed value shifted by a 64-bit one: by its low word.
                let mut new = inst.clone();
                let ty = self.types.type_of(arg(1)?).unwrap_or(self.uint);
                new.operands[1] = Operand::Id(self.low_word(at, arg(1)?, ty));
                at.insert(new);
            }
            Op::IEqual | Op::INotEqual => {
                let ((alo, ahi), (blo, bhi)) = (self.words(at, arg(0)?)?, self.words(at, arg(1)?)?);
                let lo = at.op(op, self.boolean, &[alo, blo]);
                let hi = at.op(op, self.boolean, &[ahi, bhi]);
                let both = if op == Op::IEqual { Op::LogicalAnd } else { Op::LogicalOr };
                at.insert(Inst::new(both, inst.result_type, result, vec![Operand::Id(lo), Operand::Id(hi)]));
            }
            Op::ULessThan | Op::ULessThanEqual | Op::UGreaterThan | Op::UGreaterThanEqual | Op::SLessThan | Op::SLessThanEqual | Op::SGreaterThan | Op::SGreaterThanEqual => {
                let ((alo, ahi), (blo, bhi)) = (self.words(at, arg(0)?)?, self.words(at, arg(1)?)?);
                let (high, low) = match op {
                    Op::ULessThan => (Op::ULessThan, Op::ULessThan),
                    Op::ULessThanEqual => (Op::ULessThan, Op::ULessThanEqual),
                    Op::UGreaterThan => (Op::UGreaterThan, Op::UGreaterThan),
                    Op::UGreaterThanEqual => (Op::UGreaterThan, Op::UGreaterThanEqual),
                    Op::SLessThan => (Op::SLessThan, Op::ULessThan),
                    Op::SLessThanEqual => (Op::SLessThan, Op::ULessThanEqual),
                    Op::SGreaterThan => (Op::SGreaterThan, Op::UGreaterThan),
                    _ => (Op::SGreaterThan, Op::UGreaterThanEqual),
                };
                let strictly = at.op(high, self.boolean, &[ahi, bhi]);
                let tied = at.op(Op::IEqual, self.boolean, &[ahi, bhi]);
                let below = at.op(low, self.boolean, &[alo, blo]);
                let decided = at.op(Op::LogicalAnd, self.boolean, &[tied, below]);
                at.insert(Inst::new(Op::LogicalOr, inst.result_type, result, vec![Operand::Id(strictly), Operand::Id(decided)]));
            }
            Op::UConvert | Op::SConvert if data_result => {
                let v = arg(0)?;
                let ty = self.types.type_of(v).or(inst.result_type.filter(|t| *t != self.uvec2)).unwrap_or(0);
                let x = self.word_of(at, v, ty)?;
                let hi = if op == Op::UConvert {
                    at.module.constant_u32(0)
                } else {
                    let by = at.module.constant_u32(31);
                    at.op(Op::ShiftRightArithmetic, self.uint, &[x, by])
                };
                self.join(at, result, x, hi);
            }
            Op::UConvert | Op::SConvert => {
                // To a narrower integer: the low word, truncated further.
                let lo = at.composite_extract(self.uint, arg(0)?, 0);
                self.word_as(at, lo, inst.result_type.unwrap_or(self.uint), result);
            }
            Op::CompositeExtract if data_result && composite_slot(&self.types, &self.wide, inst).is_some_and(|slot| self.slots.contains(&slot)) => {
                let mut new = inst.clone();
                new.result_type = Some(self.uvec2);
                at.insert(new);
            }
            Op::CompositeInsert if composite_slot(&self.types, &self.wide, inst).is_some_and(|slot| self.slots.contains(&slot)) => {
                let mut new = inst.clone();
                new.operands[0] = Operand::Id(self.pair(at, arg(0)?)?);
                at.insert(new);
            }
            Op::CompositeInsert if !self.is_data(arg(0)?) => at.insert(inst.clone()),
            Op::CompositeConstruct if inst.result_type.is_some_and(|t| self.aggregates.contains(&t)) => {
                let ty = inst.result_type.unwrap_or_default();
                let structure = self.types.defs.get(&ty).is_some_and(|d| d.is(Op::TypeStruct));
                let mut new = inst.clone();
                for (m, o) in new.operands.iter_mut().enumerate() {
                    if let Operand::Id(v) = o {
                        if self.slots.contains(&(ty, if structure { m as u32 } else { 0 })) {
                            *v = self.pair(at, *v)?;
                        }
                    }
                }
                at.insert(new);
            }
            Op::CompositeExtract if data_result => {
                // An element of a 64-bit vector extended from a 32-bit one (a kernel's ids).
                let mut from = arg(0)?;
                while let Some(d) = self.defs.get(&from).filter(|d| d.is(Op::CopyObject)) {
                    from = d.operands.first().and_then(Operand::id).unwrap_or(0);
                }
                if let Some(cast) = self.defs.get(&from).filter(|d| d.is(Op::Bitcast)) {
                    // An element of a 64-bit vector bit cast from a narrower one (LLVM's
                    // `as_ulong(x.lo)`): two of the source's words.
                    let source = cast.operands.first().and_then(Operand::id).unwrap_or(0);
                    let (Some((_, n)), Some(Operand::Literal(k))) = (self.types.type_of(from).and_then(|t| self.types.vector(t)), inst.operands.get(1)) else { return Err(named()) };
                    if n != 2 || inst.operands.len() != 2 || *k >= n {
                        return Err(named());
                    }
                    let uvec4 = at.module.type_vector(self.uint, 4);
                    let words = at.bitcast(uvec4, source);
                    at.insert(Inst::new(Op::VectorShuffle, Some(self.uvec2), result, vec![Operand::Id(words), Operand::Id(words), Operand::Literal(2 * k), Operand::Literal(2 * k + 1)]));
                    return Ok(());
                }
                let Some(extension) = self.defs.get(&from).filter(|d| matches!(d.op(), Some(Op::UConvert | Op::SConvert))) else { return Err(named()) };
                let (source, how) = (extension.operands.first().and_then(Operand::id).unwrap_or(0), extension.opcode);
                let Some((component, _)) = self.types.type_of(source).and_then(|t| self.types.vector(t)) else { return Err(named()) };
                let mut operands = vec![Operand::Id(source)];
                operands.extend(inst.operands[1..].iter().cloned());
                let element = at.emit(Op::CompositeExtract, component, operands);
                let x = self.word_of(at, element, component)?;
                let hi = if how == Op::UConvert as u32 {
                    at.module.constant_u32(0)
                } else {
                    let by = at.module.constant_u32(31);
                    at.op(Op::ShiftRightArithmetic, self.uint, &[x, by])
                };
                self.join(at, result, x, hi);
            }
            Op::UDiv | Op::UMod if data_result => {
                let (a, d) = (self.pair(at, arg(0)?)?, self.pair(at, arg(1)?)?);
                let (q, r) = self.divide(at, a, d);
                at.insert(Inst::new(Op::CopyObject, Some(self.uvec2), result, vec![Operand::Id(if op == Op::UDiv { q } else { r })]));
            }
            Op::SDiv | Op::SRem | Op::SMod if data_result => {
                let (a, d) = (self.pair(at, arg(0)?)?, self.pair(at, arg(1)?)?);
                let zero = at.module.constant_u32(0);
                let sign = |at: &mut Builder<'_>, p: Word| {
                    let hi = at.composite_extract(self.uint, p, 1);
                    at.op(Op::SLessThan, self.boolean, &[hi, zero])
                };
                let (a_negative, d_negative) = (sign(at, a), sign(at, d));
                let (a_size, d_size) = (self.negated_if(at, a_negative, a)?, self.negated_if(at, d_negative, d)?);
                let (q, r) = self.divide(at, a_size, d_size);
                let value = match op {
                    Op::SDiv => {
                        let differ = at.op(Op::LogicalNotEqual, self.boolean, &[a_negative, d_negative]);
                        self.negated_if(at, differ, q)?
                    }
                    // The remainder takes the dividend's sign; the modulus the divisor's.
                    _ => {
                        let rem = self.negated_if(at, a_negative, r)?;
                        if op == Op::SRem {
                            rem
                        } else {
                            let null = at.module.intern(Op::ConstantNull, Some(self.uvec2), vec![]);
                            let nonzero = at.op(Op::INotEqual, self.bvec2, &[rem, null]);
                            let nonzero = at.op(Op::Any, self.boolean, &[nonzero]);
                            let differ = at.op(Op::LogicalNotEqual, self.boolean, &[a_negative, d_negative]);
                            let adjust = at.op(Op::LogicalAnd, self.boolean, &[nonzero, differ]);
                            let (lo, hi) = self.carried(at, Op::IAdd, rem, d);
                            let sum = at.op(Op::CompositeConstruct, self.uvec2, &[lo, hi]);
                            let both = at.op(Op::CompositeConstruct, self.bvec2, &[adjust, adjust]);
                            at.op(Op::Select, self.uvec2, &[both, sum, rem])
                        }
                    }
                };
                at.insert(Inst::new(Op::CopyObject, Some(self.uvec2), result, vec![Operand::Id(value)]));
            }
            Op::GroupNonUniformShuffle
            | Op::GroupNonUniformShuffleXor
            | Op::GroupNonUniformShuffleUp
            | Op::GroupNonUniformShuffleDown
            | Op::GroupNonUniformBroadcast
            | Op::GroupNonUniformBroadcastFirst
            | Op::GroupNonUniformQuadBroadcast
            | Op::GroupNonUniformQuadSwap
                if data_result =>
            {
                // The pair moves between lanes whole; a lane index held as a pair gives its low word.
                let mut new = inst.clone();
                new.result_type = Some(self.uvec2);
                for (k, o) in new.operands.iter_mut().enumerate() {
                    if let Operand::Id(v) = o {
                        if k == 1 {
                            *v = self.pair(at, *v)?;
                        } else if self.is_data(*v) {
                            *v = at.composite_extract(self.uint, *v, 0);
                        }
                    }
                }
                at.insert(new);
            }
            Op::ExtInst if data_result && ids.first() == Some(&self.glsl) => {
                let which = inst.operands.get(1).and_then(|o| if let Operand::Literal(k) = o { Some(*k) } else { None }).unwrap_or(u32::MAX);
                let (umin, smin, umax, smax, sabs) = (GLOp::UMin as u32, GLOp::SMin as u32, GLOp::UMax as u32, GLOp::SMax as u32, GLOp::SAbs as u32);
                if which == sabs {
                    let a = self.pair(at, arg(1)?)?;
                    let hi = at.composite_extract(self.uint, a, 1);
                    let zero = at.module.constant_u32(0);
                    let negative = at.op(Op::SLessThan, self.boolean, &[hi, zero]);
                    let v = self.negated_if(at, negative, a)?;
                    at.insert(Inst::new(Op::CopyObject, Some(self.uvec2), result, vec![Operand::Id(v)]));
                } else if [umin, smin, umax, smax].contains(&which) {
                    let (a, b) = (self.pair(at, arg(1)?)?, self.pair(at, arg(2)?)?);
                    let less = at.module.alloc_id();
                    let compare = if which == umin || which == umax { Op::ULessThan } else { Op::SLessThan };
                    self.rewrite(at, &Inst::new(compare, Some(self.boolean), Some(less), vec![Operand::Id(a), Operand::Id(b)]))?;
                    let both = at.op(Op::CompositeConstruct, self.bvec2, &[less, less]);
                    let (first, second) = if which == umin || which == smin { (a, b) } else { (b, a) };
                    at.insert(Inst::new(Op::Select, Some(self.uvec2), result, vec![Operand::Id(both), Operand::Id(first), Operand::Id(second)]));
                } else {
                    return Err(named());
                }
            }
            Op::UMulExtended | Op::SMulExtended => {
                // The 128-bit product from four 32 x 32-bit ones, words carried upward.
                let ((a0, a1), (b0, b1)) = (self.words(at, arg(0)?)?, self.words(at, arg(1)?)?);
                let products = *self.products.get_or_insert_with(|| at.module.type_struct(&[self.uint, self.uint]));
                let product = |at: &mut Builder<'_>, x: Word, y: Word| {
                    let p = at.op(Op::UMulExtended, products, &[x, y]);
                    (at.composite_extract(self.uint, p, 0), at.composite_extract(self.uint, p, 1))
                };
                let ((l00, h00), (l01, h01), (l10, h10), (l11, h11)) = (product(at, a0, b0), product(at, a0, b1), product(at, a1, b0), product(at, a1, b1));
                let zero = at.module.constant_u32(0);
                let wide = |at: &mut Builder<'_>, w: Word| at.op(Op::CompositeConstruct, self.uvec2, &[w, zero]);
                let sum = |at: &mut Builder<'_>, words: &[Word]| {
                    let mut total = wide(at, words[0]);
                    for w in &words[1..] {
                        let next = wide(at, *w);
                        let (lo, hi) = self.carried(at, Op::IAdd, total, next);
                        total = at.op(Op::CompositeConstruct, self.uvec2, &[lo, hi]);
                    }
                    (at.composite_extract(self.uint, total, 0), at.composite_extract(self.uint, total, 1))
                };
                let (word1, carry1) = sum(at, &[h00, l01, l10]);
                let (word2, carry2) = sum(at, &[h01, h10, l11, carry1]);
                let word3 = at.op(Op::IAdd, self.uint, &[h11, carry2]);
                let low = at.op(Op::CompositeConstruct, self.uvec2, &[l00, word1]);
                let mut high = at.op(Op::CompositeConstruct, self.uvec2, &[word2, word3]);
                if op == Op::SMulExtended {
                    // Signed: less b where a is negative, less a where b is.
                    let null = at.module.intern(Op::ConstantNull, Some(self.uvec2), vec![]);
                    for (y, x_hi) in [(arg(1)?, a1), (arg(0)?, b1)] {
                        let negative = at.op(Op::SLessThan, self.boolean, &[x_hi, zero]);
                        let both = at.op(Op::CompositeConstruct, self.bvec2, &[negative, negative]);
                        let y = self.pair(at, y)?;
                        let less = at.op(Op::Select, self.uvec2, &[both, y, null]);
                        let (lo, hi) = self.carried(at, Op::ISub, high, less);
                        high = at.op(Op::CompositeConstruct, self.uvec2, &[lo, hi]);
                    }
                }
                at.insert(Inst::new(Op::CompositeConstruct, inst.result_type, result, vec![Operand::Id(low), Operand::Id(high)]));
            }
            Op::ConvertUToF | Op::ConvertSToF if self.types.float(inst.result_type.unwrap_or(0)).is_some_and(|(w, _)| w == 32) => {
                let v = arg(0)?;
                let float = inst.result_type.unwrap_or(0);
                if op == Op::ConvertUToF {
                    let f = self.unsigned_to_float(at, v, float)?;
                    at.insert(Inst::new(Op::CopyObject, Some(float), result, vec![Operand::Id(f)]));
                } else {
                    let (_, hi) = self.words(at, v)?;
                    let zero = at.module.constant_u32(0);
                    let negative = at.op(Op::SLessThan, self.boolean, &[hi, zero]);
                    let magnitude = self.negated_if(at, negative, v)?;
                    let f = self.unsigned_to_float(at, magnitude, float)?;
                    let minus = at.op(Op::FNegate, float, &[f]);
                    at.insert(Inst::new(Op::Select, Some(float), result, vec![Operand::Id(negative), Operand::Id(minus), Operand::Id(f)]));
                }
            }
            Op::ConvertFToU | Op::ConvertFToS if data_result => {
                let mut x = arg(0)?;
                let float = at.module.type_float(32);
                match self.types.type_of(x).and_then(|t| self.types.float(t)) {
                    Some((32, None)) => {}
                    Some((16, None)) => x = at.op(Op::FConvert, float, &[x]),
                    _ => return Err(named()),
                }
                if op == Op::ConvertFToU {
                    let p = self.float_to_unsigned(at, x, float);
                    at.insert(Inst::new(Op::CopyObject, Some(self.uvec2), result, vec![Operand::Id(p)]));
                } else {
                    let zero = at.module.constant_f32(0.0);
                    let negative = at.op(Op::FOrdLessThan, self.boolean, &[x, zero]);
                    let magnitude = at.emit(Op::ExtInst, float, vec![Operand::Id(self.glsl), Operand::Literal(GLOp::FAbs as u32), Operand::Id(x)]);
                    let p = self.float_to_unsigned(at, magnitude, float);
                    let q = self.negated_if(at, negative, p)?;
                    at.insert(Inst::new(Op::CopyObject, Some(self.uvec2), result, vec![Operand::Id(q)]));
                }
            }
            Op::GroupNonUniformBitwiseAnd | Op::GroupNonUniformBitwiseOr | Op::GroupNonUniformBitwiseXor if data_result => {
                // Each word on its own.
                let mut new = inst.clone();
                new.result_type = Some(self.uvec2);
                new.operands[2] = Operand::Id(self.pair(at, arg(1)?)?);
                at.insert(new);
            }
            Op::GroupNonUniformIAdd if data_result => {
                // Sums of the low words' 16-bit halves and of the high words, all within 32
                // bits for up to 65536 lanes; then the carries go up.
                let p = self.pair(at, arg(1)?)?;
                let (lo, hi) = (at.composite_extract(self.uint, p, 0), at.composite_extract(self.uint, p, 1));
                let (mask, sixteen) = (at.module.constant_u32(0xFFFF), at.module.constant_u32(16));
                let low_half = at.op(Op::BitwiseAnd, self.uint, &[lo, mask]);
                let high_half = at.op(Op::ShiftRightLogical, self.uint, &[lo, sixteen]);
                let (a, b, h) = (self.group_word(at, inst, op, low_half), self.group_word(at, inst, op, high_half), self.group_word(at, inst, op, hi));
                let shifted = at.op(Op::ShiftLeftLogical, self.uint, &[b, sixteen]);
                let sum_lo = at.op(Op::IAdd, self.uint, &[a, shifted]);
                let carried = at.op(Op::ULessThan, self.boolean, &[sum_lo, shifted]);
                let (one, zero) = (at.module.constant_u32(1), at.module.constant_u32(0));
                let carry = at.select(self.uint, carried, one, zero);
                let b_hi = at.op(Op::ShiftRightLogical, self.uint, &[b, sixteen]);
                let sum_hi = at.op(Op::IAdd, self.uint, &[h, b_hi]);
                let sum_hi = at.op(Op::IAdd, self.uint, &[sum_hi, carry]);
                self.join(at, result, sum_lo, sum_hi);
            }
            Op::GroupNonUniformUMin | Op::GroupNonUniformUMax | Op::GroupNonUniformSMin | Op::GroupNonUniformSMax if data_result => {
                // The extreme high word, then the extreme low word among the lanes that hold it:
                // a reduction only (a scan's lanes would each need their own high word).
                let reduce = inst.word_opt(1).is_some_and(|g| g == spirv::GroupOperation::Reduce as u32 || g == spirv::GroupOperation::ClusteredReduce as u32);
                if !reduce {
                    return Err(format!("{} as a scan of a 64-bit value that needs all its bits has no 32-bit equivalent here", op_name(inst.opcode)));
                }
                let p = self.pair(at, arg(1)?)?;
                let (lo, hi) = (at.composite_extract(self.uint, p, 0), at.composite_extract(self.uint, p, 1));
                let h = self.group_word(at, inst, op, hi);
                let minimum = matches!(op, Op::GroupNonUniformUMin | Op::GroupNonUniformSMin);
                let holds = at.op(Op::IEqual, self.boolean, &[hi, h]);
                let neutral = at.module.constant_u32(if minimum { u32::MAX } else { 0 });
                let candidate = at.select(self.uint, holds, lo, neutral);
                let l = self.group_word(at, inst, if minimum { Op::GroupNonUniformUMin } else { Op::GroupNonUniformUMax }, candidate);
                self.join(at, result, l, h);
            }
            _ if data_result && self.types.type_of(result.unwrap_or(0)).and_then(|t| self.types.pointer(t)).is_some() => return self.cast_pointer(at, inst),
            _ => return Err(named()),
        }
        Ok(())
    }

    /// A pointer to 64-bit data defined where its type cannot change (loaded from memory): the
    /// instruction keeps its type under a fresh id, bit-cast to a pointer to `uvec2`.
    fn cast_pointer(&self, at: &mut Builder<'_>, inst: &Inst) -> Why {
        let r = inst.result_id.unwrap_or_default();
        let class = self.types.type_of(r).and_then(|t| self.types.pointer(t)).map(|(c, _)| c);
        if class != Some(StorageClass::PhysicalStorageBuffer as u32) {
            return Err(format!("{} makes a pointer to 64-bit data that needs all its bits outside buffer memory", op_name(inst.opcode)));
        }
        let mut kept = inst.clone();
        let fresh = at.module.alloc_id();
        kept.result_id = Some(fresh);
        at.insert(kept);
        let ty = self.pair_type(at, r);
        at.insert(Inst::new(Op::Bitcast, Some(ty), Some(r), vec![Operand::Id(fresh)]));
        Ok(())
    }

    /// Word `w` as integer type `ty` (32 bits or narrower, truncated), with id `result`.
    fn word_as(&self, at: &mut Builder<'_>, w: Word, ty: Word, result: Option<Word>) {
        let op = match self.types.int(ty).unwrap_or((32, false)) {
            (32, false) => Op::CopyObject,
            (32, true) => Op::Bitcast,
            (_, false) => Op::UConvert,
            _ => Op::SConvert,
        };
        at.insert(Inst::new(op, Some(ty), result, vec![Operand::Id(w)]));
    }

    /// A narrower integer `v` of type `ty` as a 32-bit unsigned word, sign- or zero-extended as
    /// its type says.
    fn word_of(&self, at: &mut Builder<'_>, v: Word, ty: Word) -> std::result::Result<Word, String> {
        match self.types.int(ty) {
            Some((32, false)) => Ok(v),
            Some((32, true)) => Ok(at.bitcast(self.uint, v)),
            Some((_, false)) => Ok(at.op(Op::UConvert, self.uint, &[v])),
            Some((_, true)) => Ok(at.op(Op::SConvert, self.uint, &[v])),
            None => Err(format!("%{v} is extended to 64 bits but is not an integer")),
        }
    }

    fn shift(&self, at: &mut Builder<'_>, op: Op, result: Option<Word>, value: Word, amount: Word) -> Why {
        let (lo, hi) = self.words(at, value)?;
        let c = |at: &mut Builder<'_>, k: u32| at.module.constant_u32(k);
        let (zero, thirty_one) = (c(at, 0), c(at, 31));
        let fill = |at: &mut Builder<'_>| if op == Op::ShiftRightArithmetic { at.op(Op::ShiftRightArithmetic, self.uint, &[hi, thirty_one]) } else { zero };
        if let Some(k) = self.constant(amount).map(|k| k & 63) {
            let (lo, hi) = match (op, k) {
                (_, 0) => (lo, hi),
                (Op::ShiftLeftLogical, 1..=31) => {
                    let (by, back) = (c(at, k), c(at, 32 - k));
                    let low = at.op(op, self.uint, &[lo, by]);
                    let high = at.op(op, self.uint, &[hi, by]);
                    let carried = at.op(Op::ShiftRightLogical, self.uint, &[lo, back]);
                    (low, at.op(Op::BitwiseOr, self.uint, &[high, carried]))
                }
                (Op::ShiftLeftLogical, _) => {
                    let by = c(at, k - 32);
                    (zero, at.op(op, self.uint, &[lo, by]))
                }
                (_, 1..=31) => {
                    let (by, back) = (c(at, k), c(at, 32 - k));
                    let low = at.op(Op::ShiftRightLogical, self.uint, &[lo, by]);
                    let carried = at.op(Op::ShiftLeftLogical, self.uint, &[hi, back]);
                    let low = at.op(Op::BitwiseOr, self.uint, &[low, carried]);
                    (low, at.op(op, self.uint, &[hi, by]))
                }
                _ => {
                    let by = c(at, k - 32);
                    let low = at.op(op, self.uint, &[hi, by]);
                    (low, fill(at))
                }
            };
            self.join(at, result, lo, hi);
            return Ok(());
        }
        // A variable amount: both outcomes, chosen by whether it is below 32 (no shift by 32).
        let s = self.amount(at, amount);
        let (one, sixty_three, thirty_two) = (c(at, 1), c(at, 63), c(at, 32));
        let s = at.op(Op::BitwiseAnd, self.uint, &[s, sixty_three]);
        let t = at.op(Op::BitwiseAnd, self.uint, &[s, thirty_one]);
        let back = at.op(Op::ISub, self.uint, &[thirty_one, t]);
        let small = at.op(Op::ULessThan, self.boolean, &[s, thirty_two]);
        let (small_lo, small_hi, big_lo, big_hi) = if op == Op::ShiftLeftLogical {
            let low = at.op(op, self.uint, &[lo, t]);
            let high = at.op(op, self.uint, &[hi, t]);
            let half = at.op(Op::ShiftRightLogical, self.uint, &[lo, one]);
            let carried = at.op(Op::ShiftRightLogical, self.uint, &[half, back]);
            let high = at.op(Op::BitwiseOr, self.uint, &[high, carried]);
            (low, high, zero, low)
        } else {
            let low = at.op(Op::ShiftRightLogical, self.uint, &[lo, t]);
            let half = at.op(Op::ShiftLeftLogical, self.uint, &[hi, one]);
            let carried = at.op(Op::ShiftLeftLogical, self.uint, &[half, back]);
            let low = at.op(Op::BitwiseOr, self.uint, &[low, carried]);
            let high = at.op(op, self.uint, &[hi, t]);
            (low, high, high, fill(at))
        };
        let lo = at.select(self.uint, small, small_lo, big_lo);
        let hi = at.select(self.uint, small, small_hi, big_hi);
        self.join(at, result, lo, hi);
        Ok(())
    }

    /// Group operation `op` on the word `v`, with the scope, group operation and cluster size of
    /// sub-group instruction `inst`.
    fn group_word(&self, at: &mut Builder<'_>, inst: &Inst, op: Op, v: Word) -> Word {
        let mut operands = inst.operands.clone();
        operands[2] = Operand::Id(v);
        at.emit(op, self.uint, operands)
    }

    /// The words of pairs `a + b` or `a - b` (`op`), the carry or borrow passed up.
    fn carried(&self, at: &mut Builder<'_>, op: Op, a: Word, b: Word) -> (Word, Word) {
        let (alo, ahi, blo, bhi) = (at.composite_extract(self.uint, a, 0), at.composite_extract(self.uint, a, 1), at.composite_extract(self.uint, b, 0), at.composite_extract(self.uint, b, 1));
        let lo = at.op(op, self.uint, &[alo, blo]);
        let carried = if op == Op::IAdd { at.op(Op::ULessThan, self.boolean, &[lo, alo]) } else { at.op(Op::ULessThan, self.boolean, &[alo, blo]) };
        let (one, zero) = (at.module.constant_u32(1), at.module.constant_u32(0));
        let carry = at.select(self.uint, carried, one, zero);
        let hi = at.op(op, self.uint, &[ahi, bhi]);
        (lo, at.op(op, self.uint, &[hi, carry]))
    }

    /// Unsigned quotient and remainder of pairs `a` and `d`, by a call to a helper function
    /// that divides bit by bit (64 steps of shift, compare and subtract).
    fn divide(&mut self, at: &mut Builder<'_>, a: Word, d: Word) -> (Word, Word) {
        const NAME: &str = "matbridge.udivmod64";
        let uvec4 = at.module.type_vector(self.uint, 4);
        let existing = at.module.functions.iter().find(|f| at.module.name_of(f.id()).as_deref() == Some(NAME)).map(|f| f.id());
        let helper = match existing {
            Some(id) => id,
            None => {
                let result = at.module.alloc_id();
                let (uvec2, uint) = (self.uvec2, self.uint);
                let id = at.module.helper_function(NAME, uvec4, &[uvec2, uvec2], |m, _| {
                    let mut body = crate::ir::Block::new(m.alloc_id());
                    body.insts.push(Inst::new(Op::ReturnValue, None, None, vec![Operand::Id(result)]));
                    vec![body]
                });
                let f = at.module.functions.len() - 1;
                let params: Vec<Word> = at.module.functions[f].params.iter().filter_map(|p| p.result_id).collect();
                let mut h = Builder::new(at.module, Cursor { function: f, block: 0, index: 0 });
                let (n_var, r_var, q_var) = (h.function_variable(uvec2), h.function_variable(uvec2), h.function_variable(uvec2));
                let null = h.module.intern(Op::ConstantNull, Some(uvec2), vec![]);
                h.store(n_var, params[0]);
                h.store(r_var, null);
                h.store(q_var, null);
                let (start, steps) = (h.module.constant_u32(0), h.module.constant_u32(64));
                h.counted_loop(start, steps, |h, _| {
                    let (one, thirty_one) = (h.module.constant_u32(1), h.module.constant_u32(31));
                    let shifted_in = |h: &mut Builder<'_>, p: Word, bit: Word| {
                        let (lo, hi) = (h.composite_extract(uint, p, 0), h.composite_extract(uint, p, 1));
                        let top = h.op(Op::ShiftRightLogical, uint, &[lo, thirty_one]);
                        let hi = h.op(Op::ShiftLeftLogical, uint, &[hi, one]);
                        let hi = h.op(Op::BitwiseOr, uint, &[hi, top]);
                        let lo = h.op(Op::ShiftLeftLogical, uint, &[lo, one]);
                        let lo = h.op(Op::BitwiseOr, uint, &[lo, bit]);
                        h.op(Op::CompositeConstruct, uvec2, &[lo, hi])
                    };
                    let (n, r, q) = (h.load(uvec2, n_var), h.load(uvec2, r_var), h.load(uvec2, q_var));
                    let zero = h.module.constant_u32(0);
                    let n_hi = h.composite_extract(uint, n, 1);
                    let next_bit = h.op(Op::ShiftRightLogical, uint, &[n_hi, thirty_one]);
                    let r_hi = h.composite_extract(uint, r, 1);
                    let overflow = h.op(Op::ShiftRightLogical, uint, &[r_hi, thirty_one]);
                    let overflow = h.op(Op::INotEqual, self.boolean, &[overflow, zero]);
                    let r = shifted_in(h, r, next_bit);
                    let n = shifted_in(h, n, zero);
                    // r >= d, with the bit shifted out of r counted.
                    let (r_lo, r_hi, d_lo, d_hi) = (h.composite_extract(uint, r, 0), h.composite_extract(uint, r, 1), h.composite_extract(uint, params[1], 0), h.composite_extract(uint, params[1], 1));
                    let above = h.op(Op::UGreaterThan, self.boolean, &[r_hi, d_hi]);
                    let tied = h.op(Op::IEqual, self.boolean, &[r_hi, d_hi]);
                    let low_ge = h.op(Op::UGreaterThanEqual, self.boolean, &[r_lo, d_lo]);
                    let tied_ge = h.op(Op::LogicalAnd, self.boolean, &[tied, low_ge]);
                    let ge = h.op(Op::LogicalOr, self.boolean, &[above, tied_ge]);
                    let take = h.op(Op::LogicalOr, self.boolean, &[ge, overflow]);
                    let lo = h.op(Op::ISub, uint, &[r_lo, d_lo]);
                    let borrowed = h.op(Op::ULessThan, self.boolean, &[r_lo, d_lo]);
                    let borrow = h.select(uint, borrowed, one, zero);
                    let hi = h.op(Op::ISub, uint, &[r_hi, d_hi]);
                    let hi = h.op(Op::ISub, uint, &[hi, borrow]);
                    let less = h.op(Op::CompositeConstruct, uvec2, &[lo, hi]);
                    let both = h.op(Op::CompositeConstruct, self.bvec2, &[take, take]);
                    let r = h.op(Op::Select, uvec2, &[both, less, r]);
                    let bit = h.select(uint, take, one, zero);
                    let q = shifted_in(h, q, bit);
                    h.store(n_var, n);
                    h.store(r_var, r);
                    h.store(q_var, q);
                });
                let (q, r) = (h.load(uvec2, q_var), h.load(uvec2, r_var));
                h.insert(Inst::new(Op::VectorShuffle, Some(uvec4), Some(result), [q, r].map(Operand::Id).into_iter().chain((0..4).map(Operand::Literal)).collect()));
                id
            }
        };
        let both = at.emit(Op::FunctionCall, uvec4, vec![Operand::Id(helper), Operand::Id(a), Operand::Id(d)]);
        let q = at.emit(Op::VectorShuffle, self.uvec2, vec![Operand::Id(both), Operand::Id(both), Operand::Literal(0), Operand::Literal(1)]);
        let r = at.emit(Op::VectorShuffle, self.uvec2, vec![Operand::Id(both), Operand::Id(both), Operand::Literal(2), Operand::Literal(3)]);
        (q, r)
    }

    /// `-v` where `negative` holds, `v` elsewhere, as a pair.
    fn negated_if(&self, at: &mut Builder<'_>, negative: Word, v: Word) -> std::result::Result<Word, String> {
        let p = self.pair(at, v)?;
        let null = at.module.intern(Op::ConstantNull, Some(self.uvec2), vec![]);
        let (lo, hi) = self.carried(at, Op::ISub, null, p);
        let minus = at.op(Op::CompositeConstruct, self.uvec2, &[lo, hi]);
        let both = at.op(Op::CompositeConstruct, self.bvec2, &[negative, negative]);
        Ok(at.op(Op::Select, self.uvec2, &[both, minus, p]))
    }

    /// An unsigned 64-bit value as the nearest 32-bit float (ties to even). A value below 2^31
    /// converts as a signed word. A larger one is shifted right to 31 significant bits, the
    /// bits shifted out kept as one sticky bit so that the conversion rounds once, and scaled
    /// back exactly. (SwiftShader's conversion of unsigned words from 2^31 up does not round to
    /// nearest, so only signed conversions are used.)
    fn unsigned_to_float(&self, at: &mut Builder<'_>, v: Word, float: Word) -> std::result::Result<Word, String> {
        let p = self.pair(at, v)?;
        let (lo, hi) = (at.composite_extract(self.uint, p, 0), at.composite_extract(self.uint, p, 1));
        let c = |at: &mut Builder<'_>, k: u32| at.module.constant_u32(k);
        let (zero, one, thirty_two, thirty_three, all) = (c(at, 0), c(at, 1), c(at, 32), c(at, 33), c(at, u32::MAX));
        let int = at.module.type_int(32, true);
        let find = |at: &mut Builder<'_>, w: Word| at.emit(Op::ExtInst, self.uint, vec![Operand::Id(self.glsl), Operand::Literal(GLOp::FindUMsb as u32), Operand::Id(w)]);
        // The top bit's position, 31 to 63 here, and the shift that leaves 31 bits: 1 to 33.
        let (msb_hi, msb_lo) = (find(at, hi), find(at, lo));
        let msb_hi = at.op(Op::IAdd, self.uint, &[msb_hi, thirty_two]);
        let upper = at.op(Op::INotEqual, self.boolean, &[hi, zero]);
        let msb = at.select(self.uint, upper, msb_hi, msb_lo);
        let thirty = c(at, 30);
        let k = at.op(Op::ISub, self.uint, &[msb, thirty]);
        let shifted = at.module.alloc_id();
        self.shift(at, Op::ShiftRightLogical, Some(shifted), p, k)?;
        let top = at.composite_extract(self.uint, shifted, 0);
        // Bits shifted out: the low k of the value (k is at most 33).
        let below = at.op(Op::ULessThan, self.boolean, &[k, thirty_two]);
        let rest = at.op(Op::ISub, self.uint, &[thirty_two, k]);
        let low_mask = at.op(Op::ShiftRightLogical, self.uint, &[all, rest]);
        let low_mask = at.select(self.uint, below, low_mask, all);
        let widest = at.op(Op::IEqual, self.boolean, &[k, thirty_three]);
        let high_mask = at.select(self.uint, widest, one, zero);
        let lost_lo = at.op(Op::BitwiseAnd, self.uint, &[lo, low_mask]);
        let lost_hi = at.op(Op::BitwiseAnd, self.uint, &[hi, high_mask]);
        let lost = at.op(Op::BitwiseOr, self.uint, &[lost_lo, lost_hi]);
        let inexact = at.op(Op::INotEqual, self.boolean, &[lost, zero]);
        let sticky = at.select(self.uint, inexact, one, zero);
        let top = at.op(Op::BitwiseOr, self.uint, &[top, sticky]);
        let top = at.bitcast(int, top);
        let scaled = at.op(Op::ConvertSToF, float, &[top]);
        let big = at.emit(Op::ExtInst, float, vec![Operand::Id(self.glsl), Operand::Literal(GLOp::Ldexp as u32), Operand::Id(scaled), Operand::Id(k)]);
        let lo_int = at.bitcast(int, lo);
        let small = at.op(Op::ConvertSToF, float, &[lo_int]);
        let int_max = c(at, i32::MAX as u32);
        let lo_small = at.op(Op::ULessThanEqual, self.boolean, &[lo, int_max]);
        let hi_zero = at.op(Op::IEqual, self.boolean, &[hi, zero]);
        let fits = at.op(Op::LogicalAnd, self.boolean, &[hi_zero, lo_small]);
        Ok(at.select(float, fits, small, big))
    }

    /// A non-negative float below 2^32 as an unsigned word, truncated, by signed conversions.
    fn float_to_word(&self, at: &mut Builder<'_>, x: Word, float: Word) -> Word {
        let int = at.module.type_int(32, true);
        let half = at.module.constant_f32(2f32.powi(31));
        let big = at.op(Op::FOrdGreaterThanEqual, self.boolean, &[x, half]);
        let less = at.op(Op::FSub, float, &[x, half]);
        let x = at.select(float, big, less, x);
        let w = at.op(Op::ConvertFToS, int, &[x]);
        let w = at.bitcast(self.uint, w);
        let (top, zero) = (at.module.constant_u32(1 << 31), at.module.constant_u32(0));
        let add = at.select(self.uint, big, top, zero);
        at.op(Op::IAdd, self.uint, &[w, add])
    }

    /// A non-negative 32-bit float as an unsigned 64-bit pair, truncated: the high word is the
    /// float divided by 2^32, the low word what remains (both exact).
    fn float_to_unsigned(&self, at: &mut Builder<'_>, x: Word, float: Word) -> Word {
        let (down, up) = (at.module.constant_f32(2f32.powi(-32)), at.module.constant_f32(2f32.powi(32)));
        let scaled = at.op(Op::FMul, float, &[x, down]);
        let whole = at.emit(Op::ExtInst, float, vec![Operand::Id(self.glsl), Operand::Literal(GLOp::Trunc as u32), Operand::Id(scaled)]);
        let hi = self.float_to_word(at, whole, float);
        let back = at.op(Op::FMul, float, &[whole, up]);
        let rest = at.op(Op::FSub, float, &[x, back]);
        let lo = self.float_to_word(at, rest, float);
        at.op(Op::CompositeConstruct, self.uvec2, &[lo, hi])
    }
}
