//! `NvToKhrCooperativeMatrix`: SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix.
//!
//! Rewrite:
//! - each `OpTypeCooperativeMatrixNV` becomes one `OpTypeCooperativeMatrixKHR` per Use it is
//!   needed in (MatrixA, MatrixB, MatrixAccumulator); pointer types to it likewise. The Use of
//!   every matrix value is inferred from the `OpCooperativeMatrixMulAddNV` operands it flows
//!   into, following loads/stores of variables, `OpPhi`, `OpSelect`, `OpCopyObject`,
//!   `OpCompositeInsert`, conversions and arithmetic (all of which keep one Use). Values that
//!   never reach a MulAdd are accumulators. A matrix needed in several roles is split: loads
//!   from memory and from variables are issued once per role, and variables are duplicated per
//!   role (every store writes each copy); any other value needed in two roles is an error.
//! - `OpCooperativeMatrixLoadNV`/`StoreNV` become the KHR forms, the ColumnMajor boolean mapping
//!   to the RowMajorKHR/ColumnMajorKHR layout constant (an `OpSpecConstantOp Select` when the
//!   boolean is a specialization constant); Stride and memory access operands are kept.
//! - `OpCooperativeMatrixMulAddNV` becomes `OpCooperativeMatrixMulAddKHR` with the
//!   MatrixA/B/C/ResultSignedComponents operands taken from the integer component types'
//!   Signedness (NV semantics).
//! - `OpCooperativeMatrixLengthNV` becomes the KHR form on the accumulator type when the NV type
//!   is used as an accumulator, otherwise on its only Use.
//! - constant matrices (`OpConstantComposite`, `OpConstantNull`, `OpUndef`, spec composites) are
//!   cloned per Use where used in several.
//! - matrices (and pointers to them) in function signatures: a call's result shares the Use
//!   of the callee's returned values, an argument that of its parameter; function types are
//!   rewritten per function with the KHR types its parameters and result take.
//!
//! Spec-constant rows, columns and scopes are kept as ids. A shader's scope and memory-semantics
//! operands must be constants all the same: spirv-val lets a module declaring
//! CooperativeMatrixNV take a specialization constant there, which the KHR module may not; such
//! an operand is refused by name.
//!
//! Preconditions: a valid module; matrices are not members of structs, and a function's
//! parameter or result takes one Use at every call (an error names the instruction
//! otherwise). Applies to every target (on targets without cooperative matrices,
//! `EmulateCooperativeMatrix` lowers the KHR result). Leaves: no NV cooperative-matrix
//! instructions; the requirement step swaps the capability and the extension.

use crate::analysis::union_find::UnionFind;
use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{Op, Word};
use std::collections::{BTreeSet, HashMap, HashSet};

pub struct NvToKhrCooperativeMatrix;

/// KHR Use values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    A,
    B,
    Acc,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::A => "MatrixA",
            Role::B => "MatrixB",
            Role::Acc => "MatrixAccumulator",
        }
    }

    fn use_value(self) -> u32 {
        (match self {
            Role::A => spirv::CooperativeMatrixUse::MatrixAKHR,
            Role::B => spirv::CooperativeMatrixUse::MatrixBKHR,
            Role::Acc => spirv::CooperativeMatrixUse::MatrixAccumulatorKHR,
        }) as u32
    }
}

/// Instructions whose matrix result has the Use of their matrix operands.
fn is_linking_op(op: Option<Op>) -> bool {
    use Op::*;
    matches!(
        op,
        Some(
            CopyObject
                | ConvertFToU
                | ConvertFToS
                | ConvertSToF
                | ConvertUToF
                | UConvert
                | SConvert
                | FConvert
                | Bitcast
                | SNegate
                | FNegate
                | IAdd
                | FAdd
                | ISub
                | FSub
                | IMul
                | FMul
                | UDiv
                | SDiv
                | FDiv
                | MatrixTimesScalar
                | Select
                | Phi
                | CompositeInsert
        )
    )
}

fn ids_of(inst: &Inst) -> impl Iterator<Item = Word> + '_ {
    inst.operands.iter().filter_map(Operand::id)
}

