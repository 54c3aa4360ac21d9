//! LLM calls against a real HTTP server on loopback: request bodies, streaming, faults that
//! must leave the store unchanged, the key never leaking, automatic compaction.

use crate::common::TestEnv;
use crate::common::server::{Reply, Server, openai_stream};

const KEY: &str = "sk-test-DO-NOT-LEAK-4242";

/// `--config` flags that point provider `test` (OpenAI-compatible) or `claude` (Anthropic)
/// at the server.
fn provider(server: &Server) -> Vec<String> {
    vec![
        "--config".into(),
        "providers.test.kind=\"openai\"".into(),
        "--config".into(),
        format!("providers.test.base_url=\"{}/v1\"", server.url),
        "--config".into(),
        "providers.test.api_key_env=\"CONVO_TEST_KEY\"".into(),
        "--config".into(),
        "providers.claude.kind=\"anthropic\"".into(),
        "--config".into(),
        format!("providers.claude.base_url=\"{}/v1\"", server.url),
    ]
}

fn query(env: &TestEnv, server: &Server, args: &[&str]) -> crate::common::Run {
    query_with(env, server, &[], args)
}

/// `query` with extra global flags (which must come before the subcommand to add to
/// the provider's `--config` flags rather than replace them).
fn query_with(env: &TestEnv, server: &Server, global: &[String], args: &[&str]) -> crate::common::Run {
    let mut all: Vec<String> = provider(server);
    all.extend(global.iter().cloned());
    all.push("query".into());
    all.extend(args.iter().map(|a| a.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut cmd = env.command(&refs);
    cmd.env("CONVO_TEST_KEY", KEY);
    crate::common::run_command(cmd, "")
}

fn conversation(env: &TestEnv) -> String {
    let id = env.new_conversation("llm");
    env.run_stdin(&["append"], include_str!("../../examples/login-bug.jsonl")).ok();
    id
}

#[test]
fn query_streams_the_answer_and_records_the_turn() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![openai_stream(&["Ship", "ped", "."], false)]);
    // [ID] MESSAGE: the conversation named by its title.
    let out = query(&env, &server, &["--model", "test/small", "llm", "Anything else?"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    Shipped.
    --- stderr
    [01KDVDQ4K00000000000000001 61ffaa0] query: "llm" turn 2 (+2 events) via test/small
    "#);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let auth = requests[0].headers.iter().find(|(k, _)| k == "authorization").map(|(_, v)| v.clone());
    assert_eq!(auth, Some(format!("Bearer {KEY}")));
    // The body is the projected view plus the new message: what `show --format openai` prints.
    let sent: serde_json::Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(sent["model"], "small");
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["max_tokens"], 4096, "the documented default cap, on every request");
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap(), &serde_json::json!({"role": "user", "content": "Anything else?"}));
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[2]["tool_calls"][0]["function"]["name"], "fs_grep_files");
    assert_eq!(
        messages[3],
        serde_json::json!({"role": "tool", "tool_call_id": "call_1", "content": "src/auth/password.rs:14: pub fn validate_password(input: &str, hash: &Hash) -> Result<(), AuthError> {"})
    );

    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let last: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "assistant");
    assert_eq!(last["content"], "Shipped.");
    assert_eq!(last["model"], "test/small");
    assert_eq!(last["usage"], serde_json::json!({"input_tokens": 12, "output_tokens": 3}));
    assert_eq!(last["usage_raw"], serde_json::json!({"prompt_tokens": 12, "completion_tokens": 3}), "as sent");
    env.run(&["fsck"]).ok();
}

/// The model's answer is untrusted text: streamed to the terminal with its control
/// characters escaped, stored as it came.
#[test]
fn a_streamed_answer_writes_no_control_characters() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![openai_stream(&["a\u{1b}]0;pwned\u{7}", "b\r\u{9b}c\n"], false)]);
    let out = query(&env, &server, &["--model", "test/small", "Anything else?"]);
    assert_eq!(out.ok(), "a^[]0;pwned^Gb^M<U+009B>c\n\n");
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let last: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(last["content"], "a\u{1b}]0;pwned\u{7}b\r\u{9b}c\n");
}

