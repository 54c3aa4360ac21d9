//! Property tests over random conversations and random compaction sequences:
//! - the raw event files only ever grow: every earlier byte stays where it was;
//! - events outside every compaction range reach the view unchanged, in order;
//! - the projected view is always valid to send to a provider;
//! - undoing the latest compaction restores the previous view exactly;
//! - a planned range never separates a tool result from its call.
//!
//! Ranges are event-granular: they start and end anywhere, inside a turn too.

use std::collections::BTreeMap;

use convo::clock::Clock;
use convo::compaction::{FieldMode, ReasoningPolicy, Record, Summary, ToolCallPolicy, ToolHint};
use convo::event::outline::Outlined;
use convo::event::{Draft, Event, Kind, Outline};
use convo::ops::plan::{self, Policies};
use convo::projection::{self, Origin, check_valid, project};
use convo::store::Store;
use proptest::prelude::*;

/// One turn: a user message, maybe reasoning, some tool calls (`true` = error), maybe a reply.
#[derive(Debug, Clone)]
struct Turn {
    reasoning: bool,
    tools: Vec<(u8, bool)>,
    reply: bool,
}

#[derive(Debug, Clone)]
enum Op {
    /// `from` and `len` count events; `micro` sets min_bytes / max_lines.
    Compact {
        from: usize,
        len: usize,
        summary: bool,
        reasoning: bool,
        tools: u8,
        hint: u8,
        micro: u8,
    },
    UndoLatest,
}

fn turn() -> impl Strategy<Value = Turn> {
    (any::<bool>(), prop::collection::vec((0u8..3, any::<bool>()), 0..3), prop::bool::weighted(0.85))
        .prop_map(|(reasoning, tools, reply)| Turn { reasoning, tools, reply })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..60, 0usize..30, prop::bool::weighted(0.3), any::<bool>(), 0u8..5, 0u8..4, 0u8..4)
            .prop_map(|(from, len, summary, reasoning, tools, hint, micro)| Op::Compact { from, len, summary, reasoning, tools, hint, micro }),
        1 => Just(Op::UndoLatest),
    ]
}

const TOOLS: [&str; 3] = ["fs_read_file", "fs_modify_file", "grep"];

fn drafts(turns: &[Turn]) -> Vec<Draft> {
    let mut out = vec![Draft::new(Kind::System { content: "system prompt".into() })];
    let mut call = 0;
    for (t, turn) in turns.iter().enumerate() {
        out.push(Draft::new(Kind::User { content: format!("user {t}") }));
        if turn.reasoning {
            out.push(Draft::new(Kind::Reasoning { content: format!("thinking {t} ").repeat(5) }));
        }
        for (tool, error) in &turn.tools {
            call += 1;
            let name = TOOLS[*tool as usize].to_owned();
            out.push(Draft::new(Kind::ToolCall {
                call_id: format!("c{call}"),
                name,
                arguments: serde_json::json!({"path": format!("src/{t}.rs")}),
            }));
            out.push(Draft::new(Kind::ToolResult {
                call_id: format!("c{call}"),
                // Sizes and line counts vary, so min_bytes and max_lines pick some results.
                content: format!(
                    "{}{}",
                    if *error { format!("Exit code {call}\nerror: call {call} failed\n") } else { String::new() },
                    (0..(call % 5) * 6).map(|i| format!("line {i} of output")).collect::<Vec<_>>().join("\n")
                ),
                is_error: *error,
            }));
        }
        if turn.reply {
            out.push(Draft::new(Kind::Assistant { content: format!("reply {t}") }));
        }
    }
    out
}

fn policies(summary: bool, reasoning: bool, tools: u8, micro: u8, n: usize) -> Policies {
    if summary {
        return Policies {
            summary: Some(Summary {
                text: format!("summary {n}"),
                by: "user".into(),
                usage: None,
                agent_history: None,
            }),
            ..Default::default()
        };
    }
    Policies {
        summary: None,
        reasoning: (reasoning || !(1..=3).contains(&tools)).then_some(ReasoningPolicy::Strip),
        tool_calls: match tools {
            1 => Some(ToolCallPolicy::Strip { request: true, response: true }),
            2 => Some(ToolCallPolicy::Strip { request: false, response: true }),
            3 => Some(ToolCallPolicy::Omit),
            _ => None,
        },
        min_bytes: (micro & 1 == 1).then_some(200),
        max_lines: (micro & 2 == 2).then_some(5),
    }
}

fn hints(hint: u8) -> BTreeMap<String, ToolHint> {
    match hint {
        1 => BTreeMap::from([(
            "fs_read_file".into(),
            ToolHint { request: Some(FieldMode::Keep), ..ToolHint::default() },
        )]),
        2 => BTreeMap::from([("grep".into(), ToolHint { response: Some(FieldMode::Keep), ..ToolHint::default() })]),
        3 => BTreeMap::from([("grep".into(), ToolHint { keep_args: Some(vec![]), ..ToolHint::default() })]),
        _ => BTreeMap::new(),
    }
}

