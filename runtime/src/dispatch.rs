//! Recording, submitting and timing dispatches.

use crate::buffer::Buffer;
use crate::device::{Context, SubmitResources};
use crate::error::{Error, Result};
use crate::image::Image;
use crate::pipeline::Pipeline;
use ash::vk;
use std::time::Duration;

/// How long a submission's fence is polled before the thread blocks on it.
const SPIN_WAIT: Duration = Duration::from_micros(500);

/// Default time a submission may take before [`Error::Timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Default time a submission may take on a CPU device (lavapipe, SwiftShader): these drivers
/// compile a pipeline at its first dispatch, inside the wait (an IREE 256^3 matmul emulated
/// took 112 s there), and cannot hang a GPU.
pub const CPU_DEVICE_TIMEOUT: Duration = Duration::from_secs(1800);

/// One dispatch of a pipeline over buffers bound at set 0, bindings 0.. in order.
#[derive(Clone, Copy, Debug)]
pub struct Dispatch<'a> {
    pub pipeline: &'a Pipeline,
    /// Bound at bindings 0, 1, ... of set 0.
    pub buffers: &'a [&'a Buffer],
    /// Storage images, bound at the bindings after the buffers'.
    pub images: &'a [&'a Image],
    pub push_constants: &'a [u8],
    pub groups: [u32; 3],
}

/// What a run measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunStats {
    /// GPU time between the first and last dispatch's timestamps, when the queue has timestamps.
    pub gpu_time: Option<Duration>,
    /// Host time from submission to fence signal.
    pub wall_time: Duration,
}

impl Context {
    /// Records commands with `record`, submits them and waits for the fence.
    pub(crate) fn submit_and_wait(&self, what: &'static str, record: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<()> {
        let _gate = crate::driver_gate::shared();
        let mut res = self.shared.submit.lock().unwrap_or_else(|p| p.into_inner());
        let result = self.submit_locked(&mut res, what, self.default_timeout(), record).map(|_| ());
        drop(res);
        self.check_validation()?;
        result
    }

    /// Records into the reusable command buffer, submits, and waits for the reusable fence.
    fn submit_locked(&self, res: &mut SubmitResources, what: &'static str, timeout: Duration, record: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<Duration> {
        let shared = &self.shared;
        let device = &shared.raw;
        let cmd = res.cmd;
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the command buffer is not pending (every submission is waited for while the
        // resources' lock is held) and its pool allows resetting single buffers.
        unsafe {
            device.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty()).map_err(Error::vk("vkResetCommandBuffer"))?;
            device.begin_command_buffer(cmd, &begin).map_err(Error::vk("vkBeginCommandBuffer"))?;
        }
        record(device, cmd);
        // SAFETY: recording state, begun above; the fence is unsignalled-or-signalled and unused.
        unsafe {
            device.end_command_buffer(cmd).map_err(Error::vk("vkEndCommandBuffer"))?;
            device.reset_fences(&[res.fence]).map_err(Error::vk("vkResetFences"))?;
        }
        let cmds = [cmd];
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        let start = std::time::Instant::now();
        {
            let queue = shared.queue.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: the queue is externally synchronised by its mutex; cmd is executable.
            unsafe { device.queue_submit(*queue, &submit, res.fence) }.map_err(Error::vk("vkQueueSubmit"))?;
        }
        // Short submissions finish before a blocking wait's wake-up would: poll the fence for up
        // to SPIN_WAIT first (this cuts the host-observed latency of a small matmul by tens of
        // microseconds), then block.
        let spin = std::time::Instant::now();
        while spin.elapsed() < SPIN_WAIT.min(timeout) {
            // SAFETY: the fence belongs to this device.
            match unsafe { device.get_fence_status(res.fence) } {
                Ok(true) => return Ok(start.elapsed()),
                Ok(false) => std::hint::spin_loop(),
                Err(vk::Result::ERROR_DEVICE_LOST) => return Err(Error::DeviceLost(what)),
                Err(e) => return Err(Error::vk("vkGetFenceStatus")(e)),
            }
        }
        let nanos = timeout.as_nanos().min(u64::MAX as u128) as u64;
        // SAFETY: the fence belongs to this device.
        match unsafe { device.wait_for_fences(&[res.fence], true, nanos) } {
            Ok(()) => Ok(start.elapsed()),
            Err(vk::Result::TIMEOUT) => {
                // The work is still pending: wait it out so that reusing the objects is sound.
                // SAFETY: valid device.
                let _ = unsafe { device.device_wait_idle() };
                Err(Error::Timeout { what, timeout_ms: timeout.as_millis() as u64 })
            }
            Err(vk::Result::ERROR_DEVICE_LOST) => Err(Error::DeviceLost(what)),
            Err(e) => Err(Error::vk("vkWaitForFences")(e)),
        }
    }

