//! `EmulateFloatAtomics`: 32-bit float atomic add, min and max that the target lacks
//! (VK_EXT_shader_atomic_float and _float2: SwiftShader has neither, the H100 has no min or max)
//! become compare-and-swap loops on the 32-bit word that holds the float; so do 16-bit float
//! atomics through buffer references on targets with f16 and 64-bit integers but without those
//! atomics (lavapipe, the H100): the half's address rounded down to 4 bytes is the word's, and
//! its bit 1 says which half of the word (`OpVectorExtractDynamic`/`InsertDynamic` on the word
//! as `f16vec2`). f16 atomics anywhere else are the narrow-type legalization's.
//!
//! `OpAtomicCompareExchange` works on integers, so each rewritten atomic needs a pointer to its
//! float as a `u32`:
//! - **storage buffers**: a second variable at the same descriptor set and binding, whose type is
//!   the buffer's with every f32 a u32 (the same offsets and strides), and the atomic's access
//!   chain rebuilt on it. Vulkan lets variables alias a descriptor this way (llama.cpp declares
//!   its buffers twice, as scalars and as vectors).
//! - **buffer references** (`PhysicalStorageBuffer`): every buffer-reference pointer type to data
//!   holding floats is retyped in place to point to the same data as words, so each pointer
//!   value keeps its type and loads and stores through them convert as below. (No pointer is
//!   bit-cast: SwiftShader's compiler crashes on pointer bit casts.)
//! - **workgroup variables**: the variable is retyped, f32 to u32 throughout; a load of data that
//!   holds floats is bit-cast (member by member for arrays and structs) after it, a store before
//!   it, and the variable's other float atomics work on the words: load, store and exchange
//!   bit-cast, add, min and max loop too. Buffer-reference accesses are rewritten the same way.
//!
//! The loop reads the word, computes `old + value` (min and max as `NMin` and `NMax`: a NaN
//! operand gives the other one) and retries until the compare-and-swap finds the word unchanged;
//! the atomic's result is the float it found. The exchange has the atomic's semantics on success
//! and drops their release part on failure.
//!
//! Preconditions: runs after inlining (no pointer is passed to a call) and after the narrow-type
//! legalization (f16 atomics other than through buffer references are loops already). Refused
//! by name: float atomics on image texels, on elements of matrices, or through pointers that are
//! function parameters or chosen by a phi or select; pointers into a retyped workgroup variable
//! used by anything but access chains, loads, stores, atomics and cooperative-matrix loads and
//! stores; loads and stores of arrays whose length is a specialization constant or of more than
//! 4,096 floats at once. Applies where the
//! target lacks f32 atomic add or min and max, or has f16 and 64-bit integers but lacks f16
//! atomics.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Inst, Module, Operand, Origin};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::legalize_narrow_types::unequal_semantics;
use crate::passes::lower_kernel_pointers::is_atomic;
use crate::profile::DeviceCaps;
use spirv::{Decoration, GlslStd450Op as GLOp, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct EmulateFloatAtomics;

/// Most floats one load or store of a retyped workgroup variable may convert.
const MAX_CONVERTED: usize = 4096;

impl Pass for EmulateFloatAtomics {
    fn name(&self) -> &'static str {
        "emulate-float-atomics"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        !(target.atomic_float32_add && target.atomic_float32_min_max)
            || (target.shader_float16 && target.shader_int64 && !(target.atomic_float16 && target.atomic_float16_add && target.atomic_float16_min_max))
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let target = cx.target;
        let types = Types::new(module);
        let (plans, retyped, chain_defs, references) = plan(module, &types, target)?;
        let halves = half_atomics(module, &types, target);
        if plans.is_empty() && retyped.is_empty() && !references && halves.is_empty() {
            return Ok(outcome);
        }
        let unsupported = |m: &Module, inst: &Inst, missing: String| Error::Unsupported { site: m.site(inst), target: target.name.clone(), missing };
        let u32_ty = module.type_int(32, false);
        let f32_ty = module.type_float(32);
        let mut words = Words { types, memo: HashMap::new(), fresh: Vec::new(), u32_ty };
        let mut aliases: HashMap<Word, Word> = HashMap::new();
        for plan in plans.values() {
            if let std::collections::hash_map::Entry::Vacant(e) = aliases.entry(plan.variable) {
                e.insert(words.alias(module, plan.variable));
            }
        }
        for var in &retyped {
            words.retype_variable(module, *var)?;
        }
        let references: HashSet<Word> = if references { words.retype_references(module) } else { HashSet::new() };

        let glsl = module.ext_inst_import("GLSL.std.450");
        let mut pending: Vec<Pending> = Vec::new();
        let mut derived: HashSet<Word> = retyped.clone();
        for fi in 0..module.functions.len() {
            for bi in 0..module.functions[fi].blocks.len() {
                let insts = std::mem::take(&mut module.functions[fi].blocks[bi].insts);
                let mut out = Vec::with_capacity(insts.len());
                for mut inst in insts {
                    let origin = inst.origin;
                    let op = inst.op();
                    let pointer = inst.operands.first().and_then(Operand::id);
                    let retyped_pointer = pointer.is_some_and(|p| derived.contains(&p));
                    let reference = pointer.and_then(|p| words.types.type_of(p)).is_some_and(|t| references.contains(&t));
                    let on_derived = retyped_pointer || reference;
                    match op {
                        Some(op) if is_atomic(op) && pointer.is_some_and(|p| halves.contains(&p)) => {
                            let p = pointer.unwrap_or(0);
                            half_atomic(module, &mut out, &mut pending, &inst, p)?;
                            outcome.count(op as u32);
                        }
                        Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain | Op::CopyObject) if retyped_pointer => {
                            let Some(ty) = inst.result_type else { continue };
                            inst.result_type = Some(words.pointer(module, ty)?);
                            derived.extend(inst.result_id);
                            out.push(inst);
                        }
                        Some(Op::Load) if on_derived => {
                            let (Some(ty), Some(result)) = (inst.result_type, inst.result_id) else { continue };
                            let held = words.map(module, ty);
                            if held == ty {
                                out.push(inst);
                                continue;
                            }
                            let loaded = module.alloc_id();
                            inst.result_type = Some(held);
                            inst.result_id = Some(loaded);
                            out.push(inst);
                            let mut budget = MAX_CONVERTED;
                            words
                                .convert(module, &mut Emitted { out: &mut out, origin }, (loaded, ty), false, Some(result), &mut budget)
                                .map_err(|why| unsupported(module, &Inst::new(Op::Load, None, None, vec![]).from_origin(origin), why))?;
                        }
                        Some(Op::Store) if on_derived => {
                            let value = inst.id(1)?;
                            let Some(ty) = words.types.type_of(value) else { continue };
                            if words.map(module, ty) != ty {
                                let mut budget = MAX_CONVERTED;
                                let site = inst.clone();
                                let v = words.convert(module, &mut Emitted { out: &mut out, origin }, (value, ty), true, None, &mut budget).map_err(|why| unsupported(module, &site, why))?;
                                inst.operands[1] = Operand::Id(v);
                            }
                            out.push(inst);
                        }
                        Some(op) if is_atomic(op) && on_derived => {
                            let element = words.types.type_of(pointer.unwrap_or(0)).and_then(|t| pointer_type(&words.types, t)).map(|(_, e)| e);
                            if element.is_none_or(|e| words.types.float(e) != Some((32, None))) {
                                out.push(inst);
                                continue;
                            }
                            let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
                            match op {
                                Op::AtomicFAddEXT | Op::AtomicFMinEXT | Op::AtomicFMaxEXT => {
                                    let (Some(result), Some(&value)) = (inst.result_id, ids.get(3)) else { continue };
                                    pending.push(Pending::new(module, &mut out, &inst, ids[0], value, result, (u32_ty, f32_ty)));
                                }
                                Op::AtomicLoad | Op::AtomicExchange => {
                                    let (Some(result), Some(ty)) = (inst.result_id, inst.result_type) else { continue };
                                    if op == Op::AtomicExchange {
                                        let v = bitcast(module, &mut out, u32_ty, inst.id(3)?, origin);
                                        inst.operands[3] = Operand::Id(v);
                                    }
                                    let word = module.alloc_id();
                                    inst.result_type = Some(u32_ty);
                                    inst.result_id = Some(word);
                                    out.push(inst);
                                    out.push(Inst::new(Op::Bitcast, Some(ty), Some(result), vec![Operand::Id(word)]).from_origin(origin));
                                }
                                Op::AtomicStore => {
                                    let v = bitcast(module, &mut out, u32_ty, inst.id(3)?, origin);
                                    inst.operands[3] = Operand::Id(v);
                                    out.push(inst);
                                }
                                _ => return Err(unsupported(module, &inst, format!("{} on a float", inst.name()))),
                            }
                            outcome.count(op as u32);
                        }
                        Some(Op::CooperativeMatrixLoadKHR | Op::CooperativeMatrixStoreKHR) if on_derived => out.push(inst),
                        _ => {
                            if let Some(p) = inst.used_ids().find(|id| derived.contains(id)) {
                                return Err(unsupported(module, &inst, format!("a pointer into a workgroup variable that float atomics retype (%{p}) used by {}", inst.name())));
                            }
                            if let Some(result) = inst.result_id {
                                if let Some(plan) = plans.get(&result) {
                                    let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
                                    let Some(&value) = ids.get(3) else { continue };
                                    let mut word_ptr = aliases[&plan.variable];
                                    for step in &plan.steps {
                                        let d = &chain_defs[step];
                                        let ty = words.pointer(module, d.result_type.unwrap_or(0))?;
                                        let id = module.alloc_id();
                                        let mut operands = d.operands.clone();
                                        operands[0] = Operand::Id(word_ptr);
                                        out.push(Inst::new(d.op().unwrap_or(Op::AccessChain), Some(ty), Some(id), operands).from_origin(origin));
                                        word_ptr = id;
                                    }
                                    let element = words.types.type_of(ids[0]).and_then(|t| pointer_type(&words.types, t)).map(|(_, e)| e);
                                    if element.map(|e| words.map(module, e)) != Some(u32_ty) {
                                        return Err(unsupported(module, &inst, "a float atomic on an element of a matrix".into()));
                                    }
                                    pending.push(Pending::new(module, &mut out, &inst, word_ptr, value, result, (u32_ty, f32_ty)));
                                    outcome.count(inst.opcode);
                                    continue;
                                }
                            }
                            out.push(inst);
                        }
                    }
                }
                module.functions[fi].blocks[bi].insts = out;
            }
        }
        words.decorate_fresh(module);
        for p in pending {
            p.build(module, &words.types, glsl, (u32_ty, f32_ty));
        }
        if !aliases.is_empty() {
            module.rebuild_entry_interfaces();
        }
        outcome.changed = true;
        outcome.notes.extend(aliases.iter().map(|(v, a)| format!("%{v}: float atomics through %{a}, its words")));
        outcome.notes.extend(retyped.iter().map(|v| format!("%{v}: workgroup variable held as words")));
        Ok(outcome)
    }
}

