//! Criterion: 10 000 empty tasks in one finish, hc-runtime vs `rayon::scope`,
//! with the same number of workers (available cores). Kept small; the
//! `overhead` binary has the full comparison.

use std::num::NonZeroUsize;
use std::time::Duration;

use benches::workloads as w;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const TASKS: usize = 10_000;

fn spawn(c: &mut Criterion) {
    let workers = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let rt = hc_runtime::Runtime::builder()
        .num_workers(workers)
        .build()
        .expect("start the hc runtime");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .expect("start the rayon pool");

    let mut group = c.benchmark_group(format!("spawn_{TASKS}"));
    group
        .throughput(Throughput::Elements(TASKS as u64))
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("hc", |b| b.iter(|| w::hc_spawn_flat(&rt, TASKS)));
    group.bench_function("rayon", |b| b.iter(|| w::rayon_spawn_flat(&pool, TASKS)));
    group.finish();
}

criterion_group!(benches, spawn);
criterion_main!(benches);
