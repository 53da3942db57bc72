//! `LowerDpasToCooperativeMatrix`: DPAS (`OpSubgroupMatrixMultiplyAccumulateINTEL`) on the
//! target's cooperative matrices, where it lists them for the DPAS's element types, so that
//! Intel matrix kernels use the matrix units of other GPUs (the H100's). Every other DPAS is
//! left to `lower-subgroup-matrix-multiply-accumulate`, which lowers it to plain code.
//!
//! DPAS computes `D(M x N) = A(M x K) B(K x N) + C(M x N)` with invocation `n` holding column
//! `n` of B, C and D (see [`crate::reference::dpas`]). The pass computes the transposed
//! product `D^T = B^T A^T + C^T`, whose accumulator rows are the invocations: a KHR MulAdd of
//! an `N x K` A matrix (B^T, B's element type), a `K x Ct` B matrix (A^T) and an `N x Ct`
//! accumulator, where `Ct >= M` is the narrowest column count the target lists with `N`
//! (16 x 8 x 16 f16 and 16 x 8 x 32 int8 on the H100; columns past M compute nothing that is
//! read, since a column of a product depends only on the same column of A^T). Matrices cross
//! through per-sub-group areas of workgroup memory: each lane stores its containers of A (at
//! their row and column, `reference::dpas::a_location` inverted), its B column as row `n` of
//! B^T (VNNI words are B^T's row-major pairs and quads as they are) and its C column as row `n`
//! of C^T; after a sub-group barrier the KHR loads read them (A^T column-major), and the KHR
//! store of the MulAdd's result is read back by the lanes after another. In Intel's
//! sub-group-32 form (N = 16), lane `l`'s component `c` is component `2c + l / 16` of lane
//! `l % 16`'s.
//!
//! Accumulators stay cooperative matrices between DPAS: the DPAS results and the `OpPhi`s
//! between them of one accumulator type form webs, whose values are matrices; the vector a
//! value's other uses see is read back only where it is used that way (after its DPAS, or at
//! the top of its phi's block; where every such use follows a loop that computes the value, at
//! the top of the loop's single exit, once), and a phi's incoming vector from outside the web is staged in
//! at the end of its predecessor. A K loop of DPAS then keeps its accumulators in the matrix
//! units and stages only A and B in each iteration. Phis in, or fed from, blocks that only some
//! invocations reach (`analysis::divergence`) stay vectors: matrix operations need the whole
//! sub-group.
//!
//! **Split sub-groups.** Where the entry point's sub-groups are split from wider physical ones
//! (sub-group 16 on the H100's 32), KHR matrices still belong to the physical sub-group: each
//! logical sub-group stages into its own areas as above, and the physical one loads, multiplies
//! and stores the matrices of each of its `r` logical sub-groups in turn (areas `L - L % r + h`),
//! so every value of a web is `r` matrices. This needs every lane of the physical sub-group at
//! each DPAS: the work-group's size is fixed and a multiple of the physical size, and the DPAS is
//! in a block every invocation of the work-group reaches (`analysis::divergence`). The module is
//! then marked (`kernel::record_physical_matrices`) so that the passes after
//! `virtualize-subgroup-size` keep its matrices native; a module that has other cooperative
//! matrices is left to the plain lowering at split sizes.
//!
//! Applies where the target has cooperative matrices; rewrites a DPAS whose entry point runs
//! sub-groups of the device's own size (or split from it, as above), whose A and B elements are
//! f16, bf16 or 8-bit integers of one signedness with a listed row (B's element as A, A's as B,
//! an f32, f16 or 32-bit integer accumulator of C's and the Result's type), and whose areas fit
//! the target's workgroup memory. Preconditions: one entry point with a workgroup size; each
//! DPAS is reached by its whole sub-group (as the extension requires).

use crate::analysis::divergence::Divergence;
use crate::analysis::Types;
use crate::error::Result;
use crate::ir::builder::{Builder, Cursor};
use crate::ir::cfg::Cfg;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::check_cooperative_matrix::signedness_twin;
use crate::passes::lower_subgroup_matrix_multiply_accumulate::{is_dpas, lane_id, subgroup_sizes, Part, Shape};
use crate::passes::subgroup_scratch::SubgroupScratch;
use crate::passes::zero_sums_from_select::positive_zeros;
use crate::profile::{ComponentType, DeviceCaps, MatrixScope};
use crate::reference::dpas::Container;
use crate::reference::elements::Elem;
use rspirv::grammar::OperandKind;
use spirv::{BuiltIn, CooperativeMatrixLayout, CooperativeMatrixOperands as Flags, CooperativeMatrixUse, FPEncoding, Op, Scope, StorageClass, Word};
use std::collections::{BTreeMap, HashMap, HashSet};

pub struct LowerDpasToCooperativeMatrix;

