//! The matmul API's tensors and batches on every test device and on the CPU: typed tensors,
//! wrapped buffers, batches of dependent matmuls and kernel launches with one wait, checked
//! against the CPU path.

mod common;

use matbridge::runtime::{KernelArg, MemoryKind, NdRange};
use matbridge::{DType, Error, Matbridge, MatmulDesc, Tensor};

/// Deterministic small values (exact in f32 products and sums of this size).
fn values(len: usize, seed: usize) -> Vec<f32> {
    (0..len).map(|i| ((i * 7 + seed * 13) % 11) as f32 - 5.0).collect()
}

#[test]
fn typed_tensors_read_write_reshape_and_wrap_buffers() {
    for ctx in common::contexts() {
        let mb = Matbridge::with_context(ctx.clone());
        let mut t = mb.tensor_with_shape(&values(12, 1), &[3, 4]).unwrap();
        assert_eq!((t.shape(), t.len()), (&[3, 4][..], 12));
        assert_eq!(t.read().unwrap(), values(12, 1));
        t.write(&values(12, 2)).unwrap();
        assert_eq!(t.read().unwrap(), values(12, 2));
        assert!(matches!(t.write(&values(5, 2)), Err(Error::SizeMismatch { expected: 12, given: 5, .. })));
        let t = t.reshape(&[2, 6]).unwrap();
        assert!(matches!(t.reshape(&[5, 5]), Err(Error::ShapeMismatch { elements: 12, .. })));
        assert!(matches!(mb.tensor_with_shape(&values(5, 1), &[2, 3]), Err(Error::ShapeMismatch { elements: 5, .. })));

        // A buffer made with the runtime, wrapped: the elements rounded up to whole 16-byte vectors
        // must fit; then it takes part in matmuls like any tensor.
        let small = ctx.create_buffer(36, MemoryKind::DeviceLocal, "small").unwrap();
        assert!(matches!(Tensor::<f32>::from_buffer(&ctx, small, &[3, 3]), Err(Error::BufferTooSmall { expected: 48, given: 36 })));
        let a_host = values(9, 3);
        let buffer = ctx.buffer_from_slice(&[&a_host[..], &[0.0; 3]].concat(), "a").unwrap();
        let a: Tensor<f32> = mb.wrap_buffer(buffer, &[3, 3]).unwrap();
        let mut c = mb.zeros::<f32>(&[3, 3]).unwrap();
        mb.matmul(&MatmulDesc::new(3, 3, 3, DType::F32), &a, &a, &mut c).unwrap();
        let cpu = Matbridge::cpu();
        let (ha, mut hc) = (cpu.tensor(&a_host).unwrap(), cpu.zeros::<f32>(&[9]).unwrap());
        cpu.matmul(&MatmulDesc::new(3, 3, 3, DType::F32), &ha, &ha, &mut hc).unwrap();
        assert_eq!(c.read().unwrap(), hc.read().unwrap(), "{}", ctx.caps().name);
        // A buffer of another device is refused by name.
        if let Some(other) = common::contexts().into_iter().find(|o| o.caps().name != ctx.caps().name) {
            let foreign = other.zeroed_buffer::<f32>(16, "foreign").unwrap();
            assert!(matches!(mb.wrap_buffer::<f32>(foreign, &[16]), Err(Error::ForeignBuffer)));
        }
        // The buffer goes back to the caller.
        assert_eq!(a.into_buffer().map(|b| b.size()), Some(48));
    }
}

