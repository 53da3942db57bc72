//! `LowerWorkgroupBlocks`: workgroup memory laid out explicitly (SPV_KHR_workgroup_memory_explicit_layout,
//! GL_EXT_shared_memory_block) becomes one array of 32-bit words, for devices without
//! `workgroupMemoryExplicitLayout`.
//!
//! The module's workgroup variables are all `Block`s and share one storage, each starting at its
//! offset 0 (llama.cpp writes a tile as `uvec4` through one and loads it as a matrix of
//! `float16_t` through another). They become `uint words[N]`, `N` words covering the largest
//! block. An access chain into a block becomes a byte address (member `Offset`s, `ArrayStride`s,
//! component sizes); through it:
//! - a load or store of a 32-bit scalar or vector reads or writes whole words, bit-cast;
//! - a load of an 8- or 16-bit one takes its bits out of the word that holds them; a store puts
//!   them in with `OpAtomicAnd` and `OpAtomicOr` on that word (invocations writing neighbouring
//!   halves or bytes of one word must not lose each other's writes);
//! - a cooperative-matrix load or store takes a pointer to the word at the address, its stride
//!   counted in words: the address and the stride in bytes must be multiples of four, which the
//!   pass proves from the constants and multiplications that compute them, and the matrix is read
//!   through `uint` words as the emulation and drivers read one through any wider type.
//!
//! Preconditions: structured control flow; every workgroup variable a `Block`; access chains
//! into them through structs, arrays with strides and vectors to scalars or vectors of 8-, 16-
//! or 32-bit numbers, used by loads, stores, further access chains and cooperative-matrix loads
//! and stores only; sizes that are constant expressions (specialization constants at the
//! pipeline's values). Anything else is an error naming the instruction. Applies where the
//! target lacks `workgroupMemoryExplicitLayout`; elsewhere the module keeps its blocks.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use crate::specialize::{default_value, workgroup_memory_of};
use spirv::{Capability, Decoration, MemorySemantics, Op, Scope, StorageClass, Word};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

pub struct LowerWorkgroupBlocks;

impl Pass for LowerWorkgroupBlocks {
    fn name(&self) -> &'static str {
        "lower-workgroup-blocks"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        !target.workgroup_explicit_layout
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::WorkgroupMemoryExplicitLayoutKHR) {
            return Ok(outcome);
        }
        let vars: Vec<Inst> = module.globals().iter().filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::Workgroup as u32)).cloned().collect();
        let is_block = |m: &Module, v: &Inst| v.result_id.and_then(|id| m.variable_pointee(id)).is_some_and(|t| m.decoration(t, Decoration::Block).is_some());
        if !vars.iter().any(|v| is_block(module, v)) {
            return Ok(outcome);
        }
        let mut blocks: HashMap<Word, Word> = HashMap::new();
        let mut bytes = 0u64;
        for v in &vars {
            let (var, pointee) = (v.result()?, module.variable_pointee(v.result()?).unwrap_or_default());
            let size = workgroup_memory_of(module, pointee).filter(|_| module.decoration(pointee, Decoration::Block).is_some());
            let Some(size) = size else {
                return Err(unsupported(module, v, cx.target, "a workgroup variable that is not a block of constant size beside explicitly laid out ones"));
            };
            bytes = bytes.max(size);
            blocks.insert(var, pointee);
        }
        let words_len = u32::try_from(bytes.div_ceil(4).max(1)).map_err(|_| Error::Invalid { site: Box::default(), message: format!("{bytes} bytes of workgroup blocks") })?;
        let uint = module.type_int(32, false);
        let len = module.constant_u32(words_len);
        let array = module.type_array(uint, len);
        let ptr = module.type_pointer(StorageClass::Workgroup, array);
        let words = module.add_global_variable(ptr, StorageClass::Workgroup, None);
        let word_ptr = module.type_pointer(StorageClass::Workgroup, uint);
        let mut lowering = Lowering { words, uint, word_ptr, pointers: HashMap::new(), types: Types::new(module), multiples: Multiples::new(module), target: cx.target };
        for f in 0..module.functions.len() {
            lowering.function(module, f, &blocks, &mut outcome)?;
        }
        // The access chains into the blocks are gone (their names and decorations with them).
        let chains: HashSet<Word> = lowering.pointers.keys().copied().collect();
        module.forget(&chains);
        // The blocks are gone, with the types only they used (the requirement step then drops
        // the explicit-layout capabilities, which workgroup pointers to blocks need).
        let gone: HashSet<Word> = blocks.keys().copied().collect();
        module.globals_mut().retain(|g| !g.result_id.is_some_and(|id| gone.contains(&id)));
        module.forget(&gone);
        // With them the types only they used: pointers to workgroup memory and the blocks.
        let block_types: HashSet<Word> = blocks.values().copied().collect();
        module.remove_unused_globals(|g| (g.is(Op::TypePointer) && g.word_opt(0) == Some(StorageClass::Workgroup as u32)) || g.result_id.is_some_and(|id| block_types.contains(&id)));
        module.rebuild_entry_interfaces();
        outcome.changed = true;
        outcome.notes.push(format!("{} workgroup block(s) lowered to {words_len} words", blocks.len()));
        Ok(outcome)
    }
}