impl Pass for LowerDpasToCooperativeMatrix {
    fn name(&self) -> &'static str {
        "lower-dpas-to-cooperative-matrix"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.cooperative_matrix.iter().any(|s| s.scope == MatrixScope::Subgroup)
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.functions.iter().flat_map(|f| f.insts()).any(is_dpas) {
            return Ok(outcome);
        }
        let sizes = subgroup_sizes(module, cx.target)?;
        let types = Types::new(module);
        let target = cx.target;
        // Every DPAS the pass can rewrite, by result id.
        let mut plans: HashMap<Word, Plan> = HashMap::new();
        // Split sub-groups share their physical one's matrices only where nothing else in the
        // module is a cooperative matrix (those stay the logical sub-groups', emulated).
        let other_matrices = module.globals().iter().any(|g| g.is(Op::TypeCooperativeMatrixKHR) || g.is(Op::TypeCooperativeMatrixNV));
        // ... and where the work-group fills whole physical sub-groups (a matrix operation needs
        // every lane of one).
        let whole = module.entry_points.iter().filter_map(|e| e.string(2)).all(|name| {
            crate::specialize::fixed_workgroup_size(module, &name).is_some_and(|[x, y, z]| (u64::from(x) * u64::from(y) * u64::from(z)).is_multiple_of(u64::from(target.subgroup_size.max(1))))
        });
        // The blocks only some invocations of the work-group reach, in each function with a DPAS.
        let mut divergent: HashMap<usize, HashSet<Word>> = HashMap::new();
        for (fi, f) in module.functions.iter().enumerate() {
            if !f.insts().any(is_dpas) {
                continue;
            }
            let n = sizes.get(&f.id()).copied().unwrap_or(target.subgroup_size);
            let p = target.subgroup_size;
            let replicas = match target.runs_subgroup_size(n) {
                true => 1,
                false if n < p && p.is_multiple_of(n) && !other_matrices && whole => p / n,
                false => continue,
            };
            let blocks: HashSet<Word> = Divergence::new(module, &[fi], Scope::Workgroup).regions(fi).iter().flat_map(|r| r.blocks.iter().copied()).collect();
            for block in &f.blocks {
                // Split: both logical sub-groups of a physical one must reach each DPAS
                // together, which blocks every invocation of the work-group reaches guarantee.
                if replicas > 1 && blocks.contains(&block.id()) {
                    continue;
                }
                for inst in block.insts.iter().filter(|i| is_dpas(i)) {
                    let (Ok(shape), Some(id)) = (Shape::of(module, &types, inst, n), inst.result_id) else { continue };
                    if let Some(plan) = Plan::of(shape, target, replicas) {
                        plans.insert(id, plan);
                    }
                }
            }
            divergent.insert(fi, blocks);
        }
        if plans.is_empty() {
            return Ok(outcome);
        }
        // One area per role and type, sized for the largest matrix of it.
        let mut largest: BTreeMap<(Role, ComponentKey), u32> = BTreeMap::new();
        for p in plans.values() {
            for (role, key, elements) in p.areas() {
                let e = largest.entry((role, key)).or_default();
                *e = (*e).max(elements);
            }
        }
        let keys: Vec<(Role, ComponentKey)> = largest.keys().copied().collect();
        let list: Vec<(Word, u32)> = keys.iter().map(|rk| (rk.1.type_in(module), largest[rk])).collect();
        let (scratch, arrays) = match SubgroupScratch::new(module, &types, target, &list) {
            Ok(s) => s,
            Err(why) => {
                outcome.notes.push(format!("DPAS left to plain code: staging it through cooperative matrices {why}"));
                return Ok(outcome);
            }
        };
        let areas: HashMap<(Role, ComponentKey), (Word, u32)> = keys.iter().zip(arrays).map(|(rk, a)| (*rk, (a, largest[rk]))).collect();
        if plans.values().any(|p| p.replicas > 1) {
            crate::kernel::record_physical_matrices(module);
        }
        let zeros = positive_zeros(module, &types);
        let mut zero_scalars = HashMap::new();
        for p in plans.values() {
            let zero = match (types.int(p.acc), types.float(p.acc)) {
                (Some((w, signed)), _) => module.constant_int(p.acc, w, signed, 0),
                (_, Some((w, e))) => module.constant_float(p.acc, w, e, 0.0),
                _ => continue,
            };
            zero_scalars.insert(p.acc, zero);
        }
        let stager = Stager { scratch, areas, zeros, zero_scalars };
        let mut staged = 0;
        for f in 0..module.functions.len() {
            if !module.functions[f].insts().any(|i| i.result_id.is_some_and(|id| plans.contains_key(&id))) {
                continue;
            }
            // Matrix operations need the whole sub-group: phis in, or fed from, blocks only some
            // invocations reach stay vectors.
            let web = Web::of(module, f, &plans, &divergent[&f]);
            staged += web.dpas.len();
            web.rewrite(module, f, &plans, &stager);
        }
        outcome.count(Op::SubgroupMatrixMultiplyAccumulateINTEL as u32);
        outcome.changed = true;
        let mut shapes: Vec<String> = plans
            .values()
            .map(|p| match p.replicas {
                1 => format!("{}x{}x{}", p.shape.n, p.ct, p.shape.k),
                r => format!("{}x{}x{} for each of the {r} sub-groups split from one", p.shape.n, p.ct, p.shape.k),
            })
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        shapes.sort();
        outcome.notes.push(format!("{staged} DPAS on cooperative matrices (transposed, {})", shapes.join(", ")));
        Ok(outcome)
    }
}

