//! `overhead`: task-runtime overheads of hc-runtime, side by side with rayon.
//!
//! | bench       | what                                                     | variants        | unit          |
//! |-------------|----------------------------------------------------------|-----------------|---------------|
//! | `spawn`     | empty tasks in one finish: `flat` (all spawned by the    | hc, rayon       | ns/task       |
//! |             | finish body; the headline) and `tree` (each task spawns  |                 |               |
//! |             | two children, about as many tasks)                       |                 |               |
//! | `fib`       | fib(30) with a spawn per call, no cutoff; and again with | hc, hc-join,    | ms            |
//! |             | a sequential cutoff at 20                                | rayon, seq      |               |
//! | `ddf-chain` | a chain of data-driven tasks, task k awaits `ddf[k]` and | hc              | ns/link       |
//! |             | puts `ddf[k+1]`; all created first, then `ddf[0]` is put |                 |               |
//! | `idle`      | CPU used by a freshly used, then idle pool over 1 s      | hc, rayon       | % of one core |
//!
//! `hc` is `Runtime::finish` + `Scope::spawn` (fib: a nested `finish` per
//! call), `hc-join` is fib with `hc_runtime::join`, `rayon` is
//! `rayon::scope` + `spawn` (fib: `rayon::join`) on a `ThreadPool` with the
//! same number of workers, entered with `install`.
//!
//! Method: one untimed warm-up run of every (bench, param, variant), then
//! `--reps` timed repetitions; within a repetition the variants run one after
//! another (hc, rayon, …), the first of them rotating from one repetition to
//! the next, so machine noise and order effects hit all of them alike. A short
//! pause before each run lets the other pool's workers go back to sleep.
//! Reported: median and min over the repetitions.
//!
//! The headline spawn figure is `flat`: it is the pattern the goal is stated
//! for (N tasks spawned from one finish body) and the one that stresses the
//! spawn path itself (one producer, the other workers stealing). `tree`
//! spreads spawning over all workers and is reported next to it.

use std::io::{self, Write};
use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use apps::progress::Progress;
use benches::report::{format_value, markdown_table, Measurement};
use benches::{cpu, workloads as w};
use clap::{Parser, ValueEnum};
use hc_mpi::ErrorChain;
use hc_runtime::Runtime;
use rayon::ThreadPool;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
enum Bench {
    /// Cost per empty task spawned in a finish.
    Spawn,
    /// fib(30), a task per call.
    Fib,
    /// Cost per link of a chain of data-driven tasks.
    DdfChain,
    /// CPU burnt by an idle pool.
    Idle,
}

impl Bench {
    const ALL: [Bench; 4] = [Bench::Spawn, Bench::Fib, Bench::DdfChain, Bench::Idle];

    fn name(self) -> &'static str {
        match self {
            Bench::Spawn => "spawn",
            Bench::Fib => "fib",
            Bench::DdfChain => "ddf-chain",
            Bench::Idle => "idle",
        }
    }
}

/// Task-runtime overheads of hc-runtime next to rayon (see the crate docs).
#[derive(Parser, Debug)]
#[command(name = "overhead", version)]
struct Args {
    /// Workers of both the hc runtime and the rayon pool [default: available cores]
    #[arg(long)]
    workers: Option<NonZeroUsize>,
    /// Timed repetitions of every measurement (median reported) [default: 7; 1 with --quick]
    #[arg(long)]
    reps: Option<NonZeroUsize>,
    /// Run only this bench (repeat the flag for several) [default: all]
    #[arg(long = "bench", value_enum)]
    benches: Vec<Bench>,
    /// Run only this variant (`hc`, `rayon`, `seq`; repeatable), e.g. under a profiler
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// Run only the cases whose param contains this text (e.g. `tree`, `cutoff`)
    #[arg(long)]
    param: Option<String>,
    /// Smoke run: small problem sizes, short idle window, one repetition
    #[arg(long)]
    quick: bool,
    /// Print one JSON object per measurement and line instead of the table
    #[arg(long)]
    json: bool,
}

