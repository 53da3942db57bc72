//! A SPIR-V module as a flat list of raw instructions.
//!
//! The translator keeps every instruction as words so that anything no pass touches — opcodes
//! rspirv does not know (the legacy joint-matrix opcodes), `OpExecutionModeId`,
//! SPV_NV_cooperative_matrix2, bf16/fp8 types — passes through unchanged. rspirv's grammar tables
//! tell which opcodes have a result type and a result id, and give opcode names for errors.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::OnceLock;

pub const MAGIC: u32 = 0x0723_0203;

/// One instruction: opcode and operand words (the word-count/opcode word is implied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inst {
    pub op: u32,
    pub operands: Vec<u32>,
    /// Word offset in the input module (`None` for instructions a pass created).
    pub offset: Option<usize>,
}

struct OpInfo {
    name: &'static str,
    has_type: bool,
    has_result: bool,
    /// Operand words the grammar requires at least (one per operand that must appear).
    min_words: usize,
}

fn op_table() -> &'static HashMap<u32, OpInfo> {
    static TABLE: OnceLock<HashMap<u32, OpInfo>> = OnceLock::new();
    TABLE.get_or_init(|| {
        use rspirv::grammar::OperandKind;
        rspirv::grammar::INSTRUCTION_TABLE
            .iter()
            .map(|i| {
                let kinds: Vec<_> = i.operands.iter().map(|o| o.kind).collect();
                let has_type = kinds.first() == Some(&OperandKind::IdResultType);
                let has_result = kinds.iter().take(2).any(|k| *k == OperandKind::IdResult);
                let min_words = i.operands.iter().filter(|o| o.quantifier == rspirv::grammar::OperandQuantifier::One).count();
                (i.opcode as u32, OpInfo { name: i.opname, has_type, has_result, min_words })
            })
            .collect()
    })
}

/// The opcode's name (`OpFoo`), or `opcode N` for opcodes unknown to the grammar.
pub fn op_name(op: u32) -> String {
    match op_table().get(&op) {
        Some(info) => format!("Op{}", info.name),
        None => match op {
            // SPV_INTEL_joint_matrix (legacy revision) opcodes rspirv does not know.
            6184 => "OpTypeJointMatrixINTEL".into(),
            6120 => "OpJointMatrixLoadINTEL".into(),
            6121 => "OpJointMatrixStoreINTEL".into(),
            6122 => "OpJointMatrixMadINTEL".into(),
            6128 => "OpJointMatrixSUMadINTEL".into(),
            6129 => "OpJointMatrixUSMadINTEL".into(),
            6130 => "OpJointMatrixUUMadINTEL".into(),
            6410 => "OpJointMatrixWorkItemLengthINTEL".into(),
            6440 => "OpJointMatrixGetElementCoordINTEL".into(),
            _ => format!("opcode {op}"),
        },
    }
}

impl Inst {
    pub fn new(op: u32, operands: Vec<u32>) -> Inst {
        Inst { op, operands, offset: None }
    }

    /// The result type id, for opcodes whose grammar has one.
    pub fn result_type(&self) -> Option<u32> {
        let info = op_table().get(&self.op)?;
        if info.has_type {
            self.operands.first().copied()
        } else {
            None
        }
    }

    /// The result id, for opcodes whose grammar has one.
    pub fn result_id(&self) -> Option<u32> {
        let info = op_table().get(&self.op)?;
        if !info.has_result {
            return None;
        }
        self.operands.get(usize::from(info.has_type)).copied()
    }

    pub fn name(&self) -> String {
        op_name(self.op)
    }

    /// Word offset for error messages (0 for instructions a pass created).
    pub fn at(&self) -> usize {
        self.offset.unwrap_or(0)
    }

    /// Operand `i`, or a `Malformed` error naming this instruction.
    pub fn operand(&self, i: usize) -> Result<u32> {
        self.operands.get(i).copied().ok_or_else(|| Error::Malformed {
            offset: self.at(),
            message: format!("{} has no operand {i}", self.name()),
        })
    }