/// How each storage-buffer atomic to emulate (by result id) reaches its word, the workgroup
/// variables to retype, the access chains the plans rebuild, and whether buffer references
/// are retyped.
type Plans = (HashMap<Word, Plan>, HashSet<Word>, HashMap<Word, Inst>, bool);

fn plan(module: &Module, types: &Types, target: &DeviceCaps) -> Result<Plans> {
    let lacks = |op: Op| match op {
        Op::AtomicFAddEXT => !target.atomic_float32_add,
        Op::AtomicFMinEXT | Op::AtomicFMaxEXT => !target.atomic_float32_min_max,
        _ => false,
    };
    let defs: HashMap<Word, &Inst> = module.functions.iter().flat_map(|f| f.insts()).filter_map(|i| Some((i.result_id?, i))).collect();
    let variables: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::Variable)).filter_map(|g| g.result_id).collect();
    let unsupported = |inst: &Inst, missing: String| Error::Unsupported { site: module.site(inst), target: target.name.clone(), missing };
    let mut plans: HashMap<Word, Plan> = HashMap::new();
    let mut retyped: HashSet<Word> = HashSet::new();
    let mut references = false;
    for inst in module.functions.iter().flat_map(|f| f.insts()) {
        if !inst.op().is_some_and(|op| FLOAT_ATOMICS.contains(&op) && lacks(op)) {
            continue;
        }
        let (Some(result), Some(ty)) = (inst.result_id, inst.result_type) else { continue };
        if types.float(ty) != Some((32, None)) {
            continue;
        }
        let pointer = inst.id(0)?;
        let Some((class, _)) = types.type_of(pointer).and_then(|t| pointer_type(types, t)) else {
            return Err(Error::Invalid { site: module.site(inst), message: "an atomic whose pointer operand is not a pointer".into() });
        };
        match class {
            StorageClass::PhysicalStorageBuffer => references = true,
            StorageClass::StorageBuffer | StorageClass::Uniform | StorageClass::Workgroup => {
                let (root, steps) = chain_to_root(&defs, pointer).map_err(|why| unsupported(inst, format!("a float atomic through {why}")))?;
                if !variables.contains(&root) {
                    return Err(unsupported(inst, "a float atomic through a pointer that is a function parameter".into()));
                }
                if class == StorageClass::Workgroup {
                    retyped.insert(root);
                } else {
                    plans.insert(result, Plan { variable: root, steps });
                }
            }
            other => return Err(unsupported(inst, format!("f32 {} on {other:?} memory", inst.name()))),
        }
    }
    let chain_defs = plans.values().flat_map(|p| &p.steps).filter_map(|s| defs.get(s).map(|d| (*s, (*d).clone()))).collect();
    Ok((plans, retyped, chain_defs, references))
}

