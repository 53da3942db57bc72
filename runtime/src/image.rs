//! Storage images for kernels' image arguments: created through gpu-allocator, kept in the
//! `GENERAL` layout for their whole life, filled and read through staging buffers.

use crate::buffer::MemoryKind;
use crate::device::{Context, DeviceShared};
use crate::error::{Error, Result};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
pub use matbridge_translator::kernel::{ChannelOrder, ChannelType, ImageFormat};
use std::sync::Arc;

/// The shape of an image, as OpenCL's image types have them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageKind {
    D1,
    D2,
    D3,
    D1Array,
    D2Array,
    /// An `image1d_buffer_t`: a storage texel buffer.
    D1Buffer,
}

impl ImageKind {
    /// Spatial dimensions, and whether layers follow.
    pub fn dims(&self) -> (u32, bool) {
        match self {
            ImageKind::D1 | ImageKind::D1Buffer => (1, false),
            ImageKind::D2 => (2, false),
            ImageKind::D3 => (3, false),
            ImageKind::D1Array => (1, true),
            ImageKind::D2Array => (2, true),
        }
    }
}

/// What an image is: its kind, format and size. `height` is 1 for one-dimensional images;
/// `depth` is the depth of a 3D image, the layer count of an array, and 1 otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageDesc {
    pub kind: ImageKind,
    pub format: ImageFormat,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
}

impl ImageDesc {
    /// A two-dimensional image.
    pub fn d2(format: ImageFormat, width: u32, height: u32) -> ImageDesc {
        ImageDesc { kind: ImageKind::D2, format, width, height, depth: 1 }
    }

    /// Bytes of the whole image, texels packed row after row (`x` fastest), then slice after
    /// slice or layer after layer: the layout [`Context::write_image`] takes.
    pub fn byte_len(&self) -> u64 {
        u64::from(self.format.texel_bytes()) * u64::from(self.width) * u64::from(self.height) * u64::from(self.depth)
    }
}

/// A storage image and its view, or (an image buffer) a buffer and its texel view. Destroyed
/// (and its memory freed) exactly once, on drop.
pub struct Image {
    pub(crate) shared: Arc<DeviceShared>,
    raw: vk::Image,
    pub(crate) view: vk::ImageView,
    allocation: Option<Allocation>,
    /// An image buffer's buffer and view (null otherwise).
    texels: Option<crate::Buffer>,
    pub(crate) texel_view: vk::BufferView,
    desc: ImageDesc,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image").field("desc", &self.desc).finish()
    }
}

impl Image {
    pub fn desc(&self) -> &ImageDesc {
        &self.desc
    }

    /// How a pipeline binds it.
    pub(crate) fn descriptor_type(&self) -> vk::DescriptorType {
        if self.texels.is_some() {
            vk::DescriptorType::STORAGE_TEXEL_BUFFER
        } else {
            vk::DescriptorType::STORAGE_IMAGE
        }
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _gate = crate::driver_gate::shared();
        // SAFETY: the views and image belong to this device and no pending work uses them: every
        // submission waits for its fence before returning. Null handles (the kind this is not)
        // are ignored; the texel buffer is dropped after its view.
        unsafe {
            self.shared.raw.destroy_buffer_view(self.texel_view, None);
            self.shared.raw.destroy_image_view(self.view, None);
        }
        if let Some(allocation) = self.allocation.take() {
            if let Err(e) = self.shared.allocator().free(allocation) {
                log::error!("freeing image memory failed: {e}");
            }
        }
        // SAFETY: as above; the view made from it is gone.
        unsafe { self.shared.raw.destroy_image(self.raw, None) };
    }
}