    /// Decodes a literal string starting at operand `i`.
    pub fn string_at(&self, i: usize) -> String {
        let bytes: Vec<u8> = self.operands.get(i..).unwrap_or(&[]).iter().flat_map(|w| w.to_le_bytes()).collect();
        let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    }
}

/// Whether `op` ends a block (SPIR-V 2.2.5: branch, switch, return, kill, unreachable and the
/// invocation-terminating instructions).
fn is_block_terminator(op: u32) -> bool {
    matches!(op, 249..=255 | 4416 | 4448 | 4449 | 5294)
}

/// Checks the logical layout of functions (SPIR-V 2.4): every OpFunction ends with OpFunctionEnd,
/// its parameters come first, and its body is blocks that start with OpLabel and end with a
/// terminator. Drivers need not survive modules that break this (a module cut short in its last
/// function crashes lavapipe and SwiftShader), so neither the translator nor the runtime passes
/// one on.
fn check_function_layout(insts: &[Inst]) -> Result<()> {
    #[derive(PartialEq)]
    enum State {
        Outside,
        Parameters,
        InBlock,
        BetweenBlocks,
    }
    let mut state = State::Outside;
    let mut function_at = 0;
    for inst in insts {
        let bad = |what: &str| Error::Malformed { offset: inst.at(), message: format!("{} {what}", inst.name()) };
        // Debug line information may appear anywhere.
        if matches!(inst.op, op::LINE | op::NO_LINE) {
            continue;
        }
        state = match (state, inst.op) {
            (State::Outside, op::FUNCTION) => {
                function_at = inst.at();
                State::Parameters
            }
            (State::Outside, op::FUNCTION_PARAMETER | op::FUNCTION_END | op::LABEL) => return Err(bad("outside a function")),
            (State::Outside, o) if is_block_terminator(o) => return Err(bad("outside a function")),
            (State::Outside, _) => State::Outside,
            (State::Parameters, op::FUNCTION_PARAMETER) => State::Parameters,
            (State::Parameters | State::BetweenBlocks, op::LABEL) => State::InBlock,
            (State::Parameters | State::BetweenBlocks, op::FUNCTION_END) => State::Outside,
            (State::Parameters, _) => return Err(bad("before the function's first block")),
            (State::BetweenBlocks, _) => return Err(bad("between blocks (a block must start with OpLabel)")),
            (State::InBlock, o) if is_block_terminator(o) => State::BetweenBlocks,
            (State::InBlock, op::LABEL | op::FUNCTION | op::FUNCTION_END | op::FUNCTION_PARAMETER) => {
                return Err(bad("inside a block that has not been terminated"))
            }
            (State::InBlock, _) => State::InBlock,
        };
    }
    if state != State::Outside {
        return Err(Error::Malformed { offset: function_at, message: "the module ends inside the OpFunction that starts here (no OpFunctionEnd)".into() });
    }
    Ok(())
}

