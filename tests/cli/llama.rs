//! `query` and `compact --summarize` against llama.cpp's own HTTP server (SmolLM2-135M on
//! loopback, see `common::llama`), through both wire formats: what the scripted server in
//! `common::server` can only imitate. The model's words vary with the build, so these
//! assert on structure: exit codes, the events stored, usage, the store unchanged on failure.
//! The server samples greedily with a fixed seed.

use serde_json::Value;

use crate::common::TestEnv;
use crate::common::llama::LlamaServer;
use crate::common::sessions::append_events;

/// The shared server, or return from the test after saying why there is none.
macro_rules! llama_or_skip {
    () => {
        match LlamaServer::shared() {
            Some(server) => server,
            None => return,
        }
    };
}

/// `--config` flags: provider `llama` (OpenAI kind, `/v1/chat/completions`) and `claude`
/// (Anthropic kind, `/v1/messages`) both at `server`, each model's window the server's,
/// and room for a queue: the tests share one single-slot server.
fn provider(server: &LlamaServer) -> Vec<String> {
    let mut flags = Vec::new();
    for (name, kind) in [("llama", "openai"), ("claude", "anthropic")] {
        flags.push(format!("providers.{name}.kind=\"{kind}\""));
        flags.push(format!("providers.{name}.base_url=\"{}\"", server.v1()));
        flags.push(format!("models.\"{name}/smollm2\".context_window=4096"));
        flags.push(format!("models.\"{name}/smollm2\".max_output_tokens=48"));
    }
    flags.push("llm.timeout_secs=600".into());
    flags.into_iter().flat_map(|f| ["--config".to_owned(), f]).collect()
}

