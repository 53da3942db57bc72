//! `LowerMatrixElementCoords`: SPV_INTEL_joint_matrix's `OpCooperativeMatrixGetElementCoordINTEL`
//! (DPC++'s `joint_matrix_apply` with row and column, and the legacy
//! `OpJointMatrixGetElementCoordINTEL` once `lower-joint-matrix` has made its matrix a KHR one)
//! asks which row and column of a matrix an invocation's element `Index` holds. KHR cooperative
//! matrices do not tell (the device, or the emulation, chooses), but two matrices of the type
//! can: one whose every element is its own row, one whose every element is its column.
//!
//! Rewrite: for each matrix type queried, at the entry point's start (after its variables, where
//! the whole sub-group runs), the sub-group's lanes write `rows - index / columns` for every
//! element index into a per-sub-group area of workgroup memory (the unsigned integer of the
//! component's width holding the component's bits: an integer, or the float of that value, exact
//! up to 128 in every component type), a sub-group barrier, a row-major load of the type from the
//! area into a `Function` variable, a barrier; then the same for `columns - index % columns`.
//! Each query becomes `rows` (or `columns`) less element `Index` of the two variables, converted
//! back to integers, as the result's 2-component vector (row, column).
//!
//! Counting down from the matrix's size keeps every element of the matrix non-zero, so that
//! elements a later pass adds (`pad-cooperative-matrix` grows a matrix with zeros) answer row
//! `rows` and column `columns`: outside the matrix, where bounds-checked code skips them.
//!
//! Preconditions: one entry point with a workgroup size; queried matrices have constant
//! dimensions below 129. Refused by name: a result that is not a 2-component integer vector, a
//! queried value that is not a cooperative matrix, larger dimensions, and areas past the target's
//! workgroup memory. The `CooperativeMatrixInvocationInstructionsINTEL` capability goes.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::grammar::intel_cooperative_matrix as icm;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_joint_matrix::drop_capability;
use crate::passes::subgroup_scratch::{AreasByType, SubgroupScratch};
use crate::passes::tile_cooperative_matrix::matrix;
use crate::profile::DeviceCaps;
use spirv::{CooperativeMatrixLayout, FPEncoding, Op, StorageClass, Word};
use std::collections::{BTreeMap, HashMap};

pub struct LowerMatrixElementCoords;

/// Largest dimension whose coordinates every component type holds exactly (8-bit integers as
/// their unsigned bits).
const LARGEST: u32 = 128;

/// A queried matrix type.
#[derive(Clone, Copy, Debug)]
struct Queried {
    component: Word,
    bits: u32,
    rows: u32,
    cols: u32,
    area_type: Word,
}

