//! A conversation passed between agents and people keeps its shape: each agent is handed
//! only its own records (another agent's turns converted), a continuation from an earlier
//! point than the line's end goes on in a fork, and after a diverged pull a session's next
//! turn lands on the line it continues. Agents' additions are written here in their own
//! formats, as the agents append them (the hand-offs with the real agents are in
//! `handoff.rs`); the model's ids repeat across sessions, as a local model server's may.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::TwoPeople;
use crate::handoff::{project, session_file};

/// A real Claude Code 2.1 session: 40 tool calls, no subagent lines.
fn claude_session() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus-current/claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
}

/// `convo resume ARGS` run in `cwd`: the session id it printed.
fn resume(env: &TestEnv, cwd: &Path, args: &[&str]) -> String {
    let mut cmd = env.command(&[&["resume"], args].concat());
    cmd.current_dir(cwd);
    crate::common::run_command(cmd, "").ok().trim().to_owned()
}

/// The rollout Codex keeps session `session` in.
fn rollout(env: &TestEnv, session: &str) -> PathBuf {
    session_file(&env.home().join(".codex/sessions"), session)
}

/// Codex's records of one turn, appended to its rollout as Codex appends them: its turn
/// context, the prompt, a command that fails, and the answer. The response and call ids are
/// the same in every turn (a local model server that counts from 1 each run).
fn codex_turn(file: &Path, cwd: &Path, prompt: &str, answer: &str) {
    let ts = "2026-11-29T08:00:00.000Z";
    let records = [
        json!({"type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5.1-codex", "approval_policy": "never"}}),
        json!({"type": "event_msg", "payload": {"type": "task_started"}}),
        json!({"type": "response_item", "payload": {"type": "message", "id": "msg_1", "role": "user",
               "content": [{"type": "input_text", "text": prompt}]}}),
        json!({"type": "event_msg", "payload": {"type": "user_message", "message": prompt, "images": []}}),
        json!({"type": "response_item", "payload": {"type": "function_call", "id": "fc_1", "name": "exec_command",
               "arguments": "{\"cmd\":\"cargo test\"}", "call_id": "call_1"}}),
        json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "call_1",
               "output": "Exit code: 101\nOutput:\nerror[E0308]: mismatched types"}}),
        json!({"type": "response_item", "payload": {"type": "message", "id": "msg_2", "role": "assistant",
               "content": [{"type": "output_text", "text": answer}]}}),
        json!({"type": "event_msg", "payload": {"type": "task_complete", "last_agent_message": answer}}),
    ];
    let mut out = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    for mut r in records {
        r["timestamp"] = json!(ts);
        writeln!(out, "{r}").unwrap();
    }
}

/// Every conversation of the store: (id, title, forked_from, events).
fn conversations(env: &TestEnv) -> Vec<(String, String, Option<String>, Vec<Value>)> {
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id = c["id"].as_str().unwrap().to_owned();
            let events: Vec<Value> = env
                .run(&["show", &id, "--format", "jsonl"])
                .ok()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let mut ids = std::collections::HashSet::new();
            for e in &events {
                assert!(ids.insert(e["id"].as_str().unwrap().to_owned()), "an event twice in {id}: {e}");
            }
            let from = c["forked_from"]["id"].as_str().or_else(|| c["forked_from"].as_str()).map(str::to_owned);
            (id, c["title"].as_str().unwrap_or_default().to_owned(), from, events)
        })
        .collect()
}

/// The user prompts of a conversation's events, in order.
fn prompts(events: &[Value]) -> Vec<String> {
    events.iter().filter(|e| e["type"] == "user").map(|e| e["content"].as_str().unwrap().to_owned()).collect()
}

/// The types of records only other agents write: Codex's, Gemini CLI's, opencode's.
const FOREIGN: [&str; 7] =
    ["turn_context", "event_msg", "response_item", "session_meta", "world_state", "token_usage_record", "compacted"];

