//! `LowerSubgroupMatrixMultiplyAccumulate`: SPV_INTEL_subgroup_matrix_multiply_accumulate's
//! `OpSubgroupMatrixMultiplyAccumulateINTEL` (DPAS) -> sub-group broadcasts and plain
//! multiply-adds. No Vulkan device has the extension, so the pass applies to every target.
//!
//! The instruction computes `Result(M x N) = A(M x K) B(K x N) + C(M x N)` over the sub-group,
//! with the operands spread over its invocations as the spec's "Mapping Matrix Data to
//! Invocations" says ([`crate::reference::dpas`] is the same mapping on the CPU). Rewrite, in
//! place, for invocation `n` (the column it holds):
//! - every container of its A operand that holds a row below M is packed into 32-bit words
//!   (two 16-bit or four 8-bit containers per word) and the words are broadcast from each
//!   invocation that holds part of A (at most N broadcasts of up to four words each);
//! - each element is read from its word (`BitFieldSExtract`/`UExtract` for 8-, 4- and
//!   other-width integers by the signedness flags; f16 through `UnpackHalf2x16`, bf16 and tf32
//!   by shifting or masking the bits, tf32 dropping its low 13 mantissa bits), B's from the
//!   invocation's own components (VNNI packing), C's from its own;
//! - each of its M result components is `C[m] + sum_k A[m][k] B[k][n]`: for integers in 32-bit
//!   arithmetic wrapping to the Result's width (the low bits of the exact sum, as the spec
//!   requires), for floats in f32 (every product of f16, bf16 and tf32 elements is exact in
//!   f32; the spec leaves the sums' precision and order to the implementation), converted to
//!   the Result's type, bf16 rounded to nearest even.
//!
//! N is the entry point's required sub-group size (`intel_reqd_sub_group_size`, or the one a
//! launch asks for), else the target's own size (recorded as a requirement where the target's
//! size varies and can be pinned); `virtualize-subgroup-size` later maps a required size the
//! device does not run onto its own, broadcasts included.
//!
//! **Intel's sub-group-32 form.** Intel's compiler also runs DPAS in sub-groups of 32 with the
//! hardware's N = 16, each invocation holding half of what it holds at 16: invocation `l`,
//! component `c` of every operand is component `2c + l / 16` of invocation `l % 16` of the
//! sub-group-16 operand (Intel's Triton backend emits it). The spec's own reading at N = 32
//! would need twice the B components; so a DPAS in a sub-group of 32 whose B has exactly half
//! the components the spec's N = 32 needs is read in Intel's form: M is twice the Result's
//! components, each invocation computes rows `2c + l / 16` of column `l % 16`, and fetches the
//! B components it lacks from invocation `l ^ 16` with one `ShuffleXor` per word.
//!
//! Refused by name (the instruction and what is wrong): a K Dim that is not a 32-bit integer
//! constant, operand bits this revision does not define (fp8/fp4 and scaled forms of newer
//! Intel extensions) or two element types for one operand, 64-bit components, bf16 C or
//! Result flags on anything but 16-bit integers, integer elements beside float ones, an element
//! wider than its container, and operands with fewer components than M, N and K need.
//! Preconditions: the instruction is reached by the whole sub-group (as the spec requires).

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use crate::reference::dpas::{a_location, element_of, operands as mma, Container};
use crate::reference::elements::Elem;
use spirv::{BuiltIn, GlslStd450Op as GLOp, Op, Scope, Word};
use std::collections::{HashMap, HashSet};

pub struct LowerSubgroupMatrixMultiplyAccumulate;

/// Every Matrix Multiply Accumulate Operand bit the extension's revision defines.
const DEFINED: u32 = 0x3fff;

