//! `CheckCooperativeMatrix`: verifies that every KHR cooperative-matrix type and MulAdd shape
//! left in the module is one the target lists.
//!
//! Rewrite: none. Fails with an error naming the instruction, its word offset and the missing
//! shape or component type when the target has no cooperative matrices, lists no row with a
//! component type (e.g. fp8 on the H100), or lists no row for a MulAdd's M x N x K and types.
//! Matrices whose dimensions are specialization constants are checked at MulAdd only when the
//! constants' defaults are known. Until subgroup emulation exists this is where unsupported
//! cooperative-matrix code stops.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::module::{op, Module};
use crate::pipeline::{Changes, Pass, PassStats};
use crate::profile::{ComponentType, DeviceCaps};

pub struct CheckCooperativeMatrix;

/// Component type of a scalar type id; `signed` overrides integer signedness (KHR MulAdd flags).
pub fn component_type(types: &Types, ty: u32, signed: Option<bool>) -> Option<ComponentType> {
    if let Some((w, s)) = types.int(ty) {
        let s = signed.unwrap_or(s);
        return Some(match (w, s) {
            (8, true) => ComponentType::S8,
            (8, false) => ComponentType::U8,
            (16, true) => ComponentType::S16,
            (16, false) => ComponentType::U16,
            (32, true) => ComponentType::S32,
            (32, false) => ComponentType::U32,
            (64, true) => ComponentType::S64,
            (64, false) => ComponentType::U64,
            _ => return None,
        });
    }
    let (w, encoding) = types.float(ty)?;
    Some(match (w, encoding) {
        (16, None) => ComponentType::F16,
        (16, Some(0)) => ComponentType::Bf16,
        (32, None) => ComponentType::F32,
        (64, None) => ComponentType::F64,
        (8, Some(4214)) => ComponentType::E4m3,
        (8, Some(4215)) => ComponentType::E5m2,
        _ => return None,
    })
}

impl Pass for CheckCooperativeMatrix {
    fn name(&self) -> &'static str {
        "check-cooperative-matrix"
    }

    fn run(&self, module: &mut Module, target: &DeviceCaps, _changes: &mut Changes, _stats: &mut PassStats) -> Result<()> {
        let Some(first) = module.insts.iter().find(|i| i.op == op::TYPE_COOPERATIVE_MATRIX_KHR) else {
            return Ok(());
        };
        let unsupported = |inst: &crate::module::Inst, missing: String| Error::Unsupported {
            opcode: inst.name(),
            offset: inst.at(),
            target: target.name.clone(),
            missing,
        };
        if !target.has_cooperative_matrix() {
            return Err(unsupported(first, "VK_KHR_cooperative_matrix (subgroup emulation of cooperative matrices is not implemented yet)".into()));
        }
        let types = Types::new(module);
        for inst in module.insts.iter().filter(|i| i.op == op::TYPE_COOPERATIVE_MATRIX_KHR) {
            let comp = component_type(&types, inst.operands[1], None);
            let listed = comp.is_some_and(|c| {
                let unsigned_twin = match c {
                    ComponentType::S8 => ComponentType::U8,
                    ComponentType::S32 => ComponentType::U32,
                    ComponentType::U8 => ComponentType::S8,
                    ComponentType::U32 => ComponentType::S32,
                    other => other,
                };
                target.cooperative_matrix.iter().any(|r| [r.a, r.b, r.c, r.result].iter().any(|t| *t == c || *t == unsigned_twin))
            });
            if !listed {
                let name = comp.map_or_else(|| format!("component type %{}", inst.operands[1]), |c| format!("{c}"));
                return Err(unsupported(inst, format!("cooperative matrices of {name} (no listed shape uses it)")));
            }
        }
        // Each MulAdd's shape and types.
        let mat = |ty: u32| -> Option<(u32, Option<u32>, Option<u32>)> {
            let d = types.defs.get(&ty)?;
            (d.op == op::TYPE_COOPERATIVE_MATRIX_KHR).then(|| (d.operands[1], types.const_u32(d.operands[3]), types.const_u32(d.operands[4])))
        };
        for inst in module.insts.iter().filter(|i| i.op == op::COOPERATIVE_MATRIX_MUL_ADD_KHR) {
            let flags = inst.operands.get(5).copied().unwrap_or(0);
            let ty = |k: usize| types.type_of(inst.operands[k]).and_then(mat);
            let (Some(a), Some(b), Some(c), Some(r)) = (ty(2), ty(3), ty(4), mat(inst.operands[0])) else { continue };
            let (Some(m), Some(k), Some(n)) = (a.1, a.2, b.2) else {
                log::info!("MulAdd at word {} has specialization-constant dimensions; shape checked by the driver", inst.at());
                continue;
            };
            let comp = |t: u32, bit: u32| component_type(&types, t, types.int(t).map(|_| flags & bit != 0));
            let (Some(ca), Some(cb), Some(cc), Some(cr)) = (comp(a.0, 1), comp(b.0, 2), comp(c.0, 4), comp(r.0, 8)) else { continue };
            if target.find_coop_shape(m, n, k, ca, cb, cc, cr).is_none() {
                return Err(unsupported(inst, format!("cooperative-matrix shape {m}x{n}x{k} {ca}*{cb}+{cc}->{cr}")));
            }
        }
        Ok(())
    }
}