/// The lines of a Claude Code session file from its last message back to its first, as
/// Claude Code chains them (`parentUuid`, across a compaction `logicalParentUuid`).
fn claude_chain(file: &Path) -> Vec<Value> {
    let lines: Vec<Value> =
        std::fs::read_to_string(file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let by_uuid: std::collections::HashMap<&str, &Value> =
        lines.iter().filter_map(|l| Some((l["uuid"].as_str()?, l))).collect();
    let mut at = lines.iter().rev().find(|l| l["uuid"].is_string());
    let mut chain = Vec::new();
    while let Some(line) = at {
        chain.push(line.clone());
        let parent = line["parentUuid"].as_str().or_else(|| line["logicalParentUuid"].as_str());
        at = parent.map(|p| *by_uuid.get(p).unwrap_or_else(|| panic!("the chain breaks at {p}")));
    }
    chain.reverse();
    chain
}

/// The text a Claude Code line's message carries.
fn claude_text(line: &Value) -> String {
    match &line["message"]["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

#[test]
fn a_relayed_conversation_hands_each_agent_only_its_own_records() {
    let env = TestEnv::new();
    let proj = project(&env);
    env.run(&["import", claude_session().to_str().unwrap()]).ok();
    // Claude Code's session goes on in Codex, which adds two turns, captured after each.
    let in_codex = resume(&env, &proj, &["--in", "codex"]);
    let file = rollout(&env, &in_codex);
    codex_turn(&file, &proj, "codex one: run the tests", "They fail: a type mismatch.");
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    codex_turn(&file, &proj, "codex two: and again?", "Still failing.");
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    let [(_, _, _, events)] = &conversations(&env)[..] else { panic!("one conversation expected") };
    let expected = prompts(events);
    assert_eq!(expected.iter().filter(|p| p.starts_with("codex ")).count(), 2, "{expected:?}");

    // Back to Claude Code: its own lines as it wrote them, Codex's turns as text, and
    // nothing of Codex's own records.
    let back = resume(&env, &proj, &["--in", "claude-code"]);
    let file = session_file(&env.home().join(".claude/projects"), &back);
    let text = std::fs::read_to_string(&file).unwrap();
    for line in text.lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        let kind = line["type"].as_str().unwrap_or_else(|| panic!("a line without a type: {line}"));
        assert!(!FOREIGN.contains(&kind), "another agent's record in Claude Code's file: {line}");
    }
    assert!(!text.contains("\"name\":\"exec_command\""), "a Codex call written as a Claude tool_use");
    assert!(text.contains("[tool call: exec_command]"), "Codex's call is not there as text");
    // Every prompt is on the chain Claude Code sends, in order.
    let chain: Vec<String> = claude_chain(&file).iter().map(claude_text).collect();
    let mut at = 0;
    for prompt in &expected {
        let head: String = prompt.chars().take(60).collect();
        let found = chain[at..].iter().position(|t| t.contains(&head));
        at += found.unwrap_or_else(|| panic!("prompt {head:?} is not on the chain after line {at}")) + 1;
    }

    // And on to Codex again: Claude Code's records stay out of Codex's rollout.
    let again = resume(&env, &proj, &["--in", "codex"]);
    for line in std::fs::read_to_string(rollout(&env, &again)).unwrap().lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        assert!(line["payload"].is_object() && line.get("uuid").is_none(), "not a Codex record: {line}");
    }
}

/// A failed command from Codex's turn is stored with a result, once per turn, under ids of
/// its own though the model repeated them.
#[test]
fn a_model_that_repeats_its_ids_loses_no_turn() {
    let env = TestEnv::new();
    let proj = project(&env);
    env.run(&["import", claude_session().to_str().unwrap()]).ok();
    let file = rollout(&env, &resume(&env, &proj, &["--in", "codex"]));
    for n in 1..=3 {
        codex_turn(&file, &proj, &format!("turn {n}"), &format!("answer {n}"));
        let run = env.run(&["import", "--follow", file.to_str().unwrap()]);
        assert!(!run.stderr.contains("already used"), "{}", run.stderr);
        run.ok();
    }
    let [(_, _, _, events)] = &conversations(&env)[..] else { panic!("one conversation expected") };
    let said: Vec<&str> = events.iter().filter_map(|e| e["content"].as_str()).collect();
    for n in 1..=3 {
        assert!(said.contains(&format!("turn {n}").as_str()) && said.contains(&format!("answer {n}").as_str()));
    }
    let results =
        events.iter().filter(|e| e["type"] == "tool_result" && e["content"].as_str().unwrap().contains("E0308"));
    assert_eq!(results.count(), 3);
}

/// The conversation holding `prompt`, of those given.
fn holding<'a>(
    all: &'a [(String, String, Option<String>, Vec<Value>)],
    prompt: &str,
) -> Vec<&'a (String, String, Option<String>, Vec<Value>)> {
    all.iter().filter(|c| prompts(&c.3).iter().any(|p| p == prompt)).collect()
}