/// The Vulkan format of an OpenCL image format (`BGRA` is held as `RGBA`, the kernel trading
/// red and blue).
pub(crate) fn vk_format(f: ImageFormat) -> vk::Format {
    use vk::Format as F;
    use ChannelOrder::*;
    use ChannelType as T;
    match (f.order, f.channel_type) {
        (R, T::UnormInt8) => F::R8_UNORM,
        (R, T::UnormInt16) => F::R16_UNORM,
        (R, T::SnormInt8) => F::R8_SNORM,
        (R, T::SnormInt16) => F::R16_SNORM,
        (R, T::SignedInt8) => F::R8_SINT,
        (R, T::SignedInt16) => F::R16_SINT,
        (R, T::SignedInt32) => F::R32_SINT,
        (R, T::UnsignedInt8) => F::R8_UINT,
        (R, T::UnsignedInt16) => F::R16_UINT,
        (R, T::UnsignedInt32) => F::R32_UINT,
        (R, T::HalfFloat) => F::R16_SFLOAT,
        (R, T::Float) => F::R32_SFLOAT,
        (RG, T::UnormInt8) => F::R8G8_UNORM,
        (RG, T::UnormInt16) => F::R16G16_UNORM,
        (RG, T::SnormInt8) => F::R8G8_SNORM,
        (RG, T::SnormInt16) => F::R16G16_SNORM,
        (RG, T::SignedInt8) => F::R8G8_SINT,
        (RG, T::SignedInt16) => F::R16G16_SINT,
        (RG, T::SignedInt32) => F::R32G32_SINT,
        (RG, T::UnsignedInt8) => F::R8G8_UINT,
        (RG, T::UnsignedInt16) => F::R16G16_UINT,
        (RG, T::UnsignedInt32) => F::R32G32_UINT,
        (RG, T::HalfFloat) => F::R16G16_SFLOAT,
        (RG, T::Float) => F::R32G32_SFLOAT,
        (RGBA | BGRA, T::UnormInt8) => F::R8G8B8A8_UNORM,
        (RGBA | BGRA, T::UnormInt16) => F::R16G16B16A16_UNORM,
        (RGBA | BGRA, T::SnormInt8) => F::R8G8B8A8_SNORM,
        (RGBA | BGRA, T::SnormInt16) => F::R16G16B16A16_SNORM,
        (RGBA | BGRA, T::SignedInt8) => F::R8G8B8A8_SINT,
        (RGBA | BGRA, T::SignedInt16) => F::R16G16B16A16_SINT,
        (RGBA | BGRA, T::SignedInt32) => F::R32G32B32A32_SINT,
        (RGBA | BGRA, T::UnsignedInt8) => F::R8G8B8A8_UINT,
        (RGBA | BGRA, T::UnsignedInt16) => F::R16G16B16A16_UINT,
        (RGBA | BGRA, T::UnsignedInt32) => F::R32G32B32A32_UINT,
        (RGBA | BGRA, T::HalfFloat) => F::R16G16B16A16_SFLOAT,
        (RGBA | BGRA, T::Float) => F::R32G32B32A32_SFLOAT,
    }
}

fn layers_of(desc: &ImageDesc) -> u32 {
    if desc.kind.dims().1 {
        desc.depth
    } else {
        1
    }
}

fn extent_of(desc: &ImageDesc) -> vk::Extent3D {
    let depth = if desc.kind == ImageKind::D3 { desc.depth } else { 1 };
    vk::Extent3D { width: desc.width, height: desc.height, depth }
}

const COLOR: vk::ImageSubresourceRange =
    vk::ImageSubresourceRange { aspect_mask: vk::ImageAspectFlags::COLOR, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: vk::REMAINING_ARRAY_LAYERS };