const FLOAT_ATOMICS: [Op; 3] = [Op::AtomicFAddEXT, Op::AtomicFMinEXT, Op::AtomicFMaxEXT];

/// How a storage-buffer atomic reaches its word: access chains `steps` (outermost first)
/// rebuilt on the alias of `variable`.
struct Plan {
    variable: Word,
    steps: Vec<Word>,
}

/// (storage class, pointee) of pointer type `ty`.
fn pointer_type(types: &Types, ty: Word) -> Option<(StorageClass, Word)> {
    let (class, pointee) = types.pointer(ty)?;
    Some((StorageClass::from_u32(class)?, pointee))
}

/// The variable (or other base) that `pointer` is derived from through access chains and
/// copies, and the access chains from it to `pointer`, outermost first; or what made a step
/// that is neither.
fn chain_to_root(defs: &HashMap<Word, &Inst>, pointer: Word) -> std::result::Result<(Word, Vec<Word>), String> {
    let mut steps = Vec::new();
    let mut p = pointer;
    for _ in 0..defs.len() + 1 {
        let Some(d) = defs.get(&p) else {
            steps.reverse();
            return Ok((p, steps));
        };
        match d.op() {
            Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => steps.push(p),
            Some(Op::CopyObject) => {}
            Some(Op::FunctionParameter) => return Err("a pointer that is a function parameter".into()),
            _ => return Err(format!("a pointer made by {}", d.name())),
        }
        p = d.id(0).map_err(|e| e.to_string())?;
    }
    Err("a cyclic access chain".into())
}

