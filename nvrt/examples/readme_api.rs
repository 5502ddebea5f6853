//! The README's example of the application API ("The application API"), compiled: xtask's
//! tests check that the README shows exactly the body of `readme` below.

#[allow(dead_code)]
#[rustfmt::skip]
mod readme {
    pub fn main(sys: &nvrt::System<'_>) -> Result<bool, nvrt::Error> {
        let ctx = sys.open(0)?;                                  // cuCtxCreate: an RM client of its own
        let p = ctx.properties();                                // name, chip, sm_version, memory_bytes, pci
        log::info!(target: "app", "{} ({}, sm_{})", p.name, p.chip, p.sm_version);
        let x: Vec<f32> = (0..1024).map(|i| i as f32).collect();
        let dx = ctx.htod(&x)?;                                  // cuMemAlloc + cuMemcpyHtoD
        let dy = ctx.alloc_zeros::<f32>(x.len())?;
        let module = ctx.load_payload("square")?;                // kernels/square.cu, for this GPU's SM
        let f = module.function("square_plus")?;                 // with its parameter table
        let stream = ctx.new_stream()?;
        let start = stream.record_event()?;
        stream.launch_builder(&f).arg(&dx).arg(&dy).arg(&1.0f32).arg(&1024u32)
            .launch(nvrt::LaunchConfig::linear(4, 256))?;        // arguments checked against the table
        let end = stream.record_event()?;
        stream.synchronize()?;
        log::info!(target: "app", "kernel: {} ns", start.elapsed_ns(&end)?);
        let y = ctx.dtoh(&dy)?;                                  // cuMemcpyDtoH
        let m = ctx.alloc_managed::<u32>(1 << 20)?;              // unified memory: one address, CPU and GPU
        m.with_host_mut(|first, part| part.iter_mut().enumerate().for_each(|(k, v)| *v = (first + k) as u32))?;
        Ok(y.iter().zip(&x).all(|(y, x)| *y == x * x + 1.0))     // the context closes when dropped
    }
}

fn main() {}