impl Pass for LowerSubgroupMatrixMultiplyAccumulate {
    fn name(&self) -> &'static str {
        "lower-subgroup-matrix-multiply-accumulate"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.functions.iter().flat_map(|f| f.insts()).any(is_dpas) {
            return Ok(outcome);
        }
        let sizes = subgroup_sizes(module, cx.target)?;
        let types = Types::new(module);
        for fi in 0..module.functions.len() {
            let n = sizes.get(&module.functions[fi].id()).copied().unwrap_or(cx.target.subgroup_size);
            for bi in 0..module.functions[fi].blocks.len() {
                let mut i = 0;
                while i < module.functions[fi].blocks[bi].insts.len() {
                    if !is_dpas(&module.functions[fi].blocks[bi].insts[i]) {
                        i += 1;
                        continue;
                    }
                    let inst = module.functions[fi].blocks[bi].insts.remove(i);
                    let shape = match Shape::of(module, &types, &inst, n) {
                        Ok(s) => s,
                        Err(message) => return Err(Error::Invalid { site: module.site(&inst), message }),
                    };
                    let mut b = Builder::new(module, Cursor { function: fi, block: bi, index: i }).with_origin(inst.origin);
                    let v = shape.lower(&mut b);
                    b.insert(Inst::new(Op::CopyObject, Some(inst.ty()?), Some(inst.result()?), vec![Operand::Id(v)]));
                    i = b.cursor.index;
                    outcome.count(inst.opcode);
                }
            }
        }
        if outcome.changed {
            outcome.notes.push(format!("DPAS lowered to sub-group broadcasts at sub-group sizes {:?}", sizes.values().collect::<std::collections::BTreeSet<_>>()));
        }
        Ok(outcome)
    }
}

pub(crate) fn is_dpas(inst: &Inst) -> bool {
    inst.is(Op::SubgroupMatrixMultiplyAccumulateINTEL)
}

/// The sub-group size (N) of every function an entry point with a DPAS reaches.
pub(crate) fn subgroup_sizes(module: &mut Module, target: &DeviceCaps) -> Result<HashMap<Word, u32>> {
    let recorded: HashMap<String, u32> = crate::kernel::recorded_subgroup_sizes(module).into_iter().collect();
    let with_dpas: HashSet<Word> = module.functions.iter().filter(|f| f.insts().any(is_dpas)).map(|f| f.id()).collect();
    let entries: Vec<(Word, String)> = module.entry_points.iter().filter_map(|e| Some((e.id(1).ok()?, e.string(2)?))).collect();
    let mut sizes: HashMap<Word, u32> = HashMap::new();
    for (function, name) in entries {
        let reached = module.functions_reached_from([function]);
        if !reached.iter().any(|g| with_dpas.contains(g)) {
            continue;
        }
        let n = match recorded.get(&name) {
            Some(n) => *n,
            None if target.min_subgroup_size == target.max_subgroup_size => target.subgroup_size,
            None if target.subgroup_size_control => {
                crate::kernel::record_subgroup_size(module, &name, target.subgroup_size);
                target.subgroup_size
            }
            None => {
                return Err(Error::Unsupported {
                    site: Box::default(),
                    target: target.name.clone(),
                    missing: format!(
                        "a fixed sub-group size for `{name}`, whose OpSubgroupMatrixMultiplyAccumulateINTEL takes N from it (its sub-groups have {} to {} invocations and cannot be pinned; require a size)",
                        target.min_subgroup_size, target.max_subgroup_size
                    ),
                });
            }
        };
        for g in reached {
            if let Some(other) = sizes.insert(g, n).filter(|o| *o != n) {
                let fname = module.name_of(g).unwrap_or_else(|| format!("%{g}"));
                return Err(Error::Invalid {
                    site: Box::default(),
                    message: format!("function {fname} is reached from entry points with sub-groups of {other} and {n} invocations, and its OpSubgroupMatrixMultiplyAccumulateINTEL takes N from them"),
                });
            }
        }
    }
    Ok(sizes)
}

/// One operand: its value, SPIR-V types, component count and container.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Part {
    pub(crate) value: Word,
    pub(crate) ty: Word,
    pub(crate) scalar: Word,
    pub(crate) comps: u32,
    pub(crate) container: Container,
}

impl Part {
    fn of(types: &Types, value: Word, what: &str) -> std::result::Result<Part, String> {
        let ty = types.type_of(value).ok_or_else(|| format!("{what} (%{value}) has no type"))?;
        Part::of_type(types, value, ty, what)
    }

    fn of_type(types: &Types, value: Word, ty: Word, what: &str) -> std::result::Result<Part, String> {
        let (scalar, comps) = types.vector(ty).unwrap_or((ty, 1));
        let container = match (types.int(scalar), types.float(scalar)) {
            (Some((w, _)), _) => Container::Int(w),
            (_, Some((w, None))) => Container::Float(w),
            _ => return Err(format!("{what} is not a scalar or vector of integers or IEEE floats")),
        };
        if container.bits() > 32 {
            return Err(format!("{what} has {}-bit components (no DPAS reads them)", container.bits()));
        }
        Ok(Part { value, ty, scalar, comps, container })
    }
}