fn unsupported(module: &Module, inst: &Inst, target: &DeviceCaps, what: &str) -> Error {
    Error::Unsupported { site: module.site(inst), target: target.name.clone(), missing: format!("{what} (lowering workgroup blocks, the device has no workgroupMemoryExplicitLayout)") }
}

/// A pointer into the lowered blocks: the byte address it stands for, the type it points to,
/// and the power of two the address is known to be a multiple of.
#[derive(Clone, Copy)]
struct Lowered {
    address: Word,
    ty: Word,
    align: u32,
}

struct Lowering<'t> {
    words: Word,
    uint: Word,
    word_ptr: Word,
    pointers: HashMap<Word, Lowered>,
    /// The module's types before the rewrite (the blocks' and their members', the indices').
    types: Types,
    multiples: Multiples,
    target: &'t DeviceCaps,
}

impl Lowering<'_> {
    fn function(&mut self, module: &mut Module, f: usize, blocks: &HashMap<Word, Word>, outcome: &mut Outcome) -> Result<()> {
        for b in 0..module.functions[f].blocks.len() {
            let mut k = 0;
            while k < module.functions[f].blocks[b].insts.len() {
                let touches = module.functions[f].blocks[b].insts[k].operands.iter().filter_map(Operand::id).any(|id| blocks.contains_key(&id) || self.pointers.contains_key(&id));
                if !touches {
                    k += 1;
                    continue;
                }
                let inst = module.functions[f].blocks[b].insts.remove(k);
                let mut bld = Builder::new(module, Cursor { function: f, block: b, index: k }).with_origin(inst.origin);
                self.rewrite(&mut bld, &inst, blocks)?;
                outcome.count(inst.opcode);
                k = bld.cursor.index;
            }
        }
        Ok(())
    }

    fn rewrite(&mut self, bld: &mut Builder<'_>, inst: &Inst, blocks: &HashMap<Word, Word>) -> Result<()> {
        let refuse = |bld: &Builder<'_>, what: &str| unsupported(bld.module, inst, self.target, what);
        match inst.op() {
            Some(Op::AccessChain | Op::InBoundsAccessChain) if inst.id(0).is_ok_and(|b| blocks.contains_key(&b) || self.pointers.contains_key(&b)) => {
                let base = inst.id(0)?;
                let start = match (blocks.get(&base), self.pointers.get(&base)) {
                    (Some(&ty), _) => Lowered { address: bld.module.constant_u32(0), ty, align: 1 << 16 },
                    (_, Some(&l)) => l,
                    _ => return Err(refuse(bld, "an access chain")),
                };
                let indices: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
                let lowered = self.walk(bld, inst, start, &indices)?;
                self.pointers.insert(inst.result()?, lowered);
                Ok(())
            }
            Some(Op::Load) if inst.id(0).is_ok_and(|p| self.pointers.contains_key(&p)) => {
                let l = self.pointers[&inst.id(0)?];
                let v = self.load(bld, inst, l)?;
                bld.insert(Inst::new(Op::CopyObject, inst.result_type, inst.result_id, vec![Operand::Id(v)]));
                Ok(())
            }
            Some(Op::Store) if inst.id(0).is_ok_and(|p| self.pointers.contains_key(&p)) && !inst.id(1).is_ok_and(|v| self.pointers.contains_key(&v)) => {
                let l = self.pointers[&inst.id(0)?];
                self.store(bld, inst, l, inst.id(1)?)
            }
            Some(Op::CooperativeMatrixLoadKHR | Op::CooperativeMatrixStoreKHR) => {
                let Some(l) = inst.id(0).ok().and_then(|p| self.pointers.get(&p).copied()) else {
                    return Err(refuse(bld, "a cooperative-matrix access to a workgroup block other than through its pointer operand"));
                };
                let types = &self.types;
                let size = scalar_bytes(types, l.ty).ok_or_else(|| refuse(bld, "a cooperative-matrix access through a pointer to a type that is not a number or vector of numbers"))?;
                // The stride counts elements of the pointee; in words it is stride * size / 4.
                let stride_at = if inst.is(Op::CooperativeMatrixLoadKHR) { 2 } else { 3 };
                let stride = inst.id(stride_at).map_err(|_| refuse(bld, "a cooperative-matrix access without a stride"))?;
                let stride_align = self.multiples.of(bld.module, stride).saturating_mul(size);
                if l.align % 4 != 0 || stride_align % 4 != 0 {
                    return Err(refuse(bld, "a cooperative-matrix access at an address or with a stride not known to be a multiple of four bytes"));
                }
                let word = self.word_index(bld, l.address);
                let pointer = bld.access_chain(self.word_ptr, self.words, &[word]);
                let size_c = bld.module.constant_u32(size);
                let stride_u = as_uint(bld, types, stride, self.uint);
                let stride_bytes = bld.imul(self.uint, stride_u, size_c);
                let four = bld.module.constant_u32(4);
                let stride_words = bld.op(Op::UDiv, self.uint, &[stride_bytes, four]);
                let mut rewritten = inst.clone();
                rewritten.operands[0] = Operand::Id(pointer);
                rewritten.operands[stride_at] = Operand::Id(stride_words);
                bld.insert(rewritten);
                Ok(())
            }
            _ => Err(refuse(bld, &format!("{} of a pointer into a workgroup block", crate::ir::grammar::op_name(inst.opcode)))),
        }
    }

    /// Follows `indices` from `l` (an access chain's steps).
    fn walk(&self, bld: &mut Builder<'_>, inst: &Inst, mut l: Lowered, indices: &[Word]) -> Result<Lowered> {
        let refuse = |bld: &Builder<'_>, what: &str| unsupported(bld.module, inst, self.target, what);
        let types = &self.types;
        for &index in indices {
            let def = types.defs.get(&l.ty).cloned().ok_or_else(|| refuse(bld, "an access chain through an unknown type"))?;
            let (step, step_align, next) = match def.op() {
                Some(Op::TypeStruct) => {
                    let m = types.const_u32(index).ok_or_else(|| refuse(bld, "a struct member chosen at run time"))?;
                    let offset = bld.module.member_offset(l.ty, m).ok_or_else(|| refuse(bld, "a struct member without an Offset"))?;
                    let next = def.operands.get(m as usize).and_then(Operand::id).ok_or_else(|| refuse(bld, "a struct member past the struct's end"))?;
                    (bld.module.constant_u32(offset), align_of(offset), next)
                }
                Some(Op::TypeArray | Op::TypeRuntimeArray) => {
                    let stride = bld.module.decoration(l.ty, Decoration::ArrayStride).and_then(|s| s.first().copied()).ok_or_else(|| refuse(bld, "an array without an ArrayStride"))?;
                    let i = as_uint(bld, types, index, self.uint);
                    let s = bld.module.constant_u32(stride);
                    let step = bld.imul(self.uint, i, s);
                    (step, align_of(stride).saturating_mul(self.multiples.of(bld.module, index)), def.id(0)?)
                }
                Some(Op::TypeVector) => {
                    let component = def.id(0)?;
                    let size = scalar_bytes(types, component).ok_or_else(|| refuse(bld, "a vector of other than 8-, 16- or 32-bit numbers"))?;
                    let i = as_uint(bld, types, index, self.uint);
                    let s = bld.module.constant_u32(size);
                    (bld.imul(self.uint, i, s), size.saturating_mul(self.multiples.of(bld.module, index)), component)
                }
                _ => return Err(refuse(bld, "an access chain through other than structs, arrays and vectors")),
            };
            l = Lowered { address: bld.iadd(self.uint, l.address, step), ty: next, align: l.align.min(step_align.max(1)) };
        }
        Ok(l)
    }

    /// The word index of byte `address`.
    fn word_index(&self, bld: &mut Builder<'_>, address: Word) -> Word {
        let two = bld.module.constant_u32(2);
        bld.op(Op::ShiftRightLogical, self.uint, &[address, two])
    }

    fn load(&self, bld: &mut Builder<'_>, inst: &Inst, l: Lowered) -> Result<Word> {
        let types = &self.types;
        if let Some((component, n)) = types.vector(l.ty) {
            let size = scalar_bytes(types, component).ok_or_else(|| unsupported(bld.module, inst, self.target, "a load of a vector of other than 8-, 16- or 32-bit numbers"))?;
            let parts: Vec<Word> = (0..n)
                .map(|c| {
                    let at = offset(bld, l.address, c * size, self.uint);
                    self.load(bld, inst, Lowered { address: at, ty: component, align: l.align.min(size) })
                })
                .collect::<Result<_>>()?;
            return Ok(bld.emit(Op::CompositeConstruct, l.ty, parts.into_iter().map(Operand::Id).collect()));
        }
        let size = scalar_bytes(types, l.ty).ok_or_else(|| unsupported(bld.module, inst, self.target, "a load of other than an 8-, 16- or 32-bit number or vector"))?;
        let word_index = self.word_index(bld, l.address);
        let pointer = bld.access_chain(self.word_ptr, self.words, &[word_index]);
        let word = bld.load(self.uint, pointer);
        if size == 4 {
            return Ok(if l.ty == self.uint { word } else { bld.bitcast(l.ty, word) });
        }
        let shift = self.shift(bld, l.address, size);
        let bits = bld.op(Op::ShiftRightLogical, self.uint, &[word, shift]);
        Ok(narrow_from_bits(bld, types, l.ty, bits, size))
    }

    fn store(&self, bld: &mut Builder<'_>, inst: &Inst, l: Lowered, value: Word) -> Result<()> {
        let types = &self.types;
        if let Some((component, n)) = types.vector(l.ty) {
            let size = scalar_bytes(types, component).ok_or_else(|| unsupported(bld.module, inst, self.target, "a store of a vector of other than 8-, 16- or 32-bit numbers"))?;
            for c in 0..n {
                let part = bld.composite_extract(component, value, c);
                let at = offset(bld, l.address, c * size, self.uint);
                self.store(bld, inst, Lowered { address: at, ty: component, align: l.align.min(size) }, part)?;
            }
            return Ok(());
        }
        let size = scalar_bytes(types, l.ty).ok_or_else(|| unsupported(bld.module, inst, self.target, "a store of other than an 8-, 16- or 32-bit number or vector"))?;
        let word_index = self.word_index(bld, l.address);
        let pointer = bld.access_chain(self.word_ptr, self.words, &[word_index]);
        if size == 4 {
            let word = if l.ty == self.uint { value } else { bld.bitcast(self.uint, value) };
            bld.store(pointer, word);
            return Ok(());
        }
        let bits = narrow_to_bits(bld, types, l.ty, value, size, self.uint);
        let shift = self.shift(bld, l.address, size);
        let placed = bld.op(Op::ShiftLeftLogical, self.uint, &[bits, shift]);
        let ones = bld.module.constant_u32(if size == 2 { 0xffff } else { 0xff });
        let mask = bld.op(Op::ShiftLeftLogical, self.uint, &[ones, shift]);
        let keep = bld.op(Op::Not, self.uint, &[mask]);
        let scope = bld.module.constant_u32(Scope::Workgroup as u32);
        let semantics = bld.module.constant_u32(MemorySemantics::empty().bits());
        bld.emit(Op::AtomicAnd, self.uint, vec![Operand::Id(pointer), Operand::Id(scope), Operand::Id(semantics), Operand::Id(keep)]);
        bld.emit(Op::AtomicOr, self.uint, vec![Operand::Id(pointer), Operand::Id(scope), Operand::Id(semantics), Operand::Id(placed)]);
        Ok(())
    }

    /// The bit position of a `size`-byte number at byte `address` within its word.
    fn shift(&self, bld: &mut Builder<'_>, address: Word, size: u32) -> Word {
        let within = bld.module.constant_u32(4 - size);
        let byte = bld.op(Op::BitwiseAnd, self.uint, &[address, within]);
        let three = bld.module.constant_u32(3);
        bld.op(Op::ShiftLeftLogical, self.uint, &[byte, three])
    }
}