/// Every segment file's bytes, by path.
fn segment_bytes(root: &std::path::Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &std::path::Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.path().is_dir() {
                walk(&entry.path(), out);
            } else if entry.path().extension().is_some_and(|e| e == "jsonl") {
                out.insert(entry.path().display().to_string(), std::fs::read(entry.path()).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&root.join("conversations"), &mut out);
    out
}

/// Raw events a view must show unchanged: provider-visible and outside every range in force.
fn untouched(events: &[Event]) -> Vec<Event> {
    let in_force = projection::in_force(events).unwrap();
    let index: BTreeMap<&str, usize> = events.iter().enumerate().map(|(i, e)| (e.id.as_str(), i)).collect();
    let ranges: Vec<(usize, usize)> = in_force
        .iter()
        .map(|c| (index[c.compaction.from_event.as_str()], index[c.compaction.to_event.as_str()]))
        .collect();
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| !matches!(e.kind, Kind::Compaction))
        .filter(|(i, _)| !ranges.iter().any(|(a, b)| (a..=b).contains(&i)))
        .map(|(_, e)| e.clone())
        .collect()
}

/// Whether a call and its result fall on two sides of the range's edges.
fn splits_a_pair(events: &[Event], start: usize, end: usize) -> bool {
    events.iter().enumerate().any(|(i, e)| match &e.kind {
        Kind::ToolCall { call_id, .. } => events[i + 1..]
            .iter()
            .position(|r| matches!(&r.kind, Kind::ToolResult { call_id: c, .. } if c == call_id))
            .is_some_and(|at| (start..=end).contains(&i) != (start..=end).contains(&(i + 1 + at))),
        _ => false,
    })
}

fn check(turns: Vec<Turn>, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::init(&dir.path().join("store")).unwrap();
    let mut tick = 0i64;
    let mut clock = || {
        tick += 1;
        Clock::fixed(chrono::DateTime::from_timestamp(1_800_000_000 + tick, 0).unwrap())
    };
    let lock = store.lock().unwrap();
    let id = store.create(lock.transaction(), Some("prop"), &clock()).unwrap().id;
    store.append(lock.transaction(), &id, drafts(&turns), &clock()).unwrap();
    let mut applied: Vec<String> = Vec::new();

    for (n, op) in ops.into_iter().enumerate() {
        let before_files = segment_bytes(store.root());
        let events = store.events(&id).unwrap();
        let view_before = project(&events).unwrap();
        let draft = match op {
            Op::Compact { from, len, summary, reasoning, tools, hint, micro } => {
                let last = events.len() - 1;
                let start = from.min(last);
                let outlined = Outlined::of(&events);
                let Some((start, end)) = plan::unsplit(&outlined, start, (start + len).min(last)) else {
                    continue;
                };
                prop_assert!(!splits_a_pair(&events, start, end), "unsplit left a call without its result");
                let range = if summary {
                    plan::widen(start, end, &plan::summary_ranges(&outlined).unwrap())
                } else {
                    (start, end)
                };
                let mut c =
                    plan::build(&outlined, range, policies(summary, reasoning, tools, micro, n), hints(hint), None);
                // Half with placeholders that keep the trail, half as compactions made before.
                c.keep_args = (n % 2 == 0).then(|| vec!["path".to_owned()]);
                Record::Apply(c).to_draft()
            }
            Op::UndoLatest => match applied.pop() {
                Some(target) => Record::Revoke { target }.to_draft(),
                None => continue,
            },
        };
        let is_apply = draft.extra.contains_key("from_turn");
        let appended = store.append(lock.transaction(), &id, vec![draft], &clock()).unwrap();
        if is_apply {
            applied.push(appended.events[0].id.clone());
        }

        // Raw files only grow.
        let after_files = segment_bytes(store.root());
        for (path, bytes) in &before_files {
            let now = &after_files[path];
            prop_assert!(now.starts_with(bytes), "{path} was rewritten");
        }

        let events = store.events(&id).unwrap();
        let view = project(&events).unwrap();
        let plain: Vec<Event> = view.iter().map(|p| p.event.clone()).collect();
        prop_assert_eq!(check_valid(&plain), Ok(()));
        outlines_answer_as_the_events_do(&store, &id, &events, &view)?;
        a_turn_range_shows_as_the_whole_does(&store, &id, &events, &view)?;

        let raw_in_view: Vec<Event> =
            view.iter().filter(|p| p.origin == Origin::Raw).map(|p| p.event.clone()).collect();
        let untouched = untouched(&events);
        let mut it = raw_in_view.iter();
        for event in &untouched {
            prop_assert!(it.any(|e| e == event), "event {} outside every range is missing or changed", event.id);
        }

        // Undo of the latest compaction restores the view before it.
        if is_apply {
            let mut with_undo = events.clone();
            let revoke = Record::Revoke { target: applied.last().unwrap().clone() }.to_draft();
            with_undo.push(revoke.into_event("undo".into(), "2099-01-01T00:00:00Z".into()));
            prop_assert_eq!(project(&with_undo).unwrap(), view_before);
        }
    }
    drop(lock);
    Ok(())
}