/// What an area holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Role {
    /// A's containers, row-major (read as A^T, column-major).
    A,
    /// B^T's rows of containers.
    B,
    /// C^T and D^T, row-major.
    Accumulator,
}

/// An area's element type, as a key that orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum ComponentKey {
    Uint(u32),
    /// A type of the module (an accumulator's component).
    Type(Word),
}

impl ComponentKey {
    fn type_in(self, module: &mut Module) -> Word {
        match self {
            ComponentKey::Uint(bits) => module.type_int(bits, false),
            ComponentKey::Type(t) => t,
        }
    }
}

/// How one DPAS goes onto cooperative matrices.
#[derive(Clone, Debug)]
struct Plan {
    shape: Shape,
    /// Columns of the accumulator (>= M).
    ct: u32,
    /// Rows of A's area (A's containers may reach past M, never past this).
    a_rows: u32,
    /// Containers of A per row (K / elements per container).
    a_per_row: u32,
    /// Rows of A per invocation set (`f` of the mapping).
    f: u32,
    /// The accumulator's component: the Result's scalar type.
    acc: Word,
    /// Logical sub-groups per physical one: 1, or the number split from it, whose matrices
    /// the physical sub-group computes one after another.
    replicas: u32,
}

impl Plan {
    fn of(shape: Shape, target: &DeviceCaps, replicas: u32) -> Option<Plan> {
        let component = |e: Elem| -> Option<ComponentType> {
            Some(match e {
                Elem::F16 => ComponentType::F16,
                Elem::Bf16 => ComponentType::Bf16,
                Elem::Int { bits: 8, signed: true } => ComponentType::S8,
                Elem::Int { bits: 8, signed: false } => ComponentType::U8,
                _ => return None,
            })
        };
        let (a, b) = (component(shape.eb)?, component(shape.ea)?);
        if a.is_integer() != b.is_integer() || shape.c.container != shape.result.container || shape.c.comps != shape.result.comps {
            return None;
        }
        let acc = match (shape.er, shape.ec) {
            (Elem::F32, Elem::F32) => ComponentType::F32,
            (Elem::F16, Elem::F16) => ComponentType::F16,
            (Elem::Int { bits: 32, .. }, Elem::Int { bits: 32, .. }) if a.is_signed_integer() => ComponentType::S32,
            (Elem::Int { bits: 32, .. }, Elem::Int { bits: 32, .. }) => ComponentType::U32,
            _ => return None,
        };
        let m = if shape.split { 2 * shape.result.comps } else { shape.result.comps };
        let ct = target
            .cooperative_matrix
            .iter()
            .filter(|s| s.scope == MatrixScope::Subgroup && !s.saturating && s.k == shape.k && shape.n.is_multiple_of(s.m) && s.n >= m)
            .filter(|s| s.a == a && s.b == b && (s.c == acc || s.c == signedness_twin(acc)) && s.result == s.c)
            .map(|s| s.n)
            .min()?;
        let epc = shape.a.container.bits() / shape.ea.bits();
        let a_per_row = shape.k / epc;
        let f = (shape.n / a_per_row).max(1);
        // The last row a container of A holds: component j of the sub-group-16 layout holds
        // rows j * f .. j * f + f.
        let last_j = if shape.split { 2 * shape.a_comps - 1 } else { shape.a_comps - 1 };
        let a_rows = ct.max((last_j + 1) * f);
        let bits_ok = |p: &Part| matches!(p.container, Container::Int(16 | 32) | Container::Float(16 | 32));
        if !bits_ok(&shape.a) || !bits_ok(&shape.b) || shape.b.container.bits() != 32 {
            return None;
        }
        Some(Plan { acc: shape.result.scalar, shape, ct, a_rows, a_per_row, f, replicas })
    }

    fn areas(&self) -> [(Role, ComponentKey, u32); 3] {
        [
            (Role::A, ComponentKey::Uint(self.shape.a.container.bits()), self.a_rows * self.a_per_row),
            (Role::B, ComponentKey::Uint(32), self.shape.n * self.shape.b_comps),
            (Role::Accumulator, ComponentKey::Type(self.acc), self.shape.n * self.ct),
        ]
    }

    /// Accumulators of equal keys are one matrix type holding the same vector type.
    fn key(&self) -> (Word, Word, u32, bool, u32, u32) {
        (self.shape.result.ty, self.acc, self.shape.n, self.shape.split, self.ct, self.replicas)
    }

    fn element_type(module: &mut Module, e: Elem) -> Word {
        match e {
            Elem::F16 => module.type_float(16),
            Elem::Bf16 => module.type_float_encoded(16, FPEncoding::BFloat16KHR),
            Elem::Int { bits, signed } => module.type_int(bits, signed),
            _ => module.type_float(32),
        }
    }

    fn matrix_type(module: &mut Module, component: Word, rows: u32, cols: u32, usage: CooperativeMatrixUse) -> Word {
        let scope = module.constant_u32(Scope::Subgroup as u32);
        let (r, c, u) = (module.constant_u32(rows), module.constant_u32(cols), module.constant_u32(usage as u32));
        module.intern(Op::TypeCooperativeMatrixKHR, None, vec![Operand::Id(component), Operand::Id(scope), Operand::Id(r), Operand::Id(c), Operand::Id(u)])
    }