/// Two sessions resumed from one point, both carried on: two lines, one a fork of the
/// other, each holding the point's history once and its own turns in order; a session's
/// next capture lands on its own line. `folder`: captured in one `import DIR`.
fn two_continuations(folder: bool) {
    let env = TestEnv::new();
    let proj = project(&env);
    env.run(&["import", claude_session().to_str().unwrap()]).ok();
    let base = prompts(&conversations(&env)[0].3);
    let one = rollout(&env, &resume(&env, &proj, &["--in", "codex"]));
    let two = rollout(&env, &resume(&env, &proj, &["--in", "codex"]));
    codex_turn(&one, &proj, "first line", "one");
    codex_turn(&two, &proj, "second line", "two");
    let capture = |file: &Path| {
        if folder {
            env.run(&["import", env.home().join(".codex/sessions").to_str().unwrap()]).ok();
        } else {
            env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
        }
    };
    capture(&one);
    capture(&two);
    let all = conversations(&env);
    assert_eq!(all.len(), 2, "{:?}", all.iter().map(|c| &c.1).collect::<Vec<_>>());
    let (first, second) = (holding(&all, "first line"), holding(&all, "second line"));
    assert_eq!((first.len(), second.len()), (1, 1), "each line in one conversation");
    let (a, b) = (first[0], second[0]);
    assert_ne!(a.0, b.0, "two continuations interleaved in one conversation");
    let fork = if a.2.is_some() { a } else { b };
    let line = if a.2.is_some() { b } else { a };
    assert_eq!(fork.2.as_deref(), Some(line.0.as_str()));
    assert!(fork.1.ends_with("(went on in codex)"), "{}", fork.1);
    // The event it went on from: the last of the history before the point.
    let meta = env.git(&["show", &format!("HEAD:{}/meta.json", crate::common::conversation_dir(&fork.0))]);
    let meta: Value = serde_json::from_str(&meta).unwrap();
    assert!(meta["forked_at"].is_string(), "{meta}");
    for c in [fork, line] {
        assert!(c.3.iter().any(|e| e["id"] == meta["forked_at"]), "{meta}");
    }
    for c in [a, b] {
        let p = prompts(&c.3);
        assert_eq!(p[..base.len()], base[..], "the history before the point, once, in order");
        assert_eq!(p.len(), base.len() + 1);
    }
    // Each session's next turn goes to its own line.
    codex_turn(&two, &proj, "second line again", "two again");
    codex_turn(&one, &proj, "first line again", "one again");
    capture(&two);
    capture(&one);
    let all = conversations(&env);
    assert_eq!(all.len(), 2);
    assert_eq!(holding(&all, "second line again")[0].0, b.0);
    assert_eq!(holding(&all, "first line again")[0].0, a.0);
}