/// Problem sizes.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    spawn_n: usize,
    tree_depth: u32,
    fib_n: u64,
    fib_cutoff: u64,
    chain_links: usize,
    idle_window: Duration,
    /// Pause before every run, so the previous variant's workers park.
    settle: Duration,
}

impl Sizes {
    const FULL: Sizes = Sizes {
        spawn_n: 1_000_000,
        tree_depth: 19, // 2^20 - 2 = 1_048_574 tasks
        fib_n: 30,
        fib_cutoff: 20,
        chain_links: 100_000,
        idle_window: Duration::from_secs(1),
        settle: Duration::from_millis(20),
    };

    const QUICK: Sizes = Sizes {
        spawn_n: 10_000,
        tree_depth: 13,
        fib_n: 20,
        fib_cutoff: 10,
        chain_links: 10_000,
        idle_window: Duration::from_millis(50),
        settle: Duration::from_millis(1),
    };
}

/// One implementation of a measurement: each call runs it once and returns
/// the value in the case's unit.
struct Variant<'a> {
    name: &'static str,
    run: Box<dyn FnMut() -> f64 + 'a>,
}

impl<'a> Variant<'a> {
    fn new(name: &'static str, run: impl FnMut() -> f64 + 'a) -> Self {
        Variant {
            name,
            run: Box::new(run),
        }
    }
}

/// One (bench, param) and the variants measured side by side.
struct Case<'a> {
    bench: Bench,
    param: String,
    unit: &'static str,
    warm_up: bool,
    variants: Vec<Variant<'a>>,
}

fn elapsed<R>(f: impl FnOnce() -> R) -> (Duration, R) {
    let start = Instant::now();
    let result = f();
    (start.elapsed(), result)
}

fn ns_per(items: usize, time: Duration) -> f64 {
    time.as_nanos() as f64 / items as f64
}

fn spawn_cases<'a>(rt: &'a Runtime, pool: &'a ThreadPool, sizes: Sizes) -> Vec<Case<'a>> {
    let n = sizes.spawn_n;
    let depth = sizes.tree_depth;
    let tree_n = w::tree_tasks(depth);
    vec![
        Case {
            bench: Bench::Spawn,
            param: format!("flat n={n}"),
            unit: "ns/task",
            warm_up: true,
            variants: vec![
                Variant::new("hc", move || {
                    ns_per(n, elapsed(|| w::hc_spawn_flat(rt, n)).0)
                }),
                Variant::new("rayon", move || {
                    ns_per(n, elapsed(|| w::rayon_spawn_flat(pool, n)).0)
                }),
            ],
        },
        Case {
            bench: Bench::Spawn,
            param: format!("tree n={tree_n}"),
            unit: "ns/task",
            warm_up: true,
            variants: vec![
                Variant::new("hc", move || {
                    ns_per(tree_n, elapsed(|| w::hc_spawn_tree(rt, depth)).0)
                }),
                Variant::new("rayon", move || {
                    ns_per(tree_n, elapsed(|| w::rayon_spawn_tree(pool, depth)).0)
                }),
            ],
        },
    ]
}

fn fib_cases<'a>(rt: &'a Runtime, pool: &'a ThreadPool, sizes: Sizes) -> Vec<Case<'a>> {
    let n = sizes.fib_n;
    let expected = w::fib_seq(n);
    let ms = move |(time, value): (Duration, u64)| {
        assert_eq!(value, expected, "fib({n}) computed wrongly");
        time.as_secs_f64() * 1e3
    };
    [
        (0, format!("n={n}")),
        (
            sizes.fib_cutoff,
            format!("n={n} cutoff={}", sizes.fib_cutoff),
        ),
    ]
    .into_iter()
    .map(|(cutoff, param)| Case {
        bench: Bench::Fib,
        param,
        unit: "ms",
        warm_up: true,
        variants: vec![
            Variant::new("hc", move || ms(elapsed(|| w::hc_fib(rt, n, cutoff)))),
            Variant::new("hc-join", move || {
                ms(elapsed(|| w::hc_fib_join(rt, n, cutoff)))
            }),
            Variant::new("rayon", move || {
                ms(elapsed(|| w::rayon_fib(pool, n, cutoff)))
            }),
            Variant::new("seq", move || {
                ms(elapsed(|| w::fib_seq(std::hint::black_box(n))))
            }),
        ],
    })
    .collect()
}

