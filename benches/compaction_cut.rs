//! How much compaction cuts, per session, beside two peers' pruning computed in the same run.
//!
//! Run: `cargo bench --bench compaction_cut` (release build; needs python3 and, beside the
//! checkout, ../shared/corpus/ and ../shared/tools/gen-conversation.py). Under a minute.
//!
//! Sessions: every file in ../shared/corpus/ (Claude Code, Codex, SWE-agent, OpenHands),
//! imported in-process with `convo::interop::import` as `convo import` reads it: one row per
//! conversation, the main one (`main`) and each Claude Code subagent (`sub N`). Then
//! gen-conversation.py output: `--turns 200 --seed 1` (a chat of 200 short turns), and
//! `--turns 40 --seed 3` folded into one prompt (every user message after the first left
//! out: the script has no agent-shaped mode, and agent sessions are one prompt followed by
//! dozens of tool calls).
//!
//! Every figure is estimated tokens, chars/4 (`convo::event::tokens` over `visible_chars` of
//! the view an LLM is sent), and every cut is `1 - after / raw`:
//!
//! - `turns`, `calls`: user turns and tool calls in the session.
//! - `raw`: tokens of the view as imported (`projection::project`, no convo compaction; a
//!   compaction the source tool made is in force, as in the Codex fixture's `compacted`
//!   records, and the peers start from that same view).
//! - `default`: a plain `convo compact`: `ops::compact::plan_compaction` with
//!   `Request::default()` and the built-in config (profile `default`: reasoning stripped, tool
//!   requests and results over 200 bytes emptied, tools hinted `keep` excepted; the range
//!   ends before the last 5 tool calls or before the last 3 turns, whichever is later).
//! - `micro`: micro-compaction alone, with convo's defaults rather than J-CLI's: a profile
//!   `tool_calls = "strip-responses"`, `min_bytes = 200`, `keep_recent_tools = 5` (the same
//!   range as `default`, the same `keep` hints).
//!   Requests and reasoning stay. (`convo compact --tools strip-responses` would not do: the
//!   default profile's `reasoning = "strip"` would still apply.)
//! - `budget 25%`: `convo compact --budget <raw/4>`: the ladder's cut, and its chosen step
//!   (`planned.ladder`: truncate, micro, reasoning, tool-calls, summary; `!` when no step
//!   fits and the ladder falls back to its last, the digest, which on a tiny view can be
//!   larger than the view: a negative cut).
//! - `J-CLI`: seed 002's micro_compact, written here over the raw view: once there are more
//!   than 10 tool results, each result before the last 10 that is over 800 bytes becomes
//!   `[Previous: used NAME]`, except exempt tools. J-CLI's exempt list (LoadSkill, Task,
//!   TodoWrite, TodoRead, Ask) under Claude Code and Codex names: Skill, Task, TodoWrite,
//!   TodoRead, AskUserQuestion, update_plan. Requests and reasoning stay.
//! - `opencode`: opencode's prune. The seeds do not describe it; this is the stated rule:
//!   walking back from the end, tool results are kept while the tool output seen so far is
//!   at most 40k tokens; the one that crosses it and every older one become
//!   `[Old tool result content cleared]`. (opencode's source also skips the prune unless it
//!   frees over 20k tokens, never touches the last two user turns and protects its `skill`
//!   tool: each only prunes less, so this column is an upper bound on opencode's cut.)
//! - `verbatim`: whether `default` kept, exactly as imported, the last 5 tool results
//!   (`t`), every user message (`u`) and every assistant text (`a`): `yes`, or the ones it
//!   did not keep with counts.
//! - `floor`: the share of `raw` taken by system, user and assistant text and the last 5 tool
//!   calls with their results (`keep_recent_tools` keeps requests as well as results): while
//!   `default` keeps them, it cannot cut more than `100% - floor`, and the tools hinted
//!   `keep` (TodoWrite, Task and Skill requests...) take some of the rest.
//! - `goal`: issue 11's goal, `default` cuts >= 75% with everything above verbatim.
//!
//! Last, the wall time of convo's planning (`plan_compaction`, default profile: range,
//! policies and two projections for the estimate) against the two peers' functions over all
//! the sessions, best of several rounds: an anchor, not a race (the peers only rewrite a
//! list; convo plans a stored, undoable overlay and projects it twice).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use convo::clock::Clock;
use convo::config::{self, Resolved};
use convo::event::{self, Event, Kind};
use convo::interop;
use convo::ops::OpsError;
use convo::ops::compact::{Planned, plan_compaction};
use convo::ops::plan::{PlanError, Request};
use convo::projection;