    fn accumulator_type(&self, module: &mut Module) -> Word {
        Plan::matrix_type(module, self.acc, self.shape.n, self.ct, CooperativeMatrixUse::MatrixAccumulatorKHR)
    }
}

struct Stager {
    scratch: SubgroupScratch,
    areas: HashMap<(Role, ComponentKey), (Word, u32)>,
    /// The module's all-zero constants, and the zero of each accumulator component type.
    zeros: HashSet<Word>,
    zero_scalars: HashMap<Word, Word>,
}

/// The invocation's place in the DPAS layout: its column `i` and, in Intel's sub-group-32
/// form, which half of the sub-group it is in (0 or 1).
struct Lane {
    i: Word,
    half: Option<Word>,
}

impl Stager {
    /// The zero accumulator matrix of `plan` where `value` is a zero vector constant (as
    /// producers start accumulators).
    fn zero_matrix(&self, module: &mut Module, plan: &Plan, value: Word) -> Option<Word> {
        let scalar = *self.zero_scalars.get(&plan.acc).filter(|_| self.zeros.contains(&value))?;
        let ty = plan.accumulator_type(module);
        Some(module.constant_composite(ty, &[scalar]))
    }

    fn lane(&self, b: &mut Builder<'_>, plan: &Plan) -> Lane {
        let uint = b.module.type_int(32, false);
        let id = lane_id(b);
        if !plan.shape.split {
            return Lane { i: id, half: None };
        }
        let (fifteen, four) = (b.module.constant_u32(15), b.module.constant_u32(4));
        let i = b.op(Op::BitwiseAnd, uint, &[id, fifteen]);
        let half = b.op(Op::ShiftRightLogical, uint, &[id, four]);
        Lane { i, half: Some(half) }
    }

    /// The sub-group-16 component of physical component `c`: `c`, or `2c + half`.
    fn logical(&self, b: &mut Builder<'_>, lane: &Lane, c: u32) -> Word {
        let uint = b.module.type_int(32, false);
        match lane.half {
            None => b.module.constant_u32(c),
            Some(half) => {
                let twice = b.module.constant_u32(2 * c);
                b.iadd(uint, twice, half)
            }
        }
    }

    /// A pointer to element `index` of the sub-group's area for `role`.
    fn slot(&self, b: &mut Builder<'_>, role: Role, key: ComponentKey, index: Word) -> Word {
        let uint = b.module.type_int(32, false);
        let (array, per) = self.areas[&(role, key)];
        let start = self.scratch.area_start(b, per);
        let at = b.iadd(uint, start, index);
        let ty = key.type_in(b.module);
        let ptr = b.module.type_pointer(StorageClass::Workgroup, ty);
        b.access_chain(ptr, array, &[at])
    }

    /// The first element of the area for `role` of each logical sub-group the physical one
    /// holds (`L - L % r + h` for `h < r`, `L` the logical sub-group), as the matrix loads and
    /// stores address them: the same pointers on every lane.
    fn matrix_starts(&self, b: &mut Builder<'_>, plan: &Plan, role: Role, key: ComponentKey) -> Vec<Word> {
        let uint = b.module.type_int(32, false);
        let zero = b.module.constant_u32(0);
        if plan.replicas == 1 {
            return vec![self.slot(b, role, key, zero)];
        }
        let (array, per) = self.areas[&(role, key)];
        let var = b.module.get_or_add_builtin(BuiltIn::SubgroupId, uint);
        let sg = b.load(uint, var);
        let r = b.module.constant_u32(plan.replicas);
        let within = b.op(Op::UMod, uint, &[sg, r]);
        let first = b.op(Op::ISub, uint, &[sg, within]);
        let ty = key.type_in(b.module);
        let ptr = b.module.type_pointer(StorageClass::Workgroup, ty);
        let per = b.module.constant_u32(per);
        (0..plan.replicas)
            .map(|h| {
                let h = b.module.constant_u32(h);
                let q = b.iadd(uint, first, h);
                let at = b.imul(uint, q, per);
                b.access_chain(ptr, array, &[at])
            })
            .collect()
    }

    /// Component `c` of `p`, as the area type `ty`.
    fn component_as(&self, b: &mut Builder<'_>, p: &Part, c: u32, ty: Word) -> Word {
        let x = if p.comps == 1 { p.value } else { b.composite_extract(p.scalar, p.value, c) };
        if p.scalar == ty {
            x
        } else {
            b.bitcast(ty, x)
        }
    }