fn ddf_chain_cases(rt: &Runtime, sizes: Sizes) -> Vec<Case<'_>> {
    let links = sizes.chain_links;
    vec![Case {
        bench: Bench::DdfChain,
        param: format!("n={links}"),
        unit: "ns/link",
        warm_up: true,
        variants: vec![Variant::new("hc", move || {
            // Allocating and freeing the DDFs is not timed.
            let ddfs = w::ddf_chain_ddfs(links);
            let (time, last) = elapsed(|| w::hc_ddf_chain(rt, &ddfs));
            assert_eq!(last, links as u64, "the chain did not run whole");
            ns_per(links, time)
        })],
    }]
}

fn idle_cases(workers: usize, sizes: Sizes) -> Vec<Case<'static>> {
    let window = sizes.idle_window;
    vec![Case {
        bench: Bench::Idle,
        param: format!("window={}ms", window.as_millis()),
        unit: "% of one core",
        // Every run starts a fresh pool: a warm-up would only cost a window.
        warm_up: false,
        variants: vec![
            Variant::new("hc", move || {
                let rt = Runtime::builder()
                    .num_workers(workers)
                    .build()
                    .expect("start the hc runtime");
                w::hc_spawn_flat(&rt, 4 * workers);
                cpu::cpu_percent_while_sleeping(window)
            }),
            Variant::new("rayon", move || {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(workers)
                    .build()
                    .expect("start the rayon pool");
                w::rayon_spawn_flat(&pool, 4 * workers);
                cpu::cpu_percent_while_sleeping(window)
            }),
        ],
    }]
}

/// Runs of `case` by [`run_case`]: the warm-up, then every repetition.
fn runs(case: &Case<'_>, reps: usize) -> u64 {
    let rounds = reps + usize::from(case.warm_up);
    (rounds * case.variants.len()) as u64
}

/// Warm-up, then `reps` rounds of every variant, rotating which goes first;
/// each run advances `progress`, each round is logged to stderr.
fn run_case(
    case: &mut Case<'_>,
    reps: usize,
    settle: Duration,
    progress: &Progress,
) -> Vec<Measurement> {
    let count = case.variants.len();
    let what = format!("{} {}", case.bench.name(), case.param);
    if case.warm_up {
        for variant in &mut case.variants {
            progress.set_message(format!("{what} {} (warm-up)", variant.name));
            std::thread::sleep(settle);
            (variant.run)();
            progress.inc(1);
        }
    }
    let mut samples = vec![Vec::with_capacity(reps); count];
    for rep in 0..reps {
        for offset in 0..count {
            let i = (rep + offset) % count;
            progress.set_message(format!(
                "{what} {} (rep {}/{reps})",
                case.variants[i].name,
                rep + 1
            ));
            std::thread::sleep(settle);
            samples[i].push((case.variants[i].run)());
            progress.inc(1);
        }
        let latest: Vec<String> = case
            .variants
            .iter()
            .zip(&samples)
            .map(|(v, s)| format!("{}={}", v.name, format_value(s[rep])))
            .collect();
        progress.println(format!(
            "  {what} rep {}/{}: {} {}",
            rep + 1,
            reps,
            latest.join(" "),
            case.unit
        ));
    }
    case.variants
        .iter()
        .zip(samples)
        .map(|(variant, samples)| Measurement {
            bench: case.bench.name().to_owned(),
            param: case.param.clone(),
            variant: variant.name.to_owned(),
            unit: case.unit.to_owned(),
            samples,
        })
        .collect()
}

fn find<'m>(
    all: &'m [Measurement],
    bench: &str,
    param: Option<&str>,
    variant: &str,
) -> Option<&'m Measurement> {
    all.iter()
        .find(|m| m.bench == bench && m.variant == variant && param.is_none_or(|p| m.param == p))
}

/// The headline spawn measurement of a variant (`flat`).
fn headline_spawn<'m>(all: &'m [Measurement], variant: &str) -> Option<&'m Measurement> {
    all.iter()
        .find(|m| m.bench == "spawn" && m.variant == variant && m.param.starts_with("flat"))
}

