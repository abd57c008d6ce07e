//! Multi-rank checks of hcmpi-phaser (strict and fuzzy, tree and flat) and
//! hcmpi-accum, run by `tests/mpiexec.rs` at 1 to 4 ranks.
//!
//! Barrier ordering is checked through the file system, which all ranks of
//! a test run share: before signaling phase `k`, task `t` of rank `r`
//! creates the file `<dir>/<label>-<k>-<r>-<t>` (creation is visible to
//! every process once it returns). After leaving phase `k` a task lists the
//! directory and checks:
//!
//! * strict: every task of every rank has created its file of phase `k`;
//! * fuzzy: every task of this rank has its file of `k`, every rank has at
//!   least one file of `k`, and every task of every rank has its file of
//!   `k - 1` (see `hcmpi`'s docs for why that is the guarantee).
//!
//! Each task delays at random before arriving (some work, or a yield to the
//! other tasks), so a barrier that let tasks through early would be
//! caught. Accumulators (SUM over i64, MIN and MAX
//! over f64, BXOR over u32, LOR over i32, PROD over u64) must equal the
//! sequential reduction of every task's value on every rank; a task
//! registered on a barrier and an accumulator uses both each phase; and
//! 250 phased tasks per rank read a global sum each phase.
//!
//! Usage: `hcmpi_phaser_suite <scratch dir>`; prints
//! `rank R/N: hcmpi phaser suite OK`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use hc_mpi::Hcmpi;
use hcmpi_phasers::{spawn_phased, AccumOp, BarrierMode, Mode, Phaser, Shape};

const TASKS: u64 = 3;
const PHASES: u64 = 8;

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x
}

/// A perturbation before arriving: up to a few milliseconds of work, a
/// yield to the other tasks, or nothing.
async fn jitter(seed: u64) {
    match mix(seed) % 6 {
        0 => {
            for _ in 0..mix(seed + 1) % 3_000_000 {
                std::hint::spin_loop();
            }
        }
        1 => hcmpi_testkit::yield_now().await,
        _ => {}
    }
}

struct Marks {
    dir: PathBuf,
    label: String,
    ranks: u64,
}

impl Marks {
    fn mark(&self, phase: u64, rank: u64, task: u64) {
        let path = self
            .dir
            .join(format!("{}-{phase}-{rank}-{task}", self.label));
        std::fs::File::create(&path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    }

    /// The (rank, task) pairs that marked `phase`.
    fn marked(&self, phase: u64) -> HashSet<(u64, u64)> {
        let prefix = format!("{}-{phase}-", self.label);
        std::fs::read_dir(&self.dir)
            .expect("read the scratch dir")
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                let rest = name.strip_prefix(&prefix)?;
                let (r, t) = rest.split_once('-')?;
                Some((r.parse().ok()?, t.parse().ok()?))
            })
            .collect()
    }

    fn check(&self, mode: BarrierMode, phase: u64, rank: u64) {
        let now = self.marked(phase);
        let everyone = |set: &HashSet<(u64, u64)>, ranks: std::ops::Range<u64>| {
            ranks
                .into_iter()
                .all(|r| (0..TASKS).all(|t| set.contains(&(r, t))))
        };
        match mode {
            BarrierMode::Strict => assert!(
                everyone(&now, 0..self.ranks),
                "{}: strict phase {phase} left on rank {rank} with only {now:?}",
                self.label
            ),
            BarrierMode::Fuzzy => {
                assert!(
                    everyone(&now, rank..rank + 1),
                    "{}: fuzzy phase {phase}: local tasks missing: {now:?}",
                    self.label
                );
                for r in 0..self.ranks {
                    assert!(
                        now.iter().any(|&(rr, _)| rr == r),
                        "{}: fuzzy phase {phase} left on rank {rank} before rank {r} arrived",
                        self.label
                    );
                }
                if phase > 0 {
                    let before = self.marked(phase - 1);
                    assert!(
                        everyone(&before, 0..self.ranks),
                        "{}: fuzzy phase {phase}: phase {} incomplete: {before:?}",
                        self.label,
                        phase - 1
                    );
                }
            }
        }
    }
}

