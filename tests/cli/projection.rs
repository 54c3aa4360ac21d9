//! The projection against RFD 064's own examples, verbatim.

use convo::compaction::{Compaction, FieldMode, ReasoningPolicy, Record, Summary, ToolCallPolicy, ToolHint};
use convo::event::{Event, Kind, parse_stored};
use convo::projection::{Origin, check_valid, project};
use serde_json::json;

fn event(id: &str, ts: &str, body: serde_json::Value) -> String {
    let mut v = json!({"id": id, "ts": ts});
    v.as_object_mut().unwrap().extend(body.as_object().unwrap().clone());
    v.to_string()
}

/// RFD 064's raw stream: turns 0-2, plus a turn 3 that stays uncompacted.
fn rfd_stream() -> Vec<String> {
    let t = "2026-01-01T00:00:00Z";
    vec![
        event("e01", t, json!({"type":"user","content":"set up the project"})),
        event("e02", t, json!({"type":"assistant","content":"I'll create the project structure."})),
        event(
            "e03",
            t,
            json!({"type":"tool_call","call_id":"1","name":"fs_create_file","arguments":{"path":"src/main.rs"}}),
        ),
        event("e04", t, json!({"type":"tool_result","call_id":"1","content":"<200 lines of code>"})),
        event("e05", t, json!({"type":"assistant","content":"Created src/main.rs with a basic setup."})),
        event("e06", t, json!({"type":"user","content":"add error handling"})),
        event("e07", t, json!({"type":"reasoning","content":"<500 tokens of thinking>"})),
        event(
            "e08",
            t,
            json!({"type":"tool_call","call_id":"2","name":"fs_read_file","arguments":{"path":"src/main.rs"}}),
        ),
        event("e09", t, json!({"type":"tool_result","call_id":"2","content":"<200 lines of code>"})),
        event(
            "e10",
            t,
            json!({"type":"tool_call","call_id":"3","name":"fs_modify_file","arguments":{"path":"src/main.rs"}}),
        ),
        event("e11", t, json!({"type":"tool_result","call_id":"3","content":"<300 lines of diff>"})),
        event("e12", t, json!({"type":"assistant","content":"Added error handling to main."})),
        event("e13", t, json!({"type":"user","content":"now add logging"})),
        event("e14", t, json!({"type":"reasoning","content":"<400 tokens of thinking>"})),
        event(
            "e15",
            t,
            json!({"type":"tool_call","call_id":"4","name":"fs_modify_file","arguments":{"path":"src/main.rs"}}),
        ),
        event("e16", t, json!({"type":"tool_result","call_id":"4","content":"<250 lines of diff>"})),
        event("e17", t, json!({"type":"assistant","content":"Added tracing-based logging."})),
        event("e18", t, json!({"type":"user","content":"turn 3 stays as it is"})),
        event("e19", t, json!({"type":"assistant","content":"ok"})),
    ]
}

fn with(lines: &[String], records: &[(&str, &str, Record)]) -> Vec<Event> {
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    for (id, ts, record) in records {
        text += &record.to_draft().into_event((*id).into(), (*ts).into()).to_line();
    }
    parse_stored(&text).unwrap()
}

/// One line per projected event, in the RFD's notation.
fn listing(events: &[Event]) -> Vec<String> {
    let view = project(events).unwrap();
    let plain: Vec<Event> = view.iter().map(|p| p.event.clone()).collect();
    check_valid(&plain).unwrap();
    view.iter()
        .map(|p| match &p.event.kind {
            Kind::User { content } => format!("ChatRequest({content:?})"),
            Kind::Assistant { content } => format!("ChatResponse::Message({content:?})"),
            Kind::Reasoning { content } => format!("ChatResponse::Reasoning({content:?})"),
            Kind::ToolCall { call_id, name, arguments } => {
                format!("ToolCallRequest(id={call_id:?}, {name}, {arguments})")
            }
            Kind::ToolResult { call_id, content, is_error } => {
                format!("ToolCallResponse(id={call_id:?}, {}, {content:?})", if *is_error { "err" } else { "ok" })
            }
            other => format!("{other:?}"),
        })
        .collect()
}

fn default_profile() -> Compaction {
    Compaction {
        from_turn: 0,
        to_turn: 2,
        from_event: "e01".into(),
        to_event: "e17".into(),
        summary: None,
        reasoning: Some(ReasoningPolicy::Strip),
        tool_calls: Some(ToolCallPolicy::Strip { request: true, response: true }),
        tools: [
            ("fs_read_file", FieldMode::Keep),
            ("fs_create_file", FieldMode::Strip),
            ("fs_modify_file", FieldMode::Strip),
        ]
        .into_iter()
        .map(|(name, request)| (name.to_owned(), ToolHint { request: Some(request), ..ToolHint::default() }))
        .collect(),
        profile: Some("default".into()),
        ..Default::default()
    }
}