/// Encodes a string as SPIR-V literal words (NUL-terminated, padded).
pub fn string_words(s: &str) -> Vec<u32> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Common opcodes.
pub mod op {
    pub const NOP: u32 = 0;
    pub const UNDEF: u32 = 1;
    pub const SOURCE_CONTINUED: u32 = 2;
    pub const NAME: u32 = 5;
    pub const MEMBER_NAME: u32 = 6;
    pub const EXTENSION: u32 = 10;
    pub const EXT_INST_IMPORT: u32 = 11;
    pub const MEMORY_MODEL: u32 = 14;
    pub const ENTRY_POINT: u32 = 15;
    pub const EXECUTION_MODE: u32 = 16;
    pub const CAPABILITY: u32 = 17;
    pub const TYPE_VOID: u32 = 19;
    pub const TYPE_BOOL: u32 = 20;
    pub const TYPE_INT: u32 = 21;
    pub const TYPE_FLOAT: u32 = 22;
    pub const TYPE_VECTOR: u32 = 23;
    pub const TYPE_ARRAY: u32 = 28;
    pub const TYPE_RUNTIME_ARRAY: u32 = 29;
    pub const TYPE_STRUCT: u32 = 30;
    pub const TYPE_POINTER: u32 = 32;
    pub const TYPE_FUNCTION: u32 = 33;
    pub const CONSTANT_TRUE: u32 = 41;
    pub const CONSTANT_FALSE: u32 = 42;
    pub const CONSTANT: u32 = 43;
    pub const CONSTANT_COMPOSITE: u32 = 44;
    pub const CONSTANT_NULL: u32 = 46;
    pub const SPEC_CONSTANT_TRUE: u32 = 48;
    pub const SPEC_CONSTANT_FALSE: u32 = 49;
    pub const SPEC_CONSTANT: u32 = 50;
    pub const SPEC_CONSTANT_COMPOSITE: u32 = 51;
    pub const SPEC_CONSTANT_OP: u32 = 52;
    pub const FUNCTION: u32 = 54;
    pub const FUNCTION_PARAMETER: u32 = 55;
    pub const FUNCTION_END: u32 = 56;
    pub const FUNCTION_CALL: u32 = 57;
    pub const VARIABLE: u32 = 59;
    pub const LOAD: u32 = 61;
    pub const STORE: u32 = 62;
    pub const ACCESS_CHAIN: u32 = 65;
    pub const IN_BOUNDS_ACCESS_CHAIN: u32 = 66;
    pub const DECORATE: u32 = 71;
    pub const MEMBER_DECORATE: u32 = 72;
    pub const COMPOSITE_CONSTRUCT: u32 = 80;
    pub const COMPOSITE_EXTRACT: u32 = 81;
    pub const COMPOSITE_INSERT: u32 = 82;
    pub const COPY_OBJECT: u32 = 83;
    pub const CONVERT_F_TO_U: u32 = 109;
    pub const CONVERT_F_TO_S: u32 = 110;
    pub const CONVERT_S_TO_F: u32 = 111;
    pub const CONVERT_U_TO_F: u32 = 112;
    pub const U_CONVERT: u32 = 113;
    pub const S_CONVERT: u32 = 114;
    pub const F_CONVERT: u32 = 115;
    pub const BITCAST: u32 = 124;
    pub const S_NEGATE: u32 = 126;
    pub const F_NEGATE: u32 = 127;
    pub const I_ADD: u32 = 128;
    pub const F_ADD: u32 = 129;
    pub const I_SUB: u32 = 130;
    pub const F_SUB: u32 = 131;
    pub const I_MUL: u32 = 132;
    pub const F_MUL: u32 = 133;
    pub const U_DIV: u32 = 134;
    pub const S_DIV: u32 = 135;
    pub const F_DIV: u32 = 136;
    pub const MATRIX_TIMES_SCALAR: u32 = 143;
    pub const SELECT: u32 = 169;
    pub const U_LESS_THAN: u32 = 176;
    pub const S_LESS_THAN: u32 = 177;
    pub const BITWISE_XOR: u32 = 198;
    pub const BITWISE_AND: u32 = 199;
    pub const BIT_FIELD_S_EXTRACT: u32 = 202;
    pub const BIT_FIELD_U_EXTRACT: u32 = 203;
    pub const PHI: u32 = 245;
    pub const LABEL: u32 = 248;
    pub const LINE: u32 = 8;
    pub const NO_LINE: u32 = 317;
    pub const RETURN_VALUE: u32 = 254;
    pub const EXECUTION_MODE_ID: u32 = 331;
    pub const SDOT: u32 = 4450;
    pub const UDOT: u32 = 4451;
    pub const SUDOT: u32 = 4452;
    pub const SDOT_ACC_SAT: u32 = 4453;
    pub const UDOT_ACC_SAT: u32 = 4454;
    pub const SUDOT_ACC_SAT: u32 = 4455;
    pub const TYPE_COOPERATIVE_MATRIX_KHR: u32 = 4456;
    pub const COOPERATIVE_MATRIX_LOAD_KHR: u32 = 4457;
    pub const COOPERATIVE_MATRIX_STORE_KHR: u32 = 4458;
    pub const COOPERATIVE_MATRIX_MUL_ADD_KHR: u32 = 4459;
    pub const COOPERATIVE_MATRIX_LENGTH_KHR: u32 = 4460;
    pub const TYPE_COOPERATIVE_MATRIX_NV: u32 = 5358;
    pub const COOPERATIVE_MATRIX_LOAD_NV: u32 = 5359;
    pub const COOPERATIVE_MATRIX_STORE_NV: u32 = 5360;
    pub const COOPERATIVE_MATRIX_MUL_ADD_NV: u32 = 5361;
    pub const COOPERATIVE_MATRIX_LENGTH_NV: u32 = 5362;
}