    /// Stores this lane's accumulator vector `value` (of `plan`'s Result type) as rows of C^T
    /// and loads it as the accumulator matrices `into` (allocated by the caller, one for each
    /// logical sub-group of the physical one).
    fn stage_in_accumulator(&self, b: &mut Builder<'_>, plan: &Plan, value: Word, into: &[Word]) {
        let uint = b.module.type_int(32, false);
        let key = ComponentKey::Type(plan.acc);
        self.scratch.barrier(b);
        let lane = self.lane(b, plan);
        let part = Part { value, ..plan.shape.result };
        let ct = b.module.constant_u32(plan.ct);
        let row = b.imul(uint, lane.i, ct);
        for r in 0..plan.shape.result.comps {
            let m = self.logical(b, &lane, r);
            let at = b.iadd(uint, row, m);
            let slot = self.slot(b, Role::Accumulator, key, at);
            let v = self.component_as(b, &part, r, plan.acc);
            b.store(slot, v);
        }
        self.scratch.barrier(b);
        let ty = plan.accumulator_type(b.module);
        let layout = b.module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32);
        for (start, into) in self.matrix_starts(b, plan, Role::Accumulator, key).into_iter().zip(into) {
            b.insert(Inst::new(Op::CooperativeMatrixLoadKHR, Some(ty), Some(*into), vec![Operand::Id(start), Operand::Id(layout), Operand::Id(ct)]));
        }
    }

    /// Stores accumulator matrices `matrices` (one for each logical sub-group of the physical
    /// one) as D^T and reads this lane's vector back as `into`.
    fn stage_out_accumulator(&self, b: &mut Builder<'_>, plan: &Plan, matrices: &[Word], into: Word) {
        let uint = b.module.type_int(32, false);
        let key = ComponentKey::Type(plan.acc);
        let ct = b.module.constant_u32(plan.ct);
        self.scratch.barrier(b);
        let layout = b.module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32);
        for (start, matrix) in self.matrix_starts(b, plan, Role::Accumulator, key).into_iter().zip(matrices) {
            b.emit_void(Op::CooperativeMatrixStoreKHR, vec![Operand::Id(start), Operand::Id(*matrix), Operand::Id(layout), Operand::Id(ct)]);
        }
        self.scratch.barrier(b);
        let lane = self.lane(b, plan);
        let row = b.imul(uint, lane.i, ct);
        let result = plan.shape.result;
        let parts: Vec<Word> = (0..result.comps)
            .map(|r| {
                let m = self.logical(b, &lane, r);
                let at = b.iadd(uint, row, m);
                let slot = self.slot(b, Role::Accumulator, key, at);
                let v = b.load(plan.acc, slot);
                if plan.acc == result.scalar {
                    v
                } else {
                    b.bitcast(result.scalar, v)
                }
            })
            .collect();
        let (op, operands) = if result.comps == 1 { (Op::CopyObject, parts) } else { (Op::CompositeConstruct, parts) };
        b.insert(Inst::new(op, Some(result.ty), Some(into), operands.into_iter().map(Operand::Id).collect()));
    }

    /// The MulAdd of `plan` with accumulator matrix `c`, result `into`. The operand matrices
    /// come from `staged` (the block's matrices by vector and matrix type) where an earlier
    /// DPAS of the block staged the same vector; the others are stored by the lanes and loaded.
    fn multiply(&self, b: &mut Builder<'_>, plan: &Plan, staged: &mut HashMap<(Word, Word), Vec<Word>>, c: &[Word], into: &[Word]) {
        let uint = b.module.type_int(32, false);
        let s = &plan.shape;
        // The KHR A matrix holds B's elements, the KHR B matrix A's.
        let (ka_c, kb_c) = (Plan::element_type(b.module, s.eb), Plan::element_type(b.module, s.ea));
        let ka = Plan::matrix_type(b.module, ka_c, s.n, s.k, CooperativeMatrixUse::MatrixAKHR);
        let kb = Plan::matrix_type(b.module, kb_c, s.k, plan.ct, CooperativeMatrixUse::MatrixBKHR);
        let (a_key, b_key) = (ComponentKey::Uint(s.a.container.bits()), ComponentKey::Uint(32));
        let (per_row, b_row) = (b.module.constant_u32(plan.a_per_row), b.module.constant_u32(s.b_comps));
        let (mut mat_a, mut mat_b) = (staged.get(&(s.b.value, ka)).cloned(), staged.get(&(s.a.value, kb)).cloned());
        if mat_a.is_none() || mat_b.is_none() {
            self.scratch.barrier(b);
            let lane = self.lane(b, plan);
            if mat_b.is_none() {
                // A: component j (sub-group-16 numbering) of invocation i holds row
                // j * f + i / per_row and containers i % per_row of it.
                let a_ty = a_key.type_in(b.module);
                let f = b.module.constant_u32(plan.f);
                let band = b.op(Op::UDiv, uint, &[lane.i, per_row]);
                let within = b.op(Op::UMod, uint, &[lane.i, per_row]);
                for c in 0..s.a_comps {
                    let j = self.logical(b, &lane, c);
                    let rows = b.imul(uint, j, f);
                    let row = b.iadd(uint, rows, band);
                    let first = b.imul(uint, row, per_row);
                    let at = b.iadd(uint, first, within);
                    let slot = self.slot(b, Role::A, a_key, at);
                    let v = self.component_as(b, &s.a, c, a_ty);
                    b.store(slot, v);
                }
            }
            if mat_a.is_none() {
                // B: invocation i's column is row i of B^T.
                let b_ty = b_key.type_in(b.module);
                let first = b.imul(uint, lane.i, b_row);
                let held = if s.split { s.b_comps / 2 } else { s.b_comps };
                for c in 0..held {
                    let j = self.logical(b, &lane, c);
                    let at = b.iadd(uint, first, j);
                    let slot = self.slot(b, Role::B, b_key, at);
                    let v = self.component_as(b, &s.b, c, b_ty);
                    b.store(slot, v);
                }
            }
            self.scratch.barrier(b);
            if mat_a.is_none() {
                let row_major = b.module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32);
                let starts = self.matrix_starts(b, plan, Role::B, b_key);
                let m: Vec<Word> = starts.into_iter().map(|start| b.emit(Op::CooperativeMatrixLoadKHR, ka, vec![Operand::Id(start), Operand::Id(row_major), Operand::Id(b_row)])).collect();
                staged.insert((s.b.value, ka), m.clone());
                mat_a = Some(m);
            }
            if mat_b.is_none() {
                let col_major = b.module.constant_u32(CooperativeMatrixLayout::ColumnMajorKHR as u32);
                let starts = self.matrix_starts(b, plan, Role::A, a_key);
                let m: Vec<Word> = starts.into_iter().map(|start| b.emit(Op::CooperativeMatrixLoadKHR, kb, vec![Operand::Id(start), Operand::Id(col_major), Operand::Id(per_row)])).collect();
                staged.insert((s.a.value, kb), m.clone());
                mat_b = Some(m);
            }
        }
        let mut flags = Flags::NONE_KHR;
        if matches!(s.eb, Elem::Int { signed: true, .. }) {
            flags |= Flags::MATRIX_A_SIGNED_COMPONENTS_KHR;
        }
        if matches!(s.ea, Elem::Int { signed: true, .. }) {
            flags |= Flags::MATRIX_B_SIGNED_COMPONENTS_KHR;
        }
        // Signed 8-bit rows sum into s32, unsigned ones into u32 (the bits are the same).
        if matches!(s.eb, Elem::Int { signed: true, .. }) {
            flags |= Flags::MATRIX_C_SIGNED_COMPONENTS_KHR | Flags::MATRIX_RESULT_SIGNED_COMPONENTS_KHR;
        }
        let acc = plan.accumulator_type(b.module);
        let (mat_a, mat_b) = (mat_a.unwrap_or_default(), mat_b.unwrap_or_default());
        for h in 0..into.len() {
            let operands = vec![Operand::Id(mat_a[h]), Operand::Id(mat_b[h]), Operand::Id(c[h]), Operand::Enum(OperandKind::CooperativeMatrixOperands, flags.bits())];
            b.insert(Inst::new(Op::CooperativeMatrixMulAddKHR, Some(acc), Some(into[h]), operands));
        }
    }
}

