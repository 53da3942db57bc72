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
//!
//! Spec-constant rows, columns and scopes are kept as ids.
//!
//! Preconditions: a valid module; matrices are not members of arrays, structs or function
//! signatures (an error names the instruction otherwise). Requires a target with
//! VK_KHR_cooperative_matrix. Leaves: no NV cooperative-matrix instructions; the final step
//! swaps the capability and the extension.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::module::{cap, op, Inst, Module};
use crate::pipeline::{Changes, Pass, PassStats};
use crate::profile::DeviceCaps;
use std::collections::{BTreeSet, HashMap, HashSet};

pub struct NvToKhrCooperativeMatrix;

/// KHR Use values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    A = 0,
    B = 1,
    Acc = 2,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::A => "MatrixA",
            Role::B => "MatrixB",
            Role::Acc => "MatrixAccumulator",
        }
    }
}

struct UnionFind {
    parent: HashMap<u32, u32>,
}

impl UnionFind {
    fn find(&mut self, x: u32) -> u32 {
        let p = *self.parent.entry(x).or_insert(x);
        if p == x {
            return x;
        }
        let root = self.find(p);
        self.parent.insert(x, root);
        root
    }
    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }
}

fn is_linking_op(opcode: u32) -> bool {
    matches!(
        opcode,
        op::COPY_OBJECT
            | op::CONVERT_F_TO_U
            | op::CONVERT_F_TO_S
            | op::CONVERT_S_TO_F
            | op::CONVERT_U_TO_F
            | op::U_CONVERT
            | op::S_CONVERT
            | op::F_CONVERT
            | op::BITCAST
            | op::S_NEGATE
            | op::F_NEGATE
            | op::I_ADD
            | op::F_ADD
            | op::I_SUB
            | op::F_SUB
            | op::I_MUL
            | op::F_MUL
            | op::U_DIV
            | op::S_DIV
            | op::F_DIV
            | op::MATRIX_TIMES_SCALAR
            | op::SELECT
            | op::PHI
            | op::COMPOSITE_INSERT
    )
}