#[test]
fn two_continuations_of_one_point_end_in_two_lines() {
    two_continuations(false);
}

#[test]
fn two_continuations_captured_in_one_folder_import_end_in_two_lines() {
    two_continuations(true);
}

/// Two people sharing through a hub served by `git daemon`: Alice imports `session` (a
/// Claude Code session file) and pushes, Bob clones.
struct Team {
    alice: TestEnv,
    bob: TestEnv,
    _hub: crate::common::Served,
}

fn team(session: &Path, follow: bool) -> Team {
    let TwoPeople { a: alice, b: bob, url, served, .. } = crate::common::two_people();
    let import: &[&str] = if follow { &["import", "--follow"] } else { &["import"] };
    alice.run(&[import, &[session.to_str().unwrap()]].concat()).ok();
    alice.run(&["remote", "add", "origin", &url]).ok();
    alice.run(&["push"]).ok();
    bob.run(&["clone", &url, bob.store.to_str().unwrap()]).ok();
    Team { alice, bob, _hub: served }
}

/// Bob carries Alice's conversation on in Codex while Alice adds to it; his pull moves his
/// line into a fork, and his session's next turn lands there: not on Alice's line, not in a
/// third conversation, nothing stored twice.
#[test]
fn after_a_diverged_pull_a_session_goes_on_in_its_fork() {
    let Team { alice, bob, _hub } = team(&claude_session(), false);
    let proj = project(&bob);
    let id = conversations(&bob)[0].0.clone();
    let file = rollout(&bob, &resume(&bob, &proj, &[&id, "--in", "codex"]));
    codex_turn(&file, &proj, "bob one", "one");
    bob.run(&["import", "--follow", file.to_str().unwrap()]).ok();

    alice.run(&["append", "--user", "alice adds"]).ok();
    alice.run(&["push"]).ok();
    bob.run(&["pull"]).ok();
    codex_turn(&file, &proj, "bob two", "two");
    bob.run(&["import", "--follow", file.to_str().unwrap()]).ok();

    let all = conversations(&bob);
    assert_eq!(all.len(), 2, "{:?}", all.iter().map(|c| &c.1).collect::<Vec<_>>());
    let alices = holding(&all, "alice adds");
    let (one, two) = (holding(&all, "bob one"), holding(&all, "bob two"));
    assert_eq!((alices.len(), one.len(), two.len()), (1, 1, 1));
    assert_eq!(alices[0].0, id, "Alice's line keeps the id");
    assert_eq!(one[0].0, two[0].0, "Bob's session left its line");
    assert_ne!(one[0].0, id);
    let p = prompts(&one[0].3);
    assert_eq!(p[p.len() - 2..], ["bob one", "bob two"]);
    bob.run(&["fsck"]).ok();
}

/// One hop of the relay: who carries the conversation on, in which agent, raw or compacted.
struct Hop {
    person: usize,
    agent: &'static str,
    compacted: bool,
}

/// Where a relay stands: the people's stores, the conversation, what each prompt was.
struct Relay<'a> {
    people: [&'a TestEnv; 2],
    id: String,
    /// Every prompt so far, in order, and the first session's tool result.
    prompts: Vec<String>,
    first_result: String,
    /// The hop table: agent, raw/compacted, prompts and results sent against expected.
    table: Vec<String>,
}

/// `json` (a request body as JSON text) holds each of `markers`, in order.
fn in_order(json: &str, markers: &[String]) -> Result<(), String> {
    let mut at = 0;
    for m in markers {
        let escaped = serde_json::to_string(m).unwrap();
        match json[at..].find(&escaped[1..escaped.len() - 1]) {
            Some(i) => at += i + m.len(),
            None => return Err(format!("{m:?} missing (or out of order)")),
        }
    }
    Ok(())
}