#[test]
fn provider_bodies_match_show_format() {
    let env = TestEnv::new();
    conversation(&env);
    // A summary pair and a stripped turn, so both show in the bodies.
    env.run(&["append", "--user", "And the changelog?"]).ok();
    env.run(&["compact", "--to", "0", "--summary", "Found the halved length bound in validate_password."]).ok();
    env.run(&["compact", "-p", "strip", "--from", "1", "--to", "1"]).ok();
    for (model, format) in [("test/small", "openai"), ("claude/haiku", "anthropic")] {
        let mut args = provider(&Server::start(vec![]));
        args.extend(["show".into(), "--format".into(), format.into(), "--model".into(), model.into()]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let shown: serde_json::Value = serde_json::from_str(env.run(&refs).ok()).unwrap();
        let golden =
            std::fs::read_to_string(format!("{}/tests/cli/golden/{format}.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert_eq!(shown, serde_json::from_str::<serde_json::Value>(&golden).unwrap(), "{format} body");
    }
}

#[test]
fn anthropic_streams_thinking_text_and_tool_use() {
    let env = TestEnv::new();
    conversation(&env);
    let events = [
        r#"{"type":"message_start","message":{"usage":{"input_tokens":40,"cache_read_input_tokens":1000,"cache_creation_input_tokens":7,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Check the tests."}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Running them."}}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"tu_1","name":"run_tests"}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"filter\":"}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"auth\"}"}}"#,
        r#"{"type":"message_delta","usage":{"output_tokens":9}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let server = Server::start(vec![Reply::Sse(events.iter().map(|e| e.to_string()).collect())]);
    let out = query(&env, &server, &["--model", "claude/haiku", "Run the tests"]);
    assert_eq!(out.ok(), "Running them.\n");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert!(request.headers.iter().any(|(k, v)| k == "anthropic-version" && v == "2023-06-01"));
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let tail: Vec<serde_json::Value> = jsonl.lines().rev().take(4).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(tail[3]["content"], "Run the tests");
    assert_eq!(tail[2]["type"], "reasoning");
    assert_eq!(tail[1]["content"], "Running them.");
    assert_eq!(tail[0]["type"], "tool_call");
    assert_eq!(tail[0]["arguments"], serde_json::json!({"filter": "auth"}));
    // Cache reads and writes counted (the prompt was 1,047 tokens, not 40); the provider's
    // own object beside, message_start's and message_delta's merged.
    assert_eq!(
        tail[0]["usage"],
        serde_json::json!({"input_tokens": 40, "output_tokens": 9, "cache_read_tokens": 1000, "cache_write_tokens": 7})
    );
    assert_eq!(
        tail[0]["usage_raw"],
        serde_json::json!({"input_tokens": 40, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 7, "output_tokens": 9})
    );
}

#[test]
fn a_cut_stream_keeps_what_arrived_marked_interrupted() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![openai_stream(&["Half an ", "answ"], true)]);
    let out = query(&env, &server, &["--model", "test/small", "Go on"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    Half an answ
    --- stderr
    warning: the answer was interrupted; what arrived is kept, marked interrupted
    [01KDVDQ4K00000000000000001 5a7109a] query: "llm" turn 2 (+2 events) via test/small (interrupted)
    "#);
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let last: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(last["content"], "Half an answ");
    assert_eq!(last["interrupted"], true);
    // The provider never counted it: no usage, rather than zeros that read as real.
    assert!(last.get("usage").is_none() && last.get("usage_raw").is_none(), "{last}");
}

#[test]
fn faults_leave_the_store_unchanged_and_say_why() {
    let env = TestEnv::new();
    conversation(&env);
    let before = env.snapshot();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let cases: Vec<(&str, Vec<Reply>)> = vec![
        ("500", vec![Reply::Json(500, vec![], r#"{"error":{"message":"the model fell over"}}"#.into())]),
        (
            "401 quoting the key",
            vec![Reply::Json(401, vec![], format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#))],
        ),
        (
            "429 three times",
            vec![Reply::Json(429, vec![("retry-after", "0".into())], r#"{"error":{"message":"slow down"}}"#.into())],
        ),
        ("a stream event that is not JSON", vec![Reply::Sse(vec!["{not json".into()])]),
        ("no stream events", vec![Reply::Json(200, vec![], "{\"choices\": 7}".into())]),
        ("closed before answering", vec![Reply::Close]),
        ("a stream closed before its first event", vec![Reply::Sse(vec![])]),
    ];
    let mut failures = String::new();
    for (name, replies) in cases {
        let server = Server::start(replies);
        let out = query(&env, &server, &["--model", "test/small", "hello?"]);
        // Kept beside the snapshot: the key is never echoed, whatever the message becomes.
        assert!(!out.stderr.contains(KEY));
        failures += &format!("=== {name}\n{}", env.transcript_with(&out, &[(&server.url, "[SERVER]")]));
        assert!(env.snapshot() == before, "store changed after: {name}");
    }
    insta::assert_snapshot!(failures, @"
    === 500
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: HTTP 500: the model fell over
    hint: nothing was written
    === 401 quoting the key
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: HTTP 401: Incorrect API key provided: [redacted]
    hint: nothing was written
    === 429 three times
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: HTTP 429: slow down
    hint: nothing was written
    === a stream event that is not JSON
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: malformed answer (stream event is not JSON: key must be a string at line 1 column 2)
    hint: nothing was written
    === no stream events
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: malformed answer (no stream events in the answer)
    hint: nothing was written
    === closed before answering
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: the server closed the connection before answering
    hint: nothing was written
    hint: the server may have crashed or restarted (out of memory, a prompt over its context size?): see its log
    === a stream closed before its first event
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: the server closed the connection before answering
    hint: nothing was written
    hint: the server may have crashed or restarted (out of memory, a prompt over its context size?): see its log
    ");
    // 429 is retried (three attempts in all) before giving up.
    let server = Server::start(vec![Reply::Json(429, vec![("retry-after", "0".into())], "{}".into())]);
    query(&env, &server, &["--model", "test/small", "hello?"]).fails_with(6);
    assert_eq!(server.requests().len(), 3);
    // ...and a retry that then succeeds records the turn.
    let server = Server::start(vec![
        Reply::Json(429, vec![("retry-after", "0".into())], "{}".into()),
        openai_stream(&["ok"], false),
    ]);
    assert_eq!(query(&env, &server, &["--model", "test/small", "hello?"]).ok(), "ok\n");
    // Connection refused.
    let args = [
        "--config".to_owned(),
        "providers.down.kind=\"openai\"".into(),
        "--config".into(),
        format!("providers.down.base_url=\"{closed}\""),
        "query".into(),
        "--model".into(),
        "down/m".into(),
        "hi".into(),
    ];
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let before = env.snapshot();
    let out = env.run(&refs);
    let address = closed.trim_start_matches("http://").to_owned();
    insta::assert_snapshot!(env.transcript_with(&out, &[(&closed, "[CLOSED]"), (&address, "[ADDRESS]")]), @"
    exit 6
    --- stderr
    error: down/m at [CLOSED]/chat/completions: connection refused at [ADDRESS]
    hint: nothing was written
    hint: is the server running? its address is the provider's base_url (`convo config list`)
    ");
    assert!(env.snapshot() == before);
}

#[test]
fn the_key_never_reaches_the_store_or_any_output() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![openai_stream(&["fine"], false)]);
    let out = query(&env, &server, &["--model", "test/small", "status?"]);
    // Substring checks by nature: the key must appear nowhere, in any output or file.
    assert!(!out.stdout.contains(KEY) && !out.stderr.contains(KEY));
    for (path, bytes) in env.snapshot() {
        assert!(!String::from_utf8_lossy(&bytes).contains(KEY), "{} holds the key", path.display());
    }
    assert!(!env.git(&["log", "-p", "--all"]).contains(KEY));
    // A missing key is named by its variable, not guessed at.
    let mut args = provider(&server);
    args.extend(["query".into(), "--model".into(), "test/small".into(), "hi".into()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = env.run(&refs);
    assert_eq!(
        out.fails_with(3).lines().next(),
        Some("error: CONVO_TEST_KEY is not set: it holds the key for test/small")
    );
}

#[test]
fn auto_compaction_fires_at_the_threshold_and_not_below() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![openai_stream(&["noted"], false)]);
    let auto = |window: u64| -> Vec<String> {
        vec![
            "--config".into(),
            "compaction.auto.enabled=true".into(),
            "--config".into(),
            "compaction.auto.min_turns=1".into(),
            "--config".into(),
            "compaction.keep_last=1".into(),
            "--config".into(),
            format!("models.\"test/small\".context_window={window}"),
            // Room for the answer within even the smaller window: the request fits before
            // the turn, so only the compaction after it is seen.
            "--config".into(),
            "models.\"test/small\".max_output_tokens=50".into(),
        ]
    };
    // The view is ~450 tokens: a 1,000-token window at 0.75 is not reached.
    let out = query_with(&env, &server, &auto(1000), &["--model", "test/small", "one"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    noted
    --- stderr
    [01KDVDQ4K00000000000000001 89508ff] query: "llm" turn 2 (+2 events) via test/small
    "#);
    // A 500-token window is passed: compaction of turns 0-2 (keep the last one).
    let out = query_with(&env, &server, &auto(500), &["--model", "test/small", "two"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    noted
    --- stderr
    [01KDVDQ4K00000000000000001 4630939] query: "llm" turn 3 (+2 events) via test/small
    [context compacted by micro: turns 0-0, ~445 -> ~367 tokens]
    "#);
    insta::assert_snapshot!(env.run(&["log", "--oneline", "-n", "2"]).ok(), @r#"
    96ce3b0 2026-01-01 compact: "llm" turns 0-0 [strip tool calls, over 50 bytes] ~445 -> 367 tokens [4 turns, 19 events, ~445 tokens (chars/4)]
    4630939 2026-01-01 query: "llm" turn 3 (+2 events) via test/small [4 turns, 18 events, ~445 tokens (chars/4)]
    "#);
}

fn summary_reply(text: &str) -> Reply {
    Reply::Json(
        200,
        vec![],
        serde_json::json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 300, "completion_tokens": 20}
        })
        .to_string(),
    )
}

fn compact_with(env: &TestEnv, server: &Server, global: &[&str], args: &[&str]) -> crate::common::Run {
    let mut all = provider(server);
    all.extend(global.iter().map(|s| s.to_string()));
    all.push("compact".into());
    all.extend(args.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut cmd = env.command(&refs);
    cmd.env("CONVO_TEST_KEY", KEY);
    crate::common::run_command(cmd, "")
}

#[test]
fn a_model_summary_reads_the_raw_range_and_is_stored_with_model_and_usage() {
    let env = TestEnv::new();
    conversation(&env);
    env.run(&["append", "--user", "And the changelog?"]).ok();
    env.run(&["compact", "--to", "0", "--summary", "PRIOR-SUMMARY-TEXT"]).ok();
    let server =
        Server::start(vec![summary_reply("The length bound in src/auth/password.rs was halved; fixed and tested.")]);
    // A tiny confirmation threshold: with no terminal to ask on, it must not ask (or hang).
    let out = compact_with(
        &env,
        &server,
        &["--config", "compaction.confirm_above_tokens=1"],
        &["--summarize", "--model", "test/small", "--to", "1", "--focus", "the length bound"],
    );
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 114b160] compact: "llm" turns 0-1 [summary by test/small] ~230 -> 70 tokens
    "#);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body: serde_json::Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(body["model"], "small");
    assert!(body.get("stream").is_none());
    assert_eq!(body["max_tokens"], 2000, "a summary's own cap: compaction.max_summary_tokens");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are writing a hand-off"), "{system}");
    assert!(system.ends_with("Pay particular attention to: the length bound"), "{system}");
    let transcript = body["messages"][1]["content"].as_str().unwrap();
    // What the summarizer is sent, whole.
    insta::assert_snapshot!("summarizer_system_prompt", system);
    insta::assert_snapshot!("summarizer_transcript", transcript);
    // The snapshot holds the raw events of both turns, tool output included. Kept beside it,
    // so that re-accepting the snapshot cannot let them in: never the earlier summary, and
    // nothing from outside the range.
    assert!(!transcript.contains("PRIOR-SUMMARY-TEXT"), "a summarizer must read raw events");
    assert!(!transcript.contains("And the changelog?"), "turn 2 is outside the range");

    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let compaction: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(
        compaction["summary"],
        serde_json::json!({
            "text": "The length bound in src/auth/password.rs was halved; fixed and tested.",
            "by": "test/small",
            "usage": {"input_tokens": 300, "output_tokens": 20}
        })
    );
    // The wider, later summary wins over the earlier one.
    insta::assert_snapshot!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), @r#"
    {"id":"01KDVDRZ600000000000000001","ts":"2026-01-01T00:02:00.000Z","type":"system","content":"You are a coding agent working in a Rust web service. Use tools to read and edit files; run the tests before you claim a fix."}
    {"id":"01KDVDYEZ00000000000000001-summary-user","ts":"2026-01-01T00:02:00.000Z","type":"user","content":"[Summary of previous conversation: events …00000002 to …0000000E]","synthetic":true,"compaction":"01KDVDYEZ00000000000000001"}
    {"id":"01KDVDYEZ00000000000000001-summary","ts":"2026-01-01T00:02:00.000Z","type":"assistant","content":"The length bound in src/auth/password.rs was halved; fixed and tested.","synthetic":true,"compaction":"01KDVDYEZ00000000000000001"}
    {"id":"01KDVDTSS00000000000000001","ts":"2026-01-01T00:03:00.000Z","type":"user","content":"And the changelog?"}
    "#);
}

#[test]
fn a_summary_dry_run_sends_nothing_and_writes_nothing() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![]);
    let before = env.snapshot();
    let out =
        compact_with(&env, &server, &[], &["--summarize", "--model", "test/small", "--keep-last", "1", "--dry-run"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    Would compact "llm" turns 0-0 [summary by test/small] (profile default)
    would send ~435 tokens of raw events to test/small in 1 call, and write the summary it returns
    total now ~441 tokens (chars/4); nothing sent, nothing written (--dry-run)
    "#);
    assert_eq!(server.requests().len(), 0);
    assert!(env.snapshot() == before);
}

#[test]
fn a_range_larger_than_the_window_is_summarized_in_chunks_then_combined() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![summary_reply("part summary")]);
    let out = compact_with(
        &env,
        &server,
        &["--config", "models.\"test/small\".context_window=600"],
        &["--summarize", "--model", "test/small", "--to", "1"],
    );
    out.ok();
    let requests = server.requests();
    assert!(requests.len() >= 3, "{} requests", requests.len());
    let users: Vec<String> = requests
        .iter()
        .map(|r| {
            let body: serde_json::Value = serde_json::from_str(&r.body).unwrap();
            body["messages"][1]["content"].as_str().unwrap().to_owned()
        })
        .collect();
    let (_combine, chunks) = users.split_last().unwrap();
    assert!(chunks.iter().all(|c| c.len() <= 1024), "a chunk exceeds the window budget");
    // Every chunk, then the combining request: together the whole range, nothing truncated.
    insta::assert_snapshot!("summary_chunks_then_combine", users.join("\n=== next request\n"));
}

#[test]
fn an_empty_summary_or_a_fault_writes_nothing() {
    let env = TestEnv::new();
    conversation(&env);
    let before = env.snapshot();
    let mut failures = String::new();
    for (name, reply) in [
        ("an empty summary", summary_reply("   ")),
        ("503", Reply::Json(503, vec![], r#"{"error":{"message":"overloaded"}}"#.into())),
        ("no choices", Reply::Json(200, vec![], "{\"choices\": []}".into())),
    ] {
        let server = Server::start(vec![reply]);
        let out = compact_with(&env, &server, &[], &["--summarize", "--model", "test/small", "--to", "0"]);
        failures += &format!("=== {name}\n{}", env.transcript_with(&out, &[(&server.url, "[SERVER]")]));
        assert!(env.snapshot() == before, "{name}");
    }
    insta::assert_snapshot!(failures, @"
    === an empty summary
    exit 6
    --- stderr
    error: test/small: malformed answer (the model returned an empty summary)
    hint: nothing was written
    === 503
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: HTTP 503: overloaded
    hint: nothing was written
    === no choices
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: malformed answer (no choices[0].message)
    hint: nothing was written
    ");
}

#[test]
fn auto_compaction_also_follows_append_when_enabled() {
    let env = TestEnv::new();
    conversation(&env);
    let flags = [
        "--config",
        "compaction.auto.enabled=true",
        "--config",
        "compaction.auto.min_turns=1",
        "--config",
        "compaction.keep_last=1",
        "--config",
        "llm.model=\"ollama/llama3.2\"",
        "--config",
        "models.\"ollama/llama3.2\".context_window=400",
    ];
    let mut args: Vec<&str> = flags.to_vec();
    args.extend(["append", "--user", "next"]);
    let out = env.run(&args);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 287544f] append: "llm" turn 2 (+1 event)
        turn 2  user        01KDVDTSS00000000000000001
    [context compacted by micro: turns 0-1, ~442 -> ~298 tokens]
    "#);
    // Below the threshold (a big window) nothing happens.
    let mut args: Vec<&str> = flags.to_vec();
    args[9] = "models.\"ollama/llama3.2\".context_window=100000";
    args.extend(["append", "--user", "more"]);
    let out = env.run(&args);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 ef4fa8a] append: "llm" turn 3 (+1 event)
        turn 3  user        01KDVDWMC00000000000000001
    "#);
}

#[test]
fn a_silent_server_times_out_and_writes_nothing() {
    let env = TestEnv::new();
    conversation(&env);
    let before = env.snapshot();
    let server = Server::start(vec![Reply::Silence(4)]);
    let out =
        query_with(&env, &server, &["--config".into(), "llm.timeout_secs=1".into()], &["--model", "test/small", "hi"]);
    insta::assert_snapshot!(env.transcript_with(&out, &[(&server.url, "[SERVER]")]), @"
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: no answer within 1 s
    hint: nothing was written
    hint: llm.timeout_secs sets how long to wait (a slow local model may need more)
    ");
    assert!(env.snapshot() == before);
}

#[test]
fn ctrl_c_keeps_what_arrived_marked_interrupted() {
    use std::io::Read;
    let env = TestEnv::new();
    conversation(&env);
    let first = serde_json::json!({"choices": [{"index": 0, "delta": {"content": "partial answer"}}]}).to_string();
    let server = Server::start(vec![Reply::SseThenHang(vec![first], 30)]);
    let mut args = provider(&server);
    args.extend(["query".into(), "--model".into(), "test/small".into(), "tell me".into()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = env.command(&refs);
    cmd.env("CONVO_TEST_KEY", KEY).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 64];
    while !String::from_utf8_lossy(&seen).contains("partial answer") {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the stream never arrived");
        seen.extend_from_slice(&buf[..n]);
    }
    let status = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let last: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(last["content"], "partial answer");
    assert_eq!(last["interrupted"], true);
}

/// What a provider sends is not always a usable id: a skipped stream index, an empty or odd
/// call id. The conversation must stay readable, and a stream that ends after its finish
/// reason without `[DONE]` is complete, not interrupted.
#[test]
fn odd_provider_tool_calls_leave_the_conversation_readable() {
    let env = TestEnv::new();
    conversation(&env);
    let chunks = vec![
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"bad id!","function":{"name":"run_tests","arguments":"{}"}}]}}]}"#.to_owned(),
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.to_owned(),
    ];
    let server = Server::start(vec![Reply::Sse(chunks)]);
    let out = query(&env, &server, &["--model", "test/small", "test it"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout

    --- stderr
    [01KDVDQ4K00000000000000001 bffde4e] query: "llm" turn 2 (+2 events) via test/small
    "#);
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let last: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "tool_call");
    assert_eq!(last["source_call_id"], "bad id!");
    assert!(last["call_id"].as_str().unwrap().starts_with("call_"));
    env.run(&["fsck"]).ok();
}

#[test]
fn a_redirect_to_another_port_never_receives_the_key() {
    let env = TestEnv::new();
    conversation(&env);
    let elsewhere = Server::start(vec![openai_stream(&["stolen"], false)]);
    let server = Server::start(vec![Reply::Json(
        307,
        vec![("location", format!("{}/v1/chat/completions", elsewhere.url))],
        "{}".into(),
    )]);
    // Both ways of sending a key: `Authorization: Bearer` (openai) and `x-api-key` (anthropic).
    let mut refusals = String::new();
    for kind in ["openai", "anthropic"] {
        let args = [
            "--config".to_owned(),
            format!("providers.hop.kind=\"{kind}\""),
            "--config".into(),
            format!("providers.hop.base_url=\"{}/v1\"", server.url),
            "--config".into(),
            "providers.hop.api_key_env=\"CONVO_TEST_KEY\"".into(),
            "query".into(),
            "--model".into(),
            "hop/m".into(),
            "hi".into(),
        ];
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = env.command(&refs);
        cmd.env("CONVO_TEST_KEY", KEY);
        let before = env.snapshot();
        let out = crate::common::run_command(cmd, "");
        let names = [(elsewhere.url.as_str(), "[ELSEWHERE]"), (server.url.as_str(), "[SERVER]")];
        refusals += &format!("=== {kind}\n{}", env.transcript_with(&out, &names));
        assert!(env.snapshot() == before);
    }
    // The error names where it was sent.
    insta::assert_snapshot!(refusals, @"
    === openai
    exit 6
    --- stderr
    error: hop/m at [SERVER]/v1/chat/completions: redirected to another origin ([ELSEWHERE]/v1/chat/completions); not followed, the key is never sent across origins
    hint: nothing was written; if you trust the new address, make it the provider's base_url
    === anthropic
    exit 6
    --- stderr
    error: hop/m at [SERVER]/v1/messages: redirected to another origin ([ELSEWHERE]/v1/chat/completions); not followed, the key is never sent across origins
    hint: nothing was written; if you trust the new address, make it the provider's base_url
    ");
    assert_eq!(server.requests().len(), 2, "the first server was asked");
    assert!(elsewhere.requests().is_empty(), "the other port got a request: {:?}", elsewhere.requests());
    // A redirect within the same origin is followed, key and all.
    let server = Server::start(vec![
        Reply::Json(308, vec![("location", "/v2/chat/completions".into())], "{}".into()),
        openai_stream(&["moved"], false),
    ]);
    assert_eq!(query(&env, &server, &["--model", "test/small", "hi"]).ok(), "moved\n");
    let requests = server.requests();
    assert_eq!(
        requests.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
        ["/v1/chat/completions", "/v2/chat/completions"]
    );
}

/// The user's own config file (not `--config`, which would outrank content anyway): provider
/// `test` at `base_url`, its key in CONVO_TEST_KEY.
fn user_provider(env: &TestEnv, base_url: &str) {
    let dir = env.home().join(".config/convo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("[providers.test]\nkind = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"CONVO_TEST_KEY\"\n"),
    )
    .unwrap();
}

/// The store's HEAD commit, abbreviated as convo prints it.
fn head_commit(env: &TestEnv) -> String {
    env.git(&["rev-parse", "--short=7", "HEAD"]).trim_end().to_owned()
}

/// `convo ARGS` with the key in the environment, as a user who has one set.
fn with_key(env: &TestEnv, args: &[&str]) -> crate::common::Run {
    let mut cmd = env.command(args);
    cmd.env("CONVO_TEST_KEY", KEY);
    crate::common::run_command(cmd, "")
}

#[test]
fn a_config_event_cannot_point_a_provider_at_another_server() {
    let env = TestEnv::new();
    let id = conversation(&env);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    user_provider(&env, &closed);
    let server = Server::start(vec![openai_stream(&["got it"], false)]);
    let set = env.run(&["config", "set", "--conversation", "providers.test.base_url", &format!("{}/v1", server.url)]);
    let address = closed.trim_start_matches("http://").trim_end_matches("/v1");
    let names = [(server.url.as_str(), "[SERVER]"), (closed.as_str(), "[CLOSED]"), (address, "[ADDRESS]")];
    // The commit holds the server's URL, so its hash (and every later one) depends on the port.
    let head = head_commit(&env);
    insta::assert_snapshot!(env.transcript_with(&set, &[names[0], names[1], (&head, "[HASH]")]), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 [HASH]] config: "llm" set providers.test.base_url = "[SERVER]/v1"
    warning: providers.test.base_url is ignored until you trust this store (it decides where conversations and keys are sent)
    hint: `convo config trust` trusts it
    "#);

    // The event is ignored: the call goes where the user's file says (nowhere), with a warning.
    let out = with_key(&env, &["query", "--model", "test/small", "hi"]);
    assert!(server.requests().is_empty(), "the event's server was called: {:?}", server.requests());
    // One warning, a hint, and the error of calling the user's own (closed) server.
    insta::assert_snapshot!(env.transcript_with(&out, &names), @"
    exit 6
    --- stderr
    warning: ignored providers.test.base_url from config event 01KDVDTSS00000000000000001 (the store is not trusted)
    hint: a store's convo.toml and config events may name providers only once you trust it: `convo config trust`
    error: test/small at [CLOSED]/chat/completions: connection refused at [ADDRESS]
    hint: nothing was written
    hint: is the server running? its address is the provider's base_url (`convo config list`)
    ");
    // `config list` shows it as ignored, and where it came from.
    // (only the provider's lines: the rest are the built-in defaults)
    let list = env.transcript_with(&env.run(&["config", "list"]), &names);
    let provider_lines: Vec<&str> = list.lines().filter(|l| l.starts_with("providers.test.")).collect();
    insta::assert_snapshot!(provider_lines.join("\n"), @r#"
    providers.test.api_key_env = "CONVO_TEST_KEY"  # [ROOT]/home/.config/convo/config.toml
    providers.test.base_url = "[CLOSED]"  # [ROOT]/home/.config/convo/config.toml
    providers.test.base_url = "[SERVER]/v1"  # ignored: config event 01KDVDTSS00000000000000001, the store is not trusted
    providers.test.kind = "openai"  # [ROOT]/home/.config/convo/config.toml
    "#);

    // Trusted, the event counts: the key goes where it says.
    env.run(&["config", "trust"]).ok();
    let out = with_key(&env, &["query", "--model", "test/small", &id, "hi"]);
    insta::assert_snapshot!(env.transcript_with(&out, &[(&head_commit(&env), "[HASH]")]), @r#"
    exit 0
    --- stdout
    got it
    --- stderr
    [01KDVDQ4K00000000000000001 [HASH]] query: "llm" turn 2 (+2 events) via test/small
    "#);
    let auth = server.requests()[0].headers.iter().find(|(k, _)| k == "authorization").map(|(_, v)| v.clone());
    assert_eq!(auth, Some(format!("Bearer {KEY}")));
}

#[test]
fn a_cloned_convo_toml_cannot_name_providers_until_the_store_is_trusted() {
    let server = Server::start(vec![openai_stream(&["got it"], false)]);
    let dir = tempfile::tempdir().unwrap();
    let hub = crate::common::bare(dir.path(), "hub");
    // Someone else's store: convo.toml points the user's provider, and a new one reading the
    // user's key variable, at their server, and tries to trust itself.
    let theirs = TestEnv::new();
    conversation(&theirs);
    for (key, value) in [
        ("providers.test.base_url", format!("{}/v1", server.url)),
        ("providers.evil.kind", "openai".into()),
        ("providers.evil.base_url", format!("{}/v1", server.url)),
        ("providers.evil.api_key_env", "CONVO_TEST_KEY".into()),
    ] {
        theirs.run(&["config", "set", "--layer", "store", key, &value]).ok();
    }
    assert_eq!(theirs.run(&["config", "set", "--shared", "trust.stores", "[\"/\"]"]).fails_with(3).lines().count(), 2);
    let toml = std::fs::read_to_string(theirs.store.join("convo.toml")).unwrap();
    std::fs::write(theirs.store.join("convo.toml"), format!("{toml}[trust]\nstores = [\"/\"]\n")).unwrap();
    theirs.git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "trust me"]);
    theirs.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    theirs.run(&["push"]).ok();

    let env = TestEnv::bare_at(100);
    env.run(&["clone", hub.to_str().unwrap(), env.store.to_str().unwrap()]).ok();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    user_provider(&env, &closed);
    let id = env.new_conversation("mine");
    let address = closed.trim_start_matches("http://").trim_end_matches("/v1");
    let names = [(server.url.as_str(), "[SERVER]"), (closed.as_str(), "[CLOSED]"), (address, "[ADDRESS]")];
    let mut untrusted = String::new();
    for model in ["evil/m", "test/small"] {
        let out = with_key(&env, &["query", "--model", model, &id, "hi"]);
        untrusted += &format!("=== {model}\n{}", env.transcript_with(&out, &names));
    }
    // Every provider key and trust.stores from convo.toml is ignored, each with a warning.
    insta::assert_snapshot!(untrusted, @"
    === evil/m
    exit 3
    --- stderr
    warning: ignored providers.evil.api_key_env from convo.toml (the store is not trusted)
    warning: ignored providers.evil.base_url from convo.toml (the store is not trusted)
    warning: ignored providers.evil.kind from convo.toml (the store is not trusted)
    warning: ignored providers.test.base_url from convo.toml (the store is not trusted)
    warning: ignored trust.stores from convo.toml (only your own config may set it)
    hint: a store's convo.toml and config events may name providers only once you trust it: `convo config trust`
    hint: trust a store from your own config: `convo config trust [PATH]`
    error: model `evil/m`: unknown provider `evil` (providers: anthropic, ollama, openai, test)
    hint: models are named provider/model; providers live in config
    === test/small
    exit 6
    --- stderr
    warning: ignored providers.evil.api_key_env from convo.toml (the store is not trusted)
    warning: ignored providers.evil.base_url from convo.toml (the store is not trusted)
    warning: ignored providers.evil.kind from convo.toml (the store is not trusted)
    warning: ignored providers.test.base_url from convo.toml (the store is not trusted)
    warning: ignored trust.stores from convo.toml (only your own config may set it)
    hint: a store's convo.toml and config events may name providers only once you trust it: `convo config trust`
    hint: trust a store from your own config: `convo config trust [PATH]`
    error: test/small at [CLOSED]/chat/completions: connection refused at [ADDRESS]
    hint: nothing was written
    hint: is the server running? its address is the provider's base_url (`convo config list`)
    ");
    assert!(server.requests().is_empty(), "the store's server was called: {:?}", server.requests());

    // Trusted (by the user, in their own file), the store's providers count; trust.stores
    // from the store still does not.
    let trust = env.run(&["config", "trust", env.store.to_str().unwrap()]);
    insta::assert_snapshot!(env.transcript(&trust), @"
    exit 0
    --- stderr
    Trusting [ROOT]/store: its convo.toml and config events may name providers (in [ROOT]/home/.config/convo/config.toml)
    ");
    let user = std::fs::read_to_string(env.home().join(".config/convo/config.toml")).unwrap();
    insta::assert_snapshot!(env.redact(&user).replace(&closed, "[CLOSED]"), @r#"
    [providers.test]
    kind = "openai"
    base_url = "[CLOSED]"
    api_key_env = "CONVO_TEST_KEY"

    [trust]
    stores = ["[ROOT]/store"]
    "#);
    assert_eq!(env.run(&["config", "trust", "--list"]).ok(), format!("{}\n", env.store.display()));
    let out = with_key(&env, &["query", "--model", "evil/m", &id, "hi"]);
    assert_eq!(out.ok(), "got it\n");
    assert_eq!(
        out.stderr.lines().filter(|l| l.starts_with("warning: ")).collect::<Vec<_>>(),
        ["warning: ignored trust.stores from convo.toml (only your own config may set it)"]
    );
    assert_eq!(server.requests().len(), 1);

    // Untrusted again: ignored again.
    env.run(&["config", "trust", "--remove"]).ok();
    assert_eq!(env.run(&["config", "trust", "--list"]).ok(), "");
    let out = with_key(&env, &["query", "--model", "test/small", &id, "hi"]);
    insta::assert_snapshot!(env.transcript_with(&out, &names), @"
    exit 6
    --- stderr
    warning: ignored providers.evil.api_key_env from convo.toml (the store is not trusted)
    warning: ignored providers.evil.base_url from convo.toml (the store is not trusted)
    warning: ignored providers.evil.kind from convo.toml (the store is not trusted)
    warning: ignored providers.test.base_url from convo.toml (the store is not trusted)
    warning: ignored trust.stores from convo.toml (only your own config may set it)
    hint: a store's convo.toml and config events may name providers only once you trust it: `convo config trust`
    hint: trust a store from your own config: `convo config trust [PATH]`
    error: test/small at [CLOSED]/chat/completions: connection refused at [ADDRESS]
    hint: nothing was written
    hint: is the server running? its address is the provider's base_url (`convo config list`)
    ");
    assert_eq!(server.requests().len(), 1);
    let err = env.run(&["config", "trust", "--remove"]);
    insta::assert_snapshot!(env.transcript(&err), @"
    exit 4
    --- stderr
    error: [ROOT]/store is not among the stores you trust
    hint: `convo config trust --list` prints them
    ");
    // Only a store can be trusted.
    let missing = env.root.join("nowhere");
    env.run(&["config", "trust", missing.to_str().unwrap()]).fails_with(4);
    assert_eq!(env.run(&["config", "trust", "--list"]).ok(), "");
}

#[test]
fn auto_compaction_summarizes_only_when_mechanical_steps_fall_short_and_a_failed_summary_falls_back() {
    let env = TestEnv::new();
    conversation(&env);
    // A window so small that no mechanical step fits: the conversation is over it before
    // the turn, so it is compacted first: the summarizing profile's model is asked, and it
    // fails (500); the digest compacts instead, and the turn is sent. After the turn the
    // same again.
    let fell_over = || Reply::Json(500, vec![], r#"{"error":{"message":"the model fell over"}}"#.into());
    let server = Server::start(vec![fell_over(), openai_stream(&["noted"], false), fell_over()]);
    let auto = vec![
        "--config".to_owned(),
        "compaction.auto.enabled=true".into(),
        "--config".into(),
        "compaction.auto.min_turns=1".into(),
        "--config".into(),
        "compaction.auto.profile=\"brief\"".into(),
        "--config".into(),
        "compaction.profiles.brief.summary={policy=\"summarize\", model=\"test/small\"}".into(),
        "--config".into(),
        "models.\"test/small\".context_window=150".into(),
        "--config".into(),
        "compaction.keep_last=1".into(),
    ];
    let out = query_with(&env, &server, &auto, &["--model", "test/small", "one"]);
    insta::assert_snapshot!(env.transcript_with(&out, &[(&server.url, "[SERVER]")]), @r#"
    exit 0
    --- stdout
    noted
    --- stderr
    automatic summary failed (test/small at [SERVER]/v1/chat/completions: HTTP 500: the model fell over): compacting with a digest instead
    [context compacted: turns 0-0, ~441 -> ~312 tokens]
    [01KDVDQ4K00000000000000001 c8785e6] query: "llm" turn 2 (+2 events) via test/small
    automatic summary failed (test/small at [SERVER]/v1/chat/completions: HTTP 500: the model fell over): compacting with a digest instead
    [context compacted: turns 1-1, ~314 -> ~233 tokens]
    "#);
    insta::assert_snapshot!(env.run(&["log", "--oneline", "-n", "2"]).ok(), @r#"
    ae69a4a 2026-01-01 compact: "llm" turns 1-1 [summary by convo/digest] ~314 -> 233 tokens [3 turns, 18 events, ~443 tokens (chars/4)]
    c8785e6 2026-01-01 query: "llm" turn 2 (+2 events) via test/small [3 turns, 17 events, ~443 tokens (chars/4)]
    "#);
    env.run(&["fsck"]).ok();
    // Three requests: a summary call that failed, the query, another that failed.
    assert_eq!(server.requests().len(), 3);
}

/// A whole (non-streamed) OpenAI answer with a finish reason.
fn summary_reply_finished(text: &str, finish_reason: &str) -> Reply {
    Reply::Json(
        200,
        vec![],
        serde_json::json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 300, "completion_tokens": 20}
        })
        .to_string(),
    )
}

/// An answer cut off at the cap is kept, marked with the provider's reason, and said so:
/// OpenAI's `finish_reason: "length"`, Anthropic's `stop_reason: "max_tokens"`.
#[test]
fn an_answer_cut_off_at_the_cap_is_marked_and_warned_about() {
    let env = TestEnv::new();
    conversation(&env);
    let openai = Reply::Sse(vec![
        serde_json::json!({"choices": [{"index": 0, "delta": {"content": "Cut off mid"}, "finish_reason": null}]})
            .to_string(),
        serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}).to_string(),
        "[DONE]".into(),
    ]);
    let server = Server::start(vec![openai]);
    let out = query(&env, &server, &["--model", "test/small", "Go on"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    Cut off mid
    --- stderr
    warning: the answer was cut off at max_tokens 4096 (finish_reason "length"); it is kept, marked so
    hint: raise models."test/small".max_output_tokens for longer answers
    [01KDVDQ4K00000000000000001 9d39644] query: "llm" turn 2 (+2 events) via test/small
    "#);
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let last: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(last["finish_reason"], "length");
    assert!(last.get("interrupted").is_none());

    let anthropic = Reply::Sse(
        [
            r#"{"type":"message_start","message":{"usage":{"input_tokens":40}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Also cut"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ]
        .map(String::from)
        .to_vec(),
    );
    let server = Server::start(vec![anthropic]);
    let out = query_with(
        &env,
        &server,
        &["--config".into(), "models.\"claude/haiku\".max_output_tokens=9".into()],
        &["--model", "claude/haiku", "Go on"],
    );
    assert!(out.stderr.contains("cut off at max_tokens 9 (finish_reason \"max_tokens\")"), "{}", out.stderr);
    let sent: serde_json::Value = serde_json::from_str(&server.requests()[0].body).unwrap();
    assert_eq!(sent["max_tokens"], 9);
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let last: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!((last["content"].as_str(), last["finish_reason"].as_str()), (Some("Also cut"), Some("max_tokens")));
}

/// A summary cut off at its cap is never stored: one retry with twice the cap (within the
/// model's output limit and the window); cut off again, or no room to retry, nothing is
/// written and the hint says what to raise.
#[test]
fn a_cut_off_summary_is_retried_once_then_refused() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![
        summary_reply_finished("The length bound was", "length"),
        summary_reply_finished("The length bound in src/auth/password.rs was halved; fixed.", "stop"),
    ]);
    compact_with(&env, &server, &[], &["--summarize", "--model", "test/small", "--to", "0"]).ok();
    let caps: Vec<u64> = server
        .requests()
        .iter()
        .map(|r| serde_json::from_str::<serde_json::Value>(&r.body).unwrap()["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(caps, [2000, 4000], "compaction.max_summary_tokens, then twice it");
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let compaction: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(compaction["summary"]["text"], "The length bound in src/auth/password.rs was halved; fixed.");
    assert_eq!(compaction["summary"]["usage"]["output_tokens"], 40, "both calls' usage");

    let before = env.snapshot();
    let server = Server::start(vec![summary_reply_finished("Cut", "length")]);
    let out = compact_with(&env, &server, &[], &["--summarize", "--model", "test/small", "--to", "1"]);
    insta::assert_snapshot!(out.fails_with(6), @r#"
    error: test/small: the summary was cut off at max_tokens 4000 (also after a retry with the larger cap)
    hint: nothing was written
    hint: raise compaction.max_summary_tokens (within models.<m>.max_output_tokens), or summarize fewer turns (--to)
    "#);
    assert_eq!(server.requests().len(), 2);
    // The cap is the model's whole output limit already: no room to retry.
    let server = Server::start(vec![summary_reply_finished("Cut", "length")]);
    let out = compact_with(
        &env,
        &server,
        &["--config", "models.\"test/small\".max_output_tokens=2000"],
        &["--summarize", "--model", "test/small", "--to", "1"],
    );
    assert!(out.fails_with(6).contains("cut off at max_tokens 2000\n"), "{}", out.stderr);
    assert_eq!(server.requests().len(), 1);
    assert!(env.snapshot() == before, "a cut-off summary wrote something");
}

/// A hand-off that leaves out part of the range's trail (here the file the turns edited) is
/// sent back once, with what it left out, and the answer to that is what is stored.
#[test]
fn a_hand_off_that_leaves_out_a_file_is_asked_for_it_once_more() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![
        summary_reply("## Task\nLong passwords failed; the bound was halved."),
        summary_reply("## Task\nLong passwords failed.\n## Files\n- src/auth/password.rs: the bound fixed"),
        summary_reply("a third call is never made"),
    ]);
    compact_with(&env, &server, &[], &["--summarize", "--model", "test/small", "--to", "1"]).ok();
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one second pass, no more");
    let second: serde_json::Value = serde_json::from_str(&requests[1].body).unwrap();
    let system = second["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You wrote the hand-off below"), "{system}");
    insta::assert_snapshot!(second["messages"][1]["content"].as_str().unwrap(), @r"
    Hand-off:
    ## Task
    Long passwords failed; the bound was halved.

    Left out:
    - files: src/auth/password.rs
    ");
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let compaction: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(
        compaction["summary"]["text"],
        "## Task\nLong passwords failed.\n## Files\n- src/auth/password.rs: the bound fixed"
    );
    // Both calls' tokens are the summary's cost.
    assert_eq!(compaction["summary"]["usage"], serde_json::json!({"input_tokens": 600, "output_tokens": 40}));
}

/// A model summary that would not shrink the view is refused with both estimates, nothing
/// written; `--force` applies it.
#[test]
fn a_summary_that_does_not_shrink_is_refused_unless_forced() {
    let env = TestEnv::new();
    conversation(&env);
    let before = env.snapshot();
    let long = "The session went on. ".repeat(200);
    let server = Server::start(vec![summary_reply(&long)]);
    let out = compact_with(&env, &server, &[], &["--summarize", "--model", "test/small", "--to", "0"]);
    insta::assert_snapshot!(out.fails_with(3), @"
    error: the summary by test/small (~1050 tokens) is not smaller than the range it replaces (~220 tokens): nothing was written
    hint: --force applies it anyway; --digest writes convo's own, bounded by compaction.max_summary_tokens
    ");
    assert!(env.snapshot() == before, "a summary that does not shrink wrote something");
    let out = compact_with(&env, &server, &[], &["--summarize", "--model", "test/small", "--to", "0", "--force"]);
    out.ok();
    let jsonl = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let compaction: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(compaction["summary"]["text"], long.trim());
}

/// A request estimated over the window: refused before sending with automatic compaction
/// off (nothing written, the hint names `--compact`); compacted first, then sent, with it on.
#[test]
fn a_conversation_over_the_window_is_compacted_first_or_refused_before_sending() {
    let env = TestEnv::new();
    conversation(&env);
    let server = Server::start(vec![openai_stream(&["fits now"], false)]);
    let small = |auto: bool| -> Vec<String> {
        [
            "models.\"test/small\".context_window=600".to_owned(),
            "models.\"test/small\".max_output_tokens=200".into(),
            format!("compaction.auto.enabled={auto}"),
            "compaction.keep_last=1".into(),
        ]
        .into_iter()
        .flat_map(|f| ["--config".to_owned(), f])
        .collect()
    };
    let before = env.snapshot();
    let out = query_with(&env, &server, &small(false), &["--model", "test/small", "Anything else?"]);
    insta::assert_snapshot!(out.fails_with(3), @"
    error: ~445 tokens (chars/4) of conversation and message plus 200 for the answer (max_tokens) exceed test/small's window of 600: not sent
    hint: nothing was written
    hint: `convo query --compact` compacts first; with compaction.auto.enabled = true convo does it by itself
    ");
    assert_eq!(server.requests().len(), 0, "nothing is sent");
    assert!(env.snapshot() == before);

    let out = query_with(&env, &server, &small(true), &["--model", "test/small", "Anything else?"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    fits now
    --- stderr
    [context compacted by summary: turns 0-0, ~441 -> ~239 tokens]
    [01KDVDQ4K00000000000000001 6c26fe5] query: "llm" turn 2 (+2 events) via test/small
    "#);
    assert_eq!(server.requests().len(), 1);
}

/// The server says the prompt is over its context although the estimate fit: with
/// automatic compaction on, compact and send once more; off, its message and the hint.
#[test]
fn a_context_overflow_from_the_server_compacts_and_retries_once() {
    let env = TestEnv::new();
    conversation(&env);
    let overflow = || {
        Reply::Json(
            400,
            vec![],
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#.into(),
        )
    };
    let server = Server::start(vec![overflow()]);
    let before = env.snapshot();
    let out = query(&env, &server, &["--model", "test/small", "Anything else?"]);
    insta::assert_snapshot!(env.transcript_with(&out, &[(&server.url, "[SERVER]")]), @"
    exit 6
    --- stderr
    error: test/small at [SERVER]/v1/chat/completions: HTTP 400: the request exceeds the available context size, try increasing it
    hint: nothing was written
    hint: `convo query --compact` compacts first; with compaction.auto.enabled = true convo does it by itself
    ");
    assert!(env.snapshot() == before);

    let server = Server::start(vec![overflow(), openai_stream(&["after compaction"], false)]);
    let auto = ["compaction.auto.enabled=true", "compaction.keep_last=1"]
        .into_iter()
        .flat_map(|f| ["--config".to_owned(), f.to_owned()])
        .collect::<Vec<_>>();
    let out = query_with(&env, &server, &auto, &["--model", "test/small", "Anything else?"]);
    insta::assert_snapshot!(env.transcript_with(&out, &[(&server.url, "[SERVER]")]), @r#"
    exit 0
    --- stdout
    after compaction
    --- stderr
    [context compacted by summary: turns 0-0, ~441 -> ~239 tokens]
    the server found the conversation over its context: compacted, sending again
    [01KDVDQ4K00000000000000001 64fc860] query: "llm" turn 2 (+2 events) via test/small
    "#);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body.len() < requests[0].body.len(), "the second request is the compacted view");
}

/// Once the model has reported a prompt's tokens, the pre-flight estimate starts from that
/// figure (plus chars/4 of what came after), and says so.
#[test]
fn the_window_check_learns_from_reported_usage() {
    let env = TestEnv::new();
    conversation(&env);
    let counted = Reply::Sse(vec![
        serde_json::json!({"choices": [{"index": 0, "delta": {"content": "ok"}}]}).to_string(),
        serde_json::json!({"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 1}}).to_string(),
        "[DONE]".into(),
    ]);
    let server = Server::start(vec![counted]);
    let window: Vec<String> =
        ["models.\"test/small\".context_window=1000", "models.\"test/small\".max_output_tokens=150"]
            .into_iter()
            .flat_map(|f| ["--config".to_owned(), f.to_owned()])
            .collect();
    // ~450 tokens by chars/4: sent.
    query_with(&env, &server, &window, &["--model", "test/small", "one"]).ok();
    // The server counted 900 for that prompt: with the answer and this message, over.
    let out = query_with(&env, &server, &window, &["--model", "test/small", "two"]);
    insta::assert_snapshot!(out.fails_with(3), @"
    error: ~902 tokens (calibrated) of conversation and message plus 150 for the answer (max_tokens) exceed test/small's window of 1000: not sent
    hint: nothing was written
    hint: `convo query --compact` compacts first; with compaction.auto.enabled = true convo does it by itself
    ");
    assert_eq!(server.requests().len(), 1);
}

/// Issue 13: `show` says which estimate it gives: chars/4 until a provider has reported the
/// prompt's size, then that figure plus what came after (`calibrated`); `list` says chars/4.
#[test]
fn show_and_list_say_which_estimate_they_give() {
    let env = TestEnv::new();
    conversation(&env);
    let header = |env: &TestEnv| -> String {
        env.run(&["show", "--compacted"]).ok().lines().take(3).collect::<Vec<_>>().join("\n")
    };
    let before = header(&env);
    let counted = Reply::Sse(vec![
        serde_json::json!({"choices": [{"index": 0, "delta": {"content": "ok"}}]}).to_string(),
        serde_json::json!({"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 1}}).to_string(),
        "[DONE]".into(),
    ]);
    let server = Server::start(vec![counted]);
    query(&env, &server, &["--model", "test/small", "one"]).ok();
    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    insta::assert_snapshot!(format!("{before}\n---\n{}\n---\n{}", header(&env), list[0]["tokens_basis"]), @r#"
    llm 01KDVDQ4K00000000000000001
    2 turns, 14 events, ~441 tokens (chars/4)
    compacted view: ~441 tokens (chars/4)
    ---
    llm 01KDVDQ4K00000000000000001
    3 turns, 16 events, ~443 tokens (chars/4)
    compacted view: ~901 tokens (calibrated)
    ---
    "chars/4"
    "#);
}

/// Under `--budget`, a model summary cut off at its cap (also after the retry) is no error:
/// convo's digest over the same oldest part stands in, fitted to the room the budget left the
/// summary, and says so; the rest stays at the cheaper step's view, the view within the budget.
/// (The retry asks for twice the cap within that room: 106 here.)
#[test]
fn a_budget_model_summary_cut_off_gives_way_to_the_digest_over_the_same_part() {
    let env = TestEnv::new();
    crate::common::sessions::reading_session(&env);
    let cut = || summary_reply_finished("Read src/mod_0/file_0.rs and then src/mod_1", "length");
    let server = Server::start(vec![cut(), cut()]);
    let global = [
        "--config",
        "compaction.max_summary_tokens=100",
        "--config",
        "compaction.profiles.handoff.summary={policy=\"summarize\", model=\"test/small\"}",
    ];
    let args = ["-p", "handoff", "--budget", "800", "--keep-recent-tools", "1"];
    let out = compact_with(&env, &server, &global, &args);
    let stderr = out.ok_status();
    assert!(
        stderr.contains("warning: the model's summary was cut off at 106 tokens; the digest stands in"),
        "{stderr}"
    );
    assert!(stderr.contains("[summary by convo/digest] over the oldest part, [strip tool calls"), "{stderr}");
    assert_eq!(server.requests().len(), 2, "the cut-off answer and the one retry");
    let added = env.git(&["show", "--format=", "--unified=0", "HEAD"]);
    let compactions: Vec<serde_json::Value> =
        added.lines().filter_map(|l| serde_json::from_str(l.strip_prefix('+')?).ok()).collect();
    assert_eq!(compactions.len(), 2, "{added}");
    let (under, summary) = (&compactions[0], &compactions[1]);
    assert!(under["summary"].is_null() && under["laid_with"] == summary["id"], "{added}");
    assert_eq!(summary["summary"]["by"], "convo/digest", "{added}");
    assert!(!summary["summary"]["text"].as_str().unwrap().contains("then src/mod_1"), "the cut-off text is not kept");
    let after = summary["tokens"]["after"].as_u64().unwrap();
    assert!(after <= 800, "the view ({after}) within the budget: {summary}");
    let shown = env.run(&["show", "--compacted"]).ok().to_owned();
    assert!(shown.contains("src/mod_0/file_0.rs"), "the digest keeps the oldest part's trail: {shown}");
    assert!(shown.contains("src/mod_20/file_20.rs"), "{shown}");
    env.run(&["fsck"]).ok();
}

/// Under `--budget`, a model summary covers only the oldest part needed and the rest stays
/// at a cheaper step's view, as a digest does: planned with the summary's room reserved at
/// `compaction.max_summary_tokens` (the cap on its output), the model sent the oldest part
/// alone, two compaction events in one commit, the view under the budget.
#[test]
fn a_budget_model_summary_covers_only_the_oldest_part_and_the_rest_stays_at_the_cheaper_step() {
    let env = TestEnv::new();
    crate::common::sessions::reading_session(&env);
    let server = Server::start(vec![summary_reply("Read src/mod_0/file_0.rs and on; no flake found yet.")]);
    let global = [
        "--config",
        "compaction.max_summary_tokens=100",
        "--config",
        "compaction.profiles.handoff.summary={policy=\"summarize\", model=\"test/small\"}",
    ];
    let args = ["-p", "handoff", "--budget", "800", "--keep-recent-tools", "1"];
    let dry = compact_with(&env, &server, &global, &[&args[..], &["--dry-run"]].concat());
    insta::assert_snapshot!(env.transcript(&dry), @r#"
    exit 0
    --- stdout
    Budget 800 tokens; the view is ~7,069 now
      step             after  policies
      truncate        ~6,238  [truncate tool output to 20 lines, over 800 bytes]
      micro             ~981  [strip tool calls, over 800 bytes]
      reasoning         ~981  [strip reasoning, strip tool calls, over 800 bytes]
      tool-calls        ~981  [strip reasoning, strip tool calls]
      summary           ~257  []  <- the first that fits
    Chosen: summary over turns 0-0, only the oldest part needed, the rest at micro, ~694 tokens
    Would compact "paths" turns 0-0 [summary by test/small] (profile handoff)
      over the oldest part (to event 00000015); under it, turns 0-0 [strip tool calls, over 800 bytes] (one commit)
    would send ~3,124 tokens of raw events to test/small in 1 call, and write the summary it returns
    total now ~7,069 tokens (chars/4); nothing sent, nothing written (--dry-run)
    "#);
    let out = compact_with(&env, &server, &global, &args);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 a00f77e] compact: "paths" turns 0-0 [summary by test/small] over the oldest part, [strip tool calls, over 800 bytes] under it ~7,069 -> 707 tokens
    "#);
    let added = env.git(&["show", "--format=", "--unified=0", "HEAD"]);
    let kinds: Vec<String> = added
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.strip_prefix('+')?).ok())
        .map(|e| format!("{} summary_by={} laid_with={}", e["type"], e["summary"]["by"], e["laid_with"].is_string()))
        .collect();
    insta::assert_snapshot!(kinds.join("\n"), @r#"
    "compaction" summary_by=null laid_with=true
    "compaction" summary_by="test/small" laid_with=false
    "#);
    // The model was sent the oldest part alone: the first files, not the newest ones.
    let sent: String = server.requests().iter().map(|r| r.body.clone()).collect();
    assert!(sent.contains("src/mod_0/file_0.rs"), "{sent}");
    assert!(!sent.contains("src/mod_29/file_29.rs") && !sent.contains("src/mod_20/file_20.rs"), "{sent}");
    let shown = env.run(&["show", "--compacted"]).ok().to_owned();
    assert!(shown.contains("no flake found yet"), "{shown}");
    // The newer part at the cheaper step's view, not summarized and not whole.
    assert!(shown.contains("src/mod_20/file_20.rs"), "{shown}");
    env.run(&["fsck"]).ok();
}