/// The ratio column: vs rayon (spawn), vs seq (fib), vs hc spawn per task
/// (ddf-chain); nothing for idle, whose baseline is close to zero.
fn ratio_cell(m: &Measurement, all: &[Measurement]) -> String {
    let (baseline, label) = match m.bench.as_str() {
        "spawn" => (find(all, "spawn", Some(&m.param), "rayon"), "vs rayon"),
        "fib" => (find(all, "fib", Some(&m.param), "seq"), "vs seq"),
        "ddf-chain" => (headline_spawn(all, "hc"), "vs hc spawn/task"),
        _ => return "—".into(),
    };
    match baseline {
        Some(b) => format!("{} ({label})", format_value(m.median() / b.median())),
        None => "—".into(),
    }
}

fn goal(ratio: f64, bound: f64) -> &'static str {
    if !ratio.is_finite() {
        "n/a"
    } else if ratio <= bound {
        "met"
    } else {
        "missed"
    }
}

fn ratio_lines(all: &[Measurement]) -> Vec<String> {
    let mut lines = Vec::new();
    let ratio = |a: Option<&Measurement>, b: Option<&Measurement>| match (a, b) {
        (Some(a), Some(b)) => Some(a.median() / b.median()),
        _ => None,
    };
    if let Some(r) = ratio(headline_spawn(all, "hc"), headline_spawn(all, "rayon")) {
        lines.push(format!(
            "- spawn hc/rayon (flat, headline): **{}** (goal ≤ 1.0: {})",
            format_value(r),
            goal(r, 1.0)
        ));
    }
    for m in all
        .iter()
        .filter(|m| m.bench == "spawn" && m.variant == "hc")
    {
        if m.param.starts_with("flat") {
            continue;
        }
        if let Some(r) = ratio(Some(m), find(all, "spawn", Some(&m.param), "rayon")) {
            lines.push(format!(
                "- spawn hc/rayon ({}): {}",
                m.param,
                format_value(r)
            ));
        }
    }
    for (variant, bound) in [("hc", 1.2), ("hc-join", 1.05)] {
        for m in all
            .iter()
            .filter(|m| m.bench == "fib" && m.variant == variant)
        {
            let Some(r) = ratio(Some(m), find(all, "fib", Some(&m.param), "rayon")) else {
                continue;
            };
            if m.param.contains("cutoff") {
                lines.push(format!(
                    "- fib {variant}/rayon ({}): {}",
                    m.param,
                    format_value(r)
                ));
            } else {
                lines.push(format!(
                    "- fib {variant}/rayon ({}): **{}** (goal ≤ {bound}: {})",
                    m.param,
                    format_value(r),
                    goal(r, bound)
                ));
            }
        }
    }
    match ratio(
        find(all, "ddf-chain", None, "hc"),
        headline_spawn(all, "hc"),
    ) {
        Some(r) => lines.push(format!(
            "- ddf-chain per link / hc spawn per task (flat): **{}** (goal ≤ 1.5: {})",
            format_value(r),
            goal(r, 1.5)
        )),
        None if find(all, "ddf-chain", None, "hc").is_some() => {
            lines.push(
                "- ddf-chain per link / hc spawn per task: n/a (run `--bench spawn` too)".into(),
            );
        }
        None => {}
    }
    if let Some(hc) = find(all, "idle", None, "hc") {
        let rayon =
            find(all, "idle", None, "rayon").map_or("n/a".into(), |r| format_value(r.median()));
        lines.push(format!(
            "- idle CPU: hc {} % of one core (rayon {} %; goal ≈ 0: workers parked)",
            format_value(hc.median()),
            rayon
        ));
    }
    lines
}

