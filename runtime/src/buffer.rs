//! Buffers allocated through gpu-allocator, with typed host <-> device copies.

use crate::device::{Context, DeviceShared};
use crate::error::{Error, Result};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// Where a buffer's memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// Fast for kernels; filled and read through staging copies when not host-visible.
    DeviceLocal,
    /// Host-visible, written by the CPU, read by kernels.
    Upload,
    /// Host-visible and cached, written by kernels, read by the CPU.
    Readback,
}

/// A storage buffer. Destroyed (and its memory freed) exactly once, on drop.
pub struct Buffer {
    pub(crate) shared: Arc<DeviceShared>,
    pub(crate) raw: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
    kind: MemoryKind,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer").field("size", &self.size).field("kind", &self.kind).finish()
    }
}

impl Buffer {
    /// Size in bytes as requested.
    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn kind(&self) -> MemoryKind {
        self.kind
    }

    /// Whether the buffer was created on `ctx`'s device.
    pub fn belongs_to(&self, ctx: &Context) -> bool {
        Arc::ptr_eq(&self.shared, &ctx.shared)
    }

    /// The buffer's device address (needs bufferDeviceAddress).
    pub fn device_address(&self) -> Result<u64> {
        if !self.shared.enabled.buffer_device_address {
            return Err(Error::MissingCapability { needed: "bufferDeviceAddress".into(), device: self.shared.caps.name.clone() });
        }
        let info = vk::BufferDeviceAddressInfo::default().buffer(self.raw);
        let _gate = crate::driver_gate::shared();
        // SAFETY: the buffer was created with SHADER_DEVICE_ADDRESS usage when the feature is on.
        Ok(unsafe { self.shared.raw.get_buffer_device_address(&info) })
    }

    fn mapped(&mut self) -> Option<&mut [u8]> {
        let size = self.size as usize;
        self.allocation.as_mut().and_then(|a| a.mapped_slice_mut()).map(|s| &mut s[..size])
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let _gate = crate::driver_gate::shared();
        if let Some(allocation) = self.allocation.take() {
            if let Err(e) = self.shared.allocator().free(allocation) {
                log::error!("freeing buffer memory failed: {e}");
            }
        }
        // SAFETY: the buffer belongs to this device and no pending work uses it: every submission
        // waits for its fence before returning.
        unsafe { self.shared.raw.destroy_buffer(self.raw, None) };
    }
}

fn check_len(what: &str, expected: u64, given: u64) -> Result<()> {
    if expected == given {
        Ok(())
    } else {
        Err(Error::SizeMismatch { what: what.to_string(), expected, given })
    }
}

impl Context {
    /// Creates an uninitialised buffer of `size` bytes.
    pub fn create_buffer(&self, size: u64, kind: MemoryKind, name: &str) -> Result<Buffer> {
        self.create_buffer_with_usage(size, kind, name, vk::BufferUsageFlags::empty())
    }