/// Capabilities used by passes.
pub mod cap {
    pub const SHADER: u32 = 1;
    pub const INT64: u32 = 11;
    pub const INT16: u32 = 22;
    pub const INT8: u32 = 39;
    pub const DOT_PRODUCT_INPUT_ALL: u32 = 6016;
    pub const DOT_PRODUCT_INPUT_4X8_BIT: u32 = 6017;
    pub const DOT_PRODUCT_INPUT_4X8_BIT_PACKED: u32 = 6018;
    pub const DOT_PRODUCT: u32 = 6019;
    pub const COOPERATIVE_MATRIX_KHR: u32 = 6022;
    pub const COOPERATIVE_MATRIX_NV: u32 = 5357;
}

/// A SPIR-V module: header and instructions in module order.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub header: [u32; 5],
    pub insts: Vec<Inst>,
}

impl Module {
    /// Parses little- or big-endian bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Module> {
        if !bytes.len().is_multiple_of(4) {
            return Err(Error::NotSpirv(format!("{} bytes is not a whole number of words", bytes.len())));
        }
        let le: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        if le.first() == Some(&MAGIC.swap_bytes()) {
            return Module::from_words(&le.iter().map(|w| w.swap_bytes()).collect::<Vec<_>>());
        }
        Module::from_words(&le)
    }

    /// Parses words, checking the header and every instruction's word count.
    pub fn from_words(words: &[u32]) -> Result<Module> {
        if words.len() < 5 {
            return Err(Error::NotSpirv(format!("{} words is shorter than the 5-word header", words.len())));
        }
        if words[0] != MAGIC {
            return Err(Error::NotSpirv(format!("magic number {:#010x}, expected {MAGIC:#010x}", words[0])));
        }
        let mut header = [0u32; 5];
        header.copy_from_slice(&words[..5]);
        if header[3] == 0 || header[3] > 0x0040_0000 {
            return Err(Error::Malformed { offset: 3, message: format!("id bound {} is out of range", header[3]) });
        }
        let mut insts = Vec::new();
        let mut i = 5;
        while i < words.len() {
            let count = (words[i] >> 16) as usize;
            let op = words[i] & 0xffff;
            if count == 0 {
                return Err(Error::Malformed { offset: i, message: format!("{} has a word count of 0", op_name(op)) });
            }
            if i + count > words.len() {
                return Err(Error::Malformed {
                    offset: i,
                    message: format!("{} claims {count} words but only {} remain", op_name(op), words.len() - i),
                });
            }
            // Instructions the grammar knows carry at least their required operands, so passes
            // may read those without checking.
            if let Some(info) = op_table().get(&op) {
                if count - 1 < info.min_words {
                    return Err(Error::Malformed {
                        offset: i,
                        message: format!("{} has {} operand words, the grammar requires at least {}", op_name(op), count - 1, info.min_words),
                    });
                }
            }
            let inst = Inst { op, operands: words[i + 1..i + count].to_vec(), offset: Some(i) };
            if let Some(id) = inst.result_id() {
                if id == 0 || id >= header[3] {
                    return Err(Error::Malformed { offset: i, message: format!("{} defines id {id} outside the bound {}", op_name(op), header[3]) });
                }
            }
            insts.push(inst);
            i += count;
        }
        check_function_layout(&insts)?;
        Ok(Module { header, insts })
    }

    /// Serialises to words.
    pub fn to_words(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(5 + self.insts.iter().map(|i| i.operands.len() + 1).sum::<usize>());
        out.extend_from_slice(&self.header);
        for inst in &self.insts {
            out.push(((inst.operands.len() as u32 + 1) << 16) | inst.op);
            out.extend_from_slice(&inst.operands);
        }
        out
    }

    /// SPIR-V version as (major, minor).
    pub fn version(&self) -> (u8, u8) {
        (((self.header[1] >> 16) & 0xff) as u8, ((self.header[1] >> 8) & 0xff) as u8)
    }

    pub fn set_version(&mut self, major: u8, minor: u8) {
        self.header[1] = ((major as u32) << 16) | ((minor as u32) << 8);
    }

    /// Allocates a fresh id, raising the bound.
    pub fn alloc_id(&mut self) -> u32 {
        let id = self.header[3];
        self.header[3] += 1;
        id
    }

    /// Index of the first `OpFunction` (the end of the global section).
    pub fn functions_start(&self) -> usize {
        self.insts.iter().position(|i| i.op == op::FUNCTION).unwrap_or(self.insts.len())
    }

    /// Map from result id to instruction index.
    pub fn defs(&self) -> HashMap<u32, usize> {
        self.insts.iter().enumerate().filter_map(|(i, inst)| inst.result_id().map(|id| (id, i))).collect()
    }

    pub fn has_capability(&self, cap: u32) -> bool {
        self.insts.iter().any(|i| i.op == op::CAPABILITY && i.operands.first() == Some(&cap))
    }

    pub fn has_extension(&self, name: &str) -> bool {
        self.insts.iter().any(|i| i.op == op::EXTENSION && i.string_at(0) == name)
    }

    pub fn uses_opcode(&self, opcode: u32) -> bool {
        self.insts.iter().any(|i| i.op == opcode)
    }

    /// Appends a global (type or constant) at the end of the global section and returns its id.
    pub fn add_global(&mut self, op: u32, mut operands_after_result: Vec<u32>, result_type: Option<u32>) -> u32 {
        let id = self.alloc_id();
        let mut operands = Vec::new();
        if let Some(t) = result_type {
            operands.push(t);
        }
        operands.push(id);
        operands.append(&mut operands_after_result);
        let at = self.functions_start();
        self.insts.insert(at, Inst::new(op, operands));
        id
    }

    /// Finds a global with exactly these opcode and operands (after the result id), or adds it.
    fn find_or_add(&mut self, op: u32, result_type: Option<u32>, rest: Vec<u32>) -> u32 {
        let skip = usize::from(result_type.is_some());
        let found = self.insts[..self.functions_start()].iter().find(|i| {
            i.op == op && (result_type.is_none() || i.operands.first() == result_type.as_ref()) && i.operands.get(skip + 1..) == Some(&rest[..])
        });
        match found.and_then(|i| i.result_id()) {
            Some(id) => id,
            None => self.add_global(op, rest, result_type),
        }
    }

    pub fn type_int(&mut self, width: u32, signed: bool) -> u32 {
        self.find_or_add(op::TYPE_INT, None, vec![width, u32::from(signed)])
    }

    pub fn type_bool(&mut self) -> u32 {
        self.find_or_add(op::TYPE_BOOL, None, vec![])
    }

    /// An `OpConstant` of integer type `ty` (width `width`) holding the low bits of `value`.
    pub fn const_int(&mut self, ty: u32, width: u32, signed: bool, value: u64) -> u32 {
        let words = if width > 32 {
            vec![value as u32, (value >> 32) as u32]
        } else {
            let masked = if width == 32 { value as u32 } else { (value as u32) & ((1u32 << width) - 1) };
            // Narrow signed literals are sign-extended to the word.
            if signed && width < 32 && masked & (1 << (width - 1)) != 0 {
                vec![masked | !((1u32 << width) - 1)]
            } else {
                vec![masked]
            }
        };
        self.find_or_add(op::CONSTANT, Some(ty), words)
    }

    /// An unsigned 32-bit `OpConstant`.
    pub fn const_u32(&mut self, value: u32) -> u32 {
        let ty = self.type_int(32, false);
        self.const_int(ty, 32, false, value as u64)
    }

    /// Adds `OpCapability` unless present.
    pub fn require_capability(&mut self, cap: u32) {
        if !self.has_capability(cap) {
            let at = self.insts.iter().rposition(|i| i.op == op::CAPABILITY).map_or(0, |p| p + 1);
            self.insts.insert(at, Inst::new(op::CAPABILITY, vec![cap]));
        }
    }

    pub fn remove_capability(&mut self, cap: u32) {
        self.insts.retain(|i| !(i.op == op::CAPABILITY && i.operands.first() == Some(&cap)));
    }

    /// Adds `OpExtension` unless present.
    pub fn require_extension(&mut self, name: &str) {
        if !self.has_extension(name) {
            let at = self.insts.iter().rposition(|i| i.op == op::CAPABILITY || i.op == op::EXTENSION).map_or(0, |p| p + 1);
            self.insts.insert(at, Inst::new(op::EXTENSION, string_words(name)));
        }
    }

    pub fn remove_extension(&mut self, name: &str) {
        self.insts.retain(|i| !(i.op == op::EXTENSION && i.string_at(0) == name));
    }
}

