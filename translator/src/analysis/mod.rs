//! Read-only facts about a module: the type of every value and the shape of every type.

pub mod bounds;
pub mod derived_pointers;
pub mod divergence;
pub mod private_pointers;
pub mod union_find;

use crate::ir::{Inst, Module, Operand};
use spirv::{Op, Word};
use std::collections::{HashMap, HashSet};

/// Types and value types of a module, computed in one walk.
pub struct Types {
    /// Type id -> its defining instruction.
    pub defs: HashMap<Word, Inst>,
    /// Value id -> its type id.
    pub value_type: HashMap<Word, Word>,
    /// Constant id -> its literal words (OpConstant only).
    pub constants: HashMap<Word, Vec<Word>>,
    /// Boolean constants: id -> value (OpConstantTrue/False only, not spec constants).
    pub bools: HashMap<Word, bool>,
    /// Structs decorated `CPacked` (OpenCL C's packed structs: no padding), or that were
    /// ([`Module::packed_structs`]).
    pub packed: HashSet<Word>,
}

/// What [`Types::index_sum`] found: the conversion of the index to `sum_ty` (if any), the
/// conversion of the offset and the type it converts to (if any), and the type of the sum.
#[derive(Clone, Copy, Debug)]
pub struct IndexSum {
    pub index: Option<Op>,
    pub offset: Option<(Op, Word)>,
    pub sum_ty: Word,
}

impl IndexSum {
    /// `index + offset` as this plan says, each instruction made by `emit(op, type, operands)`.
    pub fn emit(&self, index: Word, offset: Word, mut emit: impl FnMut(Op, Word, &[Word]) -> Word) -> Word {
        let index = self.index.map_or(index, |op| emit(op, self.sum_ty, &[index]));
        let offset = self.offset.map_or(offset, |(op, ty)| emit(op, ty, &[offset]));
        emit(Op::IAdd, self.sum_ty, &[index, offset])
    }
}