impl Relay<'_> {
    /// One hop: resume, the agent takes a turn with a tool call, the turn is captured; the
    /// request holds everything before in order and the store every turn once, in order.
    fn hop(&mut self, n: usize, hop: &Hop) {
        use crate::common::agents::{
            Recorder, agents, codex_config, gemini_args, gemini_config, opencode_config, opencode_db, run_agent,
        };
        let agents = agents().unwrap();
        let env = self.people[hop.person];
        let proj = project(env);
        let prompt = format!("hop {n}: {} carries on", hop.agent);
        let mut args = vec![self.id.as_str(), "--in", hop.agent];
        if hop.compacted {
            // What is there so far compacted the default way, then handed over as compacted.
            env.run(&["compact", &self.id]).ok();
            args.push("--compacted");
        }
        // The user's Codex config names the provider its rollouts must name.
        if hop.agent == "codex" {
            codex_config(&env.home(), 0);
        }
        // Gemini CLI drops sessions older than 30 days: handed over at today's time.
        let mut cmd = env.command(&[&["resume"], &args[..]].concat());
        cmd.current_dir(&proj).env("CONVO_NOW", chrono::Utc::now().to_rfc3339());
        let session = crate::common::run_command(cmd, "").ok().trim().to_owned();
        let tool = match hop.agent {
            "claude-code" => json!({"name": "Bash", "input": {"command": "ls", "description": "List"}}),
            "codex" => json!({"name": "exec_command", "input": {"cmd": "ls"}}),
            "gemini-cli" => json!({"name": "run_shell_command", "input": {"command": "ls"}}),
            _ => json!({"name": "bash", "input": {"command": "ls", "description": "List"}}),
        };
        let script = json!([{"tool": tool}, {"text": format!("done with hop {n}")}]);
        let rec = Recorder::start(&env.root, &format!("hop{n}"), Some(&script));
        let home = env.home();
        let (run, captured) = match hop.agent {
            "claude-code" => {
                let run = run_agent(&agents.claude, &home, &proj, rec.port, &["-p", "--resume", &session, &prompt]);
                (run, session_file(&home.join(".claude/projects"), &session))
            }
            "codex" => {
                codex_config(&home, rec.port);
                let args = ["exec", "--skip-git-repo-check", "resume", &session, &prompt];
                (run_agent(&agents.codex, &home, &proj, rec.port, &args), rollout(env, &session))
            }
            "gemini-cli" => {
                gemini_config(&home);
                let args = gemini_args(&["--resume", &session], &prompt);
                let run = run_agent(&agents.gemini, &home, &proj, rec.port, &args);
                (run, crate::handoff::gemini_session(env, &session))
            }
            _ => {
                opencode_config(&home, rec.port);
                let args = ["run", "--auto", "--session", &session, &prompt];
                (run_agent(&agents.opencode, &home, &proj, rec.port, &args), opencode_db(&home))
            }
        };
        assert_eq!(run.code, 0, "hop {n} ({}): {}\n{}", hop.agent, run.stdout, run.stderr);
        // What the agent sent on its first request of the turn: every earlier prompt, and
        // raw the first session's tool result, in order.
        let first = rec.requests().into_iter().map(|r| r["body"].to_string()).find(|b| b.contains(&prompt));
        let sent = first.unwrap_or_else(|| panic!("hop {n}: no request with the prompt"));
        let mut expected = self.prompts.clone();
        if !hop.compacted {
            expected.insert(1, self.first_result.clone());
        }
        let held = expected.iter().filter(|m| in_order(&sent, std::slice::from_ref(m)).is_ok()).count();
        in_order(&sent, &expected).unwrap_or_else(|why| panic!("hop {n} ({}): {why}", hop.agent));
        self.table.push(format!(
            "| {n} | {} | {} | {} | {held}/{} |",
            ["Alice", "Bob"][hop.person],
            hop.agent,
            if hop.compacted { "compacted" } else { "raw" },
            expected.len()
        ));
        drop(rec);
        let captured = if hop.agent == "opencode" {
            env.run(&["import", captured.to_str().unwrap()])
        } else {
            env.run(&["import", "--follow", captured.to_str().unwrap()])
        };
        captured.ok();
        // `opencode run` quotes an argument with spaces in the message it makes of them.
        self.prompts.push(if hop.agent == "opencode" { format!("\"{prompt}\"") } else { prompt });
        self.check(env, n);
    }

    /// The store holds the conversation once, every prompt once, in order.
    fn check(&self, env: &TestEnv, n: usize) {
        let all = conversations(env);
        assert_eq!(all.len(), 1, "hop {n}: {:?}", all.iter().map(|c| &c.1).collect::<Vec<_>>());
        let said: Vec<String> = prompts(&all[0].3).into_iter().filter(|p| !p.starts_with('<')).collect();
        assert_eq!(said, self.prompts, "hop {n}: the conversation's prompts");
    }

    /// `from` pushes, `to` pulls.
    fn pass(&self, from: usize, to: usize) {
        self.people[from].run(&["push"]).ok();
        self.people[to].run(&["pull"]).ok();
    }
}