/// Positions (in `Inst::operands`) of the operands that are ids, from rspirv's grammar, for the
/// instructions of the global section (types, constants, variables). `None` for opcodes whose
/// layout the grammar does not give.
pub fn id_operand_positions(inst: &Inst) -> Option<Vec<usize>> {
    use rspirv::grammar::{OperandKind as K, OperandQuantifier as Q};
    if inst.op == op::SPEC_CONSTANT_OP {
        // The operands after the opcode literal are ids for every opcode matbridge emits.
        return Some((0..inst.operands.len()).filter(|i| *i != 1 && *i != 2).collect());
    }
    let grammar = rspirv::grammar::INSTRUCTION_TABLE.lookup_opcode(inst.op)?;
    let mut positions = Vec::new();
    let mut i = 0;
    let n = inst.operands.len();
    for operand in grammar.operands {
        if i >= n {
            break;
        }
        let is_id = matches!(operand.kind, K::IdRef | K::IdResultType | K::IdScope | K::IdMemorySemantics);
        let count = match (operand.kind, operand.quantifier) {
            (K::IdResult, _) => 1,
            (K::LiteralString, _) => inst.operands[i..].iter().position(|w| w.to_le_bytes().contains(&0)).map_or(n - i, |p| p + 1),
            (K::LiteralContextDependentNumber, _) => n - i,
            (_, Q::ZeroOrMore) => n - i,
            _ => 1,
        };
        if is_id {
            positions.extend(i..i + count);
        }
        i += count;
    }
    Some(positions)
}