impl Types {
    pub fn new(module: &Module) -> Types {
        let mut packed: HashSet<Word> =
            module.annotations.iter().filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(spirv::Decoration::CPacked as u32)).filter_map(|a| a.operands.first().and_then(Operand::id)).collect();
        packed.extend(&module.packed_structs);
        let mut t = Types { defs: HashMap::new(), value_type: HashMap::new(), constants: HashMap::new(), bools: HashMap::new(), packed };
        for inst in module.globals() {
            t.note(inst);
        }
        for f in &module.functions {
            for inst in f.insts() {
                if let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) {
                    t.value_type.insert(id, ty);
                }
            }
        }
        t
    }

    fn note(&mut self, inst: &Inst) {
        let Some(id) = inst.result_id else { return };
        match inst.result_type {
            Some(ty) => {
                self.value_type.insert(id, ty);
                match inst.op() {
                    Some(Op::Constant) => {
                        self.constants.insert(id, inst.operands.iter().filter_map(Operand::word).collect());
                    }
                    Some(Op::ConstantTrue) => {
                        self.bools.insert(id, true);
                    }
                    Some(Op::ConstantFalse) => {
                        self.bools.insert(id, false);
                    }
                    _ => {}
                }
            }
            None => {
                self.defs.insert(id, inst.clone());
            }
        }
    }

    /// (width, signed) of an OpTypeInt; `None` also for widths outside 1..=64 (the core widths and
    /// SPV_INTEL_arbitrary_precision_integers' small ones), so that a damaged module cannot make
    /// a pass loop over billions of bits.
    pub fn int(&self, ty: Word) -> Option<(u32, bool)> {
        let d = self.defs.get(&ty).filter(|d| d.is(Op::TypeInt))?;
        let (w, s) = (d.word_opt(0)?, d.word_opt(1)?);
        (1..=64).contains(&w).then_some((w, s == 1))
    }

    /// (component type, count) of an OpTypeVector. Decoding bounds the count (2, 3, 4, 8 or 16,
    /// or up to 256 under `VectorAnyINTEL`), so that a damaged module cannot make a pass emit
    /// billions of lanes.
    pub fn vector(&self, ty: Word) -> Option<(Word, u32)> {
        let d = self.defs.get(&ty).filter(|d| d.is(Op::TypeVector))?;
        let (c, n) = (d.word_opt(0)?, d.word_opt(1)?);
        (n > 0).then_some((c, n))
    }

    /// Width of an OpTypeFloat and its encoding operand (e.g. BFloat16KHR), if any.
    pub fn float(&self, ty: Word) -> Option<(u32, Option<u32>)> {
        let d = self.defs.get(&ty).filter(|d| d.is(Op::TypeFloat))?;
        Some((d.word_opt(0)?, d.word_opt(1)))
    }

    /// The conversion that makes integer value `v` 32 bits wide: `SConvert` for a signed type,
    /// `UConvert` for an unsigned one, `None` where it is 32 bits wide already (integer
    /// arithmetic needs equal widths, not equal signedness) or not an integer. Operands such as
    /// a cooperative-matrix stride may have any integer type.
    pub fn conversion_to_32(&self, v: Word) -> Option<Op> {
        let (width, signed) = self.type_of(v).and_then(|t| self.int(t))?;
        (width != 32).then_some(if signed { Op::SConvert } else { Op::UConvert })
    }

    /// How to add a 32-bit unsigned offset to access-chain index `index`, which may have any
    /// integer type: a 64-bit index takes the offset widened to 64 bits; a narrower one is
    /// widened to 32 bits first, so that the sum cannot wrap at the index's width.
    pub fn index_sum(&self, module: &mut Module, index: Word) -> IndexSum {
        let uint = module.type_int(32, false);
        match self.type_of(index).and_then(|t| Some((t, self.int(t)?))) {
            Some((ty, (64, _))) => IndexSum { index: None, offset: Some((Op::UConvert, module.type_int(64, false))), sum_ty: ty },
            _ => IndexSum { index: self.conversion_to_32(index), offset: None, sum_ty: uint },
        }
    }

    /// The width of IEEE float type `ty` or of its vector's components (`None` for other types,
    /// bfloat16 among them).
    pub fn ieee_float_width(&self, ty: Word) -> Option<u32> {
        let scalar = self.vector(ty).map_or(ty, |(component, _)| component);
        match self.float(scalar)? {
            (width, None) => Some(width),
            _ => None,
        }
    }

    /// Bit width of an integer or float scalar type.
    pub fn scalar_width(&self, ty: Word) -> Option<u32> {
        self.int(ty).map(|(w, _)| w).or_else(|| self.float(ty).map(|(w, _)| w))
    }

    /// Whether `OpSpecConstantOp` `inst` is one a pass can turn into an instruction: an error at
    /// its place naming what disagrees where [`Types::spec_operation_kinds`] finds one.
    pub fn check_spec_constant_op(&self, module: &Module, inst: &Inst) -> crate::error::Result<()> {
        let (Some(op), Some(ty)) = (inst.word_opt(0).and_then(Op::from_u32), inst.result_type) else { return Ok(()) };
        let operands: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
        let invalid = |message: String| crate::error::Error::Invalid { site: module.site(inst), message };
        // Composite extracts and inserts need at least one index (spirv-val does not look).
        let indices = inst.operands.iter().skip(1).filter(|o| matches!(o, Operand::Literal(_))).count();
        if matches!(op, Op::CompositeExtract | Op::CompositeInsert) && indices == 0 {
            return Err(invalid(format!("Op{op:?} without an index")));
        }
        self.spec_operation_kinds(op, ty, &operands).map_err(invalid)
    }

    /// Whether `op` (the operation of an `OpSpecConstantOp`, or an instruction made from one)
    /// can have a result of type `result` and operands `operands`, as far as their kinds go:
    /// comparisons and logical operations make booleans, integer arithmetic takes and makes
    /// integers, conversions go between the kinds their names say, shuffles take and make
    /// vectors, selections choose between values of their result type, matrix lengths are of
    /// cooperative-matrix types. spirv-val does not look
    /// into the operation of an `OpSpecConstantOp`, so a pass that turns one into an
    /// instruction checks it here first. `Err` names what disagrees.
    pub fn spec_operation_kinds(&self, op: Op, result: Word, operands: &[Word]) -> std::result::Result<(), String> {
        #[derive(Clone, Copy, PartialEq, Debug)]
        enum Kind {
            Bool,
            Int,
            Float,
        }
        let kind = |ty: Word| {
            let c = self.vector(ty).map_or(ty, |(c, _)| c);
            if self.defs.get(&c).is_some_and(|d| d.is(Op::TypeBool)) {
                Some(Kind::Bool)
            } else if self.int(c).is_some() {
                Some(Kind::Int)
            } else {
                self.float(c).map(|_| Kind::Float)
            }
        };
        use Kind::*;
        use Op::*;
        let (want_result, want_operands) = match op {
            IEqual | INotEqual | ULessThan | SLessThan | UGreaterThan | SGreaterThan | ULessThanEqual | SLessThanEqual | UGreaterThanEqual | SGreaterThanEqual => (Bool, Some(Int)),
            LogicalEqual | LogicalNotEqual | LogicalOr | LogicalAnd | LogicalNot => (Bool, Some(Bool)),
            IAdd | ISub | IMul | UDiv | SDiv | UMod | SRem | SMod | ShiftRightLogical | ShiftRightArithmetic | ShiftLeftLogical | BitwiseOr | BitwiseXor | BitwiseAnd | Not | SNegate | SConvert
            | UConvert => (Int, Some(Int)),
            FConvert => (Float, Some(Float)),
            ConvertSToF | ConvertUToF => (Float, Some(Int)),
            ConvertFToS | ConvertFToU => (Int, Some(Float)),
            VectorShuffle => {
                let vectors = std::iter::once(result).chain(operands.iter().take(2).filter_map(|&v| self.type_of(v))).all(|t| self.vector(t).is_some());
                return if vectors { Ok(()) } else { Err("OpVectorShuffle of or into a type that is not a vector".into()) };
            }
            Select => {
                let same = operands.get(1..3).is_some_and(|ab| ab.iter().all(|&v| self.type_of(v) == Some(result)));
                return if same { Ok(()) } else { Err("OpSelect whose objects are not of its result type".into()) };
            }
            CooperativeMatrixLengthKHR => {
                let matrix = operands.first().and_then(|t| self.defs.get(t)).is_some_and(|d| d.is(TypeCooperativeMatrixKHR));
                return if matrix { Ok(()) } else { Err("OpCooperativeMatrixLengthKHR of a type that is not a cooperative matrix".into()) };
            }
            _ => return Ok(()),
        };
        let name = |k: Option<Kind>| k.map_or_else(|| "neither a number nor a boolean".to_string(), |k| format!("{k:?}").to_lowercase());
        if kind(result) != Some(want_result) {
            return Err(format!("Op{op:?} with a result that is {}", name(kind(result))));
        }
        if let Some(want) = want_operands {
            if let Some(bad) = operands.iter().map(|&v| self.type_of(v).and_then(kind)).find(|&k| k != Some(want)) {
                return Err(format!("Op{op:?} with an operand that is {}", name(bad)));
            }
        }
        Ok(())
    }

    /// (storage class, pointee type) of an OpTypePointer.
    pub fn pointer(&self, ty: Word) -> Option<(u32, Word)> {
        let d = self.defs.get(&ty).filter(|d| d.is(Op::TypePointer))?;
        Some((d.word_opt(0)?, d.id(1).ok()?))
    }

    pub fn type_of(&self, value: Word) -> Option<Word> {
        self.value_type.get(&value).copied()
    }

    /// The type an access-chain index `index` selects inside composite type `ty`: the element of
    /// an array, vector, matrix or cooperative matrix, or the member of a struct (whose index
    /// must then be a constant).
    pub fn element_type(&self, ty: Word, index: Word) -> Option<Word> {
        let is_struct = self.defs.get(&ty)?.is(Op::TypeStruct);
        self.element_type_at(ty, if is_struct { self.const_u32(index)? } else { 0 })
    }

    /// [`Types::element_type`] for a literal index (`OpCompositeExtract`, `OpCompositeInsert`).
    pub fn element_type_at(&self, ty: Word, index: u32) -> Option<Word> {
        let d = self.defs.get(&ty)?;
        match d.op()? {
            Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector | Op::TypeMatrix | Op::TypeCooperativeMatrixKHR | Op::TypeCooperativeMatrixNV => d.id(0).ok(),
            Op::TypeStruct => d.operands.get(index as usize)?.id(),
            _ => None,
        }
    }

    /// Value of a 32-bit (or narrower) integer OpConstant.
    pub fn const_u32(&self, id: Word) -> Option<u32> {
        self.constants.get(&id).and_then(|w| w.first().copied())
    }
}