fn bitcast(m: &mut Module, out: &mut Vec<Inst>, ty: Word, value: Word, origin: Option<Origin>) -> Word {
    let id = m.alloc_id();
    out.push(Inst::new(Op::Bitcast, Some(ty), Some(id), vec![Operand::Id(value)]).from_origin(origin));
    id
}

/// Where conversions go.
struct Emitted<'a> {
    out: &'a mut Vec<Inst>,
    origin: Option<Origin>,
}

impl Emitted<'_> {
    fn emit(&mut self, m: &mut Module, op: Op, ty: Word, into: Option<Word>, operands: Vec<Operand>) -> Word {
        let id = into.unwrap_or_else(|| m.alloc_id());
        self.out.push(Inst::new(op, Some(ty), Some(id), operands).from_origin(self.origin));
        id
    }
}

/// Types with every f32 a u32: which type holds each original as words.
struct Words {
    types: Types,
    /// Original type -> its word form (itself where it holds no f32).
    memo: HashMap<Word, Word>,
    /// (original, new) aggregate types whose decorations the new one copies.
    fresh: Vec<(Word, Word)>,
    u32_ty: Word,
}

impl Words {
    /// The word form of `ty`. Matrices keep their floats (an atomic on a matrix element is
    /// refused); pointers keep their pointees.
    fn map(&mut self, m: &mut Module, ty: Word) -> Word {
        if let Some(t) = self.memo.get(&ty) {
            return *t;
        }
        let Some(d) = self.types.defs.get(&ty).cloned() else { return ty };
        let out = match d.op() {
            Some(Op::TypeFloat) if self.types.float(ty) == Some((32, None)) => self.u32_ty,
            Some(Op::TypeVector) => match self.types.vector(ty) {
                Some((c, n)) if self.map(m, c) != c => m.type_vector(self.u32_ty, n),
                _ => ty,
            },
            Some(Op::TypeArray | Op::TypeRuntimeArray | Op::TypeStruct) => {
                // An array's length operand is a constant, not a type.
                let typed = if d.is(Op::TypeStruct) { d.operands.len() } else { 1 };
                let mut operands = d.operands.clone();
                let mut changed = false;
                for o in operands.iter_mut().take(typed) {
                    if let Operand::Id(t) = o {
                        let n = self.map(m, *t);
                        changed |= n != *t;
                        *t = n;
                    }
                }
                if changed {
                    let id = m.alloc_id();
                    m.add_global(Inst::new(d.op().unwrap_or(Op::TypeStruct), None, Some(id), operands));
                    self.fresh.push((ty, id));
                    id
                } else {
                    ty
                }
            }
            _ => ty,
        };
        self.memo.insert(ty, out);
        out
    }