/// Role-specific copies of types, values and free constants, made while rewriting.
struct Rewriter<'a> {
    khr_type: HashMap<(Word, Role), Word>,
    derived: &'a HashMap<Word, Inst>,
    derived_for: HashMap<(Word, Role), Word>,
    free_defs: HashMap<Word, Inst>,
    free_clone: HashMap<(Word, Role), Word>,
}

impl Rewriter<'_> {
    /// The type `ty` (an NV matrix type or one built on it) for `role`.
    fn type_for(&mut self, module: &mut Module, ty: Word, role: Role) -> Word {
        if let Some(k) = self.khr_type.get(&(ty, role)) {
            return *k;
        }
        let Some(d) = self.derived.get(&ty) else {
            return ty;
        };
        if let Some(c) = self.derived_for.get(&(ty, role)) {
            return *c;
        }
        let inner_pos = usize::from(d.is(Op::TypePointer));
        let inner_old = d.operands.get(inner_pos).and_then(Operand::id).unwrap_or_default();
        let inner = self.type_for(module, inner_old, role);
        let id = if inner == inner_old {
            ty
        } else {
            let mut copy = d.clone();
            copy.operands[inner_pos] = Operand::Id(inner);
            copy.result_id = Some(module.alloc_id());
            copy.origin = d.origin;
            module.add_global(copy)
        };
        self.derived_for.insert((ty, role), id);
        id
    }

    /// The KHR type a length of NV type `nv` is taken on: its accumulator form where it has
    /// one, else its only form.
    fn length_type(&self, nv: Word) -> Word {
        let role = [Role::Acc, Role::A, Role::B].into_iter().find(|r| self.khr_type.contains_key(&(nv, *r))).unwrap_or(Role::Acc);
        self.khr_type.get(&(nv, role)).copied().unwrap_or(nv)
    }

    /// The constant or undef `id` for `role`.
    fn clone_free(&mut self, module: &mut Module, id: Word, role: Role) -> Word {
        if let Some(c) = self.free_clone.get(&(id, role)) {
            return *c;
        }
        let def = self.free_defs[&id].clone();
        let old_ty = def.result_type.unwrap_or_default();
        let ty = self.type_for(module, old_ty, role);
        let c = if ty == old_ty {
            id
        } else if def.is(Op::Undef) {
            module.alloc_id()
        } else {
            let new = module.alloc_id();
            module.add_global(Inst { result_type: Some(ty), result_id: Some(new), ..def })
        };
        self.free_clone.insert((id, role), c);
        c
    }
}