/// The accumulator webs of one function: which values are matrices, and where their vectors
/// are needed.
struct Web {
    /// Rewritten DPAS results.
    dpas: HashSet<Word>,
    /// Phis of the web, with the plan their matrices follow.
    phis: HashMap<Word, Word>,
    /// The matrix ids of each web value (one for each logical sub-group of the physical one).
    matrix: HashMap<Word, Vec<Word>>,
    /// Web values whose vectors are used outside the web, and where they are read back: after
    /// their definition (`None`), or at the top of the exit block of a loop (`Some` block) that
    /// all those uses follow.
    read_back: HashMap<Word, Option<usize>>,
}

/// The natural loops of `cfg`: the blocks of each, by index, one per back edge.
fn natural_loops(cfg: &Cfg) -> Vec<HashSet<usize>> {
    let mut loops = Vec::new();
    for (latch, succs) in cfg.succs.iter().enumerate() {
        for &header in succs.iter().filter(|&&h| cfg.dominates(h, latch)) {
            let mut body = HashSet::from([header]);
            let mut stack = vec![latch];
            while let Some(b) = stack.pop() {
                if body.insert(b) {
                    stack.extend(cfg.preds[b].iter().copied());
                }
            }
            loops.push(body);
        }
    }
    loops
}

/// Where a value defined in block `def` and used (outside the web) in blocks `uses` is read
/// back: the single exit of the outermost loop that holds `def` and none of the uses, where
/// that exit follows `def`, precedes every use and every invocation reaches it; else `None`
/// (after the definition, once per trip of a loop around it).
fn read_back_block(cfg: &Cfg, loops: &[HashSet<usize>], divergent: &HashSet<Word>, def: usize, uses: &[usize]) -> Option<usize> {
    let l = loops.iter().filter(|l| l.contains(&def) && uses.iter().all(|u| !l.contains(u))).max_by_key(|l| l.len())?;
    let exits: HashSet<usize> = l.iter().flat_map(|&b| cfg.succs[b].iter().copied()).filter(|s| !l.contains(s)).collect();
    let [exit] = exits.into_iter().collect::<Vec<_>>()[..] else { return None };
    (cfg.dominates(def, exit) && uses.iter().all(|&u| cfg.dominates(exit, u)) && !divergent.contains(&cfg.labels[exit])).then_some(exit)
}