    /// Pointer type `ty` with its pointee in word form.
    fn pointer(&mut self, m: &mut Module, ty: Word) -> Result<Word> {
        let Some((class, pointee)) = pointer_type(&self.types, ty) else {
            return Err(Error::Malformed { offset: 0, message: format!("%{ty} is not a pointer type") });
        };
        let held = self.map(m, pointee);
        Ok(m.type_pointer(class, held))
    }

    /// A second variable at `variable`'s descriptor set and binding whose type holds words.
    fn alias(&mut self, m: &mut Module, variable: Word) -> Word {
        let Some(v) = m.globals().iter().find(|g| g.result_id == Some(variable)).cloned() else { return variable };
        let (Some(class), Ok(ptr)) = (v.word_opt(0).and_then(StorageClass::from_u32), self.pointer(m, v.result_type.unwrap_or(0))) else { return variable };
        let alias = m.add_global_variable(ptr, class, None);
        let copied: Vec<Inst> = m
            .decorations_of(variable)
            .filter(|a| a.word_opt(1) != Some(Decoration::Restrict as u32))
            .map(|a| {
                let mut a = a.clone();
                a.operands[0] = Operand::Id(alias);
                a
            })
            .collect();
        // The two variables alias: neither may promise otherwise.
        m.annotations.retain(|a| !(a.operands.first() == Some(&Operand::Id(variable)) && a.word_opt(1) == Some(Decoration::Restrict as u32)));
        m.annotations.extend(copied);
        if let Some(name) = m.name_of(variable) {
            m.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(alias), Operand::string(&format!("{name}_words"))]));
        }
        alias
    }

    /// Retypes workgroup variable `variable` to hold words.
    fn retype_variable(&mut self, m: &mut Module, variable: Word) -> Result<()> {
        let Some(at) = m.globals().iter().position(|g| g.result_id == Some(variable)) else { return Ok(()) };
        let v = m.globals()[at].clone();
        let ptr = self.pointer(m, v.result_type.unwrap_or(0))?;
        let initializer = match v.operands.get(1).and_then(Operand::id) {
            None => None,
            Some(init) if m.globals().iter().any(|g| g.result_id == Some(init) && g.is(Op::ConstantNull)) => {
                let held = pointer_type(&self.types, v.result_type.unwrap_or(0)).map(|(_, p)| self.map(m, p)).unwrap_or(0);
                Some(m.constant_null(held))
            }
            // Vulkan allows workgroup variables no other initializer.
            Some(_) => return Err(Error::Invalid { site: m.site(&v), message: "a workgroup variable initialized other than to null".into() }),
        };
        let g = m.globals_mut().iter_mut().find(|g| g.result_id == Some(variable));
        if let Some(g) = g {
            g.result_type = Some(ptr);
            if let Some(init) = initializer {
                g.operands[1] = Operand::Id(init);
            }
        }
        Ok(())
    }

    /// Retypes every buffer-reference pointer type whose pointee holds floats, in place, to
    /// point to the pointee's word form; returns those pointer types.
    fn retype_references(&mut self, m: &mut Module) -> HashSet<Word> {
        let pointers: Vec<(Word, Word)> = self
            .types
            .defs
            .iter()
            .filter_map(|(id, d)| (d.is(Op::TypePointer) && d.word_opt(0) == Some(StorageClass::PhysicalStorageBuffer as u32)).then(|| Some((*id, d.id(1).ok()?))).flatten())
            .collect();
        let mut retyped = HashSet::new();
        for (ptr, pointee) in pointers {
            let held = self.map(m, pointee);
            if held == pointee {
                continue;
            }
            if let Some(g) = m.globals_mut().iter_mut().find(|g| g.result_id == Some(ptr)) {
                g.operands[1] = Operand::Id(held);
                retyped.insert(ptr);
            }
        }
        retyped
    }

    /// Converts `value` of original type `ty` to its word form (`to_words`) or from it back to
    /// `ty`: bit casts of scalars and vectors, member by member for arrays and structs.
    fn convert(&mut self, m: &mut Module, e: &mut Emitted<'_>, (value, ty): (Word, Word), to_words: bool, into: Option<Word>, budget: &mut usize) -> std::result::Result<Word, String> {
        let held = self.map(m, ty);
        let (from, to) = if to_words { (ty, held) } else { (held, ty) };
        if from == to {
            return Ok(match into {
                Some(id) => e.emit(m, Op::CopyObject, to, Some(id), vec![Operand::Id(value)]),
                None => value,
            });
        }
        let Some(d) = self.types.defs.get(&ty).cloned() else { return Err(format!("a value of unknown type %{ty}")) };
        let members: Vec<Word> = match d.op() {
            Some(Op::TypeFloat | Op::TypeVector) => {
                *budget = budget.checked_sub(self.types.vector(ty).map_or(1, |(_, n)| n as usize)).ok_or("a load or store of more than 4,096 floats at once")?;
                return Ok(e.emit(m, Op::Bitcast, to, into, vec![Operand::Id(value)]));
            }
            Some(Op::TypeArray) => {
                let element = d.id(0).map_err(|x| x.to_string())?;
                let n = d.id(1).ok().and_then(|l| self.types.const_u32(l)).ok_or("an array whose length is a specialization constant")?;
                if n as usize > *budget {
                    return Err("a load or store of more than 4,096 floats at once".into());
                }
                vec![element; n as usize]
            }
            Some(Op::TypeStruct) => d.operands.iter().filter_map(Operand::id).collect(),
            _ => return Err(format!("a {} holding floats", d.name())),
        };
        let mut parts = Vec::with_capacity(members.len());
        for (i, member) in members.into_iter().enumerate() {
            let member_from = if to_words { member } else { self.map(m, member) };
            let part = e.emit(m, Op::CompositeExtract, member_from, None, vec![Operand::Id(value), Operand::Literal(i as u32)]);
            parts.push(self.convert(m, e, (part, member), to_words, None, budget)?);
        }
        Ok(e.emit(m, Op::CompositeConstruct, to, into, parts.into_iter().map(Operand::Id).collect()))
    }

    /// Gives the new aggregate types their originals' decorations.
    fn decorate_fresh(&mut self, m: &mut Module) {
        let mut added = Vec::new();
        for (old, new) in &self.fresh {
            for a in m.annotations.iter().filter(|a| matches!(a.op(), Some(Op::Decorate | Op::MemberDecorate)) && a.operands.first() == Some(&Operand::Id(*old))) {
                let mut a = a.clone();
                a.operands[0] = Operand::Id(*new);
                added.push(a);
            }
        }
        m.annotations.extend(added);
        m.interner.clear();
    }
}