#[test]
fn rfd_064_default_profile_listing() {
    let events = with(&rfd_stream(), &[("c1", "2026-01-01T01:00:00Z", Record::Apply(default_profile()))]);
    assert_eq!(
        listing(&events),
        [
            r#"ChatRequest("set up the project")"#,
            r#"ChatResponse::Message("I'll create the project structure.")"#,
            r#"ToolCallRequest(id="1", fs_create_file, {})"#,
            r#"ToolCallResponse(id="1", ok, "[compacted] fs_create_file: success")"#,
            r#"ChatResponse::Message("Created src/main.rs with a basic setup.")"#,
            r#"ChatRequest("add error handling")"#,
            r#"ToolCallRequest(id="2", fs_read_file, {"path":"src/main.rs"})"#,
            r#"ToolCallResponse(id="2", ok, "[compacted] fs_read_file: success")"#,
            r#"ToolCallRequest(id="3", fs_modify_file, {})"#,
            r#"ToolCallResponse(id="3", ok, "[compacted] fs_modify_file: success")"#,
            r#"ChatResponse::Message("Added error handling to main.")"#,
            r#"ChatRequest("now add logging")"#,
            r#"ToolCallRequest(id="4", fs_modify_file, {})"#,
            r#"ToolCallResponse(id="4", ok, "[compacted] fs_modify_file: success")"#,
            r#"ChatResponse::Message("Added tracing-based logging.")"#,
            r#"ChatRequest("turn 3 stays as it is")"#,
            r#"ChatResponse::Message("ok")"#,
        ]
    );
}

#[test]
fn rfd_064_heavy_summary_listing() {
    let heavy = Compaction {
        summary: Some(Summary {
            text: "Set up a Rust project at src/main.rs with error handling and tracing-based logging.".into(),
            by: "user".into(),
            usage: None,
            agent_history: None,
        }),
        reasoning: None,
        tool_calls: None,
        tools: Default::default(),
        profile: Some("heavy".into()),
        ..default_profile()
    };
    let events = with(&rfd_stream(), &[("c1", "2026-01-01T01:00:00Z", Record::Apply(heavy))]);
    assert_eq!(
        listing(&events),
        [
            r#"ChatRequest("[Summary of previous conversation]")"#,
            r#"ChatResponse::Message("Set up a Rust project at src/main.rs with error handling and tracing-based logging.")"#,
            r#"ChatRequest("turn 3 stays as it is")"#,
            r#"ChatResponse::Message("ok")"#,
        ]
    );
    let view = project(&events).unwrap();
    assert_eq!(view[0].origin, Origin::Synthetic { by: Some("c1".into()) });
    assert_eq!(view[0].raw_turn, Some(0));
}

/// RFD 064's stacking table: A summarises 0-20, later B strips tool responses over 0-30.
#[test]
fn rfd_064_stacking_table() {
    let t = "2026-01-01T00:00:00Z";
    let mut lines = Vec::new();
    for turn in 0..=30 {
        lines.push(event(&format!("u{turn}"), t, json!({"type":"user","content":format!("turn {turn}")})));
        lines.push(event(&format!("r{turn}"), t, json!({"type":"reasoning","content":"thinking"})));
        lines.push(event(
            &format!("c{turn}"),
            t,
            json!({"type":"tool_call","call_id":format!("k{turn}"),"name":"grep","arguments":{"q":"x"}}),
        ));
        lines.push(event(
            &format!("t{turn}"),
            t,
            json!({"type":"tool_result","call_id":format!("k{turn}"),"content":"many matches"}),
        ));
        lines.push(event(&format!("a{turn}"), t, json!({"type":"assistant","content":"done"})));
    }
    let a = Compaction {
        from_turn: 0,
        to_turn: 20,
        from_event: "u0".into(),
        to_event: "a20".into(),
        summary: Some(Summary {
            text: "turns 0-20 in brief".into(),
            by: "user".into(),
            usage: None,
            agent_history: None,
        }),
        reasoning: None,
        tool_calls: None,
        tools: Default::default(),
        profile: None,
        ..Default::default()
    };
    let b = Compaction {
        to_turn: 30,
        to_event: "a30".into(),
        summary: None,
        tool_calls: Some(ToolCallPolicy::Strip { request: false, response: true }),
        ..a.clone()
    };
    let events = with(
        &lines,
        &[("A", "2026-01-01T20:00:00Z", Record::Apply(a)), ("B", "2026-01-01T21:00:00Z", Record::Apply(b))],
    );
    let view = project(&events).unwrap();
    let by_turn = |turn: u64| -> Vec<String> {
        view.iter().filter(|p| p.raw_turn == Some(turn)).map(|p| p.event.to_line()).collect()
    };
    // Turn 5, any type and tool calls: A's summary wins (summary beats per-type policies).
    assert!(by_turn(5).is_empty());
    assert_eq!(view[1].event.kind, Kind::Assistant { content: "turns 0-20 in brief".into() });
    // Turn 25: B strips the tool response, keeps the request; reasoning has no opinion: kept.
    let turn25 = by_turn(25);
    assert!(turn25[1].contains("\"type\":\"reasoning\""), "{turn25:?}");
    assert!(turn25[2].contains("\"arguments\":{\"q\":\"x\"}"), "{turn25:?}");
    assert!(turn25[3].contains("\"content\":\"[compacted] grep: success\""), "{turn25:?}");
}