/// Micro-compaction alone, with convo's default size and range.
const MICRO_PROFILE: &str = r#"
[compaction.profiles.micro]
tool_calls = "strip-responses"
min_bytes = 200
keep_recent_tools = 5
"#;

/// The parts of the view issue 11's goal wants kept: the last this many tool results.
const RECENT_RESULTS: usize = 5;

/// J-CLI's micro_compact (seed 002).
const JCLI_KEEP_RECENT: usize = 10;
const JCLI_MIN_BYTES: usize = 800;
const JCLI_EXEMPT: &[&str] = &["Skill", "Task", "TodoWrite", "TodoRead", "AskUserQuestion", "update_plan"];

/// opencode's prune: the most recent tool output tokens protected.
const OPENCODE_PROTECT: u64 = 40_000;

struct Session {
    name: String,
    events: Vec<Event>,
}

fn tokens_of<'a>(view: impl IntoIterator<Item = &'a Event>) -> u64 {
    event::tokens(view.into_iter().map(Event::visible_chars).sum())
}

fn corpus_sessions(clock: &Clock) -> Vec<Session> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flat_map(|d| std::fs::read_dir(d.expect("corpus entry").path()).into_iter().flatten())
        .map(|f| f.expect("corpus file").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut sessions = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read corpus file");
        let imported = interop::import(&text, None, clock).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path.file_stem().expect("file name").to_string_lossy();
        let short: String = stem.split("__").nth(1).unwrap_or(&stem).chars().take(14).collect();
        for (i, c) in imported.conversations.into_iter().enumerate() {
            let role = if i == 0 { "main".to_owned() } else { format!("sub {i}") };
            let events = c
                .drafts
                .into_iter()
                .map(|d| {
                    let id = d.id.clone().unwrap_or_else(|| clock.new_id());
                    let ts = d.ts.clone().unwrap_or_else(|| clock.timestamp());
                    d.into_event(id, ts)
                })
                .collect();
            sessions.push(Session { name: format!("{} {short} {role}", imported.format.name()), events });
        }
    }
    sessions
}

fn generated(name: &str, args: &[&str], one_prompt: bool) -> Session {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/gen-conversation.py");
    let out = Command::new("python3").arg(&script).args(args).output().expect("python3 runs");
    assert!(out.status.success(), "{} failed", script.display());
    let text = String::from_utf8(out.stdout).expect("generated text");
    let mut drafts = event::parse_input(&text).expect("generated events parse");
    if one_prompt {
        let first = drafts.iter().position(|d| matches!(d.kind, Kind::User { .. }));
        let mut i = 0;
        drafts.retain(|d| {
            i += 1;
            !matches!(d.kind, Kind::User { .. }) || Some(i - 1) == first
        });
    }
    // Generated JSONL has no ids or timestamps: give every event both, as `append` would.
    let events = drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| d.into_event(format!("e{i:08}"), "2026-01-01T00:00:00Z".into()))
        .collect();
    Session { name: name.into(), events }
}

/// The view with `planned`'s compaction appended, as `convo compact` would leave it.
fn view_after(events: &[Event], planned: &Planned) -> Vec<Event> {
    let mut with = events.to_vec();
    let record = convo::compaction::Record::Apply(planned.prepared.compaction.clone());
    with.push(record.to_draft().into_event(planned.id.clone(), planned.ts.clone()));
    projection::project(&with).expect("project").into_iter().map(|p| p.event).collect()
}

/// A plan, or `None` when the bounds leave nothing to compact (not an error for convo).
fn plan(events: &[Event], config: &Resolved, request: &Request, clock: &Clock) -> Option<Planned> {
    let outlined = convo::event::outline::Outlined::of(events);
    match plan_compaction(convo::ops::plan::Conversation::full(&outlined, events), config, request, clock) {
        Ok(planned) => Some(planned),
        Err(OpsError::Plan(PlanError::NothingInRange { .. })) => None,
        Err(e) => panic!("plan: {e}"),
    }
}

/// The name of the call each tool result answers (the latest call with its id before it).
fn result_names(view: &[Event]) -> Vec<Option<String>> {
    let mut calls: HashMap<&str, &str> = HashMap::new();
    view.iter()
        .map(|e| match &e.kind {
            Kind::ToolCall { call_id, name, .. } => {
                calls.insert(call_id, name);
                None
            }
            Kind::ToolResult { call_id, .. } => Some(calls.get(call_id.as_str()).unwrap_or(&"unknown").to_string()),
            _ => None,
        })
        .collect()
}