fn hop(person: usize, agent: &'static str, compacted: bool) -> Hop {
    Hop { person, agent, compacted }
}

/// A Claude Code session passes through all four agents and two people, raw and compacted,
/// sharing through a hub served by `git daemon`: at every hop the agent sends every earlier
/// prompt (and, raw, the first session's tool result) in order, and after every capture
/// the store holds every turn once, in order. Claude Code comes right after each other
/// agent.
#[test]
fn a_session_relayed_through_four_agents_and_two_people_keeps_its_shape() {
    relay(&[
        hop(1, "codex", false),
        hop(1, "claude-code", false),
        hop(1, "gemini-cli", false),
        hop(1, "claude-code", true),
        hop(0, "opencode", false),
        hop(0, "claude-code", false),
        hop(0, "codex", true),
        hop(0, "gemini-cli", false),
        hop(1, "opencode", true),
        hop(1, "claude-code", false),
    ]);
}

/// The relay again, in another order (a failure seen once in five runs must not pass by
/// luck): Claude Code right after a compacted Codex, Gemini CLI and opencode hand-over.
#[test]
fn a_session_relayed_in_another_order_keeps_its_shape() {
    relay(&[
        hop(0, "gemini-cli", true),
        hop(1, "claude-code", false),
        hop(1, "opencode", true),
        hop(0, "claude-code", false),
        hop(0, "codex", true),
        hop(1, "claude-code", true),
        hop(1, "codex", false),
        hop(0, "gemini-cli", false),
        hop(0, "claude-code", false),
    ]);
}