    /// Runs `dispatches` in order (with a full barrier between them) and waits.
    pub fn run(&self, dispatches: &[Dispatch<'_>]) -> Result<RunStats> {
        self.run_repeated(dispatches, 1)
    }

    /// Records `dispatches` `repeat` times in one command buffer and times the whole batch on the
    /// GPU; `RunStats::gpu_time` is for all repetitions together.
    pub fn run_repeated(&self, dispatches: &[Dispatch<'_>], repeat: u32) -> Result<RunStats> {
        self.run_with_timeout(dispatches, repeat, self.default_timeout())
    }

    /// The fence timeout of submissions that name none: [`CPU_DEVICE_TIMEOUT`] on a CPU device,
    /// [`DEFAULT_TIMEOUT`] elsewhere.
    pub fn default_timeout(&self) -> Duration {
        if self.shared.caps.device_type == matbridge_translator::profile::DeviceType::Cpu {
            CPU_DEVICE_TIMEOUT
        } else {
            DEFAULT_TIMEOUT
        }
    }

    /// As [`Context::run_repeated`] with an explicit fence timeout.
    pub fn run_with_timeout(&self, dispatches: &[Dispatch<'_>], repeat: u32, timeout: Duration) -> Result<RunStats> {
        let _gate = crate::driver_gate::shared();
        let shared = &self.shared;
        let device = &shared.raw;
        for d in dispatches {
            if d.buffers.len() + d.images.len() != d.pipeline.bindings as usize {
                return Err(Error::InvalidArgument(format!(
                    "pipeline `{}` has {} bindings, the dispatch gives {} (buffers: {}, images: {})",
                    d.pipeline.label,
                    d.pipeline.bindings,
                    d.buffers.len() + d.images.len(),
                    d.buffers.len(),
                    d.images.len()
                )));
            }
            for (i, ty) in d.pipeline.descriptor_types.iter().enumerate() {
                let gives = if i < d.buffers.len() { vk::DescriptorType::STORAGE_BUFFER } else { d.images[i - d.buffers.len()].descriptor_type() };
                let takes = if *ty == vk::DescriptorType::UNIFORM_BUFFER { vk::DescriptorType::STORAGE_BUFFER } else { *ty };
                if gives != takes {
                    let what = |t: vk::DescriptorType| match t {
                        vk::DescriptorType::STORAGE_IMAGE => "an image",
                        vk::DescriptorType::STORAGE_TEXEL_BUFFER => "an image buffer",
                        _ => "a buffer",
                    };
                    return Err(Error::InvalidArgument(format!("binding {i} of pipeline `{}` takes {}, the dispatch gives {}", d.pipeline.label, what(takes), what(gives))));
                }
            }
            if d.images.iter().any(|b| !std::sync::Arc::ptr_eq(&b.shared, shared)) {
                return Err(Error::InvalidArgument("an image belongs to another device".into()));
            }
            if d.push_constants.len() != d.pipeline.push_constant_bytes as usize {
                return Err(Error::SizeMismatch {
                    what: format!("push constants of pipeline `{}`", d.pipeline.label),
                    expected: d.pipeline.push_constant_bytes as u64,
                    given: d.push_constants.len() as u64,
                });
            }
            let max = shared.caps.limits.max_workgroup_count;
            if (0..3).any(|i| d.groups[i] > max[i]) {
                return Err(Error::InvalidArgument(format!("workgroup count {:?} exceeds the device limit {:?}", d.groups, max)));
            }
            if d.buffers.iter().any(|b| !std::sync::Arc::ptr_eq(&b.shared, shared)) {
                return Err(Error::InvalidArgument("a buffer belongs to another device".into()));
            }
        }
        let total_bindings: u32 = dispatches.iter().map(|d| d.pipeline.bindings).sum::<u32>().max(1);
        let mut res = shared.submit.lock().unwrap_or_else(|p| p.into_inner());
        res.grow_descriptors(device, dispatches.len().max(1) as u32, total_bindings)?;
        // SAFETY: no set from this pool is in use: the previous submission was waited for.
        unsafe { device.reset_descriptor_pool(res.descriptor_pool, vk::DescriptorPoolResetFlags::empty()) }.map_err(Error::vk("vkResetDescriptorPool"))?;
        let pool = res.descriptor_pool;
        let query_pool = res.query_pool;
        let result = (|| {
            let mut sets = Vec::with_capacity(dispatches.len());
            for d in dispatches {
                let layouts = [d.pipeline.set_layout];
                let alloc = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
                // SAFETY: the pool was sized for every dispatch's bindings.
                let set = unsafe { device.allocate_descriptor_sets(&alloc) }.map_err(Error::vk("vkAllocateDescriptorSets"))?[0];
                // A uniform buffer binds its first maxUniformBufferRange bytes at most: a uniform
                // block cannot be larger, and binding more is invalid.
                let uniform_range = shared.caps.limits.max_uniform_buffer_range as u64;
                let infos: Vec<[vk::DescriptorBufferInfo; 1]> = d
                    .buffers
                    .iter()
                    .zip(&d.pipeline.descriptor_types)
                    .map(|(b, ty)| {
                        let range = if *ty == vk::DescriptorType::UNIFORM_BUFFER && b.size() > uniform_range { uniform_range } else { vk::WHOLE_SIZE };
                        [vk::DescriptorBufferInfo { buffer: b.raw, offset: 0, range }]
                    })
                    .collect();
                let image_infos: Vec<[vk::DescriptorImageInfo; 1]> =
                    d.images.iter().map(|im| [vk::DescriptorImageInfo { sampler: vk::Sampler::null(), image_view: im.view, image_layout: vk::ImageLayout::GENERAL }]).collect();
                let texel_views: Vec<[vk::BufferView; 1]> = d.images.iter().map(|im| [im.texel_view]).collect();
                let mut writes: Vec<_> = infos
                    .iter()
                    .enumerate()
                    .map(|(i, info)| vk::WriteDescriptorSet::default().dst_set(set).dst_binding(i as u32).descriptor_type(d.pipeline.descriptor_types[i]).buffer_info(info))
                    .collect();
                let first = d.buffers.len();
                writes.extend(d.images.iter().enumerate().map(|(i, im)| {
                    let write = vk::WriteDescriptorSet::default().dst_set(set).dst_binding((first + i) as u32).descriptor_type(im.descriptor_type());
                    if im.descriptor_type() == vk::DescriptorType::STORAGE_TEXEL_BUFFER {
                        write.texel_buffer_view(&texel_views[i])
                    } else {
                        write.image_info(&image_infos[i])
                    }
                }));
                // SAFETY: the set, buffers and images are valid; `infos`, `image_infos` and
                // `texel_views` outlive the call.
                unsafe { device.update_descriptor_sets(&writes, &[]) };
                sets.push(set);
            }
            let wall = self.submit_locked(&mut res, "dispatch", timeout, |device, cmd| {
                // Earlier host writes and transfers -> the first dispatch.
                let before = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::HOST_WRITE)
                    .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
                // One dispatch -> the next dispatch or a later copy.
                let between = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                    .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_READ)];
                // SAFETY: all handles recorded here are alive until the submission completes.
                unsafe {
                    if let Some(q) = query_pool {
                        device.cmd_reset_query_pool(cmd, q, 0, 2);
                    }
                    device.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::HOST,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::DependencyFlags::empty(),
                        &before,
                        &[],
                        &[],
                    );
                    if let Some(q) = query_pool {
                        device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, q, 0);
                    }
                    for _ in 0..repeat {
                        for (d, set) in dispatches.iter().zip(&sets) {
                            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, d.pipeline.raw);
                            device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, d.pipeline.layout, 0, &[*set], &[]);
                            if !d.push_constants.is_empty() {
                                device.cmd_push_constants(cmd, d.pipeline.layout, vk::ShaderStageFlags::COMPUTE, 0, d.push_constants);
                            }
                            device.cmd_dispatch(cmd, d.groups[0], d.groups[1], d.groups[2]);
                            device.cmd_pipeline_barrier(
                                cmd,
                                vk::PipelineStageFlags::COMPUTE_SHADER,
                                vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                                vk::DependencyFlags::empty(),
                                &between,
                                &[],
                                &[],
                            );
                        }
                    }
                    if let Some(q) = query_pool {
                        device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, q, 1);
                    }
                }
            })?;
            let gpu_time = query_pool.and_then(|q| {
                let mut ticks = [0u64; 2];
                // SAFETY: both queries were written by the completed submission.
                unsafe { device.get_query_pool_results(q, 0, &mut ticks, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.ok()?;
                let ns = (ticks[1].saturating_sub(ticks[0])) as f64 * shared.caps.limits.timestamp_period_ns as f64;
                Some(Duration::from_nanos(ns as u64))
            });
            Ok(RunStats { gpu_time, wall_time: wall })
        })();
        drop(res);
        self.check_validation()?;
        result
    }
}