impl Pass for NvToKhrCooperativeMatrix {
    fn name(&self) -> &'static str {
        "nv-to-khr-cooperative-matrix"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if module.has_capability(spirv::Capability::CooperativeMatrixNV) {
            scopes_constant(module, &Types::new(module))?;
        }
        if !module.globals().iter().any(|i| i.is(Op::TypeCooperativeMatrixNV)) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        // A length of anything but a matrix type is an error (spirv-val does not look into the
        // operation of an `OpSpecConstantOp`): `length_of` is `Some(operand)` for a length.
        let length_of = |i: &Inst| -> Option<Option<Word>> {
            match i.op() {
                Some(Op::CooperativeMatrixLengthNV) => Some(i.operands.first().and_then(Operand::id)),
                Some(Op::SpecConstantOp) if i.word_opt(0) == Some(Op::CooperativeMatrixLengthNV as u32) => Some(i.operands.get(1).and_then(Operand::id)),
                _ => None,
            }
        };
        // Nor at its result type, which must be a 32-bit integer.
        let wrong = |i: &Inst| -> Option<&'static str> {
            let operand = length_of(i)?;
            if !operand.and_then(|t| types.defs.get(&t)).is_some_and(|d| d.is(Op::TypeCooperativeMatrixNV)) {
                return Some("the length of an operand that is not a cooperative-matrix type");
            }
            i.result_type.and_then(|t| types.int(t)).is_none_or(|(w, _)| w != 32).then_some("a cooperative-matrix length whose result type is not a 32-bit integer")
        };
        if let Some((bad, message)) = module.globals().iter().chain(module.functions.iter().flat_map(|f| f.insts())).find_map(|i| Some((i, wrong(i)?))) {
            return Err(Error::Invalid { site: module.site(bad), message: message.into() });
        }

        // NV matrix types and types built on them.
        let nv_defs: Vec<Inst> = module.globals().iter().filter(|i| i.is(Op::TypeCooperativeMatrixNV)).cloned().collect();
        let nv_types: HashSet<Word> = nv_defs.iter().filter_map(|i| i.result_id).collect();
        // Types built on matrices: pointers and (runtime) arrays of them, to any depth.
        let mut derived: HashMap<Word, Inst> = HashMap::new();
        for inst in module.globals() {
            let contains = |t: Word| nv_types.contains(&t) || derived.contains_key(&t);
            match inst.op() {
                Some(Op::TypePointer) if inst.operands.get(1).and_then(Operand::id).is_some_and(contains) => {
                    derived.insert(inst.result()?, inst.clone());
                }
                Some(Op::TypeArray | Op::TypeRuntimeArray) if inst.operands.first().and_then(Operand::id).is_some_and(contains) => {
                    derived.insert(inst.result()?, inst.clone());
                }
                Some(Op::TypeStruct) if ids_of(inst).any(contains) => {
                    return Err(Error::Invalid { site: module.site(inst), message: "cooperative matrices inside structs are not supported yet".into() });
                }
                _ => {}
            }
        }
        // The NV matrix type at the bottom of a derived type.
        let base_nv = |mut ty: Word| -> Word {
            while let Some(d) = derived.get(&ty) {
                let pos = usize::from(d.is(Op::TypePointer));
                ty = d.operands.get(pos).and_then(Operand::id).unwrap_or_default();
            }
            ty
        };
        let is_matrix_ty = |t: Word| nv_types.contains(&t) || derived.contains_key(&t);
        let is_nv_value = |inst: &Inst| inst.result_type.is_some_and(|t| nv_types.contains(&t));
        // Constants and undefs of matrix type are free: cloned per role at their uses.
        let mut free: HashSet<Word> = module.globals().iter().filter(|i| !i.is(Op::Variable) && is_nv_value(i)).filter_map(|i| i.result_id).collect();
        let all_body = || module.functions.iter().flat_map(|f| f.insts());
        free.extend(all_body().filter(|i| i.is(Op::Undef) && is_nv_value(i)).filter_map(|i| i.result_id));
        let defs: HashMap<Word, Inst> = module.all_insts().filter(|i| i.result_type.is_some_and(is_matrix_ty)).filter_map(|i| i.result_id.map(|id| (id, i.clone()))).collect();
        let node = |id: Word| defs.contains_key(&id) && !free.contains(&id);

        // Classes of values that must share one Use, and direct roles from MulAdd operands.
        let mut uf = UnionFind::default();
        let mut direct: Vec<(Word, Role, usize)> = Vec::new();
        let mut loads: Vec<(Word, Word)> = Vec::new(); // (value, variable)
        let mut stores: Vec<(Word, Word)> = Vec::new(); // (variable, value)

        // Calls: a result shares its callee's class (the values it returns), an argument its
        // parameter's.
        let params: HashMap<Word, Vec<Word>> = module.functions.iter().map(|f| (f.id(), f.params.iter().filter_map(|p| p.result_id).collect())).collect();
        for f in &module.functions {
            for inst in f.blocks.iter().flat_map(|b| &b.insts) {
                if inst.is(Op::ReturnValue) && node(f.id()) && node(inst.id(0)?) {
                    uf.union(f.id(), inst.id(0)?);
                }
            }
        }
        for inst in module.all_insts().filter(|i| i.is(Op::FunctionCall)) {
            let callee = inst.id(0)?;
            if inst.result_id.is_some_and(node) && node(callee) {
                uf.union(inst.result()?, callee);
            }
            for (arg, param) in ids_of(inst).skip(1).zip(params.get(&callee).into_iter().flatten()) {
                if node(arg) && node(*param) {
                    uf.union(arg, *param);
                }
            }
        }
        for inst in module.all_insts() {
            let result = inst.result_id.filter(|r| node(*r));
            match inst.op() {
                Some(Op::Load) if result.is_some() => loads.push((inst.result()?, inst.id(0)?)),
                Some(Op::Store) if node(inst.id(0)?) && node(inst.id(1)?) => stores.push((inst.id(0)?, inst.id(1)?)),
                Some(Op::Variable) if result.is_some() => {
                    if let Some(init) = inst.operands.get(1).and_then(Operand::id).filter(|v| node(*v)) {
                        stores.push((inst.result()?, init));
                    }
                }
                Some(Op::AccessChain | Op::InBoundsAccessChain | Op::CompositeExtract) if result.is_some() && node(inst.id(0)?) => {
                    uf.union(inst.result()?, inst.id(0)?);
                }
                Some(Op::CompositeConstruct) if result.is_some() => {
                    for v in ids_of(inst).filter(|v| node(*v)) {
                        uf.union(inst.result()?, v);
                    }
                }
                o if is_linking_op(o) && result.is_some() => {
                    let r = inst.result()?;
                    let inputs: Vec<Word> = if o == Some(Op::CompositeInsert) { vec![inst.id(1)?] } else { ids_of(inst).collect() };
                    for v in inputs.into_iter().filter(|v| node(*v)) {
                        uf.union(r, v);
                    }
                }
                Some(Op::CooperativeMatrixMulAddNV) => {
                    let r = inst.result()?;
                    let [a, b, c] = inst.ids()?;
                    if node(c) {
                        uf.union(r, c);
                    }
                    for (v, role) in [(a, Role::A), (b, Role::B), (c, Role::Acc), (r, Role::Acc)] {
                        if node(v) {
                            direct.push((v, role, inst.at()));
                        }
                    }
                }
                _ => {}
            }
        }
        let mut roles: HashMap<Word, BTreeSet<Role>> = HashMap::new();
        for (v, role, _) in &direct {
            roles.entry(uf.find(*v)).or_default().insert(*role);
        }
        // A variable must provide every role its loads are used in; a stored value every role
        // of its variable. Classes that reach no MulAdd default to accumulators.
        let propagate = |uf: &mut UnionFind, roles: &mut HashMap<Word, BTreeSet<Role>>| loop {
            let mut changed = false;
            for (from, to) in loads.iter().map(|(v, var)| (*v, *var)).chain(stores.iter().map(|(var, v)| (*var, *v))) {
                let got = roles.get(&uf.find(from)).cloned().unwrap_or_default();
                let dst = roles.entry(uf.find(to)).or_default();
                let before = dst.len();
                dst.extend(got);
                changed |= dst.len() != before;
            }
            if !changed {
                break;
            }
        };
        propagate(&mut uf, &mut roles);
        let mut ids: Vec<Word> = defs.keys().copied().filter(|id| !free.contains(id)).collect();
        ids.sort_unstable();
        for id in &ids {
            let r = roles.entry(uf.find(*id)).or_default();
            if r.is_empty() {
                r.insert(Role::Acc);
            }
        }
        propagate(&mut uf, &mut roles);
        let roles_of = |uf: &mut UnionFind, id: Word| -> Vec<Role> { roles.get(&uf.find(id)).map(|r| r.iter().copied().collect()).unwrap_or_else(|| vec![Role::Acc]) };

        // Values needed in several roles must be re-creatable per role.
        let mut versions: HashMap<(Word, Role), Word> = HashMap::new();
        let mut needed: BTreeSet<(Word, Role)> = BTreeSet::new();
        for &id in &ids {
            let rs = roles_of(&mut uf, id);
            let def = &defs[&id];
            let splittable = matches!(def.op(), Some(Op::Variable | Op::Load | Op::CooperativeMatrixLoadNV | Op::AccessChain | Op::InBoundsAccessChain));
            if rs.len() > 1 && !splittable {
                let names: Vec<_> = rs.iter().map(|r| r.name()).collect();
                let root = uf.find(id);
                let site_offset = direct.iter().filter(|(v, _, _)| uf.find(*v) == root).map(|d| d.2).max().unwrap_or(def.at());
                let site_inst = module.all_insts().find(|i| i.is(Op::CooperativeMatrixMulAddNV) && i.at() == site_offset).unwrap_or(def);
                return Err(Error::Invalid {
                    site: module.site(site_inst),
                    message: format!("matrix value %{id} ({}) is used as {}; only matrices loaded from memory or variables can be split into several uses", def.name(), names.join(" and ")),
                });
            }
            let nv = base_nv(def.ty()?);
            for (k, r) in rs.iter().enumerate() {
                let v = if k == 0 { id } else { module.alloc_id() };
                versions.insert((id, *r), v);
                needed.insert((nv, *r));
            }
        }

        // A constant operand of a MulAdd needs its type in the operand's role too (a constant
        // B beside loaded A and C).
        let free_operands: Vec<(Word, Role)> = module
            .functions
            .iter()
            .flat_map(|f| f.insts())
            .filter(|i| i.is(Op::CooperativeMatrixMulAddNV))
            .flat_map(|i| i.operands.iter().filter_map(Operand::id).zip([Role::A, Role::B, Role::Acc]).collect::<Vec<_>>())
            .filter(|(v, _)| free.contains(v))
            .collect();
        for (v, role) in free_operands {
            if let Some(ty) = types.type_of(v) {
                needed.insert((base_nv(ty), role));
            }
        }

        // KHR types: the NV type id keeps its first needed role (so names and decorations stay).
        let use_consts: Vec<Word> = [Role::A, Role::B, Role::Acc].iter().map(|r| module.constant_u32(r.use_value())).collect();
        let mut khr_type: HashMap<(Word, Role), Word> = HashMap::new();
        for def in &nv_defs {
            let nv = def.result()?;
            let mut roles_for: Vec<Role> = needed.iter().filter(|(t, _)| *t == nv).map(|(_, r)| *r).collect();
            if roles_for.is_empty() {
                roles_for.push(Role::Acc);
            }
            let [component, scope, rows, cols] = def.ids()?;
            for (i, role) in roles_for.iter().enumerate() {
                let operands = [component, scope, rows, cols, use_consts[*role as usize]].map(Operand::Id).to_vec();
                let id = if i == 0 { nv } else { module.alloc_id() };
                let khr = Inst::new(Op::TypeCooperativeMatrixKHR, None, Some(id), operands).from_origin(def.origin);
                if i == 0 {
                    if let Some(slot) = module.globals_mut().iter_mut().find(|x| x.is(Op::TypeCooperativeMatrixNV) && x.result_id == Some(nv)) {
                        *slot = khr;
                    }
                } else {
                    module.add_global(khr);
                }
                khr_type.insert((nv, *role), id);
            }
        }
        let free_defs: HashMap<Word, Inst> = module.all_insts().filter_map(|i| i.result_id.filter(|id| free.contains(id)).map(|id| (id, i.clone()))).collect();
        let mut rw = Rewriter { khr_type, derived: &derived, derived_for: HashMap::new(), free_defs, free_clone: HashMap::new() };
        let version = |id: Word, role: Role| -> Option<Word> { versions.get(&(id, role)).copied() };
        let has_version = |id: Word| [Role::A, Role::B, Role::Acc].iter().any(|r| versions.contains_key(&(id, *r)));

        let mut layout_consts: HashMap<Word, Word> = HashMap::new();
        let mut functions = std::mem::take(&mut module.functions);
        // The role a function's result or parameter takes (one per value: they cannot split).
        let mut param_role: HashMap<Word, Role> = HashMap::new();
        for func in functions.iter_mut() {
            let mut changed = false;
            for inst in std::iter::once(&mut func.def).chain(func.params.iter_mut()) {
                let Some(id) = inst.result_id.filter(|id| has_version(*id)) else { continue };
                let role = roles_of(&mut uf, id)[0];
                param_role.insert(id, role);
                inst.result_type = Some(rw.type_for(module, inst.ty()?, role));
                changed = true;
            }
            if changed {
                let mut operands = vec![Operand::Id(func.def.ty()?)];
                operands.extend(func.params.iter().map(|p| Operand::Id(p.result_type.unwrap_or_default())));
                let existing = module.globals().iter().find(|g| g.is(Op::TypeFunction) && g.operands == operands).and_then(|g| g.result_id);
                let fn_ty = match existing {
                    Some(t) => t,
                    None => {
                        let id = module.alloc_id();
                        module.add_global(Inst::new(Op::TypeFunction, None, Some(id), operands))
                    }
                };
                func.def.operands[1] = Operand::Id(fn_ty);
            }
        }
        for func in functions.iter_mut() {
            let func_role = param_role.get(&func.id()).copied();
            for block in func.blocks.iter_mut() {
                let body = std::mem::take(&mut block.insts);
                let mut out = Vec::with_capacity(body.len());
                for inst in body {
                    let result = inst.result_id.filter(|id| has_version(*id));
                    let my_roles: Vec<Role> = result.map(|r| roles_of(&mut uf, r)).unwrap_or_default();
                    let missing = |m: &Module, id: Word, role: Role| Error::Invalid { site: m.site(&inst), message: format!("matrix %{id} has no {} form", role.name()) };
                    // A matrix operand for `role`: a clone of a free constant, or the role's version.
                    macro_rules! operand_for {
                        ($v:expr, $role:expr) => {{
                            let v = $v;
                            if free.contains(&v) {
                                rw.clone_free(module, v, $role)
                            } else {
                                version(v, $role).ok_or_else(|| missing(module, v, $role))?
                            }
                        }};
                    }
                    match inst.op() {
                        Some(Op::Variable | Op::Load | Op::CooperativeMatrixLoadNV | Op::AccessChain | Op::InBoundsAccessChain) if result.is_some() => {
                            let id = inst.result()?;
                            for role in &my_roles {
                                let mut o = inst.clone();
                                o.result_type = Some(rw.type_for(module, inst.ty()?, *role));
                                o.result_id = Some(version(id, *role).ok_or_else(|| missing(module, id, *role))?);
                                match inst.op() {
                                    Some(Op::Variable) => {
                                        if let Some(init) = inst.operands.get(1).and_then(Operand::id) {
                                            o.operands[1] = Operand::Id(operand_for!(init, *role));
                                        }
                                    }
                                    Some(Op::Load) => {
                                        let ptr = inst.id(0)?;
                                        o.operands[0] = Operand::Id(version(ptr, *role).ok_or_else(|| missing(module, ptr, *role))?);
                                    }
                                    Some(Op::AccessChain | Op::InBoundsAccessChain) => {
                                        let base = inst.id(0)?;
                                        o.operands[0] = Operand::Id(version(base, *role).unwrap_or(base));
                                    }
                                    _ => {
                                        // NV: Pointer, Stride, ColumnMajor, [memory access];
                                        // KHR: Pointer, MemoryLayout, Stride, [memory operand].
                                        outcome.count(inst.opcode);
                                        let [pointer, stride, column_major] = inst.ids()?;
                                        let layout = layout_const(module, &types, &mut layout_consts, column_major, &inst)?;
                                        let mut operands = vec![Operand::Id(pointer), Operand::Id(layout), Operand::Id(stride)];
                                        operands.extend_from_slice(&inst.operands[3..]);
                                        o = Inst { opcode: Op::CooperativeMatrixLoadKHR as u32, operands, ..o };
                                    }
                                }
                                out.push(o);
                            }
                        }
                        Some(Op::Store) if has_version(inst.id(0)?) => {
                            let [var, value] = inst.ids()?;
                            for role in roles_of(&mut uf, var) {
                                let mut o = inst.clone();
                                o.operands[0] = Operand::Id(version(var, role).ok_or_else(|| missing(module, var, role))?);
                                o.operands[1] = Operand::Id(operand_for!(value, role));
                                out.push(o);
                            }
                        }
                        Some(Op::CooperativeMatrixStoreNV) => {
                            // NV: Pointer, Object, Stride, ColumnMajor, [memory access];
                            // KHR: Pointer, Object, MemoryLayout, Stride, [memory operand].
                            outcome.count(inst.opcode);
                            let [pointer, object, stride, column_major] = inst.ids()?;
                            let object = if free.contains(&object) { rw.clone_free(module, object, Role::Acc) } else { object };
                            let layout = layout_const(module, &types, &mut layout_consts, column_major, &inst)?;
                            let mut operands = [pointer, object, layout, stride].map(Operand::Id).to_vec();
                            operands.extend_from_slice(&inst.operands[4..]);
                            out.push(Inst { opcode: Op::CooperativeMatrixStoreKHR as u32, operands, ..inst });
                        }
                        Some(Op::CooperativeMatrixMulAddNV) => {
                            outcome.count(inst.opcode);
                            let [a, b, c] = inst.ids()?;
                            let signed_comp = |ty: Option<Word>| -> bool {
                                let comp = nv_defs.iter().find(|d| d.result_id == ty && ty.is_some()).and_then(|d| d.operands.first().and_then(Operand::id)).unwrap_or(0);
                                types.int(comp).is_some_and(|(_, s)| s)
                            };
                            use spirv::CooperativeMatrixOperands as F;
                            let mut flags = F::NONE_KHR;
                            for (v, bit) in [(a, F::MATRIX_A_SIGNED_COMPONENTS_KHR), (b, F::MATRIX_B_SIGNED_COMPONENTS_KHR), (c, F::MATRIX_C_SIGNED_COMPONENTS_KHR)] {
                                if signed_comp(types.type_of(v)) {
                                    flags |= bit;
                                }
                            }
                            if signed_comp(inst.result_type) {
                                flags |= F::MATRIX_RESULT_SIGNED_COMPONENTS_KHR;
                            }
                            let mut operands = vec![Operand::Id(operand_for!(a, Role::A)), Operand::Id(operand_for!(b, Role::B)), Operand::Id(operand_for!(c, Role::Acc))];
                            if !flags.is_empty() {
                                operands.push(Operand::Enum(OperandKind::CooperativeMatrixOperands, flags.bits()));
                            }
                            let ty = rw.type_for(module, inst.ty()?, Role::Acc);
                            out.push(Inst { opcode: Op::CooperativeMatrixMulAddKHR as u32, result_type: Some(ty), operands, ..inst });
                        }
                        Some(Op::FunctionCall) => {
                            let mut o = inst.clone();
                            if let (Some(&role), Some(ty)) = (my_roles.first(), o.result_type) {
                                o.result_type = Some(rw.type_for(module, ty, role));
                            }
                            for (k, param) in params.get(&inst.id(0)?).into_iter().flatten().enumerate() {
                                let (Some(role), Some(Operand::Id(arg))) = (param_role.get(param), o.operands.get(k + 1)) else { continue };
                                let arg = *arg;
                                o.operands[k + 1] = Operand::Id(if free.contains(&arg) || has_version(arg) { operand_for!(arg, *role) } else { arg });
                            }
                            out.push(o);
                        }
                        Some(Op::ReturnValue) if func_role.is_some() => {
                            let mut o = inst.clone();
                            let (v, role) = (o.id(0)?, func_role.unwrap_or(Role::Acc));
                            if free.contains(&v) || has_version(v) {
                                o.operands[0] = Operand::Id(operand_for!(v, role));
                            }
                            out.push(o);
                        }
                        Some(Op::CooperativeMatrixLengthNV) => {
                            outcome.count(inst.opcode);
                            let nv = inst.id(0)?;
                            let ty = rw.length_type(nv);
                            out.push(Inst { opcode: Op::CooperativeMatrixLengthKHR as u32, operands: vec![Operand::Id(ty)], ..inst });
                        }
                        _ => {
                            let mut inst = inst;
                            if let (Some(&role), Some(ty)) = (my_roles.first(), inst.result_type) {
                                inst.result_type = Some(rw.type_for(module, ty, role));
                                for o in inst.operands.iter_mut() {
                                    if let Operand::Id(v) = o {
                                        if free.contains(v) {
                                            *v = rw.clone_free(module, *v, role);
                                        }
                                    }
                                }
                            }
                            out.push(inst);
                        }
                    }
                }
                block.insts = out;
            }
        }
        module.functions = functions;
        // Undefs cloned for other roles.
        let mut undef_clones: Vec<((Word, Role), Word)> = rw.free_clone.iter().filter(|((id, _), c)| rw.free_defs[id].is(Op::Undef) && **c != *id).map(|(k, c)| (*k, *c)).collect();
        undef_clones.sort_unstable();
        for ((id, role), c) in undef_clones {
            let ty = rw.type_for(module, rw.free_defs[&id].result_type.unwrap_or_default(), role);
            module.add_global(Inst::new(Op::Undef, Some(ty), Some(c), vec![]));
        }
        // `OpSpecConstantOp CooperativeMatrixLengthNV` (glslang emits it for `.length()`).
        let mut spec_lengths = 0;
        for inst in module.globals_mut().iter_mut().filter(|i| i.is(Op::SpecConstantOp) && i.word_opt(0) == Some(Op::CooperativeMatrixLengthNV as u32)) {
            spec_lengths += 1;
            let nv = inst.operands.get(1).and_then(Operand::id).unwrap_or_default();
            inst.operands[0] = Operand::Literal(Op::CooperativeMatrixLengthKHR as u32);
            inst.operands[1] = Operand::Id(rw.length_type(nv));
        }
        for _ in 0..spec_lengths {
            outcome.count(Op::CooperativeMatrixLengthNV as u32);
        }
        // Global (Private) matrix variables keep one role.
        for k in 0..module.globals().len() {
            let inst = module.globals()[k].clone();
            if inst.is(Op::Variable) && inst.result_type.is_some_and(|t| derived.contains_key(&t)) {
                let rs = roles_of(&mut uf, inst.result()?);
                if rs.len() > 1 {
                    return Err(Error::Invalid { site: module.site(&inst), message: "a module-scope matrix variable used in several roles is not supported".into() });
                }
                let ty = rw.type_for(module, inst.ty()?, rs[0]);
                module.globals_mut()[k].result_type = Some(ty);
            }
        }
        outcome.changed = true;
        Ok(outcome)
    }
}