impl Web {
    fn of(module: &Module, f: usize, plans: &HashMap<Word, Plan>, divergent: &HashSet<Word>) -> Web {
        let func = &module.functions[f];
        let dpas: HashSet<Word> = func.insts().filter(|i| is_dpas(i)).filter_map(|i| i.result_id).filter(|id| plans.contains_key(id)).collect();
        let vector_types: HashSet<Word> = dpas.iter().map(|d| plans[d].shape.result.ty).collect();
        let mut phi_insts: HashMap<Word, &Inst> = HashMap::new();
        for block in func.blocks.iter().filter(|b| !divergent.contains(&b.id())) {
            for phi in block.insts.iter().filter(|i| i.is(Op::Phi) && i.result_type.is_some_and(|t| vector_types.contains(&t))) {
                let preds_reached = phi.operands.iter().skip(1).step_by(2).filter_map(Operand::id).all(|l| !divergent.contains(&l));
                if let (Some(id), true) = (phi.result_id, preds_reached) {
                    phi_insts.insert(id, phi);
                }
            }
        }
        // The DPAS (a representative plan) each phi's matrix follows, by propagation; phis whose
        // incoming members disagree, or that none reaches, are not in the web.
        let mut phis: HashMap<Word, Word> = HashMap::new();
        let mut out: HashSet<Word> = HashSet::new();
        let plan_of = |v: Word, phis: &HashMap<Word, Word>| -> Option<Word> {
            if dpas.contains(&v) {
                Some(v)
            } else {
                phis.get(&v).copied()
            }
        };
        loop {
            let mut changed = false;
            for (&p, inst) in &phi_insts {
                if out.contains(&p) {
                    continue;
                }
                let reps: Vec<Word> = inst.operands.iter().step_by(2).filter_map(Operand::id).filter_map(|v| plan_of(v, &phis)).collect();
                let keys: HashSet<_> = reps.iter().map(|r| plans[r].key()).collect();
                if keys.len() > 1 || (reps.is_empty() && phis.contains_key(&p)) {
                    phis.remove(&p);
                    out.insert(p);
                    changed = true;
                } else if let (Some(r), false) = (reps.first(), phis.contains_key(&p)) {
                    phis.insert(p, *r);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let members: HashSet<Word> = dpas.iter().chain(phis.keys()).copied().collect();
        let key_of = |v: Word| plan_of(v, &phis).map(|r| plans[&r].key());
        // Uses that stay matrices: C of a member DPAS, and incoming values of a member phi, of
        // the same key.
        // Each member's uses outside the web, by block (a phi's at the end of its predecessor).
        let mut outside: HashMap<Word, Vec<usize>> = HashMap::new();
        let mut defined: HashMap<Word, usize> = HashMap::new();
        for (bi, block) in func.blocks.iter().enumerate() {
            for inst in &block.insts {
                if let Some(id) = inst.result_id.filter(|id| members.contains(id)) {
                    defined.insert(id, bi);
                }
            }
        }
        for (bi, inst) in func.blocks.iter().enumerate().flat_map(|(bi, b)| b.insts.iter().map(move |i| (bi, i))) {
            let user = inst.result_id.filter(|id| members.contains(id));
            for (k, op) in inst.operands.iter().enumerate() {
                let Some(v) = op.id().filter(|v| members.contains(v)) else { continue };
                let matrix_use = match (user, inst.op()) {
                    (Some(u), Some(Op::Phi)) => k % 2 == 0 && key_of(u) == key_of(v),
                    (Some(u), Some(Op::SubgroupMatrixMultiplyAccumulateINTEL)) => k == 3 && key_of(u) == key_of(v),
                    _ => false,
                };
                if !matrix_use {
                    let at = match inst.op() {
                        Some(Op::Phi) => inst.operands.get(k + 1).and_then(Operand::id).and_then(|l| func.block_index(l)).unwrap_or(bi),
                        _ => bi,
                    };
                    outside.entry(v).or_default().push(at);
                }
            }
        }
        let cfg = Cfg::new(func);
        let loops = natural_loops(&cfg);
        let read_back = outside
            .into_iter()
            .map(|(v, uses)| {
                let def = defined.get(&v).copied().unwrap_or_default();
                (v, read_back_block(&cfg, &loops, divergent, def, &uses))
            })
            .collect();
        Web { dpas, phis, matrix: HashMap::new(), read_back }
    }

    /// The matrices `value` already is for `plan`: a web value's of the same key, or the zero
    /// matrix; `None` where it must be staged in.
    fn known_matrices(&self, module: &mut Module, plans: &HashMap<Word, Plan>, stager: &Stager, plan: &Plan, value: Word) -> Option<Vec<Word>> {
        let rep = if self.dpas.contains(&value) { Some(value) } else { self.phis.get(&value).copied() };
        match (rep, self.matrix.get(&value)) {
            (Some(r), Some(m)) if plans[&r].key() == plan.key() => Some(m.clone()),
            _ => stager.zero_matrix(module, plan, value).map(|z| vec![z; plan.replicas as usize]),
        }
    }

    fn rewrite(mut self, module: &mut Module, f: usize, plans: &HashMap<Word, Plan>, stager: &Stager) {
        let plan_of = |v: Word| -> &Plan {
            if self.dpas.contains(&v) {
                &plans[&v]
            } else {
                &plans[&self.phis[&v]]
            }
        };
        // In id order, so that the output does not depend on hashing.
        let mut members: Vec<Word> = self.dpas.iter().chain(self.phis.keys()).copied().collect();
        members.sort_unstable();
        for v in &members {
            let ids = (0..plan_of(*v).replicas).map(|_| module.alloc_id()).collect();
            self.matrix.insert(*v, ids);
        }
        let fresh = |module: &mut Module, plan: &Plan| -> Vec<Word> { (0..plan.replicas).map(|_| module.alloc_id()).collect() };
        // Stage-ins of phi incoming values from outside the web, at the end of predecessors:
        // (predecessor block, vector, plan, matrix ids).
        let mut stage_ins: Vec<(usize, Word, Word, Vec<Word>)> = Vec::new();
        for bi in 0..module.functions[f].blocks.len() {
            let mut new_phis = Vec::new();
            let mut reads = Vec::new();
            let mut keep = Vec::new();
            for inst in std::mem::take(&mut module.functions[f].blocks[bi].insts) {
                let Some(p) = inst.result_id.filter(|p| inst.is(Op::Phi) && self.phis.contains_key(p)) else {
                    keep.push(inst);
                    continue;
                };
                let rep = self.phis[&p];
                let plan = &plans[&rep];
                // One phi per matrix of the value: (value, label) pairs of each.
                let mut operands: Vec<Vec<Operand>> = vec![Vec::new(); plan.replicas as usize];
                for pair in inst.operands.chunks(2) {
                    let (Some(v), Some(label)) = (pair[0].id(), pair.get(1).and_then(Operand::id)) else { continue };
                    let ms = match self.known_matrices(module, plans, stager, plan, v) {
                        Some(m) => m,
                        None => {
                            let ids = fresh(module, plan);
                            let pred = module.functions[f].block_index(label).unwrap_or(bi);
                            stage_ins.push((pred, v, rep, ids.clone()));
                            ids
                        }
                    };
                    for (ops, m) in operands.iter_mut().zip(ms) {
                        ops.extend([Operand::Id(m), Operand::Id(label)]);
                    }
                }
                let ty = plan.accumulator_type(module);
                for (ops, id) in operands.into_iter().zip(&self.matrix[&p]) {
                    new_phis.push(Inst::new(Op::Phi, Some(ty), Some(*id), ops).from_origin(inst.origin));
                }
                if let Some(None) = self.read_back.get(&p) {
                    reads.push((p, rep, inst.origin));
                }
            }
            let first_non_phi = keep.iter().position(|i| !i.is(Op::Phi)).unwrap_or(keep.len());
            let mut insts = keep;
            let at = first_non_phi;
            insts.splice(at..at, new_phis.iter().cloned());
            module.functions[f].blocks[bi].insts = insts;
            let mut i = at + new_phis.len();
            for (p, rep, origin) in reads {
                let mut b = Builder::new(module, Cursor { function: f, block: bi, index: i }).with_origin(origin);
                stager.stage_out_accumulator(&mut b, &plans[&rep], &self.matrix[&p], p);
                i = b.cursor.index;
            }
            // Values read back here, at the exit of the loops that compute them.
            let mut exiting: Vec<Word> = self.read_back.iter().filter(|(_, at)| **at == Some(bi)).map(|(v, _)| *v).collect();
            exiting.sort_unstable();
            for v in exiting {
                let mut b = Builder::new(module, Cursor { function: f, block: bi, index: i });
                stager.stage_out_accumulator(&mut b, plan_of(v), &self.matrix[&v], v);
                i = b.cursor.index;
            }
            // The DPAS of the block, and the operand matrices they staged.
            let mut staged = HashMap::new();
            while i < module.functions[f].blocks[bi].insts.len() {
                let inst = &module.functions[f].blocks[bi].insts[i];
                let Some(id) = inst.result_id.filter(|id| self.dpas.contains(id)) else {
                    i += 1;
                    continue;
                };
                let inst = module.functions[f].blocks[bi].insts.remove(i);
                let plan = &plans[&id];
                let mut b = Builder::new(module, Cursor { function: f, block: bi, index: i }).with_origin(inst.origin);
                let c = inst.operands.get(3).and_then(Operand::id).unwrap_or_default();
                let c_matrices = match self.known_matrices(b.module, plans, stager, plan, c) {
                    Some(m) => m,
                    None => {
                        let ids = fresh(b.module, plan);
                        stager.stage_in_accumulator(&mut b, plan, c, &ids);
                        ids
                    }
                };
                let d = &self.matrix[&id];
                stager.multiply(&mut b, plan, &mut staged, &c_matrices, d);
                if let Some(None) = self.read_back.get(&id) {
                    stager.stage_out_accumulator(&mut b, plan, d, id);
                }
                i = b.cursor.index;
            }
        }
        for (pred, v, rep, ids) in stage_ins {
            let block = &module.functions[f].blocks[pred];
            let mut index = block.insts.len() - usize::from(block.terminator().is_some());
            if index > 0 && block.insts[index - 1].op().is_some_and(|o| matches!(o, Op::LoopMerge | Op::SelectionMerge)) {
                index -= 1;
            }
            let mut b = Builder::new(module, Cursor { function: f, block: pred, index });
            stager.stage_in_accumulator(&mut b, &plans[&rep], v, &ids);
        }
    }
}
