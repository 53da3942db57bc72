//! Interned types and constants: asking for a type or constant returns the existing definition
//! when the module has one, and adds one at the end of the global section otherwise.
//!
//! The table is built from the global section on first use (one pass, hashed) and kept up to
//! date by these functions; [`Module::globals_mut`] drops it. Types that carry decorations
//! (an array with an `ArrayStride`, a `Block` struct) are never handed out for an undecorated
//! request, and structs are never shared: two structs with the same members are two types.
//! Scalar, vector, matrix, function and cooperative-matrix types are handed out decorated or
//! not: SPIR-V allows each only once.

use super::{Inst, Module, Operand};
use spirv::{Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

type Key = (u32, Option<Word>, Vec<Operand>);

#[derive(Clone, Debug, Default)]
pub struct Interner {
    table: Option<HashMap<Key, Word>>,
}

impl Interner {
    pub fn clear(&mut self) {
        self.table = None;
    }
}

fn internable(op: Option<Op>) -> bool {
    use Op::*;
    matches!(
        op,
        Some(
            TypeVoid
                | TypeBool
                | TypeInt
                | TypeFloat
                | TypeVector
                | TypeMatrix
                | TypePointer
                | TypeFunction
                | TypeArray
                | TypeRuntimeArray
                | TypeCooperativeMatrixKHR
                | TypeCooperativeMatrixNV
                | TypeImage
                | TypeSampler
                | TypeSampledImage
                | ConstantTrue
                | ConstantFalse
                | Constant
                | ConstantComposite
                | ConstantNull
        )
    )
}

/// Types SPIR-V allows once only: decorations (none gives them a meaning) cannot make a second.
fn unique(op: Option<Op>) -> bool {
    use Op::*;
    matches!(
        op,
        Some(TypeVoid | TypeBool | TypeInt | TypeFloat | TypeVector | TypeMatrix | TypeFunction | TypeCooperativeMatrixKHR | TypeCooperativeMatrixNV | TypeImage | TypeSampler | TypeSampledImage)
    )
}

impl Module {
    fn table(&mut self) -> &mut HashMap<Key, Word> {
        if self.interner.table.is_none() {
            let decorated: HashSet<Word> = self.annotations.iter().filter_map(|a| a.operands.first().and_then(Operand::id)).collect();
            let mut table = HashMap::new();
            for inst in self.globals() {
                let Some(id) = inst.result_id else { continue };
                if internable(inst.op()) && (!decorated.contains(&id) || unique(inst.op())) {
                    table.entry((inst.opcode, inst.result_type, inst.operands.clone())).or_insert(id);
                }
            }
            self.interner.table = Some(table);
        }
        self.interner.table.get_or_insert_with(HashMap::new)
    }

    /// The id of a global with exactly this opcode, result type and operands, added at the end
    /// of the global section when there is none.
    pub fn intern(&mut self, op: Op, result_type: Option<Word>, operands: Vec<Operand>) -> Word {
        let key = (op as u32, result_type, operands);
        if let Some(id) = self.table().get(&key) {
            return *id;
        }
        let id = self.alloc_id();
        let (opcode, result_type, operands) = key;
        self.globals.push(Inst { opcode, result_type, result_id: Some(id), operands: operands.clone(), origin: None });
        self.table().insert((opcode, result_type, operands), id);
        id
    }

    /// Adds a global that must not be shared (a struct, a variable, a spec constant).
    pub fn add_global(&mut self, inst: Inst) -> Word {
        let id = inst.result_id.unwrap_or_default();
        self.globals.push(inst);
        id
    }

    pub fn type_void(&mut self) -> Word {
        self.intern(Op::TypeVoid, None, vec![])
    }

    pub fn type_bool(&mut self) -> Word {
        self.intern(Op::TypeBool, None, vec![])
    }

    pub fn type_int(&mut self, width: u32, signed: bool) -> Word {
        self.intern(Op::TypeInt, None, vec![Operand::Literal(width), Operand::Literal(u32::from(signed))])
    }

    pub fn type_float(&mut self, width: u32) -> Word {
        self.intern(Op::TypeFloat, None, vec![Operand::Literal(width)])
    }

    /// A float type with an encoding (`BFloat16KHR`, the fp8 encodings).
    pub fn type_float_encoded(&mut self, width: u32, encoding: spirv::FPEncoding) -> Word {
        self.intern(Op::TypeFloat, None, vec![Operand::Literal(width), Operand::Enum(rspirv::grammar::OperandKind::FPEncoding, encoding as u32)])
    }

    pub fn type_vector(&mut self, component: Word, count: u32) -> Word {
        self.intern(Op::TypeVector, None, vec![Operand::Id(component), Operand::Literal(count)])
    }

    pub fn type_pointer(&mut self, class: StorageClass, pointee: Word) -> Word {
        self.intern(Op::TypePointer, None, vec![Operand::storage_class(class), Operand::Id(pointee)])
    }

    pub fn type_array(&mut self, element: Word, length: Word) -> Word {
        self.intern(Op::TypeArray, None, vec![Operand::Id(element), Operand::Id(length)])
    }

    pub fn type_function(&mut self, ret: Word, params: &[Word]) -> Word {
        let mut ops = vec![Operand::Id(ret)];
        ops.extend(params.iter().map(|p| Operand::Id(*p)));
        self.intern(Op::TypeFunction, None, ops)
    }

    /// A new struct type (never shared).
    pub fn type_struct(&mut self, members: &[Word]) -> Word {
        let id = self.alloc_id();
        self.add_global(Inst::new(Op::TypeStruct, None, Some(id), members.iter().map(|m| Operand::Id(*m)).collect()))
    }

    /// An `OpConstant` of integer type `ty` of `width` bits holding the low bits of `value`
    /// (narrow signed values sign-extended to the word, as SPIR-V requires).
    pub fn constant_int(&mut self, ty: Word, width: u32, signed: bool, value: u64) -> Word {
        let words = if width > 32 {
            vec![value as u32, (value >> 32) as u32]
        } else {
            let masked = if width == 32 { value as u32 } else { (value as u32) & ((1u32 << width) - 1) };
            if signed && width < 32 && masked & (1 << (width - 1)) != 0 {
                vec![masked | !((1u32 << width) - 1)]
            } else {
                vec![masked]
            }
        };
        self.intern(Op::Constant, Some(ty), words.into_iter().map(Operand::Literal).collect())
    }

    /// `UMin(index, max)` in `index`'s integer type (`types` knows it; 32-bit unsigned where it
    /// does not): the instruction to insert before the index's use, and its result. A signed
    /// index compares as unsigned, so a negative one clamps too.
    pub fn umin_index(&mut self, types: &crate::analysis::Types, index: Word, max: u32) -> (Inst, Word) {
        let ity = types.type_of(index).unwrap_or_else(|| self.type_int(32, false));
        let (width, signed) = types.int(ity).unwrap_or((32, false));
        let bound = self.constant_int(ity, width, signed, u64::from(max));
        self.umin_index_to(types, index, bound)
    }

    /// [`Module::umin_index`] with the bound an id of `index`'s type (a specialization-constant
    /// expression where the bound is set when the pipeline is created).
    pub fn umin_index_to(&mut self, types: &crate::analysis::Types, index: Word, bound: Word) -> (Inst, Word) {
        let ity = types.type_of(index).unwrap_or_else(|| self.type_int(32, false));
        let glsl = self.ext_inst_import("GLSL.std.450");
        let id = self.alloc_id();
        let min = Inst::new(Op::ExtInst, Some(ity), Some(id), vec![Operand::Id(glsl), Operand::Literal(spirv::GlslStd450Op::UMin as u32), Operand::Id(index), Operand::Id(bound)]);
        (min, id)
    }

    /// An unsigned 32-bit `OpConstant`.
    pub fn constant_u32(&mut self, value: u32) -> Word {
        let ty = self.type_int(32, false);
        self.constant_int(ty, 32, false, value as u64)
    }

    /// A signed 32-bit `OpConstant`.
    pub fn constant_i32(&mut self, value: i32) -> Word {
        let ty = self.type_int(32, true);
        self.constant_int(ty, 32, true, value as u32 as u64)
    }

    /// A 32-bit float `OpConstant`.
    pub fn constant_f32(&mut self, value: f32) -> Word {
        let ty = self.type_float(32);
        self.intern(Op::Constant, Some(ty), vec![Operand::Literal(value.to_bits())])
    }

    /// An `OpConstant` of float type `ty` (`width` bits, `encoding` as `OpTypeFloat` gives it:
    /// `BFloat16KHR` for bfloat16) nearest to `value`.
    pub fn constant_float(&mut self, ty: Word, width: u32, encoding: Option<u32>, value: f64) -> Word {
        let words = match (width, encoding) {
            (16, Some(_)) => vec![half::bf16::from_f64(value).to_bits() as u32],
            (16, None) => vec![half::f16::from_f64(value).to_bits() as u32],
            (64, _) => vec![value.to_bits() as u32, (value.to_bits() >> 32) as u32],
            _ => vec![(value as f32).to_bits()],
        };
        self.intern(Op::Constant, Some(ty), words.into_iter().map(Operand::Literal).collect())
    }

    pub fn constant_bool(&mut self, value: bool) -> Word {
        let ty = self.type_bool();
        self.intern(if value { Op::ConstantTrue } else { Op::ConstantFalse }, Some(ty), vec![])
    }

    pub fn constant_composite(&mut self, ty: Word, parts: &[Word]) -> Word {
        self.intern(Op::ConstantComposite, Some(ty), parts.iter().map(|p| Operand::Id(*p)).collect())
    }

    /// The module's `OpExtInstImport` of instruction set `name`, added when missing.
    pub fn ext_inst_import(&mut self, name: &str) -> Word {
        if let Some(id) = self.ext_inst_imports.iter().find(|i| i.string(0).as_deref() == Some(name)).and_then(|i| i.result_id) {
            return id;
        }
        let id = self.alloc_id();
        self.ext_inst_imports.push(Inst::new(Op::ExtInstImport, None, Some(id), vec![Operand::string(name)]));
        id
    }

    /// The scope constant of atomics every invocation on the device sees: `QueueFamily` under
    /// the Vulkan memory model (where `Device` needs the VulkanMemoryModelDeviceScope
    /// capability), `Device` otherwise.
    pub fn device_scope(&mut self) -> Word {
        let vulkan = self.memory_model.first().and_then(|i| i.word_opt(1)) == Some(spirv::MemoryModel::Vulkan as u32);
        self.constant_u32(if vulkan { spirv::Scope::QueueFamily as u32 } else { spirv::Scope::Device as u32 })
    }

    /// A new `OpSpecConstantOp` of type `ty` doing `op` on `operands` (never shared: it stays
    /// a specialization-constant expression).
    pub fn spec_constant_op(&mut self, ty: Word, op: Op, operands: &[Word]) -> Word {
        let id = self.alloc_id();
        let mut ops = vec![Operand::Literal(op as u32)];
        ops.extend(operands.iter().map(|o| Operand::Id(*o)));
        self.add_global(Inst::new(Op::SpecConstantOp, Some(ty), Some(id), ops));
        id
    }

    pub fn constant_null(&mut self, ty: Word) -> Word {
        self.intern(Op::ConstantNull, Some(ty), vec![])
    }
}

/// What makes two globals the same: opcode, result type, operands and decorations.
type TypeKey = (u32, Option<Word>, Vec<Operand>, Vec<Vec<Operand>>);

impl Module {
    /// Merges global types and constants that became identical (same opcode, result type,
    /// operands and decorations) after a pass rewrote some of them, repeating until none are
    /// left: merging two element types makes their vectors identical too. Structs stay apart.
    pub fn merge_duplicate_types(&mut self) {
        self.merge_duplicate_types_apart(&HashSet::new());
    }

    /// [`Module::merge_duplicate_types`], merging the types of `apart` only among themselves:
    /// a pass that strips buffer layouts to recompute them keeps the types buffer pointers
    /// reach apart from identical ones of other memory, which must stay without a layout.
    pub fn merge_duplicate_types_apart(&mut self, apart: &HashSet<Word>) {
        loop {
            let mut decorations: HashMap<Word, Vec<Vec<Operand>>> = HashMap::new();
            for a in &self.annotations {
                if let Some(id) = a.operands.first().and_then(Operand::id) {
                    decorations.entry(id).or_default().push(std::iter::once(Operand::Literal(a.opcode)).chain(a.operands[1..].iter().cloned()).collect());
                }
            }
            for d in decorations.values_mut() {
                d.sort_by_key(|x| format!("{x:?}"));
            }
            // Named globals keep their identity (names can carry meaning, as the kernel
            // interface's do).
            let named: HashSet<Word> = self.debug_names.iter().filter(|n| n.is(Op::Name)).filter_map(|n| n.operands.first().and_then(Operand::id)).collect();
            let mut seen: HashMap<TypeKey, Word> = HashMap::new();
            let mut replace: HashMap<Word, Word> = HashMap::new();
            for g in &self.globals {
                let Some(id) = g.result_id else { continue };
                if !internable(g.op()) || g.is(Op::TypeStruct) || (g.result_type.is_some() && named.contains(&id)) {
                    continue;
                }
                let mut decorated = decorations.get(&id).cloned().unwrap_or_default();
                if apart.contains(&id) {
                    decorated.push(Vec::new());
                }
                let key = (g.opcode, g.result_type.map(|t| replace.get(&t).copied().unwrap_or(t)), g.operands.clone(), decorated);
                match seen.get(&key) {
                    Some(first) => {
                        replace.insert(id, *first);
                    }
                    None => {
                        seen.insert(key, id);
                    }
                }
            }
            if replace.is_empty() {
                break;
            }
            self.interner.clear();
            self.globals.retain(|g| !g.result_id.is_some_and(|r| replace.contains_key(&r)));
            self.forget(&replace.keys().copied().collect());
            self.for_each_inst_mut(|inst| inst.map_used_ids(|id| replace.get(&id).copied().unwrap_or(id)));
        }
    }
}