impl Module {
    /// Reorders the types, constants and global variables so that every id is defined before
    /// it is used, keeping the original order wherever it already satisfies that. Passes may
    /// therefore add globals anywhere in the section.
    pub fn reorder_globals(&mut self) {
        let first = self.insts.iter().position(|i| (op::TYPE_VOID..=op::TYPE_FUNCTION).contains(&i.op) || (i.op >= 4000 && i.result_id().is_some()));
        let Some(first) = first else { return };
        let end = self.functions_start();
        if first >= end {
            return;
        }
        let section: Vec<Inst> = self.insts.drain(first..end).collect();
        let index: HashMap<u32, usize> = section.iter().enumerate().filter_map(|(i, inst)| inst.result_id().map(|id| (id, i))).collect();
        let mut state = vec![0u8; section.len()]; // 0 new, 1 visiting, 2 done
        let mut order = Vec::with_capacity(section.len());
        fn visit(i: usize, section: &[Inst], index: &HashMap<u32, usize>, state: &mut [u8], order: &mut Vec<usize>) {
            if state[i] != 0 {
                return;
            }
            state[i] = 1;
            if section[i].op != 39 {
                // (OpTypeForwardPointer declares, it does not depend.)
                if let Some(positions) = id_operand_positions(&section[i]) {
                    for p in positions {
                        let id = section[i].operands[p];
                        if section[i].result_id() == Some(id) {
                            continue;
                        }
                        if let Some(&j) = index.get(&id) {
                            visit(j, section, index, state, order);
                        }
                    }
                }
            }
            state[i] = 2;
            order.push(i);
        }
        for i in 0..section.len() {
            visit(i, &section, &index, &mut state, &mut order);
        }
        let mut slots: Vec<Option<Inst>> = section.into_iter().map(Some).collect();
        let sorted: Vec<Inst> = order.into_iter().filter_map(|i| slots[i].take()).collect();
        self.insts.splice(first..first, sorted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_truncated_and_bad_headers() {
        assert!(matches!(Module::from_words(&[1, 2, 3]), Err(Error::NotSpirv(_))));
        assert!(matches!(Module::from_words(&[0xdead, 0, 0, 5, 0]), Err(Error::NotSpirv(_))));
        let err = Module::from_words(&[MAGIC, 0x10300, 0, 10, 0, (5 << 16) | 17, 1]).unwrap_err();
        assert_eq!(err, Error::Malformed { offset: 5, message: "OpCapability claims 5 words but only 2 remain".into() });
        let err = Module::from_words(&[MAGIC, 0x10300, 0, 10, 0, 17]).unwrap_err();
        assert!(err.to_string().contains("word count of 0"), "{err}");
    }

    #[test]
    fn short_instructions_and_broken_function_layout_are_malformed() {
        // OpTypeInt %2 32 without its signedness operand.
        let err = Module::from_words(&[MAGIC, 0x10300, 0, 10, 0, (3 << 16) | 21, 2, 32]).unwrap_err();
        assert_eq!(err, Error::Malformed { offset: 5, message: "OpTypeInt has 2 operand words, the grammar requires at least 3".into() });
        // %void, %fn, then: OpFunction %void %4 None %fn; OpLabel %5; OpReturn; OpFunctionEnd.
        let head = [MAGIC, 0x10300, 0, 10, 0, (2 << 16) | 19, 2, (3 << 16) | 33, 3, 2];
        let function = [(5 << 16) | 54, 2, 4, 0, 3, (2 << 16) | 248, 5, (1 << 16) | 253, (1 << 16) | 56];
        let module = |body: &[u32]| -> Result<Module> { Module::from_words(&[&head[..], body].concat()) };
        assert!(module(&function).is_ok());
        let no_end = module(&function[..8]).unwrap_err();
        assert!(no_end.to_string().contains("word offset 10") && no_end.to_string().contains("no OpFunctionEnd"), "{no_end}");
        // OpFunctionEnd right after OpLabel: the block has no terminator.
        let unterminated = module(&[&function[..7], &function[8..]].concat()).unwrap_err();
        assert!(unterminated.to_string().contains("OpFunctionEnd inside a block that has not been terminated"), "{unterminated}");
        // A block that does not start with OpLabel.
        let no_label = module(&[&function[..5], &function[7..]].concat()).unwrap_err();
        assert!(no_label.to_string().contains("OpReturn before the function's first block"), "{no_label}");
        let stray = module(&[(1 << 16) | 253]).unwrap_err();
        assert!(stray.to_string().contains("OpReturn outside a function"), "{stray}");
    }

    #[test]
    fn unknown_opcodes_round_trip() {
        let words = vec![MAGIC, 0x10300, 0, 10, 0, (3 << 16) | 6184, 7, 8, (2 << 16) | 17, 1];
        let m = Module::from_words(&words).unwrap();
        assert_eq!(m.to_words(), words);
        assert_eq!(m.insts[0].name(), "OpTypeJointMatrixINTEL");
    }

    #[test]
    fn big_endian_input_is_accepted() {
        let words = [MAGIC, 0x10300, 0, 10, 0, (2 << 16) | 17, 1];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(Module::from_bytes(&bytes).unwrap().to_words(), words);
    }
}