fn relay(hops: &[Hop]) {
    use crate::common::agents::{Recorder, agents, run_agent};
    let Some(agents) = agents() else { return };
    let TwoPeople { a: alice, b: bob, url, served: _served, .. } = crate::common::two_people();
    // Alice's own Claude Code session: a command and a file read.
    let proj = project(&alice);
    let script = json!([
        {"tool": {"name": "Bash", "input": {"command": "cat notes.txt", "description": "Show notes.txt"}}},
        {"tool": {"name": "Read", "input": {"file_path": proj.join("notes.txt")}}},
        {"text": "The file says: hello from notes."}
    ]);
    let rec = Recorder::start(&alice.root, "record", Some(&script));
    let first = "what is in notes.txt?";
    let run = run_agent(&agents.claude, &alice.home(), &proj, rec.port, &["-p", first]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(rec);
    let own = session_file(&alice.home().join(".claude/projects"), "");
    let id = alice.run(&["import", "--follow", own.to_str().unwrap()]).ok().lines().next().unwrap().trim().to_owned();
    alice.run(&["remote", "add", "origin", &url]).ok();
    alice.run(&["push"]).ok();
    bob.run(&["clone", &url, bob.store.to_str().unwrap()]).ok();
    // Each person's opencode has made its database, as a first run does.
    for env in [&alice, &bob] {
        crate::common::agents::opencode_config(&env.home(), 9);
        let run = run_agent(&agents.opencode, &env.home(), &project(env), 9, &["session", "list"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let mut relay = Relay {
        people: [&alice, &bob],
        id,
        prompts: vec![first.to_owned()],
        first_result: "hello from notes".to_owned(),
        table: Vec::new(),
    };
    relay.check(&alice, 0);
    relay.check(&bob, 0);
    let mut holder = 0;
    for (i, h) in hops.iter().enumerate() {
        if h.person != holder {
            relay.pass(holder, h.person);
            holder = h.person;
        }
        relay.hop(i + 1, h);
    }
    relay.pass(holder, 1 - holder);
    relay.check(relay.people[1 - holder], hops.len());
    eprintln!("| hop | person | agent | hand-over | prompts and results sent |\n|---|---|---|---|---|");
    for row in &relay.table {
        eprintln!("{row}");
    }
}

/// A hand-over is local until its session says something: `resume` makes no commit, and
/// the session's first capture commits its record with its turns.
#[test]
fn a_hand_over_makes_no_commit_and_its_first_capture_records_it() {
    let env = TestEnv::new();
    let proj = project(&env);
    env.run(&["import", claude_session().to_str().unwrap()]).ok();
    let head = || env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let before = head();
    let session = resume(&env, &proj, &["--in", "codex"]);
    assert_eq!(head(), before, "a hand-over made a commit");
    let id = conversations(&env)[0].0.clone();
    let meta = || env.git(&["show", &format!("HEAD:{}/meta.json", crate::common::conversation_dir(&id))]);
    assert!(!meta().contains(&session));
    codex_turn(&rollout(&env, &session), &proj, "a first turn", "done");
    env.run(&["import", "--follow", rollout(&env, &session).to_str().unwrap()]).ok();
    assert!(meta().contains(&session), "the first capture did not record the session");
    assert_eq!(env.git(&["rev-list", "--count", &format!("{before}..HEAD")]).trim(), "1");
    // Known by its name from then on: a plain import of the file is refused as captured.
    let again = env.run(&["import", rollout(&env, &session).to_str().unwrap()]);
    assert!(again.stderr.contains("captured"), "{}", again.stderr);
}

/// A session handed over on top of Bob's own turn, while Alice carried the conversation on:
/// Bob's pull moves his line into a fork, and the hand-over, not captured yet, goes with it:
/// its first turn lands after Bob's turn in the fork, not on Alice's line.
#[test]
fn a_hand_over_on_a_line_a_pull_moves_into_a_fork_continues_the_fork() {
    let Team { alice, bob, _hub } = team(&claude_session(), false);
    let proj = project(&bob);
    let id = conversations(&bob)[0].0.clone();
    bob.run(&["switch", &id]).ok();
    bob.run(&["append", "--user", "bob asks first"]).ok();
    let file = rollout(&bob, &resume(&bob, &proj, &[&id, "--in", "codex"]));
    alice.run(&["append", "--user", "alice adds"]).ok();
    alice.run(&["push"]).ok();
    bob.run(&["pull"]).ok();
    codex_turn(&file, &proj, "bob in codex", "done");
    bob.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    let all = conversations(&bob);
    assert_eq!(all.len(), 2, "{:?}", all.iter().map(|c| &c.1).collect::<Vec<_>>());
    let alices = holding(&all, "alice adds");
    let codex = holding(&all, "bob in codex");
    assert_eq!((alices.len(), codex.len()), (1, 1));
    assert_eq!(alices[0].0, id);
    assert_ne!(codex[0].0, id, "the hand-over's turn landed on Alice's line");
    let p = prompts(&codex[0].3);
    assert_eq!(p[p.len() - 2..], ["bob asks first", "bob in codex"]);
}

/// Alice's own Claude Code session, carried on by Bob in Codex (captured, pushed, pulled
/// back), then carried on by Alice in the session itself (Claude Code appends to its file):
/// two lines. Bob's turn stays on the conversation; Alice's next turn goes on in a fork from
/// where her session left it, without Bob's turn in between.
#[test]
fn a_native_session_carried_on_after_a_teammates_turns_goes_on_in_a_fork() {
    let copy = tempfile::tempdir().unwrap();
    let own = copy.path().join("ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl");
    std::fs::copy(claude_session(), &own).unwrap();
    let Team { alice, bob, _hub } = team(&own, true);
    let proj = project(&bob);
    let id = conversations(&bob)[0].0.clone();
    let file = rollout(&bob, &resume(&bob, &proj, &[&id, "--in", "codex"]));
    codex_turn(&file, &proj, "bob in codex", "done");
    bob.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    bob.run(&["push"]).ok();
    alice.run(&["pull"]).ok();

    // Alice's session goes on in Claude Code, from its own last line.
    let text = std::fs::read_to_string(&own).unwrap();
    let last: Value =
        text.lines().rev().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|l| l["uuid"].is_string()).unwrap();
    let line = |uuid: &str, parent: &str, kind: &str, said: &str| {
        json!({"parentUuid": parent, "isSidechain": false, "type": kind, "uuid": uuid,
               "sessionId": "ef958aa1-0e93-49f0-bb71-150f63befcd1", "timestamp": "2026-11-29T09:00:00.000Z",
               "message": {"role": kind, "content": [{"type": "text", "text": said}]}})
        .to_string()
            + "\n"
    };
    let more = line("9a1e1c1e-0000-4000-8000-000000000001", last["uuid"].as_str().unwrap(), "user", "alice goes on")
        + &line("9a1e1c1e-0000-4000-8000-000000000002", "9a1e1c1e-0000-4000-8000-000000000001", "assistant", "ok");
    std::fs::OpenOptions::new().append(true).open(&own).unwrap().write_all(more.as_bytes()).unwrap();
    alice.run(&["import", "--follow", own.to_str().unwrap()]).ok();

    let all = conversations(&alice);
    assert_eq!(all.len(), 2, "{:?}", all.iter().map(|c| &c.1).collect::<Vec<_>>());
    let (bobs, alices) = (holding(&all, "bob in codex"), holding(&all, "alice goes on"));
    assert_eq!((bobs.len(), alices.len()), (1, 1));
    assert_eq!(bobs[0].0, id, "Bob's turn stays on the conversation");
    let fork = alices[0];
    assert_ne!(fork.0, id);
    assert_eq!(fork.2.as_deref(), Some(id.as_str()));
    assert!(fork.1.ends_with("(went on in claude-code)"), "{}", fork.1);
    let p = prompts(&fork.3);
    assert!(!p.iter().any(|p| p == "bob in codex"), "Bob's turn is in Alice's line");
    assert_eq!(p.last().map(String::as_str), Some("alice goes on"));
}

/// `resume` for an agent that is not installed writes the session and says so, once: the
/// command it prints to carry on would not run.
#[test]
fn resume_says_when_the_agent_is_not_on_path() {
    let env = TestEnv::new();
    let proj = project(&env);
    env.new_conversation("t");
    env.run(&["append", "--user", "hi"]).ok();
    let bin = env.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let run = |path: &str| {
        let mut cmd = env.command(&["resume", "--in", "claude-code"]);
        cmd.current_dir(&proj).env("PATH", path);
        crate::common::run_command(cmd, "")
    };
    let without = run(bin.to_str().unwrap());
    assert!(without.ok_status().contains("warning: `claude` is not on PATH"), "{}", without.stderr);
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(bin.join("claude"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let with = run(bin.to_str().unwrap());
    assert!(!with.ok_status().contains("not on PATH"), "{}", with.stderr);
}