/// A compare-and-swap loop to build at placeholder `old_word`.
struct Pending {
    op: Op,
    old_word: Word,
    word_ptr: Word,
    scope: Word,
    semantics: Word,
    value: Word,
    /// For an f16 in half of the word: the word as two halves' type, the half type and which
    /// half (0 or 1, a `u32`).
    half: Option<(Word, Word, Word)>,
    origin: Option<Origin>,
}

impl Pending {
    /// Emits the placeholder for the word the loop finds and the atomic's result from it.
    fn new(m: &mut Module, out: &mut Vec<Inst>, atomic: &Inst, word_ptr: Word, value: Word, result: Word, (u32_ty, f32_ty): (Word, Word)) -> Pending {
        let ids: Vec<Word> = atomic.operands.iter().filter_map(Operand::id).collect();
        let old_word = m.alloc_id();
        out.push(Inst::new(Op::Undef, Some(u32_ty), Some(old_word), vec![]).from_origin(atomic.origin));
        out.push(Inst::new(Op::Bitcast, Some(f32_ty), Some(result), vec![Operand::Id(old_word)]).from_origin(atomic.origin));
        Pending {
            op: atomic.op().unwrap_or(Op::AtomicFAddEXT),
            old_word,
            word_ptr,
            scope: ids.get(1).copied().unwrap_or(0),
            semantics: ids.get(2).copied().unwrap_or(0),
            value,
            half: None,
            origin: atomic.origin,
        }
    }