fn offset(bld: &mut Builder<'_>, address: Word, by: u32, uint: Word) -> Word {
    if by == 0 {
        return address;
    }
    let c = bld.module.constant_u32(by);
    bld.iadd(uint, address, c)
}

/// Bytes of an 8-, 16- or 32-bit integer or float type; `None` for anything else.
fn scalar_bytes(types: &Types, ty: Word) -> Option<u32> {
    types.scalar_width(ty).filter(|w| matches!(w, 8 | 16 | 32)).map(|w| w / 8)
}

/// Integer `v` as a 32-bit unsigned value (indices may be signed or of other widths).
fn as_uint(bld: &mut Builder<'_>, types: &Types, v: Word, uint: Word) -> Word {
    match types.type_of(v).and_then(|t| types.int(t)) {
        Some((32, false)) => v,
        Some((32, true)) => bld.bitcast(uint, v),
        Some((_, true)) => bld.op(Op::SConvert, uint, &[v]),
        _ => bld.op(Op::UConvert, uint, &[v]),
    }
}

/// The low `size` bytes of `bits` as a number of type `ty`.
fn narrow_from_bits(bld: &mut Builder<'_>, types: &Types, ty: Word, bits: Word, size: u32) -> Word {
    let width = size * 8;
    if types.float(ty).is_some() {
        // The word bit-cast to a vector of such floats keeps every bit; the first is the value.
        let vector = bld.module.type_vector(ty, 4 / size);
        let whole = bld.bitcast(vector, bits);
        return bld.composite_extract(ty, whole, 0);
    }
    let signed = types.int(ty).is_some_and(|(_, s)| s);
    let unsigned = bld.module.type_int(width, false);
    let narrow = bld.op(Op::UConvert, unsigned, &[bits]);
    if signed {
        bld.bitcast(ty, narrow)
    } else {
        narrow
    }
}