/// Every scope and memory-semantics operand of a shader is a constant: spirv-val lets a module
/// declaring CooperativeMatrixNV take a specialization constant there, which the KHR module,
/// without that capability, may not.
fn scopes_constant(module: &Module, types: &Types) -> Result<()> {
    if !module.has_capability(spirv::Capability::Shader) {
        return Ok(());
    }
    for inst in module.functions.iter().flat_map(|f| f.insts()) {
        if let Some((_, kind, id)) = crate::ir::grammar::synchronization_operands(inst).into_iter().find(|(_, _, id)| types.const_u32(*id).is_none()) {
            let what = if kind == OperandKind::IdScope { "scope" } else { "memory semantics" };
            return Err(Error::Invalid { site: module.site(inst), message: format!("{what} %{id} is not a constant, which a shader's must be") });
        }
        // The ids after a memory access mask are the scopes of MakePointerAvailable and
        // MakePointerVisible (its alignment is a literal).
        let Some(mask) = inst.operands.iter().position(|o| matches!(o, Operand::Enum(OperandKind::MemoryAccess, _))) else { continue };
        if let Some(scope) = inst.operands[mask + 1..].iter().filter_map(Operand::id).find(|s| types.const_u32(*s).is_none()) {
            return Err(Error::Invalid { site: module.site(inst), message: format!("memory access scope %{scope} is not a constant, which a shader's scopes must be") });
        }
    }
    Ok(())
}

