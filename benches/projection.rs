//! Compaction benchmarks, each against an anchor measured in the same run.
//!
//! Run: `cargo bench --bench projection` (release build; needs python3, jq, and
//! ../shared/tools/gen-conversation.py beside the checkout). Set `CONVO_BENCH_MB` to change
//! the size of the throughput conversation (default 100).
//!
//! 1. Token reduction: a generated 200-turn coding conversation, compacted with the built-in
//!    `default` profile and the default range (everything but the last `keep_last` turns);
//!    estimated tokens (chars/4) of the projected view before and after.
//! 2. Throughput: the same pipeline a provider request runs, over a ~100 MB conversation with
//!    a compaction covering all but its last turns: parse the JSONL, project, serialise the
//!    view as JSONL. Anchor: `jq -c .` over the same file (parse and re-serialise every
//!    event), timed in the same run. Both report MB of raw events per second.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use convo::compaction::Record;
use convo::config::{self, Resolved};
use convo::event::{self, Event};
use convo::ops::plan::{self, Request};
use convo::projection;

fn generate(args: &[&str], out: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/gen-conversation.py");
    let file = std::fs::File::create(out).expect("create generated file");
    let status = Command::new("python3").arg(&script).args(args).stdout(file).status().expect("python3 runs");
    assert!(status.success(), "{} failed", script.display());
}

/// Generated JSONL has no ids or timestamps: give every event both, as `append` would.
fn stored(path: &Path) -> (Vec<Event>, usize) {
    let text = std::fs::read_to_string(path).expect("read generated file");
    let drafts = event::parse_input(&text).expect("generated events parse");
    let events = drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| d.into_event(format!("e{i:08}"), "2026-01-01T00:00:00Z".into()))
        .collect();
    (events, text.len())
}

/// The events with the default profile's compaction appended, as `convo compact` makes it.
fn compacted(events: &[Event]) -> (Vec<Event>, projection::Estimate) {
    let config = Resolved::new(vec![config::defaults()]).expect("defaults").config;
    let now = chrono::Utc::now();
    let outlined = convo::event::outline::Outlined::of(events);
    let conversation = plan::Conversation::full(&outlined, events);
    let prepared = plan::prepare(conversation, &config, &Request::default(), now).expect("compaction plan");
    let estimate = projection::estimate(events, &prepared.compaction, "c1", "2026-01-02T00:00:00Z").expect("estimate");
    let mut with = events.to_vec();
    with.push(Record::Apply(prepared.compaction).to_draft().into_event("c1".into(), "2026-01-02T00:00:00Z".into()));
    (with, estimate)
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let small: PathBuf = dir.path().join("200-turns.jsonl");
    generate(&["--turns", "200", "--seed", "1"], &small);
    let (events, _) = stored(&small);
    let (_, estimate) = compacted(&events);
    let reduction = 100.0 * (1.0 - estimate.after as f64 / estimate.before as f64);
    println!("== token reduction, default profile, generated 200-turn conversation ==");
    println!(
        "  projected view: ~{} -> ~{} tokens (chars/4): {reduction:.1}% smaller ({:.2}x)",
        estimate.before,
        estimate.after,
        estimate.before as f64 / estimate.after as f64
    );

    let mb: u32 = std::env::var("CONVO_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let big = dir.path().join("big.jsonl");
    generate(&["--mb", &mb.to_string(), "--seed", "7"], &big);
    // Stored form (ids, timestamps, compaction event), written once, read by both sides.
    let (events, _) = stored(&big);
    let (with, _) = compacted(&events);
    let stored_path = dir.path().join("stored.jsonl");
    let text: String = with.iter().map(Event::to_line).collect();
    std::fs::write(&stored_path, &text).expect("write stored events");
    drop((events, with, text));
    let bytes = std::fs::metadata(&stored_path).expect("stat").len() as f64;
    let megabytes = bytes / 1e6;

    println!("== projection throughput, {megabytes:.1} MB of stored events ==");
    let mut convo_best = f64::MAX;
    let mut jq_best = f64::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        let text = std::fs::read_to_string(&stored_path).expect("read");
        let events = event::parse_stored(&text).expect("parse");
        let view = projection::project(&events).expect("project");
        let mut out = Vec::with_capacity(text.len() / 2);
        for p in &view {
            out.extend_from_slice(p.event.to_line().as_bytes());
        }
        std::hint::black_box(&out);
        convo_best = convo_best.min(start.elapsed().as_secs_f64());

        let start = Instant::now();
        let status = Command::new("jq")
            .args(["-c", "."])
            .arg(&stored_path)
            .stdout(Stdio::null())
            .status()
            .expect("jq runs (install jq for this benchmark)");
        assert!(status.success());
        jq_best = jq_best.min(start.elapsed().as_secs_f64());
    }
    println!("  convo parse + project + serialise: {:.2} s, {:.1} MB/s", convo_best, megabytes / convo_best);
    println!("  jq -c . (parse + serialise):       {:.2} s, {:.1} MB/s", jq_best, megabytes / jq_best);
    println!("  convo / jq throughput: {:.2}x (best of 3 each)", jq_best / convo_best);
}
