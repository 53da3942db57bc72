//! Tensors: data of one element type and shape, on a device or on the host.
//!
//! [`Tensor<T>`] knows its element type statically: [`Tensor::read`] returns `Vec<T>` with no
//! run-time type check. [`DynTensor`] carries its type as a [`DType`] value, for callers that
//! learn it at run time (the command line); [`DynTensor::typed`] turns it into a `Tensor<T>`
//! after one check.
//!
//! Device tensors own a runtime [`Buffer`] whose size is rounded up to whole 16-byte vectors (the
//! cooperative-matrix kernels read operands as `uvec4`); [`Tensor::from_buffer`] wraps a buffer
//! made elsewhere, [`Tensor::buffer`] lends it to kernel launches.

use super::{DType, Element, HostData};
use crate::error::{Error, Result};
use matbridge_runtime::{Buffer, Context, MemoryKind};
use std::marker::PhantomData;
use std::sync::Mutex;

/// Bytes a device buffer needs for `len` elements of `dtype`: whole 16-byte vectors, at least one.
pub(crate) fn device_bytes(dtype: DType, len: usize) -> Result<u64> {
    let bytes = len.checked_mul(dtype.size()).ok_or(Error::TooLarge { what: "tensor elements", value: len })?;
    Ok(bytes.next_multiple_of(16).max(16) as u64)
}

pub(crate) enum Storage {
    Device {
        ctx: Context,
        buffer: Buffer,
    },
    /// Behind a mutex so that a batch can write a host tensor it borrows shared (see
    /// [`super::batch::Batch`]).
    Host(Mutex<HostData>),
}

/// Elements of one run-time [`DType`] and a shape, on a device or on the host.
pub struct DynTensor {
    dtype: DType,
    shape: Vec<usize>,
    pub(crate) storage: Storage,
}

impl std::fmt::Debug for DynTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let place = match &self.storage {
            Storage::Device { ctx, .. } => ctx.caps().name.clone(),
            Storage::Host(_) => "host".into(),
        };
        f.debug_struct("DynTensor").field("dtype", &self.dtype).field("shape", &self.shape).field("on", &place).finish()
    }
}

pub(crate) fn elements(shape: &[usize]) -> Result<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or(Error::TooLarge { what: "tensor elements", value: usize::MAX })
}

impl DynTensor {
    pub(crate) fn on_host(data: HostData, shape: Vec<usize>) -> Result<DynTensor> {
        check_shape(&shape, data.len())?;
        Ok(DynTensor { dtype: data.dtype, shape, storage: Storage::Host(Mutex::new(data)) })
    }

    /// Elements of `dtype` (`bytes`, little-endian) uploaded to a new buffer on `ctx`'s device.
    pub(crate) fn on_device(ctx: &Context, dtype: DType, bytes: &[u8], shape: Vec<usize>) -> Result<DynTensor> {
        let len = bytes.len() / dtype.size();
        check_shape(&shape, len)?;
        let mut buffer = ctx.create_buffer(device_bytes(dtype, len)?, MemoryKind::DeviceLocal, "tensor")?;
        write_padded(ctx, &mut buffer, bytes)?;
        Ok(DynTensor { dtype, shape, storage: Storage::Device { ctx: ctx.clone(), buffer } })
    }

