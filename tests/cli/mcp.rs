//! `convo mcp` driven by a real MCP client nobody here wrote: the official Python SDK's
//! stdio client (`mcp` from PyPI, pinned and installed by `.ci/mcp-client.sh` into a venv
//! under the target folder). `tests/mcp_client.py` is the agent host; its transcript, one
//! JSON document per step, is compared whole. When the install is impossible here (no
//! network, nothing cached) the tests say so and skip, as the llama.cpp ones do.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::common::sessions::{heavy_tail_session, reading_session};
use crate::common::{TestEnv, run_command};

/// The client's Python, installed once per test binary; `None` (reason printed) when the
/// install is impossible here.
fn client() -> Option<PathBuf> {
    static INSTALLED: OnceLock<Option<PathBuf>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| match crate::common::pypi_venv("mcp-client.sh", "mcp-venv") {
            Ok(venv) => Some(venv.join("bin/python")),
            Err(why) => {
                // Straight to stderr, past the test harness's capture: a skip is never silent.
                let _ = writeln!(std::io::stderr(), "SKIPPED (MCP SDK session, CONVO_SKIP_PYPI): {why}");
                None
            }
        })
        .clone()
}

/// The client script run with `args`, sealed like the binary (the server inherits it).
fn session(env: &TestEnv, python: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = env.sealed(python.to_str().expect("a UTF-8 path"));
    cmd.arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py"))
        .arg(env!("CARGO_BIN_EXE_convo"))
        .args(args)
        .env("CONVO_DIR", &env.store);
    cmd
}

/// Every tool called as an agent would, each result compared whole: the paged `show` adds up
/// to the whole text, a refused append, an unknown conversation and an empty summary are
/// tool errors, malformed requests get JSON-RPC errors, and the server keeps serving. Then
/// the store, read by the CLI and git, holds exactly what the calls wrote.
#[test]
fn an_mcp_client_calls_every_tool_and_the_store_holds_what_they_wrote() {
    let Some(python) = client() else { return };
    let env = TestEnv::new();
    let run = run_command(session(&env, &python, &[]), "");
    assert_eq!(run.code, 0, "the client failed:\n{}", run.stderr);
    insta::assert_snapshot!("mcp_session", env.redact(&run.stdout));

    // One commit per write that landed (new, append, compact, fork); the refused ones left
    // nothing.
    let subjects = env.git(&["log", "--format=%s"]);
    insta::assert_snapshot!(subjects, @r#"
    fork: "Japanese" from "MCP notes" turn 2 (+2 events)
    compact: "MCP notes" turns 0-0 [summary by user] ~2,212 -> 39 tokens
    append: "MCP notes" turns 0-2 (+8 events)
    new: "MCP notes"
    "#);
    assert_eq!(env.git_status(), "", "the working tree matches the commits");
    env.run(&["fsck"]).ok();
    // The server made no conversation active: that stays the user's choice.
    let list = env.run(&["list", "--format", "json"]).ok().to_owned();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&list).unwrap();
    assert!(rows.iter().all(|r| r["active"] == false), "{list}");
}

/// Appends through the server and through the CLI at the same time: each takes the store's
/// lock, so every one lands, none is lost, and history is one line.
#[test]
fn mcp_appends_take_the_store_lock_beside_cli_appends() {
    let Some(python) = client() else { return };
    let env = TestEnv::new();
    let id = env.new_conversation("shared");
    let n = 15;
    let mut server = session(&env, &python, &["append", &id, &n.to_string()]);
    let server = server.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("python runs");
    for i in 0..n {
        env.run(&["append", &id, "--user", &format!("cli {i}")]).ok();
    }
    let out = server.wait_with_output().unwrap();
    assert!(out.status.success(), "the client failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let shown = env.run(&["show", &id, "--format", "jsonl"]).ok().to_owned();
    let contents: Vec<String> = shown
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["content"].as_str().unwrap().to_owned())
        .collect();
    for who in ["mcp", "cli"] {
        let mine: Vec<&String> = contents.iter().filter(|c| c.starts_with(who)).collect();
        let expected: Vec<String> = (0..n).map(|i| format!("{who} {i}")).collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>(), "every {who} append landed, in order");
    }
    let log = env.git(&["log", "--format=%s"]);
    let commits = log.lines().count().to_string();
    assert_eq!(commits, (1 + 2 * n).to_string(), "`new`, and one commit per append");
    env.run(&["fsck"]).ok();
}