    fn build(self, m: &mut Module, types: &Types, glsl: Word, (_, f32_ty): (Word, Word)) {
        let Some(cursor) = m.cursor_of(self.old_word) else { return };
        m.functions[cursor.function].blocks[cursor.block].insts.remove(cursor.index);
        let unequal = unequal_semantics(m, types, self.semantics);
        let mut b = Builder::new(m, cursor).with_origin(self.origin);
        let u = b.module.type_int(32, false);
        b.compare_exchange_loop(self.old_word, self.word_ptr, self.scope, (self.semantics, unequal), |b, word| {
            let (old, ty, pair) = match self.half {
                Some((pair_ty, half_ty, index)) => {
                    let pair = b.bitcast(pair_ty, word);
                    (b.op(Op::VectorExtractDynamic, half_ty, &[pair, index]), half_ty, Some((pair_ty, pair, index)))
                }
                None => (b.bitcast(f32_ty, word), f32_ty, None),
            };
            let new = match self.op {
                Op::AtomicFAddEXT => b.op(Op::FAdd, ty, &[old, self.value]),
                Op::AtomicFMinEXT | Op::AtomicFMaxEXT => {
                    let f = if self.op == Op::AtomicFMinEXT { GLOp::NMin } else { GLOp::NMax };
                    b.emit(Op::ExtInst, ty, vec![Operand::Id(glsl), Operand::Literal(f as u32), Operand::Id(old), Operand::Id(self.value)])
                }
                // Exchange and store.
                _ => self.value,
            };
            match pair {
                Some((pair_ty, pair, index)) => {
                    let pair = b.op(Op::VectorInsertDynamic, pair_ty, &[pair, new, index]);
                    b.bitcast(u, pair)
                }
                None => b.bitcast(u, new),
            }
        });
    }
}