/// The KHR MemoryLayout constant for an NV ColumnMajor boolean.
fn layout_const(module: &mut Module, types: &Types, cache: &mut HashMap<Word, Word>, column_major: Word, inst: &Inst) -> Result<Word> {
    if let Some(c) = cache.get(&column_major) {
        return Ok(*c);
    }
    let row = spirv::CooperativeMatrixLayout::RowMajorKHR as u32;
    let col = spirv::CooperativeMatrixLayout::ColumnMajorKHR as u32;
    let c = match types.bools.get(&column_major) {
        Some(cm) => module.constant_u32(if *cm { col } else { row }),
        None => {
            // A specialization-constant boolean: OpSpecConstantTrue/False, or an OpSpecConstantOp
            // of boolean type (e.g. `a || b` over spec constants).
            let bool_type = module.globals().iter().find(|i| i.is(Op::TypeBool)).and_then(|i| i.result_id);
            let is_spec_bool = module.globals().iter().any(|i| {
                let spec_bool = i.is(Op::SpecConstantTrue) || i.is(Op::SpecConstantFalse) || (i.is(Op::SpecConstantOp) && i.result_type == bool_type);
                spec_bool && i.result_id == Some(column_major)
            });
            if !is_spec_bool {
                return Err(Error::Invalid { site: module.site(inst), message: format!("ColumnMajor %{column_major} is not a boolean constant instruction") });
            }
            let uint = module.type_int(32, false);
            let one = module.constant_u32(col);
            let zero = module.constant_u32(row);
            let id = module.alloc_id();
            let operands = vec![Operand::Literal(Op::Select as u32), Operand::Id(column_major), Operand::Id(one), Operand::Id(zero)];
            module.add_global(Inst::new(Op::SpecConstantOp, Some(uint), Some(id), operands))
        }
    };
    cache.insert(column_major, c);
    Ok(c)
}
