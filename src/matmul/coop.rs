//! Cooperative-matrix kernels (filled in below).

use super::gpu::{Gpu, Plan};
use super::{MatmulDesc, Resolved};
use crate::error::Result;

/// A cooperative-matrix plan when the device lists a shape for this problem's types.
pub fn plan(_gpu: &Gpu, _desc: &MatmulDesc, _r: &Resolved) -> Result<Option<Plan>> {
    Ok(None)
}