fn print_report(
    out: &mut dyn Write,
    all: &[Measurement],
    workers: usize,
    reps: usize,
    quick: bool,
) -> io::Result<()> {
    let cores = std::thread::available_parallelism().map_or(0, NonZeroUsize::get);
    writeln!(out, "# hc-runtime overhead vs rayon\n")?;
    writeln!(
        out,
        "workers: {workers} (hc and rayon) · available cores: {cores} · repetitions: {reps} \
         (after one warm-up; median and min) · sizes: {}\n",
        if quick { "quick" } else { "full" }
    )?;
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|m| {
            let summary = m.summary();
            vec![
                m.bench.clone(),
                m.param.clone(),
                m.variant.clone(),
                format_value(summary.map_or(f64::NAN, |s| s.median)),
                format_value(summary.map_or(f64::NAN, |s| s.min)),
                m.unit.clone(),
                ratio_cell(m, all),
            ]
        })
        .collect();
    write!(
        out,
        "{}",
        markdown_table(
            &[
                "bench",
                "param",
                "variant",
                "median",
                "min",
                "unit",
                "ratio (median)"
            ],
            &rows
        )
    )?;
    let lines = ratio_lines(all);
    if !lines.is_empty() {
        writeln!(out, "\n## ratios\n")?;
        for line in lines {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// Applies `--param` and `--variant` to `case`; `false` if nothing is left.
fn filter(args: &Args, case: &mut Case<'_>) -> bool {
    if args
        .param
        .as_ref()
        .is_some_and(|p| !case.param.contains(p.as_str()))
    {
        return false;
    }
    if !args.variants.is_empty() {
        case.variants
            .retain(|v| args.variants.iter().any(|name| name == v.name));
    }
    !case.variants.is_empty()
}

fn main() -> ExitCode {
    let args = Args::parse();
    let workers = args.workers.map_or_else(
        || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        NonZeroUsize::get,
    );
    let reps = args
        .reps
        .map_or(if args.quick { 1 } else { 7 }, NonZeroUsize::get);
    let sizes = if args.quick {
        Sizes::QUICK
    } else {
        Sizes::FULL
    };
    let mut selected: Vec<Bench> = if args.benches.is_empty() {
        Bench::ALL.to_vec()
    } else {
        args.benches.clone()
    };
    selected.sort();
    selected.dedup();

    // The whole plan is built first, so that the bar knows its length. The
    // idle bench starts its own pools, in its runs.
    let mut idle: Vec<Case<'static>> = if selected.contains(&Bench::Idle) {
        idle_cases(workers, sizes)
    } else {
        Vec::new()
    };
    idle.retain_mut(|case| filter(&args, case));
    let pools = selected.iter().any(|&b| b != Bench::Idle).then(|| {
        let rt = Runtime::builder()
            .num_workers(workers)
            .build()
            .expect("start the hc runtime");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .build()
            .expect("start the rayon pool");
        (rt, pool)
    });
    let mut shared: Vec<Case<'_>> = match &pools {
        Some((rt, pool)) => selected
            .iter()
            .flat_map(|&bench| match bench {
                Bench::Spawn => spawn_cases(rt, pool, sizes),
                Bench::Fib => fib_cases(rt, pool, sizes),
                Bench::DdfChain => ddf_chain_cases(rt, sizes),
                Bench::Idle => Vec::new(),
            })
            .filter_map(|mut case| filter(&args, &mut case).then_some(case))
            .collect(),
        None => Vec::new(),
    };
    let total = shared.iter().chain(&idle).map(|c| runs(c, reps)).sum();
    // Progress goes to stderr, so it never mixes with the JSON on stdout.
    let progress = Progress::new("overhead", Some(total), "runs");

    let mut results = Vec::new();
    for case in &mut shared {
        results.extend(run_case(case, reps, sizes.settle, &progress));
    }
    drop(shared);
    drop(pools);
    // The shared pools are gone here (rayon's threads exit asynchronously:
    // give them a moment), so the idle bench sees only its own pool.
    if !idle.is_empty() {
        std::thread::sleep(sizes.settle * 5);
        for case in &mut idle {
            results.extend(run_case(case, reps, sizes.settle, &progress));
        }
    }
    progress.finish();

    let printed = apps::output::to_stdout(|out| {
        if !args.json {
            return print_report(out, &results, workers, reps, args.quick);
        }
        results
            .iter()
            .try_for_each(|m| writeln!(out, "{}", m.json_line()))
    });
    match printed {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("overhead: {}", ErrorChain(&error));
            ExitCode::FAILURE
        }
    }
}