impl Pass for NvToKhrCooperativeMatrix {
    fn name(&self) -> &'static str {
        "nv-to-khr-cooperative-matrix"
    }

    fn run(&self, module: &mut Module, target: &DeviceCaps, changes: &mut Changes, stats: &mut PassStats) -> Result<()> {
        let Some(first_nv) = module.insts.iter().find(|i| i.op == op::TYPE_COOPERATIVE_MATRIX_NV) else {
            return Ok(());
        };
        if !target.has_cooperative_matrix() {
            return Err(Error::Unsupported {
                opcode: first_nv.name(),
                offset: first_nv.at(),
                target: target.name.clone(),
                missing: "VK_KHR_cooperative_matrix (subgroup emulation of cooperative matrices is not implemented yet)".into(),
            });
        }
        let types = Types::new(module);
        let globals_end = module.functions_start();

        // NV matrix types and pointer types to them.
        let nv_defs: Vec<Inst> = module.insts.iter().filter(|i| i.op == op::TYPE_COOPERATIVE_MATRIX_NV).cloned().collect();
        let nv_types: HashSet<u32> = nv_defs.iter().map(|i| i.operands[0]).collect();
        // Types built on matrices: pointers and (runtime) arrays of them, to any depth.
        let mut derived: HashMap<u32, Inst> = HashMap::new();
        for inst in &module.insts[..globals_end] {
            let contains = |t: &u32| nv_types.contains(t) || derived.contains_key(t);
            match inst.op {
                op::TYPE_POINTER if contains(&inst.operands[2]) => {
                    derived.insert(inst.operands[0], inst.clone());
                }
                op::TYPE_ARRAY | op::TYPE_RUNTIME_ARRAY if contains(&inst.operands[1]) => {
                    derived.insert(inst.operands[0], inst.clone());
                }
                op::TYPE_STRUCT | op::TYPE_FUNCTION if inst.operands[1..].iter().any(contains) => {
                    return Err(Error::Invalid {
                        opcode: inst.name(),
                        offset: inst.at(),
                        message: "cooperative matrices inside structs or function signatures are not supported yet".into(),
                    });
                }
                _ => {}
            }
        }
        // The NV matrix type at the bottom of a derived type.
        let base_nv = |mut ty: u32| -> u32 {
            while let Some(d) = derived.get(&ty) {
                ty = if d.op == op::TYPE_POINTER { d.operands[2] } else { d.operands[1] };
            }
            ty
        };
        let is_matrix_ty = |t: u32| nv_types.contains(&t) || derived.contains_key(&t);
        // Constants and undefs of matrix type are free: cloned per role at their uses.
        let free: HashSet<u32> = module
            .insts
            .iter()
            .enumerate()
            .filter(|(i, inst)| inst.op == op::UNDEF || (*i < globals_end && inst.op != op::VARIABLE))
            .filter(|(_, inst)| inst.result_type().is_some_and(|t| nv_types.contains(&t)))
            .filter_map(|(_, inst)| inst.result_id())
            .collect();
        let defs: HashMap<u32, Inst> = module
            .insts
            .iter()
            .filter(|i| i.result_type().is_some_and(is_matrix_ty))
            .filter_map(|i| i.result_id().map(|id| (id, i.clone())))
            .collect();
        let node = |id: &u32| defs.contains_key(id) && !free.contains(id);

        // Classes of values that must share one Use, and direct roles from MulAdd operands.
        let mut uf = UnionFind { parent: HashMap::new() };
        let mut direct: Vec<(u32, Role, usize)> = Vec::new();
        let mut loads: Vec<(u32, u32)> = Vec::new(); // (value, variable)
        let mut stores: Vec<(u32, u32)> = Vec::new(); // (variable, value)
        for inst in &module.insts {
            match inst.op {
                op::LOAD if node(&inst.operands[1]) => loads.push((inst.operands[1], inst.operands[2])),
                op::STORE if node(&inst.operands[0]) && node(&inst.operands[1]) => stores.push((inst.operands[0], inst.operands[1])),
                op::VARIABLE if node(&inst.operands[1]) && inst.operands.len() > 3 && node(&inst.operands[3]) => stores.push((inst.operands[1], inst.operands[3])),
                op::ACCESS_CHAIN | op::IN_BOUNDS_ACCESS_CHAIN if inst.result_id().is_some_and(|r| node(&r)) && node(&inst.operands[2]) => {
                    uf.union(inst.operands[1], inst.operands[2]);
                }
                op::COMPOSITE_EXTRACT if inst.result_id().is_some_and(|r| node(&r)) && node(&inst.operands[2]) => {
                    uf.union(inst.operands[1], inst.operands[2]);
                }
                op::COMPOSITE_CONSTRUCT if inst.result_id().is_some_and(|r| node(&r)) => {
                    for v in inst.operands[2..].iter().filter(|v| node(v)) {
                        uf.union(inst.operands[1], *v);
                    }
                }
                o if is_linking_op(o) && inst.result_id().is_some_and(|r| node(&r)) => {
                    let result = inst.operands[1];
                    let inputs: Vec<u32> = if o == op::COMPOSITE_INSERT { vec![inst.operands[3]] } else { inst.operands[2..].to_vec() };
                    for v in inputs.iter().filter(|v| node(v)) {
                        uf.union(result, *v);
                    }
                }
                op::COOPERATIVE_MATRIX_MUL_ADD_NV => {
                    let [_, r, a, b, c] = inst.operands[..] else {
                        return Err(Error::Malformed { offset: inst.at(), message: "OpCooperativeMatrixMulAddNV needs 5 operands".into() });
                    };
                    if node(&c) {
                        uf.union(r, c);
                    }
                    for (v, role) in [(a, Role::A), (b, Role::B), (c, Role::Acc), (r, Role::Acc)] {
                        if node(&v) {
                            direct.push((v, role, inst.at()));
                        }
                    }
                }
                _ => {}
            }
        }
        let mut roles: HashMap<u32, BTreeSet<Role>> = HashMap::new();
        for (v, role, _) in &direct {
            roles.entry(uf.find(*v)).or_default().insert(*role);
        }
        // A variable must provide every role its loads are used in; a stored value every role
        // of its variable. Classes that reach no MulAdd default to accumulators.
        let propagate = |uf: &mut UnionFind, roles: &mut HashMap<u32, BTreeSet<Role>>| loop {
            let mut changed = false;
            for (v, var) in &loads {
                let from = roles.get(&uf.find(*v)).cloned().unwrap_or_default();
                let to = roles.entry(uf.find(*var)).or_default();
                let before = to.len();
                to.extend(from);
                changed |= to.len() != before;
            }
            for (var, v) in &stores {
                let from = roles.get(&uf.find(*var)).cloned().unwrap_or_default();
                let to = roles.entry(uf.find(*v)).or_default();
                let before = to.len();
                to.extend(from);
                changed |= to.len() != before;
            }
            if !changed {
                break;
            }
        };
        propagate(&mut uf, &mut roles);
        let ids: Vec<u32> = defs.keys().copied().filter(|id| !free.contains(id)).collect();
        for id in &ids {
            let r = roles.entry(uf.find(*id)).or_default();
            if r.is_empty() {
                r.insert(Role::Acc);
            }
        }
        propagate(&mut uf, &mut roles);
        let roles_of = |uf: &mut UnionFind, id: u32| -> Vec<Role> { roles.get(&uf.find(id)).map(|r| r.iter().copied().collect()).unwrap_or_else(|| vec![Role::Acc]) };

        // Values needed in several roles must be re-creatable per role.
        let mut versions: HashMap<(u32, Role), u32> = HashMap::new();
        let mut needed: BTreeSet<(u32, Role)> = BTreeSet::new();
        let mut sorted_ids = ids.clone();
        sorted_ids.sort_unstable();
        for id in sorted_ids {
            let rs = roles_of(&mut uf, id);
            let def = &defs[&id];
            if rs.len() > 1 && !matches!(def.op, op::VARIABLE | op::LOAD | op::COOPERATIVE_MATRIX_LOAD_NV | op::ACCESS_CHAIN | op::IN_BOUNDS_ACCESS_CHAIN) {
                let names: Vec<_> = rs.iter().map(|r| r.name()).collect();
                let site = direct.iter().filter(|(v, _, _)| uf.find(*v) == uf.find(id)).map(|d| d.2).max().unwrap_or(def.at());
                return Err(Error::Invalid {
                    opcode: "OpCooperativeMatrixMulAddNV".into(),
                    offset: site,
                    message: format!(
                        "matrix value %{id} ({}) is used as {}; only matrices loaded from memory or variables can be split into several uses",
                        def.name(),
                        names.join(" and ")
                    ),
                });
            }
            let nv = base_nv(def.operands[0]);
            for (k, r) in rs.iter().enumerate() {
                let v = if k == 0 { id } else { module.alloc_id() };
                versions.insert((id, *r), v);
                needed.insert((nv, *r));
            }
        }

        // KHR types: the NV type id keeps its first needed role (so names and decorations stay).
        let use_consts: Vec<u32> = (0..3).map(|u| module.const_u32(u)).collect();
        let mut khr_type: HashMap<(u32, Role), u32> = HashMap::new();
        for def in &nv_defs {
            let nv = def.operands[0];
            let mut roles_for: Vec<Role> = needed.iter().filter(|(t, _)| *t == nv).map(|(_, r)| *r).collect();
            if roles_for.is_empty() {
                roles_for.push(Role::Acc);
            }
            for (i, role) in roles_for.iter().enumerate() {
                let rest = vec![def.operands[1], def.operands[2], def.operands[3], def.operands[4], use_consts[*role as usize]];
                let id = if i == 0 {
                    let pos = module.insts.iter().position(|x| x.op == op::TYPE_COOPERATIVE_MATRIX_NV && x.operands[0] == nv).unwrap_or(0);
                    let mut operands = vec![nv];
                    operands.extend(rest);
                    module.insts[pos] = Inst { op: op::TYPE_COOPERATIVE_MATRIX_KHR, operands, offset: def.offset };
                    nv
                } else {
                    module.add_global(op::TYPE_COOPERATIVE_MATRIX_KHR, rest, None)
                };
                khr_type.insert((nv, *role), id);
            }
        }
        // Derived types per role, built on demand; the original ids serve each NV type's first role.
        let mut derived_for: HashMap<(u32, Role), u32> = HashMap::new();
        let mut type_for = |module: &mut Module, ty: u32, role: Role| -> u32 {
            fn go(module: &mut Module, ty: u32, role: Role, khr: &HashMap<(u32, Role), u32>, derived: &HashMap<u32, Inst>, cache: &mut HashMap<(u32, Role), u32>) -> u32 {
                if let Some(k) = khr.get(&(ty, role)) {
                    return *k;
                }
                let Some(d) = derived.get(&ty) else { return ty };
                if let Some(c) = cache.get(&(ty, role)) {
                    return *c;
                }
                let inner_pos = if d.op == op::TYPE_POINTER { 2 } else { 1 };
                let inner = go(module, d.operands[inner_pos], role, khr, derived, cache);
                let id = if inner == d.operands[inner_pos] {
                    ty
                } else {
                    let mut rest = d.operands[1..].to_vec();
                    rest[inner_pos - 1] = inner;
                    module.add_global(d.op, rest, None)
                };
                cache.insert((ty, role), id);
                id
            }
            go(module, ty, role, &khr_type, &derived, &mut derived_for)
        };

        // Clones of free constants per role.
        let free_defs: HashMap<u32, Inst> = module.insts.iter().filter_map(|i| i.result_id().filter(|id| free.contains(id)).map(|id| (id, i.clone()))).collect();
        let mut free_clone: HashMap<(u32, Role), u32> = HashMap::new();
        let mut clone_free = |module: &mut Module, type_for: &mut dyn FnMut(&mut Module, u32, Role) -> u32, id: u32, role: Role| -> u32 {
            if let Some(c) = free_clone.get(&(id, role)) {
                return *c;
            }
            let def = &free_defs[&id];
            let ty = type_for(module, def.operands[0], role);
            let c = if ty == def.operands[0] {
                id
            } else if def.op == op::UNDEF {
                module.alloc_id()
            } else {
                module.add_global(def.op, def.operands[2..].to_vec(), Some(ty))
            };
            free_clone.insert((id, role), c);
            c
        };
        let version = |id: u32, role: Role| -> Option<u32> { versions.get(&(id, role)).copied() };

        let mut layout_consts: HashMap<u32, u32> = HashMap::new();
        let start = module.functions_start();
        let body = module.insts.split_off(start);
        let mut out = Vec::with_capacity(body.len());
        for inst in body {
            let result = inst.result_id().filter(|id| versions.contains_key(&(*id, Role::A)) || versions.contains_key(&(*id, Role::B)) || versions.contains_key(&(*id, Role::Acc)));
            let my_roles: Vec<Role> = result.map(|r| roles_of(&mut uf, r)).unwrap_or_default();
            let missing = |id: u32, role: Role| Error::Invalid {
                opcode: inst.name(),
                offset: inst.at(),
                message: format!("matrix %{id} has no {} form", role.name()),
            };
            match inst.op {
                op::VARIABLE | op::LOAD | op::COOPERATIVE_MATRIX_LOAD_NV | op::ACCESS_CHAIN | op::IN_BOUNDS_ACCESS_CHAIN if result.is_some() => {
                    let id = result.unwrap_or_default();
                    for role in &my_roles {
                        let mut o = inst.operands.clone();
                        o[0] = type_for(module, o[0], *role);
                        o[1] = version(id, *role).ok_or_else(|| missing(id, *role))?;
                        match inst.op {
                            op::VARIABLE => {
                                if let Some(init) = o.get(3).copied() {
                                    o[3] = if free.contains(&init) { clone_free(module, &mut type_for, init, *role) } else { version(init, *role).ok_or_else(|| missing(init, *role))? };
                                }
                                out.push(Inst { op: op::VARIABLE, operands: o, offset: inst.offset });
                            }
                            op::LOAD => {
                                o[2] = version(o[2], *role).ok_or_else(|| missing(o[2], *role))?;
                                out.push(Inst { op: op::LOAD, operands: o, offset: inst.offset });
                            }
                            op::ACCESS_CHAIN | op::IN_BOUNDS_ACCESS_CHAIN => {
                                o[2] = version(o[2], *role).unwrap_or(o[2]);
                                out.push(Inst { op: inst.op, operands: o, offset: inst.offset });
                            }
                            _ => {
                                stats.count(inst.op);
                                let layout = layout_const(module, &types, &mut layout_consts, o[4], &inst)?;
                                let mut operands = vec![o[0], o[1], o[2], layout, o[3]];
                                operands.extend_from_slice(&o[5..]);
                                out.push(Inst { op: op::COOPERATIVE_MATRIX_LOAD_KHR, operands, offset: inst.offset });
                            }
                        }
                    }
                }
                op::STORE if versions.contains_key(&(inst.operands[0], roles_of(&mut uf, inst.operands[0])[0])) => {
                    let (var, value) = (inst.operands[0], inst.operands[1]);
                    for role in roles_of(&mut uf, var) {
                        let mut o = inst.operands.clone();
                        o[0] = version(var, role).ok_or_else(|| missing(var, role))?;
                        o[1] = if free.contains(&value) { clone_free(module, &mut type_for, value, role) } else { version(value, role).ok_or_else(|| missing(value, role))? };
                        out.push(Inst { op: op::STORE, operands: o, offset: inst.offset });
                    }
                }
                op::COOPERATIVE_MATRIX_STORE_NV => {
                    stats.count(inst.op);
                    let o = inst.operands.clone();
                    let obj = if free.contains(&o[1]) { clone_free(module, &mut type_for, o[1], Role::Acc) } else { o[1] };
                    let layout = layout_const(module, &types, &mut layout_consts, o[3], &inst)?;
                    let mut operands = vec![o[0], obj, layout, o[2]];
                    operands.extend_from_slice(&o[4..]);
                    out.push(Inst { op: op::COOPERATIVE_MATRIX_STORE_KHR, operands, offset: inst.offset });
                }
                op::COOPERATIVE_MATRIX_MUL_ADD_NV => {
                    stats.count(inst.op);
                    let mut o = inst.operands.clone();
                    o[0] = type_for(module, o[0], Role::Acc);
                    for (k, role) in [(2, Role::A), (3, Role::B), (4, Role::Acc)] {
                        let v = inst.operands[k];
                        o[k] = if free.contains(&v) { clone_free(module, &mut type_for, v, role) } else { version(v, role).ok_or_else(|| missing(v, role))? };
                    }
                    let signed_comp = |ty: Option<u32>| -> bool {
                        let comp = nv_defs.iter().find(|d| Some(d.operands[0]) == ty).map_or(0, |d| d.operands[1]);
                        types.int(comp).is_some_and(|(_, s)| s)
                    };
                    let mut flags = 0;
                    for (k, bit) in [(2, 0x1), (3, 0x2), (4, 0x4)] {
                        if signed_comp(types.type_of(inst.operands[k])) {
                            flags |= bit;
                        }
                    }
                    if signed_comp(Some(inst.operands[0])) {
                        flags |= 0x8;
                    }
                    if flags != 0 {
                        o.push(flags);
                    }
                    out.push(Inst { op: op::COOPERATIVE_MATRIX_MUL_ADD_KHR, operands: o, offset: inst.offset });
                }
                op::COOPERATIVE_MATRIX_LENGTH_NV => {
                    stats.count(inst.op);
                    let nv = inst.operands[2];
                    let role = [Role::Acc, Role::A, Role::B].into_iter().find(|r| khr_type.contains_key(&(nv, *r))).unwrap_or(Role::Acc);
                    let ty = khr_type.get(&(nv, role)).copied().unwrap_or(nv);
                    out.push(Inst { op: op::COOPERATIVE_MATRIX_LENGTH_KHR, operands: vec![inst.operands[0], inst.operands[1], ty], offset: inst.offset });
                }
                _ => {
                    let mut inst = inst;
                    if let (Some(&role), Some(ty)) = (my_roles.first(), inst.result_type()) {
                        inst.operands[0] = type_for(module, ty, role);
                        let skip = 2;
                        for k in skip..inst.operands.len() {
                            if free.contains(&inst.operands[k]) {
                                inst.operands[k] = clone_free(module, &mut type_for, inst.operands[k], role);
                            }
                        }
                    }
                    out.push(inst);
                }
            }
        }
        // Undefs cloned for other roles.
        let undef_clones: Vec<Inst> = free_clone
            .iter()
            .filter(|((id, _), c)| free_defs[id].op == op::UNDEF && **c != *id)
            .map(|((id, role), c)| Inst::new(op::UNDEF, vec![type_for(module, free_defs[id].operands[0], *role), *c]))
            .collect();
        module.insts.extend(undef_clones);
        module.insts.extend(out);
        // `OpSpecConstantOp CooperativeMatrixLengthNV` (glslang emits it for `.length()`).
        for inst in module.insts.iter_mut().filter(|i| i.op == op::SPEC_CONSTANT_OP && i.operands.get(2) == Some(&op::COOPERATIVE_MATRIX_LENGTH_NV)) {
            stats.count(op::COOPERATIVE_MATRIX_LENGTH_NV);
            let nv = inst.operands[3];
            let role = [Role::Acc, Role::A, Role::B].into_iter().find(|r| khr_type.contains_key(&(nv, *r))).unwrap_or(Role::Acc);
            inst.operands[2] = op::COOPERATIVE_MATRIX_LENGTH_KHR;
            inst.operands[3] = khr_type.get(&(nv, role)).copied().unwrap_or(nv);
        }
        // Global (Private) matrix variables keep one role.
        let globals_end = module.functions_start();
        for k in 0..globals_end {
            let inst = module.insts[k].clone();
            if inst.op == op::VARIABLE && derived.contains_key(&inst.operands[0]) {
                let rs = roles_of(&mut uf, inst.operands[1]);
                if rs.len() > 1 {
                    return Err(Error::Invalid { opcode: inst.name(), offset: inst.at(), message: "a module-scope matrix variable used in several roles is not supported".into() });
                }
                module.insts[k].operands[0] = type_for(module, inst.operands[0], rs[0]);
            }
        }
        changes.remove_capabilities.push(cap::COOPERATIVE_MATRIX_NV);
        changes.add_capabilities.push(cap::COOPERATIVE_MATRIX_KHR);
        changes.remove_extensions.push("SPV_NV_cooperative_matrix".into());
        changes.add_extensions.push("SPV_KHR_cooperative_matrix".into());
        Ok(())
    }
}