fn convo(env: &TestEnv, server: &LlamaServer, global: &[&str], args: &[&str]) -> crate::common::Run {
    let mut all = provider(server);
    all.extend(global.iter().map(|s| s.to_string()));
    all.extend(args.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    crate::common::run_command(env.command(&refs), "")
}

fn events(env: &TestEnv) -> Vec<Value> {
    env.run(&["show", "--format", "jsonl"]).ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The answer's last event: where `model`, `usage` and the markers go.
fn last(env: &TestEnv) -> Value {
    events(env).pop().unwrap()
}

fn tokens(usage: &Value, field: &str) -> u64 {
    usage[field].as_u64().unwrap_or_else(|| panic!("usage without {field}: {usage}"))
}

/// The whole prompt a stored usage reports: input + cache read + cache write.
fn prompt(usage: &Value) -> u64 {
    let part = |field: &str| usage[field].as_u64().unwrap_or(0);
    let total = part("input_tokens") + part("cache_read_tokens") + part("cache_write_tokens");
    assert!(total > 0, "no prompt tokens in {usage}");
    total
}

/// Two streamed turns in one conversation through `model`: each stores the user message and
/// an answer with the model and usage; the second is sent the first.
fn two_turns(model: &str) {
    let server = llama_or_skip!();
    let env = TestEnv::new();
    env.new_conversation("llama");
    let mut inputs = Vec::new();
    for question in ["Name one colour.", "Name another one."] {
        let out = convo(&env, server, &[], &["query", "--model", model, question]);
        let stdout = out.ok();
        assert!(!stdout.trim().is_empty(), "nothing streamed\n{}", out.stderr);
        let answer = last(&env);
        assert_eq!(answer["type"], "assistant", "{answer}");
        assert_eq!(answer["content"].as_str().unwrap().trim(), stdout.trim());
        assert_eq!(answer["model"], model);
        assert!(answer.get("interrupted").is_none(), "{answer}");
        let output = tokens(&answer["usage"], "output_tokens");
        assert!(output > 0 && output <= 48, "models.<m>.max_output_tokens caps the answer: {answer}");
        assert!(answer["usage_raw"].is_object(), "the server's own usage kept: {answer}");
        inputs.push(prompt(&answer["usage"]));
    }
    let all = events(&env);
    let types: Vec<&str> = all.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["user", "assistant", "user", "assistant"]);
    // llama.cpp reuses the first turn's prompt: the Anthropic kind reports it as
    // `cache_read_input_tokens`, the OpenAI kind inside `prompt_tokens`; both count.
    assert!(inputs[1] > inputs[0], "the second turn carries the first: {inputs:?}");
    env.run(&["fsck"]).ok();
}

#[test]
fn openai_kind_streams_two_turns() {
    two_turns("llama/smollm2");
}

#[test]
fn anthropic_kind_streams_two_turns() {
    two_turns("claude/smollm2");
}

/// A Claude Code session from the corpus (its first subagent: one turn, ~700 tokens),
/// summarized by the model under the summary cap.
/// Instructions SmolLM2-135M answers within a few hundred tokens (convo's hand-off before it
/// asked for sections).
const INSTRUCTIONS: &str = "You are summarizing part of a conversation between a user and an AI coding assistant, \
so the assistant can continue the work without the original messages. Write a concise summary in plain prose and \
short lists. Keep: decisions and the reasons for them; file paths, functions and code structures that were read, \
created or changed; errors met and how they were resolved; the user's preferences and constraints; the current \
state of the task and the next steps. Omit: greetings and filler, plans that were later superseded, and tool \
output whose content is already reflected in what you keep. Do not invent anything.";

#[test]
fn an_imported_session_is_summarized_under_the_cap() {
    let server = llama_or_skip!();
    let env = TestEnv::new();
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    );
    env.run(&["import", file]).ok();
    let list = env.run(&["list", "--format", "json"]).ok().to_owned();
    let list: Value = serde_json::from_str(&list).unwrap();
    let sub = list
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["turns"] == 1 && c["events"] == 7)
        .unwrap_or_else(|| panic!("no one-turn subagent of 7 events: {list}"));
    let id = sub["id"].as_str().unwrap();
    let cap = 200;
    let out = convo(
        &env,
        server,
        &[
            "--config",
            &format!("compaction.max_summary_tokens={cap}"),
            "--config",
            "models.\"llama/smollm2\".max_output_tokens=1024",
            // The cap is the subject here, not the prompt: SmolLM2-135M writes the structured
            // hand-off (and other short prompts) on and on until any cap cuts it off.
            "--config",
            &format!("compaction.profiles.summarize.summary={{policy=\"summarize\", instructions={INSTRUCTIONS:?}}}"),
        ],
        &["compact", id, "-p", "summarize", "--model", "llama/smollm2", "--to", "0"],
    );
    out.ok();
    let jsonl = env.run(&["show", id, "--format", "jsonl"]).ok().to_owned();
    let compaction: Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    let summary = &compaction["summary"];
    assert_eq!(summary["by"], "llama/smollm2", "{compaction}");
    assert!(!summary["text"].as_str().unwrap().trim().is_empty());
    prompt(&summary["usage"]);
    let output = tokens(&summary["usage"], "output_tokens");
    // Within the cap, or (usage adds both calls) the cap and twice it after the one retry.
    assert!(output > 0 && output <= 3 * cap, "compaction.max_summary_tokens caps the summary: {summary}");
    env.run(&["fsck"]).ok();
}

/// Answers cut off at the cap: a turn is kept with the server's reason and a warning (both
/// kinds); a summary is retried once with twice the cap, then refused with nothing written.
#[test]
fn answers_cut_off_at_the_cap_are_never_silent() {
    let server = llama_or_skip!();
    let env = TestEnv::new();
    env.new_conversation("cut");
    for (model, reason) in [("llama/smollm2", "length"), ("claude/smollm2", "max_tokens")] {
        let cap = format!("models.\"{model}\".max_output_tokens=4");
        let out = convo(&env, server, &["--config", &cap], &["query", "--model", model, "Tell me about the sea."]);
        out.ok();
        assert!(
            out.stderr.contains(&format!("cut off at max_tokens 4 (finish_reason \"{reason}\")")),
            "{}",
            out.stderr
        );
        let answer = last(&env);
        assert_eq!(answer["finish_reason"], reason, "{answer}");
        assert_eq!(tokens(&answer["usage"], "output_tokens"), 4, "{answer}");
    }
    let before = env.snapshot();
    let out = convo(
        &env,
        server,
        &["--config", "compaction.max_summary_tokens=2"],
        &["compact", "--summarize", "--model", "llama/smollm2", "--to", "1"],
    );
    let stderr = out.fails_with(6);
    assert!(stderr.contains("the summary was cut off at max_tokens 4 (also after a retry"), "{stderr}");
    assert!(env.snapshot() == before, "a cut-off summary wrote something");
}