fn replace_result(e: &Event, text: String) -> Event {
    let mut out = e.clone();
    if let Kind::ToolResult { content, .. } = &mut out.kind {
        *content = text;
    }
    out
}

/// Seed 002's micro_compact: keep the last 10 tool results; older ones over 800 bytes become
/// `[Previous: used NAME]` unless the tool is exempt.
fn jcli(view: &[Event]) -> Vec<Event> {
    let names = result_names(view);
    let results: Vec<usize> = (0..view.len()).filter(|i| names[*i].is_some()).collect();
    if results.len() <= JCLI_KEEP_RECENT {
        return view.to_vec();
    }
    let old: std::collections::HashSet<usize> = results[..results.len() - JCLI_KEEP_RECENT].iter().copied().collect();
    view.iter()
        .enumerate()
        .map(|(i, e)| match (&e.kind, &names[i]) {
            (Kind::ToolResult { content, .. }, Some(name))
                if old.contains(&i) && content.len() > JCLI_MIN_BYTES && !JCLI_EXEMPT.contains(&name.as_str()) =>
            {
                replace_result(e, format!("[Previous: used {name}]"))
            }
            _ => e.clone(),
        })
        .collect()
}

/// opencode's prune as stated: from the end, tool output is kept up to 40k tokens; the
/// result that crosses it and every older one are cleared.
fn opencode(view: &[Event]) -> Vec<Event> {
    let mut out = view.to_vec();
    let mut seen = 0u64;
    for e in out.iter_mut().rev() {
        if let Kind::ToolResult { content, .. } = &e.kind {
            seen += event::tokens(content.chars().count() as u64);
            if seen > OPENCODE_PROTECT {
                *e = replace_result(e, "[Old tool result content cleared]".into());
            }
        }
    }
    out
}

/// What `default` left verbatim of what the goal wants kept, and the share of the raw view
/// those parts take.
struct Kept {
    verdict: String,
    floor: f64,
}