impl Pass for LowerMatrixElementCoords {
    fn name(&self) -> &'static str {
        "lower-matrix-element-coords"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if drop_capability(module, icm::CAPABILITY_INVOCATION_INSTRUCTIONS) {
            outcome.count(Op::Capability as u32);
        }
        let queries: Vec<Inst> = module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.opcode == icm::GET_ELEMENT_COORD).cloned().collect();
        if queries.is_empty() {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let mut queried: BTreeMap<Word, Queried> = BTreeMap::new();
        for q in &queries {
            let invalid = |message: String| Error::Invalid { site: module.site(q), message };
            let result_ok = q.result_type.and_then(|t| types.vector(t)).is_some_and(|(c, n)| n == 2 && types.int(c).is_some());
            if !result_ok {
                return Err(invalid("a result type that is not a 2-component integer vector (row, column)".into()));
            }
            let ty = q.operands.first().and_then(Operand::id).and_then(|m| types.type_of(m)).unwrap_or_default();
            let Some(m) = matrix(&types, ty) else {
                return Err(invalid("a Matrix that is not a cooperative matrix of constant rows and columns".into()));
            };
            if m.rows > LARGEST || m.cols > LARGEST {
                return Err(invalid(format!("a {}x{} matrix (coordinates are answered for matrices of up to {LARGEST} rows and columns)", m.rows, m.cols)));
            }
            let Some(bits @ (8 | 16 | 32)) = types.scalar_width(m.component) else {
                return Err(invalid("a matrix whose components are not 8, 16 or 32 bits wide".into()));
            };
            let area_type = module.type_int(bits, false);
            queried.insert(ty, Queried { component: m.component, bits, rows: m.rows, cols: m.cols, area_type });
        }
        let mut areas: BTreeMap<Word, u32> = BTreeMap::new();
        for q in queried.values() {
            let n = areas.entry(q.area_type).or_default();
            *n = (*n).max(q.rows * q.cols);
        }
        let (scratch, arrays) = SubgroupScratch::by_type(module, &types, cx.target, &areas).map_err(|why| Error::Unsupported {
            site: module.site(&queries[0]),
            target: cx.target.name.clone(),
            missing: format!("room for the element coordinates of cooperative matrices (their staging {why})"),
        })?;
        let entry = module.entry_points.first().and_then(|e| e.operands.get(1)).and_then(Operand::id);
        let Some(f) = module.functions.iter().position(|f| Some(f.id()) == entry) else {
            return Err(Error::Invalid { site: module.site(&queries[0]), message: "a coordinate query in a module whose entry point has no function".into() });
        };
        let scratch = scratch.for_logical_subgroups(module, cx.target);
        let l = Coords { types: &types, scratch, arrays, uint: module.type_int(32, false) };
        // The row and column matrices of each type, at the entry point's start.
        let mut vars: HashMap<Word, [Word; 2]> = HashMap::new();
        {
            let mut bld = Builder::new(module, Cursor { function: f, block: 0, index: 0 });
            for ty in queried.keys() {
                vars.insert(*ty, [bld.function_variable(*ty), bld.function_variable(*ty)]);
            }
        }
        let index = module.functions[f].blocks.first().map_or(0, |b| b.insts.iter().rposition(|i| i.is(Op::Variable)).map_or(0, |v| v + 1));
        let mut bld = Builder::new(module, Cursor { function: f, block: 0, index });
        for (ty, q) in &queried {
            for (k, var) in vars[ty].iter().enumerate() {
                l.fill(&mut bld, *ty, *q, k == 1, *var);
            }
        }
        // The queries.
        for fi in 0..module.functions.len() {
            let mut b = 0;
            while b < module.functions[fi].blocks.len() {
                let mut i = 0;
                while i < module.functions[fi].blocks[b].insts.len() {
                    if module.functions[fi].blocks[b].insts[i].opcode != icm::GET_ELEMENT_COORD {
                        i += 1;
                        continue;
                    }
                    let inst = module.functions[fi].blocks[b].insts.remove(i);
                    let mut bld = Builder::new(module, Cursor { function: fi, block: b, index: i }).with_origin(inst.origin);
                    let ty = inst.id(0).ok().and_then(|m| types.type_of(m)).unwrap_or_default();
                    let (q, [rows, cols]) = (queried[&ty], vars[&ty]);
                    let element = inst.id(1)?;
                    let rt = inst.ty()?;
                    let rc = types.vector(rt).map_or(rt, |(c, _)| c);
                    let parts = [(rows, q.rows), (cols, q.cols)].map(|(var, size)| {
                        let ptr = bld.module.type_pointer(StorageClass::Function, q.component);
                        let at = bld.access_chain(ptr, var, &[element]);
                        let v = bld.load(q.component, at);
                        let down = l.decode(&mut bld, q, v);
                        let size = bld.module.constant_u32(size);
                        let n = bld.op(Op::ISub, l.uint, &[size, down]);
                        l.to_int(&mut bld, n, l.uint, rc)
                    });
                    bld.insert(Inst::new(Op::CompositeConstruct, Some(rt), inst.result_id, parts.iter().map(|&p| Operand::Id(p)).collect()));
                    outcome.count(inst.opcode);
                    (b, i) = (bld.cursor.block, bld.cursor.index);
                }
                b += 1;
            }
        }
        Ok(outcome)
    }
}

struct Coords<'a> {
    types: &'a Types,
    scratch: SubgroupScratch,
    arrays: AreasByType,
    uint: Word,
}