/// Buffer-reference pointers that f16 atomics the target lacks go through (where it has 16-bit
/// floats and 64-bit integers; elsewhere the narrow-type legalization builds them).
fn half_atomics(module: &Module, types: &Types, target: &DeviceCaps) -> HashSet<Word> {
    if !(target.shader_float16 && target.shader_int64) {
        return HashSet::new();
    }
    let lacks = |op: Op| match op {
        Op::AtomicFAddEXT => !target.atomic_float16_add,
        Op::AtomicFMinEXT | Op::AtomicFMaxEXT => !target.atomic_float16_min_max,
        Op::AtomicLoad | Op::AtomicStore | Op::AtomicExchange => !target.atomic_float16,
        _ => false,
    };
    module
        .functions
        .iter()
        .flat_map(|f| f.insts())
        .filter(|i| i.op().is_some_and(lacks))
        .filter_map(|i| i.operands.first().and_then(Operand::id))
        .filter(|p| types.type_of(*p).and_then(|t| pointer_type(types, t)).is_some_and(|(class, e)| class == StorageClass::PhysicalStorageBuffer && types.float(e) == Some((16, None))))
        .collect()
}

/// Rewrites f16 atomic `inst` through buffer reference `p` as an atomic on the 32-bit word
/// holding the half: the address rounded down to 4 bytes, the half selected by its bit 1. A
/// load reads the word; the others become compare-and-swap loops ([`Pending`]).
fn half_atomic(m: &mut Module, out: &mut Vec<Inst>, pending: &mut Vec<Pending>, inst: &Inst, p: Word) -> Result<()> {
    let origin = inst.origin;
    let op = inst.op().unwrap_or(Op::Nop);
    let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
    let (Some(&scope), Some(&semantics)) = (ids.get(1), ids.get(2)) else {
        return Err(Error::Invalid { site: m.site(inst), message: "an atomic without scope and semantics".into() });
    };
    let (u32_ty, u64_ty) = (m.type_int(32, false), m.type_int(64, false));
    let half_ty = m.type_float(16);
    let pair_ty = m.type_vector(half_ty, 2);
    let word_ptr_ty = m.type_pointer(StorageClass::PhysicalStorageBuffer, u32_ty);
    let mut emit = |m: &mut Module, op: Op, ty: Word, operands: &[Word]| {
        let id = m.alloc_id();
        out.push(Inst::new(op, Some(ty), Some(id), operands.iter().map(|w| Operand::Id(*w)).collect()).from_origin(origin));
        id
    };
    let address = emit(m, Op::ConvertPtrToU, u64_ty, &[p]);
    let (align, two) = (m.constant_int(u64_ty, 64, false, !3), m.constant_int(u64_ty, 64, false, 2));
    let word_address = emit(m, Op::BitwiseAnd, u64_ty, &[address, align]);
    let word_ptr = emit(m, Op::ConvertUToPtr, word_ptr_ty, &[word_address]);
    let second = emit(m, Op::BitwiseAnd, u64_ty, &[address, two]);
    let second = emit(m, Op::UConvert, u32_ty, &[second]);
    let one = m.constant_u32(1);
    let index = emit(m, Op::ShiftRightLogical, u32_ty, &[second, one]);
    let old_word = match op {
        Op::AtomicLoad => emit(m, Op::AtomicLoad, u32_ty, &[word_ptr, scope, semantics]),
        Op::AtomicStore | Op::AtomicExchange | Op::AtomicFAddEXT | Op::AtomicFMinEXT | Op::AtomicFMaxEXT => {
            let Some(&value) = ids.get(3) else {
                return Err(Error::Invalid { site: m.site(inst), message: format!("{} without a value", inst.name()) });
            };
            let old_word = m.alloc_id();
            out.push(Inst::new(Op::Undef, Some(u32_ty), Some(old_word), vec![]).from_origin(origin));
            pending.push(Pending { op, old_word, word_ptr, scope, semantics, value, half: Some((pair_ty, half_ty, index)), origin });
            old_word
        }
        _ => return Err(Error::Invalid { site: m.site(inst), message: format!("{} on a 16-bit float", inst.name()) }),
    };
    if let (Some(result), Some(ty)) = (inst.result_id, inst.result_type) {
        let pair = m.alloc_id();
        out.push(Inst::new(Op::Bitcast, Some(pair_ty), Some(pair), vec![Operand::Id(old_word)]).from_origin(origin));
        out.push(Inst::new(Op::VectorExtractDynamic, Some(ty), Some(result), vec![Operand::Id(pair), Operand::Id(index)]).from_origin(origin));
    }
    Ok(())
}