    /// [`Context::create_buffer`] with more usages (a storage texel buffer's).
    pub(crate) fn create_buffer_with_usage(&self, size: u64, kind: MemoryKind, name: &str, extra: vk::BufferUsageFlags) -> Result<Buffer> {
        let _gate = crate::driver_gate::shared();
        let shared = &self.shared;
        let mut usage = extra | vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::UNIFORM_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        if shared.enabled.buffer_device_address {
            usage |= vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        }
        // Vulkan forbids empty buffers: back an empty one with a few bytes.
        let info = vk::BufferCreateInfo::default().size(size.max(16)).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let raw = unsafe { shared.raw.create_buffer(&info, None) }.map_err(Error::vk("vkCreateBuffer"))?;
        // SAFETY: `raw` was just created on this device.
        let requirements = unsafe { shared.raw.get_buffer_memory_requirements(raw) };
        let location = match kind {
            MemoryKind::DeviceLocal => MemoryLocation::GpuOnly,
            MemoryKind::Upload => MemoryLocation::CpuToGpu,
            MemoryKind::Readback => MemoryLocation::GpuToCpu,
        };
        let allocation = shared.allocator().allocate(&AllocationCreateDesc { name, requirements, location, linear: true, allocation_scheme: AllocationScheme::GpuAllocatorManaged });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unbound buffer created above, not used elsewhere.
                unsafe { shared.raw.destroy_buffer(raw, None) };
                return Err(e.into());
            }
        };
        // SAFETY: memory and offset come from an allocation that satisfies `requirements`.
        let bound = unsafe { shared.raw.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) };
        let buffer = Buffer { shared: shared.clone(), raw, allocation: Some(allocation), size, kind };
        bound.map_err(Error::vk("vkBindBufferMemory"))?;
        Ok(buffer)
    }

    /// Creates a device-local buffer holding `data`.
    pub fn buffer_from_slice<T: bytemuck::Pod>(&self, data: &[T], name: &str) -> Result<Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mut buffer = self.create_buffer(bytes.len() as u64, MemoryKind::DeviceLocal, name)?;
        self.write_buffer(&mut buffer, data)?;
        Ok(buffer)
    }

    /// Creates a zero-filled device-local buffer of `len` elements of `T`.
    pub fn zeroed_buffer<T: bytemuck::Pod>(&self, len: usize, name: &str) -> Result<Buffer> {
        let zeros = vec![0u8; len * std::mem::size_of::<T>()];
        self.buffer_from_slice(&zeros, name)
    }

    /// Overwrites the whole buffer with `data`, which must be exactly its size.
    pub fn write_buffer<T: bytemuck::Pod>(&self, buffer: &mut Buffer, data: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        check_len("buffer write", buffer.size, bytes.len() as u64)?;
        if let Some(mapped) = buffer.mapped() {
            mapped.copy_from_slice(bytes);
            return Ok(());
        }
        let mut staging = self.create_buffer(bytes.len() as u64, MemoryKind::Upload, "staging upload")?;
        staging.mapped().ok_or_else(|| Error::InvalidArgument("upload memory is not host-visible".into()))?.copy_from_slice(bytes);
        self.copy_buffer(&staging, buffer)
    }

    /// Reads the whole buffer as elements of `T`; its size must be a multiple of `T`'s.
    pub fn read_buffer<T: bytemuck::Pod>(&self, buffer: &mut Buffer) -> Result<Vec<T>> {
        let elem = std::mem::size_of::<T>() as u64;
        if elem == 0 || !buffer.size.is_multiple_of(elem) {
            return Err(Error::SizeMismatch { what: format!("buffer read as {}", std::any::type_name::<T>()), expected: buffer.size.div_ceil(elem.max(1)) * elem, given: buffer.size });
        }
        let mut out = vec![T::zeroed(); (buffer.size / elem) as usize];
        if buffer.kind != MemoryKind::DeviceLocal {
            if let Some(mapped) = buffer.mapped() {
                bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(mapped);
                return Ok(out);
            }
        }
        let mut staging = self.create_buffer(buffer.size, MemoryKind::Readback, "staging readback")?;
        self.copy_buffer(buffer, &staging)?;
        let mapped = staging.mapped().ok_or_else(|| Error::InvalidArgument("readback memory is not host-visible".into()))?;
        bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(mapped);
        Ok(out)
    }

    /// Copies all of `src` into `dst` (same size) on the GPU and waits.
    pub fn copy_buffer(&self, src: &Buffer, dst: &Buffer) -> Result<()> {
        check_len("buffer copy", dst.size, src.size)?;
        if src.size == 0 {
            return Ok(());
        }
        let region = [vk::BufferCopy::default().size(src.size)];
        self.submit_and_wait("buffer copy", |device, cmd| {
            // SAFETY: both buffers belong to this device and stay alive until the wait returns.
            unsafe { device.cmd_copy_buffer(cmd, src.raw, dst.raw, &region) };
        })
    }
}