/// `convo mcp`'s `show` of a turn range, which reads only the segments holding those turns,
/// is that range of the whole: raw events and the compacted view alike.
fn a_turn_range_shows_as_the_whole_does(
    store: &Store,
    id: &str,
    events: &[Event],
    view: &[projection::Projected],
) -> Result<(), TestCaseError> {
    let turns = convo::event::turn_numbers(events);
    let last = turns.iter().flatten().max().copied().unwrap_or(0);
    let ranges = [(0, 0), (1, 1), (0, last), (last / 2, last), (1, last.saturating_sub(1))];
    for (from, to) in ranges.into_iter().filter(|(from, to)| from <= to) {
        let shown = |compacted: bool| -> String {
            let params = convo::mcp::tools::ShowParams {
                id: Some(id.to_owned()),
                compacted: Some(compacted),
                from_turn: Some(from),
                to_turn: Some(to),
                format: Some(convo::mcp::tools::ShowFormat::Jsonl),
                max_chars: Some(200_000),
                ..Default::default()
            };
            let result = convo::mcp::tools::show(store, &params).unwrap_or_else(|e| panic!("{}", e.message));
            result["text"].as_str().unwrap().to_owned()
        };
        let in_range = |turn: Option<u64>| match turn {
            Some(t) => (from..=to).contains(&t),
            None => from == 0,
        };
        let raw: String = events.iter().zip(&turns).filter(|(_, t)| in_range(**t)).map(|(e, _)| e.to_line()).collect();
        prop_assert_eq!(shown(false), raw, "raw, turns {}-{}", from, to);
        let part: Vec<projection::Projected> = view.iter().filter(|p| in_range(p.raw_turn)).cloned().collect();
        let mut compacted = Vec::new();
        convo::render::projected_jsonl(&mut compacted, &part).unwrap();
        prop_assert_eq!(shown(true), String::from_utf8(compacted).unwrap(), "compacted, turns {}-{}", from, to);
    }
    Ok(())
}

/// The outline index and everything decided from it agree with a full read: the outlines,
/// the view streamed from the stored lines, and the estimate of one more compaction.
fn outlines_answer_as_the_events_do(
    store: &Store,
    id: &str,
    events: &[Event],
    view: &[projection::Projected],
) -> Result<(), TestCaseError> {
    let at = store.outlined(id).unwrap();
    let full = Outlined::of(events);
    let unplaced: Vec<Outline> = at.outlined.outlines.iter().map(|o| Outline { span: None, ..o.clone() }).collect();
    prop_assert_eq!(&unplaced, &full.outlines);
    prop_assert_eq!(&at.outlined.compactions, &full.compactions);
    let items = projection::view(&at.outlined).unwrap();
    let mut streamed = Vec::new();
    let lines = store.outlined_lines(&at).map(|s| s.map_err(|e| std::io::Error::other(e.to_string())));
    convo::render::projected_jsonl_stream(&mut streamed, &items, &at.outlined.outlines, lines).unwrap();
    let mut expected = Vec::new();
    convo::render::projected_jsonl(&mut expected, view).unwrap();
    prop_assert_eq!(String::from_utf8(streamed).unwrap(), String::from_utf8(expected).unwrap());
    let candidate = plan::build(
        &full,
        (0, events.len() - 1),
        Policies {
            reasoning: Some(ReasoningPolicy::Strip),
            tool_calls: Some(ToolCallPolicy::Strip { request: true, response: true }),
            min_bytes: Some(40),
            ..Policies::default()
        },
        BTreeMap::new(),
        None,
    );
    let candidate = convo::compaction::Compaction { keep_args: Some(vec!["path".into()]), ..candidate };
    let exact = projection::estimate(events, &candidate, "next", "2099-01-01T00:00:00Z").unwrap();
    if let Some(outlined) =
        projection::estimate_outlined(&at.outlined, &candidate, "next", "2099-01-01T00:00:00Z").unwrap()
    {
        prop_assert_eq!(outlined, exact);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn compaction_never_rewrites_and_always_projects_a_valid_view(
        turns in prop::collection::vec(turn(), 1..14),
        ops in prop::collection::vec(op(), 1..8),
    ) {
        check(turns, ops)?;
    }
}