/// A conversation larger than the server's window (4096): with automatic compaction off,
/// refused before anything is sent; on, compacted first, then answered.
#[test]
fn a_conversation_over_the_window_is_compacted_first_or_refused() {
    let server = llama_or_skip!();
    let env = TestEnv::new();
    env.new_conversation("long");
    let prose = "The lighthouse keeper counted the ships that passed the rocks at night. ".repeat(45);
    for turn in 0..6 {
        env.run(&["append", "--user", &format!("Turn {turn}. {prose}")]).ok();
        env.run(&["append", "--assistant", &format!("Noted turn {turn}.")]).ok();
    }
    let auto = |on: bool| {
        [format!("compaction.auto.enabled={on}"), "compaction.keep_last=1".into()]
            .into_iter()
            .flat_map(|f| ["--config".to_owned(), f])
            .collect::<Vec<_>>()
    };
    let before = env.snapshot();
    let flags = auto(false);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let out = convo(&env, server, &flags, &["query", "--model", "llama/smollm2", "What did the keeper count?"]);
    let stderr = out.fails_with(3);
    assert!(stderr.contains("exceed llama/smollm2's window of 4096: not sent"), "{stderr}");
    assert!(stderr.contains("--compact"), "{stderr}");
    assert!(env.snapshot() == before);

    let flags = auto(true);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let out = convo(&env, server, &flags, &["query", "--model", "llama/smollm2", "What did the keeper count?"]);
    out.ok();
    assert!(out.stderr.contains("[context compacted"), "{}", out.stderr);
    let answer = last(&env);
    assert_eq!(answer["model"], "llama/smollm2");
    assert!(prompt(&answer["usage"]) < 4096, "{answer}");
    env.run(&["fsck"]).ok();
}

/// A conversation the estimate (chars/4) puts under the window but the server's tokenizer
/// does not (`x x x …` is a token per two characters): llama.cpp answers HTTP 400 "exceeds
/// the available context size"; with automatic compaction on, convo compacts and sends
/// once more.
#[test]
fn a_context_overflow_the_estimate_missed_is_compacted_and_retried() {
    let server = llama_or_skip!();
    let env = TestEnv::new();
    env.new_conversation("dense");
    let dense = "x ".repeat(1500);
    for turn in 0..3 {
        env.run(&["append", "--user", &format!("Turn {turn}. {dense}")]).ok();
        env.run(&["append", "--assistant", &format!("Noted turn {turn}.")]).ok();
    }
    let before = env.snapshot();
    let out = convo(&env, server, &[], &["query", "--model", "llama/smollm2", "How many turns?"]);
    let stderr = out.fails_with(6);
    assert!(stderr.contains("HTTP 400: ") && stderr.contains("exceeds the available context size"), "{stderr}");
    assert!(env.snapshot() == before);

    let auto = ["--config", "compaction.auto.enabled=true", "--config", "compaction.keep_last=1"];
    let out = convo(&env, server, &auto, &["query", "--model", "llama/smollm2", "How many turns?"]);
    out.ok();
    assert!(out.stderr.contains("compacted, sending again"), "{}", out.stderr);
    assert_eq!(last(&env)["model"], "llama/smollm2");
    env.run(&["fsck"]).ok();
}