/// A validated DPAS and how the sub-group holds it.
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    pub(crate) k: u32,
    /// N of the mapping (16 in Intel's sub-group-32 form).
    pub(crate) n: u32,
    /// Intel's sub-group-32 form: each invocation holds half of the sub-group-16 data.
    pub(crate) split: bool,
    pub(crate) result: Part,
    pub(crate) a: Part,
    pub(crate) b: Part,
    pub(crate) c: Part,
    pub(crate) ea: Elem,
    pub(crate) eb: Elem,
    pub(crate) ec: Elem,
    pub(crate) er: Elem,
    /// Physical components of A (of each invocation) that hold rows below M.
    pub(crate) a_comps: u32,
    /// Logical B components (K / elements per container).
    pub(crate) b_comps: u32,
}

impl Shape {
    pub(crate) fn of(module: &Module, types: &Types, inst: &Inst, subgroup: u32) -> std::result::Result<Shape, String> {
        let ids: Vec<Word> = inst.operands.iter().take(4).filter_map(Operand::id).collect();
        let [k_id, a, b, c] = ids[..] else { return Err("needs K Dim, Matrix A, Matrix B and Matrix C operands".into()) };
        let mask = match inst.operands.get(4) {
            None => 0,
            Some(Operand::Enum(_, w) | Operand::Literal(w)) => *w,
            Some(_) => return Err("has Matrix Multiply Accumulate Operands that are not a literal".into()),
        };
        let k = types.const_u32(k_id).filter(|_| module.globals().iter().any(|g| g.result_id == Some(k_id) && g.is(Op::Constant))).ok_or("takes a K Dim that is not a 32-bit integer constant")?;
        if mask & !DEFINED != 0 {
            return Err(format!(
                "sets Matrix Multiply Accumulate Operands bits {:#x}, which SPV_INTEL_subgroup_matrix_multiply_accumulate revision 1 does not define (fp8, fp4 and scaled DPAS belong to newer Intel extensions)",
                mask & !DEFINED
            ));
        }
        for (which, bits) in [
            ("A", [mma::A_PACKED_INT8, mma::A_PACKED_INT4, mma::A_TF32, mma::A_PACKED_F16, mma::A_PACKED_BF16]),
            ("B", [mma::B_PACKED_INT8, mma::B_PACKED_INT4, mma::B_TF32, mma::B_PACKED_F16, mma::B_PACKED_BF16]),
        ] {
            if bits.iter().filter(|b| mask & **b != 0).count() > 1 {
                return Err(format!("gives Matrix {which} two element types (Matrix Multiply Accumulate Operands {mask:#x})"));
            }
        }
        let (id, ty) = (inst.result().map_err(|x| x.to_string())?, inst.ty().map_err(|x| x.to_string())?);
        let result = Part::of_type(types, id, ty, "its Result Type")?;
        let (a, b, c) = (Part::of(types, a, "Matrix A")?, Part::of(types, b, "Matrix B")?, Part::of(types, c, "Matrix C")?);
        let ea = element_of(a.container, mask, true);
        let eb = element_of(b.container, mask, false);
        let accumulator = |p: &Part, flag: u32, what: &str| -> std::result::Result<Elem, String> {
            if mask & flag != 0 {
                return if p.container == Container::Int(16) { Ok(Elem::Bf16) } else { Err(format!("marks {what} bfloat16, which needs 16-bit integer components")) };
            }
            Ok(match p.container {
                Container::Int(bits) => Elem::Int { bits, signed: true },
                Container::Float(16) => Elem::F16,
                Container::Float(_) => Elem::F32,
            })
        };
        let ec = accumulator(&c, mma::C_BFLOAT16, "Matrix C")?;
        let er = accumulator(&result, mma::RESULT_BFLOAT16, "its Result")?;
        if [eb, ec, er].iter().any(|x| x.is_float() != ea.is_float()) {
            return Err(format!("mixes integer and floating-point matrices (A {ea:?}, B {eb:?}, C {ec:?}, Result {er:?})"));
        }
        for (p, el, what) in [(&a, ea, "Matrix A"), (&b, eb, "Matrix B")] {
            if el.bits() > p.container.bits() {
                return Err(format!("packs {}-bit elements into the {}-bit components of {what}", el.bits(), p.container.bits()));
            }
        }
        if c.comps != result.comps {
            return Err(format!("takes a Matrix C of {} components for a Result of {}", c.comps, result.comps));
        }
        let (epc_a, epc_b) = (a.container.bits() / ea.bits(), b.container.bits() / eb.bits());
        if k == 0 || !k.is_multiple_of(epc_a) || !k.is_multiple_of(epc_b) {
            return Err(format!("takes K Dim {k}, not a multiple of the {epc_a} elements of each A component and the {epc_b} of each B component"));
        }
        let b_comps = k / epc_b;
        let split = subgroup == 32 && b.comps * 2 == b_comps;
        let n = if split { 16 } else { subgroup };
        let m = if split { result.comps * 2 } else { result.comps };
        if !split && b.comps < b_comps {
            return Err(format!("takes a Matrix B of {} components where K Dim {k} needs {b_comps} (or {} in Intel's sub-group-32 form)", b.comps, b_comps / 2));
        }
        if k / epc_a > n {
            return Err(format!("takes K Dim {k}: its A needs {} invocations of {epc_a} elements each, and N is {n}", k / epc_a));
        }
        let f = n / (k / epc_a);
        let logical_a = m.div_ceil(f);
        let a_comps = if split { logical_a.div_ceil(2) } else { logical_a };
        if a.comps < a_comps {
            return Err(format!("takes a Matrix A of {} components where M = {m}, K Dim {k} and N = {n} need {a_comps}", a.comps));
        }
        Ok(Shape { k, n, split, result, a, b, c, ea, eb, ec, er, a_comps, b_comps })
    }