fn barrier_run(hc: &Hcmpi, dir: &Path, mode: BarrierMode, shape: Shape) {
    let rank = hc.rank() as u64;
    let marks = Marks {
        dir: dir.to_owned(),
        label: format!("{}-{:?}", mode.name(), shape).replace([' ', '{', '}', ':', ','], ""),
        ranks: hc.size() as u64,
    };
    let marks = &marks;
    hc.finish(|s| {
        let ph = Phaser::builder()
            .shape(shape)
            .build_hcmpi(s, hc.world(), mode, Mode::SignalWait)
            .expect("create the hcmpi phaser");
        for task in 0..TASKS {
            let reg = ph.register(Mode::SignalWait).unwrap();
            spawn_phased(s, reg, move |_, mut reg| async move {
                for phase in 0..PHASES {
                    jitter(rank * 1000 + task * 100 + phase).await;
                    marks.mark(phase, rank, task);
                    reg.next().await.unwrap();
                    marks.check(mode, phase, rank);
                }
            });
        }
    });
}

fn value(rank: u64, task: u64, phase: u64) -> u64 {
    mix(rank * 7919 + task * 104_729 + phase) % 1000
}

/// Every task on every rank: accum_next then accum_get equals the
/// sequential reduction.
fn accum_run<V, F, E>(hc: &Hcmpi, op: AccumOp, make: F, expected: E)
where
    V: hcmpi_phasers::AccumValue + hc_mpi::Equivalence + Default,
    F: Fn(u64) -> V + Sync,
    E: Fn(&[V]) -> V + Sync,
{
    let (rank, size) = (hc.rank() as u64, hc.size() as u64);
    let (make, expected) = (&make, &expected);
    hc.finish(|s| {
        let acc = Phaser::builder()
            .tree(2, 2)
            .build_hcmpi_accum::<V>(s, hc.world(), op, Mode::SignalWait)
            .expect("create the hcmpi accumulator");
        for task in 0..TASKS {
            let reg = acc.register(Mode::SignalWait).unwrap();
            spawn_phased(s, reg, move |_, mut reg| async move {
                for phase in 0..PHASES {
                    jitter(rank * 31 + task * 7 + phase).await;
                    reg.accum_next(make(value(rank, task, phase)))
                        .await
                        .unwrap();
                    let all: Vec<V> = (0..size)
                        .flat_map(|r| (0..TASKS).map(move |t| make(value(r, t, phase))))
                        .collect();
                    let got = reg.accum_get().unwrap();
                    let want = expected(&all);
                    assert_eq!(
                        got, want,
                        "{op:?} phase {phase}: got {got:?}, want {want:?}"
                    );
                }
            });
        }
    });
}

fn float_sum(hc: &Hcmpi) {
    let (rank, size) = (hc.rank() as u64, hc.size() as u64);
    hc.finish(|s| {
        let acc = Phaser::builder()
            .build_hcmpi_accum::<f64>(s, hc.world(), AccumOp::Sum, Mode::SignalWait)
            .unwrap();
        for task in 0..TASKS {
            let reg = acc.register(Mode::SignalWait).unwrap();
            spawn_phased(s, reg, move |_, mut reg| async move {
                for phase in 0..PHASES {
                    let x = |r, t| value(r, t, phase) as f64 / 7.0;
                    reg.accum_next(x(rank, task)).await.unwrap();
                    let exact: f64 = (0..size)
                        .flat_map(|r| (0..TASKS).map(move |t| x(r, t)))
                        .sum();
                    let got = reg.accum_get().unwrap();
                    let bound = 4.0 * f64::EPSILON * (size * TASKS) as f64 * exact.abs();
                    assert!(
                        (got - exact).abs() <= bound,
                        "f64 SUM phase {phase}: {got} vs {exact}"
                    );
                }
            });
        }
    });
}