impl Context {
    /// Creates a storage image (its texels undefined until written). The device must support
    /// the format as a storage image; the size must fit its limits.
    pub fn create_image(&self, desc: &ImageDesc, name: &str) -> Result<Image> {
        let _gate = crate::driver_gate::shared();
        let shared = &self.shared;
        let format = vk_format(desc.format);
        let (dims, arrayed) = desc.kind.dims();
        if desc.format.order == ChannelOrder::BGRA && desc.format.texel_bytes() != 4 {
            return Err(Error::InvalidArgument(format!("image `{name}`: BGRA images hold 8-bit channels, not {:?}", desc.format.channel_type)));
        }
        if desc.width == 0 || desc.height == 0 || desc.depth == 0 || (dims == 1 && desc.height != 1) || (dims < 3 && !arrayed && desc.depth != 1) {
            return Err(Error::InvalidArgument(format!("image `{name}`: size {}x{}x{} does not fit a {:?} image", desc.width, desc.height, desc.depth, desc.kind)));
        }
        if desc.kind != ImageKind::D1Buffer {
            // SAFETY: the physical device was enumerated from this instance.
            let limits = unsafe { shared.instance.raw.get_physical_device_properties(shared.physical) }.limits;
            let (largest, what) = match desc.kind {
                ImageKind::D1 | ImageKind::D1Array => (limits.max_image_dimension1_d, "maxImageDimension1D"),
                ImageKind::D3 => (limits.max_image_dimension3_d, "maxImageDimension3D"),
                _ => (limits.max_image_dimension2_d, "maxImageDimension2D"),
            };
            let layers = if arrayed { desc.depth } else { 1 };
            let extent = extent_of(desc);
            if extent.width.max(extent.height).max(extent.depth) > largest || layers > limits.max_image_array_layers {
                return Err(Error::InvalidArgument(format!(
                    "image `{name}`: size {}x{}x{} exceeds the device's {what} of {largest} or maxImageArrayLayers of {}",
                    desc.width, desc.height, desc.depth, limits.max_image_array_layers
                )));
            }
        }
        // SAFETY: the physical device was enumerated from this instance.
        let props = unsafe { shared.instance.raw.get_physical_device_format_properties(shared.physical, format) };
        if desc.kind == ImageKind::D1Buffer {
            drop(_gate);
            return self.create_image_buffer(desc, name, format, props.buffer_features);
        }
        if !props.optimal_tiling_features.contains(vk::FormatFeatureFlags::STORAGE_IMAGE | vk::FormatFeatureFlags::TRANSFER_SRC | vk::FormatFeatureFlags::TRANSFER_DST) {
            return Err(Error::MissingCapability { needed: format!("storage images of format {format:?} ({:?} {:?})", desc.format.order, desc.format.channel_type), device: shared.caps.name.clone() });
        }
        if desc.format.spirv().1 && !shared.image_extended_formats {
            return Err(Error::MissingCapability { needed: format!("shaderStorageImageExtendedFormats (for {format:?})"), device: shared.caps.name.clone() });
        }
        let image_type = match dims {
            1 => vk::ImageType::TYPE_1D,
            2 => vk::ImageType::TYPE_2D,
            _ => vk::ImageType::TYPE_3D,
        };
        let info = vk::ImageCreateInfo::default()
            .image_type(image_type)
            .format(format)
            .extent(extent_of(desc))
            .mip_levels(1)
            .array_layers(layers_of(desc))
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid device and create info.
        let raw = unsafe { shared.raw.create_image(&info, None) }.map_err(Error::vk("vkCreateImage"))?;
        // SAFETY: `raw` was just created on this device.
        let requirements = unsafe { shared.raw.get_image_memory_requirements(raw) };
        let allocation =
            shared.allocator().allocate(&AllocationCreateDesc { name, requirements, location: MemoryLocation::GpuOnly, linear: false, allocation_scheme: AllocationScheme::GpuAllocatorManaged });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unbound image created above, not used elsewhere.
                unsafe { shared.raw.destroy_image(raw, None) };
                return Err(e.into());
            }
        };
        // SAFETY: memory and offset come from an allocation that satisfies `requirements`.
        if let Err(e) = unsafe { shared.raw.bind_image_memory(raw, allocation.memory(), allocation.offset()) } {
            // SAFETY: the image is not bound or used; the allocation is freed once, here.
            unsafe { shared.raw.destroy_image(raw, None) };
            if let Err(e) = shared.allocator().free(allocation) {
                log::error!("freeing image memory failed: {e}");
            }
            return Err(Error::vk("vkBindImageMemory")(e));
        }
        let view_type = match desc.kind {
            ImageKind::D1 => vk::ImageViewType::TYPE_1D,
            ImageKind::D2 => vk::ImageViewType::TYPE_2D,
            ImageKind::D3 => vk::ImageViewType::TYPE_3D,
            ImageKind::D1Array => vk::ImageViewType::TYPE_1D_ARRAY,
            ImageKind::D2Array => vk::ImageViewType::TYPE_2D_ARRAY,
            ImageKind::D1Buffer => vk::ImageViewType::TYPE_1D,
        };
        let view_info = vk::ImageViewCreateInfo::default().image(raw).view_type(view_type).format(format).subresource_range(COLOR);
        // SAFETY: the image is bound to memory and the view matches its type and format.
        let view = match unsafe { shared.raw.create_image_view(&view_info, None) } {
            Ok(v) => v,
            Err(e) => {
                // SAFETY: nothing uses the image yet; it and its memory are released once, here.
                unsafe { shared.raw.destroy_image(raw, None) };
                if let Err(e) = shared.allocator().free(allocation) {
                    log::error!("freeing image memory failed: {e}");
                }
                return Err(Error::vk("vkCreateImageView")(e));
            }
        };
        let image = Image { shared: shared.clone(), raw, view, allocation: Some(allocation), texels: None, texel_view: vk::BufferView::null(), desc: *desc };
        drop(_gate);
        // The one layout transition of its life.
        self.submit_and_wait("image layout", |device, cmd| {
            let barrier = [vk::ImageMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::empty())
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE)
                .old_layout(vk::ImageLayout::UNDEFINED)
                .new_layout(vk::ImageLayout::GENERAL)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(raw)
                .subresource_range(COLOR)];
            // SAFETY: the image is alive until the wait returns.
            unsafe { device.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, vk::PipelineStageFlags::ALL_COMMANDS, vk::DependencyFlags::empty(), &[], &[], &barrier) };
        })?;
        Ok(image)
    }

    /// An image buffer: a device-local buffer of its texels and a texel view of it.
    fn create_image_buffer(&self, desc: &ImageDesc, name: &str, format: vk::Format, features: vk::FormatFeatureFlags) -> Result<Image> {
        let shared = &self.shared;
        if !features.contains(vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER) {
            return Err(Error::MissingCapability {
                needed: format!("storage texel buffers of format {format:?} ({:?} {:?})", desc.format.order, desc.format.channel_type),
                device: shared.caps.name.clone(),
            });
        }
        // SAFETY: the physical device was enumerated from this instance.
        let max = unsafe { shared.instance.raw.get_physical_device_properties(shared.physical) }.limits.max_texel_buffer_elements;
        if desc.width > max || desc.height != 1 || desc.depth != 1 {
            return Err(Error::InvalidArgument(format!("image buffer `{name}`: {}x{}x{} texels (at most {max}x1x1 on this device)", desc.width, desc.height, desc.depth)));
        }
        let buffer = self.create_buffer_with_usage(desc.byte_len(), MemoryKind::DeviceLocal, name, vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER)?;
        let _gate = crate::driver_gate::shared();
        let info = vk::BufferViewCreateInfo::default().buffer(buffer.raw).format(format).offset(0).range(vk::WHOLE_SIZE);
        // SAFETY: the buffer was created with STORAGE_TEXEL_BUFFER usage and the format supports it.
        let texel_view = unsafe { shared.raw.create_buffer_view(&info, None) }.map_err(Error::vk("vkCreateBufferView"))?;
        Ok(Image { shared: shared.clone(), raw: vk::Image::null(), view: vk::ImageView::null(), allocation: None, texels: Some(buffer), texel_view, desc: *desc })
    }

    /// Overwrites the whole image with `data`: texels packed in [`ImageDesc::byte_len`]'s
    /// order, each in the format's channel order and type.
    pub fn write_image(&self, image: &Image, data: &[u8]) -> Result<()> {
        self.check_image(image, data.len() as u64, "image write")?;
        let staging = self.buffer_from_bytes(data)?;
        match &image.texels {
            Some(texels) => self.copy_buffer(&staging, texels),
            None => self.image_copy(image, &staging, true),
        }
    }

    /// Reads the whole image, in the layout [`Context::write_image`] takes.
    pub fn read_image(&self, image: &Image) -> Result<Vec<u8>> {
        let len = image.desc.byte_len();
        self.check_image(image, len, "image read")?;
        let mut staging = self.create_buffer(len, MemoryKind::Readback, "image readback")?;
        match &image.texels {
            Some(texels) => self.copy_buffer(texels, &staging)?,
            None => self.image_copy(image, &staging, false)?,
        }
        self.read_buffer::<u8>(&mut staging)
    }

    fn check_image(&self, image: &Image, given: u64, what: &str) -> Result<()> {
        if !Arc::ptr_eq(&image.shared, &self.shared) {
            return Err(Error::InvalidArgument(format!("{what}: the image belongs to another device")));
        }
        let expected = image.desc.byte_len();
        if given != expected {
            return Err(Error::SizeMismatch {
                what: format!("{what} ({}x{}x{} {:?} {:?})", image.desc.width, image.desc.height, image.desc.depth, image.desc.format.order, image.desc.format.channel_type),
                expected,
                given,
            });
        }
        Ok(())
    }

    fn buffer_from_bytes(&self, data: &[u8]) -> Result<crate::Buffer> {
        let mut staging = self.create_buffer(data.len() as u64, MemoryKind::Upload, "image upload")?;
        self.write_buffer(&mut staging, data)?;
        Ok(staging)
    }

    /// Copies between the image and a buffer of its bytes (`to_image`: buffer -> image).
    fn image_copy(&self, image: &Image, buffer: &crate::Buffer, to_image: bool) -> Result<()> {
        let layers = layers_of(&image.desc);
        let region = [vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: layers })
            .image_extent(extent_of(&image.desc))];
        self.submit_and_wait("image copy", |device, cmd| {
            // Earlier kernel accesses -> the copy -> later kernel accesses.
            let before = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE)];
            let after = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::HOST_READ)];
            // SAFETY: the image (in GENERAL layout since its creation) and the buffer are alive
            // until the wait returns.
            unsafe {
                device.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::ALL_COMMANDS, vk::PipelineStageFlags::TRANSFER, vk::DependencyFlags::empty(), &before, &[], &[]);
                if to_image {
                    device.cmd_copy_buffer_to_image(cmd, buffer.raw, image.raw, vk::ImageLayout::GENERAL, &region);
                } else {
                    device.cmd_copy_image_to_buffer(cmd, image.raw, vk::ImageLayout::GENERAL, buffer.raw, &region);
                }
                device.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST, vk::DependencyFlags::empty(), &after, &[], &[]);
            }
        })
    }
}