/// Number `v` of type `ty` (`size` bytes) as the low bits of a word, the rest zero.
fn narrow_to_bits(bld: &mut Builder<'_>, types: &Types, ty: Word, v: Word, size: u32, uint: Word) -> Word {
    let width = size * 8;
    if types.float(ty).is_some() {
        let count = 4 / size;
        let vector = bld.module.type_vector(ty, count);
        let zero = bld.module.constant_null(ty);
        let parts = std::iter::once(v).chain(std::iter::repeat_n(zero, count as usize - 1)).map(Operand::Id).collect();
        let whole = bld.emit(Op::CompositeConstruct, vector, parts);
        return bld.bitcast(uint, whole);
    }
    let unsigned = bld.module.type_int(width, false);
    let u = if types.int(ty).is_some_and(|(_, s)| s) { bld.bitcast(unsigned, v) } else { v };
    bld.op(Op::UConvert, uint, &[u])
}

/// The largest power of two dividing `x` (1 << 16 for zero).
fn align_of(x: u32) -> u32 {
    if x == 0 {
        1 << 16
    } else {
        1 << x.trailing_zeros().min(16)
    }
}

/// Powers of two that integer values are known to be multiples of: from constants (and
/// specialization constants, at the pipeline's values as the sizes are), products, sums, shifts
/// left, conversions and copies of them, and loads of function variables that are only stored
/// and loaded (every value stored into them; glslang keeps `const uint a_off = ...` in such
/// variables). Read from the functions as they were before the rewrite, each value once.
struct Multiples {
    defs: HashMap<Word, Inst>,
    /// Function variables only loaded and stored through: the values stored into them.
    stored: HashMap<Word, Vec<Word>>,
    memo: RefCell<HashMap<Word, u32>>,
}