    /// `buffer` (of `ctx`'s device) holding elements of `dtype` in `shape`.
    pub(crate) fn wrap(ctx: &Context, buffer: Buffer, dtype: DType, shape: Vec<usize>) -> Result<DynTensor> {
        if !buffer.belongs_to(ctx) {
            return Err(Error::ForeignBuffer);
        }
        let needed = device_bytes(dtype, elements(&shape)?)?;
        if buffer.size() < needed {
            return Err(Error::BufferTooSmall { expected: needed, given: buffer.size() });
        }
        Ok(DynTensor { dtype, shape, storage: Storage::Device { ctx: ctx.clone(), buffer } })
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of elements (the product of the shape).
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the tensor lives on a device (else on the host).
    pub fn on_a_device(&self) -> bool {
        matches!(self.storage, Storage::Device { .. })
    }

    /// The device buffer, for kernel launches (`None` on the host).
    pub fn buffer(&self) -> Option<&Buffer> {
        match &self.storage {
            Storage::Device { buffer, .. } => Some(buffer),
            Storage::Host(_) => None,
        }
    }

    /// The same elements viewed in another shape of as many elements.
    pub fn reshape(&mut self, shape: &[usize]) -> Result<()> {
        check_shape(shape, self.len())?;
        self.shape = shape.to_vec();
        Ok(())
    }

    /// Reads the elements back as raw host data.
    pub fn read_host(&self) -> Result<HostData> {
        let len = self.len();
        match &self.storage {
            Storage::Host(data) => Ok(data.lock().unwrap_or_else(|p| p.into_inner()).clone()),
            Storage::Device { ctx, buffer } => {
                let mut bytes = read_device(ctx, buffer)?;
                bytes.truncate(len * self.dtype.size());
                Ok(HostData { dtype: self.dtype, bytes })
            }
        }
    }

    /// Overwrites the elements with `data` (of the tensor's dtype and length).
    pub fn write_host(&mut self, data: &HostData) -> Result<()> {
        if data.dtype != self.dtype {
            return Err(Error::DTypeMismatch { operand: "written data", expected: self.dtype, given: data.dtype });
        }
        if data.len() != self.len() {
            return Err(Error::SizeMismatch { operand: "written data", expected: self.len(), given: data.len() });
        }
        match &mut self.storage {
            Storage::Host(held) => *held.get_mut().unwrap_or_else(|p| p.into_inner()) = data.clone(),
            Storage::Device { ctx, buffer } => write_padded(ctx, buffer, &data.bytes)?,
        }
        Ok(())
    }

    /// This tensor as a `Tensor<T>`; an error when `T` is not its dtype.
    pub fn typed<T: Element>(self) -> Result<Tensor<T>> {
        if self.dtype != T::DTYPE {
            return Err(Error::DTypeMismatch { operand: "tensor", expected: T::DTYPE, given: self.dtype });
        }
        Ok(Tensor { raw: self, element: PhantomData })
    }
}

/// Writes `bytes` to the start of `buffer` and zeros after them (the buffer's size is whole
/// 16-byte vectors).
fn write_padded(ctx: &Context, buffer: &mut Buffer, bytes: &[u8]) -> Result<()> {
    let size = usize::try_from(buffer.size()).map_err(|_| Error::TooLarge { what: "tensor bytes", value: usize::MAX })?;
    let mut padded = crate::error::host_bytes("tensor upload", size)?;
    padded.extend_from_slice(bytes);
    padded.resize(size, 0);
    Ok(ctx.write_buffer(buffer, &padded)?)
}

fn check_shape(shape: &[usize], len: usize) -> Result<()> {
    let n = elements(shape)?;
    if n != len {
        return Err(Error::ShapeMismatch { shape: shape.to_vec(), elements: len });
    }
    Ok(())
}

/// Reads a whole device buffer through a readback copy (the buffer itself need not be mappable).
pub(crate) fn read_device(ctx: &Context, buffer: &Buffer) -> Result<Vec<u8>> {
    let mut staging = ctx.create_buffer(buffer.size(), MemoryKind::Readback, "tensor read")?;
    ctx.copy_buffer(buffer, &staging)?;
    Ok(ctx.read_buffer(&mut staging)?)
}

/// Elements of type `T` in a shape, on a device or on the host.
pub struct Tensor<T: Element> {
    pub(crate) raw: DynTensor,
    element: PhantomData<T>,
}

impl<T: Element> std::fmt::Debug for Tensor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.raw.fmt(f)
    }
}

impl<T: Element> Tensor<T> {
    /// Wraps `buffer`, made on `ctx`'s device, holding `shape` elements of `T`. The buffer must
    /// hold at least the elements rounded up to whole 16-byte vectors (the cooperative-matrix
    /// kernels read whole vectors); an error names the sizes otherwise.
    pub fn from_buffer(ctx: &Context, buffer: Buffer, shape: &[usize]) -> Result<Tensor<T>> {
        DynTensor::wrap(ctx, buffer, T::DTYPE, shape.to_vec())?.typed()
    }

    pub fn shape(&self) -> &[usize] {
        self.raw.shape()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The device buffer, for kernel launches (`None` on the host).
    pub fn buffer(&self) -> Option<&Buffer> {
        self.raw.buffer()
    }

    /// Gives the device buffer back (`None` on the host).
    pub fn into_buffer(self) -> Option<Buffer> {
        match self.raw.storage {
            Storage::Device { buffer, .. } => Some(buffer),
            Storage::Host(_) => None,
        }
    }

    /// The same elements viewed in another shape of as many elements.
    pub fn reshape(mut self, shape: &[usize]) -> Result<Tensor<T>> {
        self.raw.reshape(shape)?;
        Ok(self)
    }

    /// Reads the elements back.
    pub fn read(&self) -> Result<Vec<T>> {
        let len = self.len();
        let bytes = match &self.raw.storage {
            Storage::Host(data) => return Ok(bytemuck::pod_collect_to_vec(&data.lock().unwrap_or_else(|p| p.into_inner()).bytes)),
            Storage::Device { ctx, buffer } => read_device(ctx, buffer)?,
        };
        Ok(bytemuck::pod_collect_to_vec(&bytes[..len * std::mem::size_of::<T>()]))
    }

    /// Overwrites the elements with `data`, which must have as many.
    pub fn write(&mut self, data: &[T]) -> Result<()> {
        self.raw.write_host(&HostData::from_slice(data))
    }

    /// The tensor with its type as a run-time value.
    pub fn into_dyn(self) -> DynTensor {
        self.raw
    }

    pub fn as_dyn(&self) -> &DynTensor {
        &self.raw
    }
}