    /// Emits the lowering at the builder's cursor; returns the Result value.
    fn lower(&self, b: &mut Builder<'_>) -> Word {
        let uint = b.module.type_int(32, false);
        let boolean = b.module.type_bool();
        let scope = b.module.constant_u32(Scope::Subgroup as u32);
        // Upper half of a sub-group of 32 (Intel's form).
        let upper = self.split.then(|| {
            let id = lane_id(b);
            let sixteen = b.module.constant_u32(16);
            let bit = b.op(Op::BitwiseAnd, uint, &[id, sixteen]);
            let zero = b.module.constant_u32(0);
            b.op(Op::INotEqual, boolean, &[bit, zero])
        });

        // A: this invocation's containers as packed words, broadcast from each invocation.
        let wa = self.a.container.bits();
        let per_word = 32 / wa;
        let own: Vec<Word> = (0..self.a_comps).map(|j| container_word(b, &self.a, j)).collect();
        let mut packed = Vec::new();
        for chunk in own.chunks(per_word as usize) {
            let mut word = chunk[0];
            for (slot, w) in chunk.iter().enumerate().skip(1) {
                let shift = b.module.constant_u32(slot as u32 * wa);
                let moved = b.op(Op::ShiftLeftLogical, uint, &[*w, shift]);
                word = b.op(Op::BitwiseOr, uint, &[word, moved]);
            }
            packed.push(word);
        }
        // Up to four words per broadcast: (the word or vector of words, how many).
        let groups: Vec<(Word, u32)> = packed
            .chunks(4)
            .map(|ws| {
                if ws.len() == 1 {
                    (ws[0], 1)
                } else {
                    let ty = b.module.type_vector(uint, ws.len() as u32);
                    (b.op(Op::CompositeConstruct, ty, ws), ws.len() as u32)
                }
            })
            .collect();
        let mut from_lane: HashMap<u32, Vec<Word>> = HashMap::new();
        let mut a_word = |b: &mut Builder<'_>, lane: u32, word: usize| -> Word {
            let words = from_lane.entry(lane).or_insert_with(|| {
                let lane_id = b.module.constant_u32(lane);
                let mut out = Vec::new();
                for &(value, len) in &groups {
                    let ty = if len == 1 { uint } else { b.module.type_vector(uint, len) };
                    let got = b.op(Op::GroupNonUniformBroadcast, ty, &[scope, value, lane_id]);
                    if len == 1 {
                        out.push(got);
                    } else {
                        out.extend((0..len).map(|i| b.composite_extract(uint, got, i)));
                    }
                }
                out
            });
            words[word]
        };
        let epc_a = wa / self.ea.bits();
        let mut a_elements: HashMap<(u32, u32), Word> = HashMap::new();
        let mut a_element = |b: &mut Builder<'_>, row: u32, col: u32| -> Word {
            if let Some(v) = a_elements.get(&(row, col)) {
                return *v;
            }
            let (inv, comp, off) = a_location(self.k, self.n, epc_a, self.ea.bits(), row, col);
            let (lane, comp) = if self.split { (inv + 16 * (comp % 2), comp / 2) } else { (inv, comp) };
            let word = a_word(b, lane, (comp / per_word) as usize);
            let v = element(b, word, (comp % per_word) * wa + off, self.ea);
            a_elements.insert((row, col), v);
            v
        };

        // B: this invocation's column, the missing half from invocation l ^ 16 in Intel's form.
        let wb = self.b.container.bits();
        let epc_b = wb / self.eb.bits();
        let held = if self.split { self.b_comps / 2 } else { self.b_comps };
        let b_own: Vec<Word> = (0..held).map(|j| container_word(b, &self.b, j)).collect();
        let b_logical: Vec<Word> = match upper {
            None => b_own,
            Some(upper) => {
                let mask = b.module.constant_u32(16);
                let mut other = Vec::new();
                for ws in b_own.chunks(4) {
                    if ws.len() == 1 {
                        other.push(b.op(Op::GroupNonUniformShuffleXor, uint, &[scope, ws[0], mask]));
                    } else {
                        let ty = b.module.type_vector(uint, ws.len() as u32);
                        let v = b.op(Op::CompositeConstruct, ty, ws);
                        let got = b.op(Op::GroupNonUniformShuffleXor, ty, &[scope, v, mask]);
                        other.extend((0..ws.len()).map(|i| b.composite_extract(uint, got, i as u32)));
                    }
                }
                (0..self.b_comps)
                    .map(|c| {
                        let (mine, theirs) = (b_own[(c / 2) as usize], other[(c / 2) as usize]);
                        // Component c of the sub-group-16 column lies in the lower half's
                        // invocation where c is even.
                        if c % 2 == 0 {
                            b.select(uint, upper, theirs, mine)
                        } else {
                            b.select(uint, upper, mine, theirs)
                        }
                    })
                    .collect()
            }
        };
        let b_elements: Vec<Word> = (0..self.k).map(|row| element(b, b_logical[(row / epc_b) as usize], (row % epc_b) * self.eb.bits(), self.eb)).collect();

        // The sums, one per Result component.
        let float = self.er.is_float();
        let f32_ty = b.module.type_float(32);
        let acc_ty = if float { f32_ty } else { uint };
        let (add, mul) = if float { (Op::FAdd, Op::FMul) } else { (Op::IAdd, Op::IMul) };
        let mut out = Vec::new();
        for r in 0..self.result.comps {
            let cw = container_word(b, &self.c, r);
            let mut acc = match self.ec {
                Elem::Int { bits, .. } if bits < 32 => {
                    let (zero, width) = (b.module.constant_u32(0), b.module.constant_u32(bits));
                    b.op(Op::BitFieldSExtract, uint, &[cw, zero, width])
                }
                e => element(b, cw, 0, e),
            };
            for col in 0..self.k {
                let a = if let Some(upper) = upper {
                    let (even, odd) = (a_element(b, 2 * r, col), a_element(b, 2 * r + 1, col));
                    b.select(acc_ty, upper, odd, even)
                } else {
                    a_element(b, r, col)
                };
                let p = b.op(mul, acc_ty, &[a, b_elements[col as usize]]);
                acc = b.op(add, acc_ty, &[acc, p]);
            }
            out.push(encode(b, acc, &self.result, self.er));
        }
        if out.len() == 1 {
            out[0]
        } else {
            b.op(Op::CompositeConstruct, self.result.ty, &out)
        }
    }
}