fn kept(raw: &[Event], after: &[Event]) -> Kept {
    let by_id: HashMap<&str, &Event> = after.iter().map(|e| (e.id.as_str(), e)).collect();
    let same = |e: &Event| by_id.get(e.id.as_str()).is_some_and(|a| a.kind == e.kind);
    let results: Vec<usize> =
        raw.iter().enumerate().filter(|(_, e)| matches!(e.kind, Kind::ToolResult { .. })).map(|(i, _)| i).collect();
    let recent = &results[results.len().saturating_sub(RECENT_RESULTS)..];
    let mut lost = Vec::new();
    let count = |pick: &dyn Fn(&Event) -> bool| {
        let all: Vec<&Event> = raw.iter().filter(|e| pick(e)).collect();
        (all.iter().filter(|e| !same(e)).count(), all.len())
    };
    let (t, tn) = (recent.iter().filter(|i| !same(&raw[**i])).count(), recent.len());
    let (u, un) = count(&|e| matches!(e.kind, Kind::User { .. }));
    let (a, an) = count(&|e| matches!(e.kind, Kind::Assistant { .. }));
    for (tag, n, of) in [("t", t, tn), ("u", u, un), ("a", a, an)] {
        if n > 0 {
            lost.push(format!("{tag} {n}/{of} changed"));
        }
    }
    // The floor: system, user and assistant text, and the last 5 tool calls with their results.
    let recent_ids: std::collections::HashSet<&str> = recent
        .iter()
        .filter_map(|i| match &raw[*i].kind {
            Kind::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let must: u64 = raw
        .iter()
        .filter(|e| match &e.kind {
            Kind::System { .. } | Kind::User { .. } | Kind::Assistant { .. } => true,
            Kind::ToolCall { call_id, .. } | Kind::ToolResult { call_id, .. } => recent_ids.contains(call_id.as_str()),
            _ => false,
        })
        .map(Event::visible_chars)
        .sum();
    let total: u64 = raw.iter().map(Event::visible_chars).sum();
    Kept {
        verdict: if lost.is_empty() { "yes".into() } else { format!("no: {}", lost.join(", ")) },
        floor: 100.0 * must as f64 / total.max(1) as f64,
    }
}

fn cut(raw: u64, after: u64) -> f64 {
    100.0 * (1.0 - after as f64 / raw.max(1) as f64)
}

fn main() {
    let clock = Clock::system();
    let mut sessions = corpus_sessions(&clock);
    sessions.push(generated("gen --turns 200", &["--turns", "200", "--seed", "1"], false));
    sessions.push(generated("gen --turns 40, one prompt", &["--turns", "40", "--seed", "3"], true));

    let default_config = Resolved::new(vec![config::defaults()]).expect("defaults");
    let micro_layer = config::parse_layer(config::Source::User, "bench", MICRO_PROFILE).expect("micro profile");
    let micro_config = Resolved::new(vec![config::defaults(), micro_layer]).expect("micro config");
    let micro = Request { profile: Some("micro".into()), ..Default::default() };

    println!("== compaction cut per session: estimated tokens (chars/4) of the view, cut = 1 - after/raw ==");
    let header = format!(
        "{:<32} {:>5} {:>5} {:>7} | {:>7} {:>6} {:>17} | {:>6} {:>8} | {:<22} {:>5} {:>4}",
        "session",
        "turns",
        "calls",
        "raw",
        "default",
        "micro",
        "budget 25% (step)",
        "J-CLI",
        "opencode",
        "verbatim (t/u/a)",
        "floor",
        "goal"
    );
    println!("{header}");
    println!("{}", "-".repeat(header.chars().count()));
    for s in &sessions {
        let base: Vec<Event> = projection::project(&s.events).expect("project").into_iter().map(|p| p.event).collect();
        let raw = tokens_of(&base);
        let turns = base.iter().filter(|e| matches!(e.kind, Kind::User { .. })).count();
        let calls = base.iter().filter(|e| matches!(e.kind, Kind::ToolCall { .. })).count();

        let (default_after, default_view) = match plan(&s.events, &default_config, &Request::default(), &clock) {
            Some(planned) => {
                let view = view_after(&s.events, &planned);
                assert_eq!(tokens_of(&view), planned.estimate.after, "{}: the view is what was estimated", s.name);
                (tokens_of(&view), view)
            }
            None => (raw, base.clone()),
        };
        let micro_after = plan(&s.events, &micro_config, &micro, &clock).map_or(raw, |p| p.estimate.after);
        let budget = Request {
            budget: Some(raw / 4),
            budget_label: Some(format!("--budget {}", raw / 4)),
            ..Default::default()
        };
        let budget_cell = match plan(&s.events, &default_config, &budget, &clock) {
            Some(planned) => {
                let ladder = planned.ladder.as_ref().expect("a budget plans a ladder");
                let step = ladder.chosen().step.name();
                let mark = if ladder.fits { "" } else { "!" };
                format!("{:>5.1}% {step}{mark}", cut(raw, planned.estimate.after))
            }
            None => "  0.0% nothing".into(),
        };
        let jcli_after = tokens_of(&jcli(&base));
        let opencode_after = tokens_of(&opencode(&base));
        let k = kept(&base, &default_view);
        let default_cut = cut(raw, default_after);
        let goal = if default_cut >= 75.0 && k.verdict == "yes" { "met" } else { "no" };
        println!(
            "{:<32} {:>5} {:>5} {:>7} | {:>6.1}% {:>5.1}% {:>17} | {:>5.1}% {:>7.1}% | {:<22} {:>4.0}% {:>4}",
            s.name,
            turns,
            calls,
            raw,
            default_cut,
            cut(raw, micro_after),
            budget_cell,
            cut(raw, jcli_after),
            cut(raw, opencode_after),
            k.verdict,
            k.floor,
            goal
        );
    }

    // Wall time: convo's planning against the peers' functions, over every session.
    let rounds = 20;
    let (mut convo_best, mut jcli_best, mut opencode_best) = (f64::MAX, f64::MAX, f64::MAX);
    let bases: Vec<Vec<Event>> = sessions
        .iter()
        .map(|s| projection::project(&s.events).expect("project").into_iter().map(|p| p.event).collect())
        .collect();
    for _ in 0..rounds {
        let start = Instant::now();
        for s in &sessions {
            std::hint::black_box(plan(&s.events, &default_config, &Request::default(), &clock));
        }
        convo_best = convo_best.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        for b in &bases {
            std::hint::black_box(jcli(b));
        }
        jcli_best = jcli_best.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        for b in &bases {
            std::hint::black_box(opencode(b));
        }
        opencode_best = opencode_best.min(start.elapsed().as_secs_f64());
    }
    let events: usize = sessions.iter().map(|s| s.events.len()).sum();
    println!("== wall time over all {} sessions ({events} events), best of {rounds} ==", sessions.len());
    println!("  convo plan_compaction (default): {:>8.2} ms", convo_best * 1e3);
    println!(
        "  J-CLI micro_compact:             {:>8.2} ms  (convo / J-CLI: {:.1}x)",
        jcli_best * 1e3,
        convo_best / jcli_best
    );
    println!(
        "  opencode prune:                  {:>8.2} ms  (convo / opencode: {:.1}x)",
        opencode_best * 1e3,
        convo_best / opencode_best
    );
}
