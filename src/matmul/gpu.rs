//! A device and the matmul pipelines built on it, cached by a key made of exactly what goes into
//! each pipeline (kernel, translation requests, specialization constants).
//!
//! Kernel parameters travel in small storage buffers rather than push constants: lavapipe
//! inlines push-constant values into loop bounds and re-JITs fully unrolled loops on first
//! dispatch, which takes minutes for the tiled kernels.

use crate::error::{Error, Result};
use matbridge_runtime::{Buffer, Context, MemoryKind, Pipeline, PipelineDesc, SpecConstant};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Rewrites the translator applies beyond what the device needs (e.g. retyping f16 to bf16).
pub type Requests = &'static [matbridge_translator::Request];

/// What a pipeline is made of: a built-in kernel, whether it is translated for the device (and
/// with which extra requests), and its specialization constants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipelineKey {
    pub kernel: String,
    /// `None`: a built-in (naga-compiled) kernel run as it is; `Some`: an NV-style kernel
    /// translated for the device with these requests.
    pub translated: Option<Requests>,
    pub spec: Vec<SpecConstant>,
}

/// A device plus its compiled matmul pipelines.
pub struct Gpu {
    pub ctx: Context,
    pipelines: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
}

impl Gpu {
    pub fn new(ctx: Context) -> Gpu {
        Gpu { ctx, pipelines: Mutex::new(HashMap::new()) }
    }

    /// A cached pipeline for a built-in (naga-compiled) kernel.
    pub fn pipeline(&self, kernel: &str, bindings: u32) -> Result<Arc<Pipeline>> {
        self.pipeline_for(PipelineKey { kernel: kernel.to_string(), translated: None, spec: Vec::new() }, bindings)
    }

    /// A cached pipeline for a built-in NV-style kernel, translated for this device on first use
    /// with `requests` beyond what the device needs (e.g. retyping f16 to bf16).
    pub fn pipeline_translated(&self, kernel: &str, bindings: u32, spec: &[SpecConstant], requests: Requests) -> Result<Arc<Pipeline>> {
        self.pipeline_for(PipelineKey { kernel: kernel.to_string(), translated: Some(requests), spec: spec.to_vec() }, bindings)
    }

    fn pipeline_for(&self, key: PipelineKey, bindings: u32) -> Result<Arc<Pipeline>> {
        let mut cache = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(&key) {
            return Ok(p.clone());
        }
        let words = matbridge_shaders::spirv(&key.kernel).ok_or_else(|| Error::UnknownKernel { name: key.kernel.clone() })?;
        let spirv = match key.translated {
            Some(requests) => matbridge_translator::translate_with(&words, self.ctx.caps(), requests)?.0,
            None => words,
        };
        let p = Arc::new(self.ctx.create_pipeline(&PipelineDesc {
            spirv: &spirv,
            bindings,
            spec_constants: &key.spec,
            label: &key.kernel,
            // Built-in kernels, or their translations by matbridge (both validated by the tests).
            trusted: true,
            ..Default::default()
        })?);
        cache.insert(key, p.clone());
        Ok(p)
    }

    /// A host-visible buffer holding kernel parameters (written directly, no copy submitted).
    pub(crate) fn params_buffer(&self, bytes: &[u8]) -> Result<Buffer> {
        let mut buf = self.ctx.create_buffer(bytes.len() as u64, MemoryKind::Upload, "matmul params")?;
        self.ctx.write_buffer(&mut buf, bytes)?;
        Ok(buf)
    }

    /// An uninitialised f32 scratch buffer (every element the epilogue reads is written first).
    pub(crate) fn scratch_buffer(&self, len: usize) -> Result<Buffer> {
        Ok(self.ctx.create_buffer((len.max(1) * 4) as u64, MemoryKind::DeviceLocal, "matmul scratch")?)
    }
}