/// The server over a bare pipe, without any SDK: it answers a request before the handshake
/// with "server not initialized", the handshake, lists its tools, runs one, answers an
/// unknown method with JSON-RPC's "method not found" and a line that is not JSON with a
/// parse error, and goes on serving; closing stdin ends it with exit 0. (The
/// SDK session above is skipped where PyPI cannot be reached; this is not.)
#[test]
fn the_server_speaks_json_rpc_on_a_bare_pipe() {
    let env = TestEnv::new();
    env.new_conversation("piped");
    let mut server = crate::common::McpPipe::start(&env);
    let mut ask = |line: &str, answer: bool| server.ask(line, answer);
    // Before `initialize`: a request is told so, a line that is not JSON gets a parse
    // error, and the server keeps serving.
    let early = ask(r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#, true).unwrap();
    assert_eq!((early["id"].as_i64(), early["error"]["code"].as_i64()), (Some(0), Some(-32002)), "{early}");
    let garbage = ask("not JSON before the session", true).unwrap();
    assert_eq!((garbage["id"].is_null(), garbage["error"]["code"].as_i64()), (true, Some(-32700)), "{garbage}");
    let init = ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}"#,
        true,
    )
    .unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "convo", "{init}");
    ask(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, false);
    let tools = ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, true).unwrap();
    let mut names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        ["append", "compact", "fork", "list_conversations", "log", "new_conversation", "search", "show", "show_events"]
    );
    let garbage = ask("this is not JSON", true).unwrap();
    assert_eq!(garbage["error"]["code"], -32700, "{garbage}");
    let unknown = ask(r#"{"jsonrpc":"2.0","id":3,"method":"convo/nothing"}"#, true).unwrap();
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let listed = ask(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_conversations","arguments":{}}}"#,
        true,
    )
    .unwrap();
    assert_eq!(listed["id"], 4);
    assert_eq!(listed["result"]["structuredContent"]["conversations"][0]["title"], "piped", "{listed}");
    assert!(server.finish());
}