/// The example session holds tool calls and their results: both kinds send them, raw and
/// compacted (tool parts stripped to placeholders that keep the trail: a call's short
/// arguments, a result's outcome and event id), and the server takes them.
#[test]
fn a_history_with_tool_calls_is_accepted_raw_and_compacted() {
    let server = llama_or_skip!();
    for model in ["llama/smollm2", "claude/smollm2"] {
        let env = TestEnv::new();
        env.new_conversation("tools");
        env.run_stdin(&["append"], include_str!("../../examples/login-bug.jsonl")).ok();
        let out = convo(&env, server, &[], &["query", "--model", model, "Summarize the fix in one line."]);
        out.ok();
        let raw = prompt(&last(&env)["usage"]);
        env.run(&["compact", "-p", "strip", "--keep-last", "0"]).ok();
        let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
        assert!(view.contains(r#""arguments":{"path":"src/auth/password.rs"}"#), "{view}");
        assert!(view.contains(r#""content":"[compacted …0000000B] success""#), "{view}");
        let out = convo(&env, server, &[], &["query", "--model", model, "And in one word?"]);
        out.ok();
        let compacted = last(&env);
        assert_eq!(compacted["model"], model);
        let compacted = prompt(&compacted["usage"]);
        assert!(raw > 0 && compacted > 0, "{model}: {raw} then {compacted}");
        env.run(&["fsck"]).ok();
    }
}

/// The server dies while it streams: what arrived is kept, marked interrupted; the store
/// stays valid. A server of its own, so the others' tests are not disturbed.
#[test]
fn a_server_killed_mid_stream_keeps_what_arrived() {
    let Some(server) = LlamaServer::start() else { return };
    let env = TestEnv::new();
    env.new_conversation("killed");
    let mut all = provider(&server);
    all.extend(["--config".into(), "models.\"llama/smollm2\".max_output_tokens=2000".into()]);
    all.extend(
        ["query", "--model", "llama/smollm2", "Write a long story about a lighthouse keeper."].map(String::from),
    );
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut cmd = env.command(&refs);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // The first streamed bytes, then the server goes.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    let n = std::io::Read::read(&mut stdout, &mut first).unwrap();
    assert!(n > 0, "nothing streamed before the kill");
    server.kill();
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let answer = last(&env);
    assert_eq!(answer["type"], "assistant", "{answer}");
    assert_eq!(answer["interrupted"], true, "{answer}");
    assert!(!answer["content"].as_str().unwrap().is_empty());
    // The usage comes after the last token: never counted, it is absent, not zeros.
    assert!(answer.get("usage").is_none(), "{answer}");
    env.run(&["fsck"]).ok();

    // Now nothing listens there: the error names the address, and nothing is written.
    let before = env.snapshot();
    let out = convo(&env, &server, &[], &["query", "--model", "llama/smollm2", "Still there?"]);
    let address = server.url.trim_start_matches("http://");
    let stderr = out.fails_with(6);
    assert!(stderr.contains(&format!("connection refused at {address}\n")), "{stderr}");
    assert!(env.snapshot() == before);
}

/// A prompt over the server's context that the estimate puts under it (`x x x …`, a token
/// per two characters; chars/4 sees half): llama.cpp's HTTP 400 with its own message,
/// nothing written.
#[test]
fn an_http_error_carries_the_servers_message() {
    let server = llama_or_skip!();
    let env = TestEnv::new();
    env.new_conversation("too long");
    let before = env.snapshot();
    let message = "x ".repeat(4500);
    let out = convo(&env, server, &[], &["query", "--model", "llama/smollm2", &message]);
    let stderr = out.fails_with(6);
    assert!(stderr.contains("HTTP 400: "), "{stderr}");
    assert!(stderr.contains("exceeds the available context size"), "the server's own words: {stderr}");
    assert!(env.snapshot() == before);
}

/// One prompt, then `files` files read (8 lines each), each followed by a long answer in
/// prose: what stripping tool calls cannot shrink, so a budget needs a summary.
fn reading_session(env: &TestEnv, files: usize) {
    let id = env.new_conversation("paths");
    let mut lines = vec![serde_json::json!({"type": "user", "content": "Find the flake."})];
    for i in 0..files {
        let out: Vec<String> =
            (0..8).map(|l| format!("// step {l}: the worker {i} retries the upload when the network drops.")).collect();
        lines.push(serde_json::json!({"type": "tool_call", "call_id": format!("c{i}"), "name": "Read",
            "arguments": {"file_path": format!("src/mod_{i}/file_{i}.rs")}}));
        lines.push(serde_json::json!({"type": "tool_result", "call_id": format!("c{i}"), "content": out.join("\n")}));
        let answer = format!(
            "Nothing in src/mod_{i}/file_{i}.rs: its retries are bounded and the timeout is set, so the flake is \
             elsewhere. Worker {i} opens its socket with a deadline of {i}0 seconds, logs each failed attempt with \
             the attempt number, and gives up after {} tries; the caller then marks upload {i} as failed and moves \
             on. The lock around the queue is taken once per batch, never held across the network call, and the \
             test for this module passed in the last run, so I will read the next module.",
            i + 3
        );
        lines.push(serde_json::json!({"type": "assistant", "content": answer}));
    }
    lines.push(serde_json::json!({"type": "assistant", "content": "Found it."}));
    append_events(env, &id, &lines);
}

/// Under `--budget`, a model summary covers only the oldest part needed and the rest stays
/// at a cheaper step's view: two compaction events in one commit, the view within the budget.
/// SmolLM2-135M writes on past the room the budget leaves it (300 tokens, 412 on the retry,
/// on this build): the digest over the same part stands in, and says so; a model that
/// stops in time has its summary stored. Either way the command succeeds.
#[test]
fn a_budget_summary_by_the_model_covers_only_the_oldest_part() {
    let server = llama_or_skip!();
    let env = TestEnv::new();
    reading_session(&env, 12);
    let (cap, budget) = (300, 1100);
    let out = convo(
        &env,
        server,
        &[
            "--config",
            &format!("compaction.max_summary_tokens={cap}"),
            "--config",
            "models.\"llama/smollm2\".max_output_tokens=2048",
            "--config",
            &format!(
                "compaction.profiles.handoff.summary={{policy=\"summarize\", model=\"llama/smollm2\", \
                 instructions={INSTRUCTIONS:?}}}"
            ),
        ],
        &["compact", "-p", "handoff", "--budget", &budget.to_string(), "--keep-recent-tools", "1"],
    );
    let stderr = out.ok_status();
    let stood_in = stderr.contains("warning: the model's summary was cut off at ");
    let by = if stood_in { "convo/digest" } else { "llama/smollm2" };
    assert!(stderr.contains(&format!("[summary by {by}] over the oldest part, [strip ")), "{stderr}");
    assert_eq!(stood_in, stderr.contains("; the digest stands in"), "{stderr}");
    let added = env.git(&["show", "--format=", "--unified=0", "HEAD"]);
    let compactions: Vec<Value> =
        added.lines().filter_map(|l| serde_json::from_str::<Value>(l.strip_prefix('+')?).ok()).collect();
    assert_eq!(compactions.len(), 2, "{added}");
    let (under, summary) = (&compactions[0], &compactions[1]);
    assert!(under["summary"].is_null() && under["laid_with"] == summary["id"], "{added}");
    assert_eq!(summary["summary"]["by"], by, "{added}");
    if !stood_in {
        let output = tokens(&summary["summary"]["usage"], "output_tokens");
        assert!(output > 0 && output <= 3 * cap, "{summary}");
    }
    // The summary covers the oldest part: it ends before the step under it does.
    assert_ne!(summary["to_event"], under["to_event"], "{added}");
    let after = summary["tokens"]["after"].as_u64().unwrap();
    assert!(after <= budget, "the view ({after}) within the budget ({budget}): {summary}");
    let shown = env.run(&["show", "--compacted"]).ok().to_owned();
    assert!(shown.contains(&format!("compacted view: ~{after} tokens")), "{shown}");
    // The newest files are at the cheaper step's view, not summarized.
    assert!(shown.contains("Nothing in src/mod_11/file_11.rs: its retries"), "{shown}");
    env.run(&["fsck"]).ok();
}