/// The invocation's `SubgroupLocalInvocationId`, as an unsigned 32-bit integer.
pub(crate) fn lane_id(b: &mut Builder<'_>) -> Word {
    let uint = b.module.type_int(32, false);
    let var = b.module.get_or_add_builtin(BuiltIn::SubgroupLocalInvocationId, uint);
    let ty = b.module.variable_pointee(var).unwrap_or(uint);
    let id = b.load(ty, var);
    if ty == uint {
        id
    } else {
        b.bitcast(uint, id)
    }
}

/// Component `j` of `p` as a 32-bit word holding its bits in the low bits (f16 as its bits).
fn container_word(b: &mut Builder<'_>, p: &Part, j: u32) -> Word {
    let uint = b.module.type_int(32, false);
    let x = if p.comps == 1 { p.value } else { b.composite_extract(p.scalar, p.value, j) };
    match p.container {
        Container::Int(32) if p.scalar == uint => x,
        Container::Int(32) | Container::Float(32) => b.bitcast(uint, x),
        Container::Int(_) => b.op(Op::UConvert, uint, &[x]),
        Container::Float(_) => {
            // Exact: every f16 is an f32, and PackHalf2x16 of an f16 value is its bits.
            let f32_ty = b.module.type_float(32);
            let wide = b.op(Op::FConvert, f32_ty, &[x]);
            let zero = b.module.constant_f32(0.0);
            let v2 = b.module.type_vector(f32_ty, 2);
            let pair = b.op(Op::CompositeConstruct, v2, &[wide, zero]);
            let glsl = b.module.ext_inst_import("GLSL.std.450");
            b.emit(Op::ExtInst, uint, vec![Operand::Id(glsl), Operand::Literal(GLOp::PackHalf2x16 as u32), Operand::Id(pair)])
        }
    }
}