/// `D = (A B) * s + E` then `F = D G` (alpha 2, beta 1), as one batch with a kernel launch in
/// between, and as the same steps one call at a time on the CPU.
#[test]
fn a_batch_runs_dependent_matmuls_and_launches_with_one_wait() {
    let kernel_spirv = common::opencl("vector_add");
    let n = 32;
    let len = n * n;
    let square = MatmulDesc::new(n, n, n, DType::F32);
    let mut accumulate = square.clone();
    (accumulate.alpha, accumulate.beta) = (2.0, 1.0);
    let s = 0.5f32;

    // The CPU reference, one call at a time.
    let cpu = Matbridge::cpu();
    let [a, b, e, g] = [1, 2, 3, 4].map(|seed| cpu.tensor(&values(len, seed)).unwrap());
    let mut c = cpu.zeros::<f32>(&[n, n]).unwrap();
    cpu.matmul(&square, &a, &b, &mut c).unwrap();
    let d_host: Vec<f32> = c.read().unwrap().iter().zip(values(len, 3)).map(|(c, e)| c * s + e).collect();
    let d = cpu.tensor(&d_host).unwrap();
    let mut f = cpu.tensor(&values(len, 5)).unwrap();
    cpu.matmul(&accumulate, &d, &g, &mut f).unwrap();
    let want = f.read().unwrap();
    drop(e);

    // A CPU batch of the two matmuls runs them in order.
    let (d2, mut f2) = (cpu.tensor(&d_host).unwrap(), cpu.tensor(&values(len, 5)).unwrap());
    let c2 = cpu.zeros::<f32>(&[n, n]).unwrap();
    let mut batch = cpu.batch();
    batch.matmul(&square, &a, &b, &c2).unwrap();
    batch.matmul(&accumulate, &d2, &g, &f2).unwrap();
    let run = batch.submit().unwrap();
    assert_eq!(run.paths.len(), 2);
    assert_eq!(f2.read().unwrap(), want);
    f2.write(&values(len, 5)).unwrap();

    // (The OpenCL compiler is among the test dependencies; see `common::opencl`.)
    let Some(spirv) = kernel_spirv else { return };
    for ctx in common::contexts() {
        let name = ctx.caps().name.clone();
        let mb = Matbridge::with_context(ctx.clone());
        let kernel = ctx.load_kernel(&spirv, "vector_add").unwrap();
        let [a, b, e, g] = [1, 2, 3, 4].map(|seed| mb.tensor(&values(len, seed)).unwrap());
        let c = mb.zeros::<f32>(&[n, n]).unwrap();
        let d = mb.zeros::<f32>(&[n, n]).unwrap();
        let (sb, nb) = (s.to_le_bytes(), (len as u32).to_le_bytes());
        for verify in [false, true] {
            let mb = mb.with_verify(verify);
            let f = mb.tensor(&values(len, 5)).unwrap();
            let mut batch = mb.batch();
            batch.matmul(&square, &a, &b, &c).unwrap();
            let args = [KernelArg::Buffer(c.buffer().unwrap()), KernelArg::Buffer(e.buffer().unwrap()), KernelArg::Buffer(d.buffer().unwrap()), KernelArg::Bytes(&sb), KernelArg::Bytes(&nb)];
            batch.launch(&kernel, &NdRange::linear(len as u32, None), &args).unwrap();
            batch.matmul(&accumulate, &d, &g, &f).unwrap();
            assert_eq!(batch.len(), 3);
            let run = batch.submit().unwrap();
            assert_eq!(run.paths.len(), 2);
            assert_eq!(run.checks.len(), if verify { 2 } else { 0 }, "{name}");
            assert!(run.checks.iter().all(|c| c.pass), "{name}: {:?}", run.checks);
            assert_eq!(f.read().unwrap(), want, "{name}: batch, verify {verify}");
        }
        ctx.check_validation().unwrap();
    }
}

#[test]
fn batch_items_are_checked_when_recorded() {
    for ctx in common::contexts() {
        let mb = Matbridge::with_context(ctx);
        let desc = MatmulDesc::new(4, 4, 4, DType::F32);
        let a = mb.zeros::<f32>(&[16]).unwrap();
        let short = mb.zeros::<f32>(&[15]).unwrap();
        let host = Matbridge::cpu().zeros::<f32>(&[16]).unwrap();
        let mut batch = mb.batch();
        assert!(matches!(batch.matmul(&desc, &a, &a, &short), Err(Error::SizeMismatch { operand: "C", expected: 16, given: 15 })));
        assert!(matches!(batch.matmul(&desc, &a, &a, &host), Err(Error::WrongBackend { .. })));
        assert!(batch.is_empty());
        // An empty batch runs nothing.
        assert!(batch.submit().unwrap().paths.is_empty());
    }
}