impl Multiples {
    fn new(module: &Module) -> Multiples {
        let insts = || module.functions.iter().flat_map(|f| f.insts());
        let defs = insts().filter_map(|i| Some((i.result_id?, i.clone()))).collect();
        let mut stored: HashMap<Word, Option<Vec<Word>>> = insts().filter(|i| i.is(Op::Variable)).filter_map(|i| Some((i.result_id?, Some(Vec::new())))).collect();
        for i in insts() {
            for (k, id) in i.operands.iter().enumerate().filter_map(|(k, o)| Some((k, o.id()?))) {
                let Some(values) = stored.get_mut(&id) else { continue };
                match (i.op(), k) {
                    (Some(Op::Load), 0) => {}
                    (Some(Op::Store), 0) => {
                        if let (Some(list), Ok(v)) = (values.as_mut(), i.id(1)) {
                            list.push(v);
                        }
                    }
                    _ => *values = None,
                }
            }
        }
        Multiples { defs, stored: stored.into_iter().filter_map(|(v, s)| Some((v, s?))).collect(), memo: RefCell::default() }
    }

    /// A power of two that integer `id` is a multiple of (1 where nothing is known).
    fn of(&self, module: &Module, id: Word) -> u32 {
        self.at(module, id, 0)
    }

    fn at(&self, module: &Module, id: Word, depth: u32) -> u32 {
        if depth > 16 {
            return 1;
        }
        if let Some(&m) = self.memo.borrow().get(&id) {
            return m;
        }
        let m = self.compute(module, id, depth);
        self.memo.borrow_mut().insert(id, m);
        m
    }

    fn compute(&self, module: &Module, id: Word, depth: u32) -> u32 {
        let Some(def) = self.defs.get(&id) else {
            return default_value(module, id).map_or(1, |v| align_of(v as u32));
        };
        let arg = |k: usize| def.id(k).map(|a| self.at(module, a, depth + 1)).unwrap_or(1);
        match def.op() {
            Some(Op::IMul) => arg(0).saturating_mul(arg(1)).min(1 << 16),
            Some(Op::IAdd | Op::ISub) => arg(0).min(arg(1)),
            Some(Op::ShiftLeftLogical) => {
                let k = def.id(1).ok().and_then(|s| default_value(module, s)).unwrap_or(0).min(16) as u32;
                arg(0).saturating_mul(1 << k).min(1 << 16)
            }
            Some(Op::CopyObject | Op::Bitcast | Op::UConvert | Op::SConvert) => arg(0),
            Some(Op::Load) => match def.id(0).ok().and_then(|var| self.stored.get(&var)) {
                Some(values) if !values.is_empty() => values.iter().map(|v| self.at(module, *v, depth + 1)).min().unwrap_or(1),
                _ => 1,
            },
            _ => 1,
        }
    }
}