/// An append through the server is followed by what follows `convo append`: with
/// `compaction.auto.enabled` and the window nearly full, an automatic compaction.
#[test]
fn an_mcp_append_is_followed_by_automatic_compaction_as_the_cli_s_is() {
    use std::io::{BufRead, BufReader, Write};
    let env = TestEnv::new();
    let id = env.new_conversation("auto");
    for turn in 0..2 {
        let long = format!("{} {}", "a question that takes room".repeat(20), turn);
        env.run(&["append", &id, "--user", &long]).ok();
        env.run(&["append", &id, "--assistant", &"an answer that takes room too ".repeat(20)]).ok();
    }
    let flags = [
        "compaction.auto.enabled=true",
        "compaction.auto.min_turns=1",
        "compaction.keep_last=1",
        "llm.model=\"ollama/llama3.2\"",
        "models.\"ollama/llama3.2\".context_window=400",
    ];
    let mut args: Vec<&str> = flags.iter().flat_map(|f| ["--config", f]).collect();
    args.push("mcp");
    let mut child =
        env.command(&args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"append","arguments":{{"id":"{id}","events":[{{"type":"user","content":"next"}}]}}}}}}"#
    );
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        call.as_str(),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let mut replies = String::new();
    for _ in 0..2 {
        stdout.read_line(&mut replies).unwrap();
    }
    assert!(replies.contains(r#""isError":false"#), "{replies}");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let subjects = env.git(&["log", "--format=%s", "-2"]);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert!(subjects[0].starts_with("compact: \"auto\""), "{subjects:?}");
    assert!(subjects[1].starts_with("append: \"auto\" turn 2"), "{subjects:?}");
}

/// A `show` whose turns hold more text than one call reads is refused with a hint to ask
/// for fewer turns, and the other turns of the same conversation still show.
#[test]
fn a_show_of_more_text_than_one_call_reads_is_refused() {
    use convo::event::{Draft, Kind};
    use convo::mcp::tools::{ShowParams, show};
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = convo::store::Store::init(&dir.path().join("store")).unwrap();
    let clock = convo::clock::Clock::fixed(chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap());
    let lock = store.lock().unwrap();
    let id = store.create(lock.transaction(), Some("big"), &clock).unwrap().id;
    let huge = "x".repeat((16 << 20) + 1);
    let drafts = vec![
        Draft::new(Kind::User { content: huge }),
        Draft::new(Kind::User { content: "small".into() }),
        Draft::new(Kind::Assistant { content: "answer".into() }),
    ];
    store.append(lock.transaction(), &id, drafts, &clock).unwrap();
    drop(lock);
    let params = |from: Option<u64>| ShowParams { id: Some(id.clone()), from_turn: from, ..Default::default() };
    let refused = show(&store, &params(None)).unwrap_err();
    assert!(refused.message.contains("more than one show reads"), "{}", refused.message);
    assert!(refused.hint.as_deref().is_some_and(|h| h.contains("the conversation has 2")), "{:?}", refused.hint);
    let shown = show(&store, &params(Some(1))).unwrap();
    assert_eq!(shown["events_shown"], 2);
    assert!(shown["text"].as_str().unwrap().contains("small"));
}

/// The compact tool with a budget says which protection of the recent tail it gave up to
/// fit, as `convo compact --budget` does, and the commit says it too.
#[test]
fn the_mcp_compact_tool_says_which_protection_a_budget_gave_up() {
    let Some(python) = client() else { return };
    let env = TestEnv::new();
    // One prompt, then six calls with big outputs: the last five, kept whole by the default
    // profile, hold most of the view.
    let id = heavy_tail_session(&env, 6);
    let mut said = String::new();
    // A budget micro meets with the tail as configured gives nothing up (said as null);
    // one only a smaller tail can meet names what went.
    for (budget, dry_run) in [(2600, true), (800, false)] {
        let arguments = serde_json::json!({"id": id, "budget": budget, "dry_run": dry_run}).to_string();
        let run = run_command(session(&env, &python, &["call", "compact", &arguments]), "");
        assert_eq!(run.code, 0, "the client failed:\n{}", run.stderr);
        let mut doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
        // The dry run's plan is `compact --dry-run`'s text, compared in its own tests.
        doc["result"].as_object_mut().unwrap().remove("plan");
        said += &format!("{}\n", serde_json::to_string_pretty(&doc).unwrap());
    }
    insta::assert_snapshot!(env.redact(&said), @r#"
    {
      "result": {
        "dry_run": true,
        "from_turn": 0,
        "gave_up": null,
        "id": "01KDVDQ4K00000000000000001",
        "tokens_before": 3044,
        "policies": "[strip tool calls, over 50 bytes]",
        "to_turn": 0,
        "tokens_after": 2554
      },
      "step": "compact"
    }
    {
      "result": {
        "commit": "4de571cb6227cbbfe352bb7f0633444af407da63",
        "compacted": true,
        "compaction": "01KDVDWMC00000000000000001",
        "from_turn": 0,
        "gave_up": "the last 5 tool calls kept whole: only 1",
        "id": "01KDVDQ4K00000000000000001",
        "policies": "[strip tool calls, over 50 bytes]",
        "subject": "compact: \"tail\" turns 0-0 [strip tool calls, over 50 bytes] ~3,044 -> 594 tokens (budget: gave up the last 5 tool calls kept whole: only 1)",
        "to_turn": 0,
        "tokens_after": 594,
        "tokens_before": 3044
      },
      "step": "compact"
    }
    "#);
    insta::assert_snapshot!(env.git(&["log", "-1", "--format=%s"]), @r#"compact: "tail" turns 0-0 [strip tool calls, over 50 bytes] ~3,044 -> 594 tokens (budget: gave up the last 5 tool calls kept whole: only 1)"#);
}

/// The compact tool lays a budget's digest over the oldest part with a cheaper step under
/// it, as `convo compact --budget` does, and says both parts.
#[test]
fn the_mcp_compact_tool_says_both_parts_of_a_digest_over_the_oldest_part() {
    let Some(python) = client() else { return };
    let env = TestEnv::new();
    let config = env.home().join(".config/convo");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[compaction.profiles.tight]\nkeep_recent_tools = 1\n").unwrap();
    let id = reading_session(&env);
    let arguments = serde_json::json!({"id": id, "budget": 700, "profile": "tight"}).to_string();
    let run = run_command(session(&env, &python, &["call", "compact", &arguments]), "");
    assert_eq!(run.code, 0, "the client failed:\n{}", run.stderr);
    insta::assert_snapshot!(env.redact(&run.stdout), @r#"
    {
     "result": {
      "commit": "88a719415421a09889de200d2ede42059095fa49",
      "compacted": true,
      "compaction": "01KDVDTSS00000000000000001",
      "from_turn": 0,
      "gave_up": null,
      "id": "01KDVDQ4K00000000000000001",
      "policies": "[summary by convo/digest] over the oldest part, [truncate tool output to 20 lines, over 800 bytes] under it",
      "subject": "compact: \"paths\" turns 0-0 [summary by convo/digest] over the oldest part, [truncate tool output to 20 lines, over 800 bytes] under it ~7,069 -> 698 tokens",
      "to_turn": 0,
      "tokens_after": 698,
      "tokens_before": 7069
     },
     "step": "compact"
    }
    "#);
}