/// The element of type `e` at bit `offset` of `word`: a 32-bit integer (sign- or zero-extended)
/// or an f32.
fn element(b: &mut Builder<'_>, word: Word, offset: u32, e: Elem) -> Word {
    let uint = b.module.type_int(32, false);
    let f32_ty = b.module.type_float(32);
    match e {
        Elem::Int { bits, .. } if bits >= 32 => word,
        Elem::Int { bits, signed } => {
            let (o, w) = (b.module.constant_u32(offset), b.module.constant_u32(bits));
            b.op(if signed { Op::BitFieldSExtract } else { Op::BitFieldUExtract }, uint, &[word, o, w])
        }
        Elem::F16 => {
            let low = if offset == 0 {
                word
            } else {
                let o = b.module.constant_u32(offset);
                b.op(Op::ShiftRightLogical, uint, &[word, o])
            };
            let glsl = b.module.ext_inst_import("GLSL.std.450");
            let v2 = b.module.type_vector(f32_ty, 2);
            let pair = b.emit(Op::ExtInst, v2, vec![Operand::Id(glsl), Operand::Literal(GLOp::UnpackHalf2x16 as u32), Operand::Id(low)]);
            b.composite_extract(f32_ty, pair, 0)
        }
        Elem::Bf16 => {
            let bits = if offset == 16 {
                let mask = b.module.constant_u32(0xffff_0000);
                b.op(Op::BitwiseAnd, uint, &[word, mask])
            } else {
                let low = if offset == 0 {
                    word
                } else {
                    let o = b.module.constant_u32(offset);
                    b.op(Op::ShiftRightLogical, uint, &[word, o])
                };
                let sixteen = b.module.constant_u32(16);
                b.op(Op::ShiftLeftLogical, uint, &[low, sixteen])
            };
            b.bitcast(f32_ty, bits)
        }
        Elem::Tf32 => {
            let mask = b.module.constant_u32(0xffff_e000);
            let bits = b.op(Op::BitwiseAnd, uint, &[word, mask]);
            b.bitcast(f32_ty, bits)
        }
        Elem::F32 | Elem::F64 => b.bitcast(f32_ty, word),
    }
}

/// The sum `acc` (a 32-bit integer or an f32) as a component of `result`.
fn encode(b: &mut Builder<'_>, acc: Word, result: &Part, e: Elem) -> Word {
    // An unsigned integer of the Result's width, as the Result's (possibly signed) type.
    let as_result = |b: &mut Builder<'_>, v: Word, unsigned: Word| if unsigned == result.scalar { v } else { b.bitcast(result.scalar, v) };
    match e {
        Elem::Int { bits: 32, .. } => {
            let uint = b.module.type_int(32, false);
            as_result(b, acc, uint)
        }
        Elem::Int { bits, .. } => {
            let narrow = b.module.type_int(bits, false);
            let n = b.op(Op::UConvert, narrow, &[acc]);
            as_result(b, n, narrow)
        }
        Elem::Bf16 => {
            let narrow = b.module.type_int(16, false);
            let bits = super::lower_bfloat16_conversions::to_bf16(b, narrow, 1, acc);
            as_result(b, bits, narrow)
        }
        Elem::F16 => b.op(Op::FConvert, result.scalar, &[acc]),
        _ => acc,
    }
}