/// The KHR MemoryLayout constant for an NV ColumnMajor boolean.
fn layout_const(module: &mut Module, types: &Types, cache: &mut HashMap<u32, u32>, column_major: u32, inst: &Inst) -> Result<u32> {
    if let Some(c) = cache.get(&column_major) {
        return Ok(*c);
    }
    let c = match types.bools.get(&column_major) {
        Some(cm) => module.const_u32(u32::from(*cm)),
        None => {
            // A specialization-constant boolean: OpSpecConstantTrue/False, or an OpSpecConstantOp
            // of boolean type (e.g. `a || b` over spec constants).
            let bool_type = module.insts.iter().find(|i| i.op == op::TYPE_BOOL).map(|i| i.operands[0]);
            let is_spec_bool = module.insts.iter().any(|i| {
                let spec_bool = i.op == op::SPEC_CONSTANT_TRUE || i.op == op::SPEC_CONSTANT_FALSE || (i.op == op::SPEC_CONSTANT_OP && Some(i.operands[0]) == bool_type);
                spec_bool && i.operands.get(1) == Some(&column_major)
            });
            if !is_spec_bool {
                return Err(Error::Invalid {
                    opcode: inst.name(),
                    offset: inst.at(),
                    message: format!("ColumnMajor %{column_major} is not a boolean constant instruction"),
                });
            }
            let uint = module.type_int(32, false);
            let one = module.const_u32(1);
            let zero = module.const_u32(0);
            module.add_global(op::SPEC_CONSTANT_OP, vec![op::SELECT, column_major, one, zero], Some(uint))
        }
    };
    cache.insert(column_major, c);
    Ok(c)
}