#[test]
fn a_revoked_compaction_is_ignored() {
    let events = with(
        &rfd_stream(),
        &[
            ("c1", "2026-01-01T01:00:00Z", Record::Apply(default_profile())),
            ("c2", "2026-01-01T02:00:00Z", Record::Revoke { target: "c1".into() }),
        ],
    );
    let raw = with(&rfd_stream(), &[]);
    let view: Vec<Event> = project(&events).unwrap().into_iter().map(|p| p.event).collect();
    assert_eq!(view, raw);
}

#[test]
fn equal_timestamps_let_the_later_compaction_win() {
    let strip = Record::Apply(Compaction { tools: Default::default(), ..default_profile() });
    let omit = Record::Apply(Compaction { tool_calls: Some(ToolCallPolicy::Omit), ..default_profile() });
    let t = "2026-01-01T01:00:00Z";
    let events = with(&rfd_stream(), &[("c1", t, strip.clone()), ("c2", t, omit.clone())]);
    assert!(!listing(&events).iter().any(|l| l.starts_with("ToolCall")));
    let events = with(&rfd_stream(), &[("c1", t, omit), ("c2", t, strip)]);
    assert!(listing(&events).iter().any(|l| l.starts_with("ToolCall")));
}

#[test]
fn config_events_pass_through_a_summary_at_their_position() {
    let mut lines = rfd_stream();
    lines.insert(6, event("cfg", "2026-01-01T00:00:00Z", json!({"type":"config","set":{"compaction.keep_last":2}})));
    let heavy = Compaction {
        summary: Some(Summary { text: "S".into(), by: "user".into(), usage: None, agent_history: None }),
        reasoning: None,
        tool_calls: None,
        ..default_profile()
    };
    let events = with(&lines, &[("c1", "2026-01-01T01:00:00Z", Record::Apply(heavy))]);
    let kinds: Vec<String> = project(&events).unwrap().iter().map(|p| p.event.kind.type_name().to_owned()).collect();
    assert_eq!(kinds, ["user", "assistant", "config", "user", "assistant"]);
}

#[test]
fn omitting_a_whole_turns_replies_keeps_alternation() {
    let t = "2026-01-01T00:00:00Z";
    let lines = vec![
        event("u0", t, json!({"type":"user","content":"run it"})),
        event("c0", t, json!({"type":"tool_call","call_id":"k","name":"run","arguments":{}})),
        event("r0", t, json!({"type":"tool_result","call_id":"k","content":"out"})),
        event("u1", t, json!({"type":"user","content":"and?"})),
        event("a1", t, json!({"type":"assistant","content":"fine"})),
    ];
    let omit = Compaction {
        from_turn: 0,
        to_turn: 0,
        from_event: "u0".into(),
        to_event: "r0".into(),
        summary: None,
        reasoning: None,
        tool_calls: Some(ToolCallPolicy::Omit),
        tools: Default::default(),
        profile: None,
        ..Default::default()
    };
    let events = with(&lines, &[("c1", t, Record::Apply(omit))]);
    assert_eq!(
        listing(&events),
        [
            r#"ChatRequest("run it")"#,
            r#"ChatResponse::Message("[no reply]")"#,
            r#"ChatRequest("and?")"#,
            r#"ChatResponse::Message("fine")"#,
        ]
    );
}

/// An id used by two calls (agents do this): each result answers the latest call before it,
/// and the view keeps both pairs whole.
#[test]
fn a_call_id_used_twice_still_gives_a_valid_view() {
    let t = "2026-01-01T00:00:00Z";
    let lines = vec![
        event("u0", t, json!({"type":"user","content":"go"})),
        event("c1", t, json!({"type":"tool_call","call_id":"call_0","name":"ls","arguments":{}})),
        event("r1", t, json!({"type":"tool_result","call_id":"call_0","content":"a"})),
        event("c2", t, json!({"type":"tool_call","call_id":"call_0","name":"cat","arguments":{}})),
        event("r2", t, json!({"type":"tool_result","call_id":"call_0","content":"b"})),
        event("a0", t, json!({"type":"assistant","content":"done"})),
    ];
    let events = with(&lines, &[]);
    assert_eq!(listing(&events).len(), 6);
    // A second call left unanswered is dropped from the view, not sent dangling.
    let events = with(&lines[..4], &[]);
    assert_eq!(
        listing(&events),
        [
            r#"ChatRequest("go")"#,
            r#"ToolCallRequest(id="call_0", ls, {})"#,
            r#"ToolCallResponse(id="call_0", ok, "a")"#,
        ]
    );
}