impl Coords<'_> {
    /// Loads into `var` the matrix of type `ty` whose elements are their rows (or `columns`).
    fn fill(&self, bld: &mut Builder<'_>, ty: Word, q: Queried, columns: bool, var: Word) {
        let uint = self.uint;
        let (array, per) = self.arrays[&q.area_type];
        let base = self.scratch.area_start(bld, per);
        let cols = bld.module.constant_u32(q.cols);
        let slot_ptr = bld.module.type_pointer(StorageClass::Workgroup, q.area_type);
        let size = bld.module.constant_u32(if columns { q.cols } else { q.rows });
        self.scratch.for_each(bld, q.rows * q.cols, |bld, index| {
            let n = bld.op(if columns { Op::UMod } else { Op::UDiv }, uint, &[index, cols]);
            let down = bld.op(Op::ISub, uint, &[size, n]);
            let bits = self.encode(bld, q, down);
            let at = bld.iadd(uint, base, index);
            let slot = bld.access_chain(slot_ptr, array, &[at]);
            bld.store(slot, bits);
        });
        self.scratch.barrier(bld);
        let start = bld.access_chain(slot_ptr, array, &[base]);
        let row_major = bld.module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32);
        let m = bld.op(Op::CooperativeMatrixLoadKHR, ty, &[start, row_major, cols]);
        bld.store(var, m);
        self.scratch.barrier(bld);
    }

    /// The bits (in the area type) of the component holding the small integer `n`.
    fn encode(&self, bld: &mut Builder<'_>, q: Queried, n: Word) -> Word {
        let uint = self.uint;
        let bits32 = match self.types.float(q.component) {
            None => n,
            Some((32, _)) => {
                let float = bld.module.type_float(32);
                let f = bld.op(Op::ConvertUToF, float, &[n]);
                return bld.bitcast(uint, f);
            }
            Some((_, encoding)) => {
                // From the f32's bits: exact for these integers (no mantissa bits lost).
                let float = bld.module.type_float(32);
                let f = bld.op(Op::ConvertUToF, float, &[n]);
                let b = bld.bitcast(uint, f);
                if encoding == Some(FPEncoding::BFloat16KHR as u32) {
                    let sixteen = bld.module.constant_u32(16);
                    bld.op(Op::ShiftRightLogical, uint, &[b, sixteen])
                } else {
                    // f16: exponent rebiased from 127 to 15, mantissa's top 10 bits; 0 stays 0.
                    let thirteen = bld.module.constant_u32(13);
                    let shifted = bld.op(Op::ShiftRightLogical, uint, &[b, thirteen]);
                    let rebias = bld.module.constant_u32(112 << 10);
                    let h = bld.op(Op::ISub, uint, &[shifted, rebias]);
                    let boolean = bld.module.type_bool();
                    let zero = bld.module.constant_u32(0);
                    let is_zero = bld.op(Op::IEqual, boolean, &[n, zero]);
                    bld.op(Op::Select, uint, &[is_zero, zero, h])
                }
            }
        };
        if q.bits == 32 {
            bits32
        } else {
            bld.op(Op::UConvert, q.area_type, &[bits32])
        }
    }

    /// The small non-negative integer a component `v` holds, as a 32-bit unsigned integer.
    fn decode(&self, bld: &mut Builder<'_>, q: Queried, v: Word) -> Word {
        let uint = self.uint;
        match self.types.float(q.component) {
            None if q.bits == 32 => self.to_int(bld, v, q.component, uint),
            None => bld.op(Op::UConvert, uint, &[v]),
            Some((_, Some(e))) if e == FPEncoding::BFloat16KHR as u32 => {
                let short = bld.module.type_int(16, false);
                let h = bld.bitcast(short, v);
                let wide = bld.op(Op::UConvert, uint, &[h]);
                let sixteen = bld.module.constant_u32(16);
                let b = bld.op(Op::ShiftLeftLogical, uint, &[wide, sixteen]);
                let float = bld.module.type_float(32);
                let f = bld.bitcast(float, b);
                bld.op(Op::ConvertFToU, uint, &[f])
            }
            Some(_) => bld.op(Op::ConvertFToU, uint, &[v]),
        }
    }

    /// Non-negative `n` of integer type `from` as integer type `ty`.
    fn to_int(&self, bld: &mut Builder<'_>, n: Word, from: Word, ty: Word) -> Word {
        if from == ty {
            return n;
        }
        let (w, from_w) = (self.types.int(ty).map_or(32, |(w, _)| w), self.types.int(from).map_or(32, |(w, _)| w));
        if w == from_w {
            return bld.bitcast(ty, n);
        }
        let unsigned = bld.module.type_int(w, false);
        let wide = bld.op(Op::UConvert, unsigned, &[n]);
        if unsigned == ty {
            wide
        } else {
            bld.bitcast(ty, wide)
        }
    }
}