/// One task per rank on a barrier and an accumulator at once.
fn fused(hc: &Hcmpi, dir: &Path) {
    let rank = hc.rank() as u64;
    let size = hc.size() as u64;
    let marks = Marks {
        dir: dir.to_owned(),
        label: "fused".into(),
        ranks: size,
    };
    let marks = &marks;
    hc.finish(|s| {
        let barrier = Phaser::builder()
            .flat()
            .build_hcmpi(s, hc.world(), BarrierMode::Strict, Mode::SignalWait)
            .unwrap();
        let count = Phaser::builder()
            .build_hcmpi_accum::<i64>(s, hc.world(), AccumOp::Sum, Mode::SignalWait)
            .unwrap();
        for task in 0..TASKS {
            let regs = (
                barrier.register(Mode::SignalWait).unwrap(),
                count.register(Mode::SignalWait).unwrap(),
            );
            spawn_phased(s, regs, move |_, (mut b, mut c)| async move {
                for phase in 0..PHASES {
                    marks.mark(phase, rank, task);
                    b.next().await.unwrap();
                    marks.check(BarrierMode::Strict, phase, rank);
                    c.accum_next(1).await.unwrap();
                    assert_eq!(c.accum_get().unwrap(), (size * TASKS) as i64);
                }
            });
        }
    });
}

/// Many phased tasks per rank on one hcmpi-accum: every task reads the
/// global count of tasks each phase.
fn many_tasks(hc: &Hcmpi) {
    const MANY: u64 = 250;
    let size = hc.size() as u64;
    let rank = hc.rank() as u64;
    let result = hc.finish(|s| {
        let acc = Phaser::builder()
            .tree(16, 4)
            .build_hcmpi_accum::<u64>(s, hc.world(), AccumOp::Sum, Mode::SignalWait)
            .unwrap();
        for task in 0..MANY {
            let reg = acc.register(Mode::SignalWait).unwrap();
            spawn_phased(s, reg, move |_, mut reg| async move {
                for phase in 0..3 {
                    reg.accum_next(rank * MANY + task + phase).await.unwrap();
                    let all = size * MANY;
                    assert_eq!(reg.accum_get(), Ok(all * (all - 1) / 2 + all * phase));
                }
            });
        }
        acc.handle()
    });
    assert_eq!(result.completed_phases(), 3);
}

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: hcmpi_phaser_suite <scratch dir>"),
    );
    let hc = Hcmpi::init().expect("start hcmpi");
    let (rank, size) = (hc.rank(), hc.size());
    for mode in [BarrierMode::Strict, BarrierMode::Fuzzy] {
        for shape in [
            Shape::Flat,
            Shape::Tree {
                leaves: 2,
                degree: 2,
            },
        ] {
            barrier_run(&hc, &dir, mode, shape);
        }
    }
    accum_run(&hc, AccumOp::Sum, |x| x as i64 - 500, |v| v.iter().sum());
    accum_run(
        &hc,
        AccumOp::Min,
        |x| x as f64 * 0.5,
        |v| v.iter().copied().fold(f64::INFINITY, f64::min),
    );
    accum_run(
        &hc,
        AccumOp::Max,
        |x| x as f64 * 0.5,
        |v| v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    accum_run(
        &hc,
        AccumOp::BitXor,
        |x| x as u32,
        |v| v.iter().fold(0, |a, b| a ^ b),
    );
    accum_run(
        &hc,
        AccumOp::LogicalOr,
        |x| i32::from(x == 7),
        |v| i32::from(v.iter().any(|&b| b != 0)),
    );
    accum_run(
        &hc,
        AccumOp::Prod,
        |x| x % 3 + 1,
        |v| v.iter().fold(1u64, |a, b| a.wrapping_mul(*b)),
    );
    float_sum(&hc);
    fused(&hc, &dir);
    many_tasks(&hc);
    println!("rank {rank}/{size}: hcmpi phaser suite OK");
}
