//! Element encodings shared by the reference model: how raw bits become numbers and back.

use half::{bf16, f16};

/// How a raw bit pattern is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// Two's-complement or unsigned integer of `bits` (2, 4, 8, 16, 32, 64).
    Int {
        bits: u32,
        signed: bool,
    },
    F16,
    Bf16,
    /// TF32: an f32 container whose low 13 mantissa bits are ignored.
    Tf32,
    F32,
    F64,
}

/// A decoded element: exact integers or floating-point values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
}

impl Value {
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
        }
    }
}

impl Elem {
    pub fn bits(self) -> u32 {
        match self {
            Elem::Int { bits, .. } => bits,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::Tf32 | Elem::F32 => 32,
            Elem::F64 => 64,
        }
    }

    pub fn is_float(self) -> bool {
        !matches!(self, Elem::Int { .. })
    }

    /// Reads the low `bits()` of `raw`.
    pub fn decode(self, raw: u64) -> Value {
        match self {
            Elem::Int { bits, signed } => Value::Int(super::integer_dot::extend(raw, bits, signed)),
            Elem::F16 => Value::Float(f16::from_bits(raw as u16).to_f64()),
            Elem::Bf16 => Value::Float(bf16::from_bits(raw as u16).to_f64()),
            Elem::Tf32 => Value::Float(f32::from_bits((raw as u32) & 0xffff_e000) as f64),
            Elem::F32 => Value::Float(f32::from_bits(raw as u32) as f64),
            Elem::F64 => Value::Float(f64::from_bits(raw)),
        }
    }

    /// Encodes a value: integers wrap to the width (low bits), floats round to nearest even.
    pub fn encode(self, v: Value) -> u64 {
        match (self, v) {
            (Elem::Int { bits, .. }, Value::Int(i)) => super::integer_dot::wrap(i, bits),
            (Elem::Int { bits, .. }, Value::Float(f)) => super::integer_dot::wrap(f as i128, bits),
            (e, v) => {
                let f = v.as_f64();
                match e {
                    Elem::F16 => f16::from_f64(f).to_bits() as u64,
                    Elem::Bf16 => bf16::from_f64(f).to_bits() as u64,
                    Elem::Tf32 | Elem::F32 => (f as f32).to_bits() as u64,
                    _ => f.to_bits(),
                }
            }
        }
    }
}
