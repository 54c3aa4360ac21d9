//! `convo resume`: a conversation handed back to the real agents (Claude Code, Codex,
//! Gemini CLI and opencode from npm, `common::agents`) makes them send what their own session file makes
//! them send, and what they add afterwards is captured into the same conversation. The safety rules of the
//! hand-off (nothing a conversation carries chooses a path; no file is ever replaced) are
//! tested without the agents.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::agents::{Recorder, agents, codex_config, gemini_args, gemini_config, run_agent};

macro_rules! agents_or_skip {
    () => {
        match agents() {
            Some(a) => a,
            None => return,
        }
    };
}

/// What Claude Code sent, as the model reads it: roles and blocks in order, without cache
/// markers, a tool result's text blocks as one string, `is_error: false` left out.
fn claude_messages(body: &Value) -> Value {
    let blocks = |content: &Value| -> Vec<Value> {
        let list = match content {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            _ => vec![],
        };
        list.into_iter()
            .map(|mut b| {
                if let Some(o) = b.as_object_mut() {
                    o.remove("cache_control");
                    if o.get("is_error") == Some(&Value::Bool(false)) {
                        o.remove("is_error");
                    }
                    if let Some(Value::Array(parts)) = o.get("content").cloned() {
                        let text: Vec<String> =
                            parts.iter().filter_map(|p| p["text"].as_str().map(str::to_owned)).collect();
                        o.insert("content".into(), json!(text.join("\n")));
                    }
                }
                b
            })
            .collect()
    };
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    Value::Array(messages.iter().map(|m| json!({"role": m["role"], "content": blocks(&m["content"])})).collect())
}

/// What Codex sent as history: each item's kind, role, text, call and output, without ids.
fn codex_items(body: &Value) -> Value {
    let items = body["input"].as_array().cloned().unwrap_or_default();
    Value::Array(
        items
            .iter()
            .map(|i| {
                let text = |v: &Value| -> String {
                    match v {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => {
                            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
                        }
                        _ => String::new(),
                    }
                };
                let args = i["arguments"].as_str().and_then(|a| serde_json::from_str::<Value>(a).ok());
                json!({
                    "type": i["type"], "role": i["role"], "text": text(&i["content"]),
                    "name": i["name"], "arguments": args, "input": i["input"],
                    "call_id": i["call_id"], "output": text(&i["output"]),
                    "summary": i["summary"], "encrypted_content": i["encrypted_content"],
                })
            })
            .collect(),
    )
}

/// Assert two normalised requests are equal, showing the first difference.
#[track_caller]
fn same_request(ours: &Value, theirs: &Value, what: &str) {
    if ours == theirs {
        return;
    }
    let (a, b) = (ours.as_array().cloned().unwrap_or_default(), theirs.as_array().cloned().unwrap_or_default());
    let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    panic!(
        "{what}: convo's session makes the agent send something else ({} items against {}), first at {at}:\nconvo's: {}\nagent's: {}",
        a.len(),
        b.len(),
        a.get(at).map(Value::to_string).unwrap_or_default(),
        b.get(at).map(Value::to_string).unwrap_or_default()
    );
}

pub(crate) fn project(env: &TestEnv) -> PathBuf {
    let dir = env.root.join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "hello from notes\n").unwrap();
    dir
}

/// The one session file under `dir` (at any depth) whose name contains `part`.
pub(crate) fn session_file(dir: &Path, part: &str) -> PathBuf {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") && p.to_string_lossy().contains(part) {
                found.push(p);
            }
        }
    }
    assert_eq!(found.len(), 1, "session files with {part:?} under {}: {found:?}", dir.display());
    found.remove(0)
}

fn stem_id(path: &Path) -> String {
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    stem[stem.len() - 36..].to_owned()
}

/// Resume `session` in Claude Code with `prompt`, and what it sent.
fn claude_resume(env: &TestEnv, cwd: &Path, name: &str, session: &str, prompt: &str) -> Value {
    let agents = agents().unwrap();
    let rec = Recorder::start(&env.root, name, None);
    let run = run_agent(&agents.claude, &env.home(), cwd, rec.port, &["-p", "--resume", session, prompt]);
    assert_eq!(run.code, 0, "claude --resume {session}: {}\n{}", run.stdout, run.stderr);
    rec.last_main_body()
}

fn codex_resume(env: &TestEnv, cwd: &Path, name: &str, session: &str, prompt: &str) -> Value {
    let agents = agents().unwrap();
    let rec = Recorder::start(&env.root, name, None);
    codex_config(&env.home(), rec.port);
    let args = ["exec", "--skip-git-repo-check", "resume", session, prompt];
    let run = run_agent(&agents.codex, &env.home(), cwd, rec.port, &args);
    assert_eq!(run.code, 0, "codex resume {session}: {}\n{}", run.stdout, run.stderr);
    rec.last_main_body()
}

/// Gemini CLI's session `session` under `home`: the file of that id with messages (a resume
/// that starts in another minute leaves a second one beside it, with none).
pub(crate) fn gemini_session(env: &TestEnv, session: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = files_under(&env.home().join(".gemini/tmp"))
        .into_iter()
        .map(|f| env.home().join(".gemini/tmp").join(f))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines().next().is_some_and(|l| l.contains(&format!("\"sessionId\":\"{session}\"")))
                && text.lines().any(|l| l.starts_with("{\"id\""))
        })
        .collect();
    assert_eq!(found.len(), 1, "Gemini CLI sessions {session}: {found:?}");
    found.remove(0)
}

/// Resume `session` in Gemini CLI with `prompt` (the recording server answering `script`),
/// and what it sent.
fn gemini_resume(env: &TestEnv, cwd: &Path, name: &str, session: &str, prompt: &str, script: Option<&Value>) -> Value {
    let agents = agents().unwrap();
    let rec = Recorder::start(&env.root, name, script);
    gemini_config(&env.home());
    let run = run_agent(&agents.gemini, &env.home(), cwd, rec.port, &gemini_args(&["--resume", session], prompt));
    assert_eq!(run.code, 0, "gemini --resume {session}: {}\n{}", run.stdout, run.stderr);
    rec.last_main_body()
}

/// `convo resume --in gemini-cli` run in `cwd` now, not at the sealed tests' frozen time:
/// Gemini CLI deletes a session last updated longer ago than it keeps them (30 days).
fn convo_resume_now(env: &TestEnv, cwd: &Path, args: &[&str]) -> String {
    let mut cmd = env.command(&[&["resume", "--in", "gemini-cli"], args].concat());
    cmd.current_dir(cwd).env("CONVO_NOW", chrono::Utc::now().to_rfc3339());
    crate::common::run_command(cmd, "").ok().trim().to_owned()
}

/// What Gemini CLI sent as history: its `contents`, as the model reads them.
fn gemini_contents(body: &Value) -> Value {
    body["contents"].clone()
}

/// `convo resume` run in `cwd`; the session id it printed.
fn convo_resume(env: &TestEnv, cwd: &Path, args: &[&str]) -> String {
    let mut cmd = env.command(&[&["resume"], args].concat());
    cmd.current_dir(cwd);
    let run = crate::common::run_command(cmd, "");
    run.ok().trim().to_owned()
}

/// The events `capture` appends to the active conversation.
fn events_added(env: &TestEnv, capture: impl FnOnce()) -> Vec<Value> {
    let before = env.run(&["show", "--format", "jsonl"]).ok().lines().count();
    capture();
    let after = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    after.lines().skip(before).map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_claude_code_session_resumed_from_convo_sends_what_its_own_file_sends() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    // Claude Code records a natural session of its own: a command, a file read, an answer.
    let script = json!([
        {"tool": {"name": "Bash", "input": {"command": "cat notes.txt", "description": "Show notes.txt"}}},
        {"tool": {"name": "Read", "input": {"file_path": proj.join("notes.txt")}}},
        {"text": "The file says: hello from notes."}
    ]);
    let rec = Recorder::start(&env.root, "record", Some(&script));
    let run = run_agent(&agents.claude, &env.home(), &proj, rec.port, &["-p", "what is in notes.txt?"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(rec);
    let own = session_file(&env.home().join(".claude/projects"), "");
    let own_id = stem_id(&own);
    env.run(&["import", "--follow", own.to_str().unwrap()]).ok();

    let ours = convo_resume(&env, &proj, &["--in", "claude-code"]);
    let theirs = claude_resume(&env, &proj, "theirs", &own_id, "and now?");
    let mine = claude_resume(&env, &proj, "ours", &ours, "and now?");
    same_request(&claude_messages(&mine), &claude_messages(&theirs), "claude-code");

    // The loop closes: what the agent added to convo's file comes back into the same
    // conversation, and nothing convo wrote comes back twice. Claude Code's Stop hook, as it
    // runs after the turn; a second capture of the same file finds nothing new.
    let file = session_file(&env.home().join(".claude/projects"), &ours);
    let added = events_added(&env, || {
        let hook = json!({"session_id": ours, "transcript_path": file, "hook_event_name": "Stop"}).to_string();
        env.run_stdin(&["hook", "claude-code"], &hook).ok();
        let again = env.run(&["import", "--follow", file.to_str().unwrap()]);
        assert!(again.stderr.contains("nothing new"), "{}", again.stderr);
    });
    let kinds: Vec<&str> = added.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "assistant"], "{added:?}");
    assert_eq!(added[0]["content"], "and now?");
    assert_eq!(env.run(&["list", "--format", "json"]).ok().matches("\"id\"").count(), 1);
}

#[test]
fn a_codex_session_resumed_from_convo_sends_what_its_own_rollout_sends() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let script = json!([
        {"tool": {"name": "exec_command", "input": {"cmd": "cat notes.txt"}}},
        {"text": "The file says: hello from notes."}
    ]);
    let rec = Recorder::start(&env.root, "record", Some(&script));
    codex_config(&env.home(), rec.port);
    let args = ["exec", "--skip-git-repo-check", "what is in notes.txt?"];
    let run = run_agent(&agents.codex, &env.home(), &proj, rec.port, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(rec);
    let own = session_file(&env.home().join(".codex/sessions"), "rollout-");
    let own_id = stem_id(&own);
    env.run(&["import", "--follow", own.to_str().unwrap()]).ok();

    let ours = convo_resume(&env, &proj, &["--in", "codex"]);
    let theirs = codex_resume(&env, &proj, "theirs", &own_id, "and now?");
    let mine = codex_resume(&env, &proj, "ours", &ours, "and now?");
    same_request(&codex_items(&mine), &codex_items(&theirs), "codex");

    let file = session_file(&env.home().join(".codex/sessions"), &ours);
    let added = events_added(&env, || {
        env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    });
    let users: Vec<&Value> = added.iter().filter(|e| e["type"] == "user").collect();
    assert!(users.iter().any(|e| e["content"] == "and now?"), "{added:?}");
    assert!(added.iter().any(|e| e["type"] == "assistant"), "{added:?}");
    assert!(!added.iter().any(|e| e["content"] == "what is in notes.txt?"), "convo's own lines came back: {added:?}");
}

/// The corpus's Claude Code sessions (older versions, from other machines): each, placed
/// where Claude Code looks and resumed, makes it send what convo's hand-over of its import
/// makes it send.
///
/// `corpus-current/claude-code/03eb5929…` branches (the user went back and asked again):
/// Claude Code resumes the chain of its last line, 13 messages; convo keeps every line, and
/// writes the branch back where it was, so the agent takes the same 13 from convo's file.
/// `ef958aa1…` (Claude Code 2.1.114, an agent team) renders its hooks' output and tool and
/// skill listings from attachments without `rendered` text, and a "Tool loaded." after each
/// ToolSearch result from its `tool_reference` blocks: convo keeps both as they came.
/// `corpus-older/claude-code/` (1.0.24, 1.0.56, 2.0.42: slash commands, their caveats and
/// output): 2.0.42's prompts after an `<ide_opened_file>` note are two text blocks of one
/// line, sent as two, and its `pnpm dev` run in the background makes Claude Code tell the
/// model the shell did not finish, which it reads from the result's `toolUseResult`.
#[test]
fn the_corpus_claude_code_sessions_resume_from_convo_as_from_their_own_files() {
    agents_or_skip!();
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let mut files: Vec<PathBuf> = ["corpus/claude-code"]
        .iter()
        .flat_map(|d| std::fs::read_dir(shared.join(d)).unwrap().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    files.push(shared.join("corpus-current/claude-code/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"));
    files.push(shared.join("corpus-current/claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"));
    let mut older: Vec<PathBuf> = std::fs::read_dir(shared.join("corpus-older/claude-code"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    older.sort();
    assert_eq!(older.len(), 3, "{older:?}");
    files.extend(older);
    for file in files {
        let env = TestEnv::new();
        let proj = project(&env);
        let text = std::fs::read_to_string(&file).unwrap();
        let session = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|l| l["sessionId"].as_str().map(str::to_owned))
            .expect("a sessionId");
        let folder = env.home().join(".claude/projects").join(convo_project(&proj));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("{session}.jsonl")), &text).unwrap();
        env.run(&["import", file.to_str().unwrap()]).ok();
        let ours = convo_resume(&env, &proj, &["--in", "claude-code"]);
        let theirs = claude_resume(&env, &proj, "theirs", &session, "and now?");
        let mine = claude_resume(&env, &proj, "ours", &ours, "and now?");
        same_request(&claude_messages(&mine), &claude_messages(&theirs), &file.display().to_string());
    }
}

/// A Claude Code session with its own `/compact`, imported, is handed back raw with that
/// compaction (the agent sends the summary and what follows); after `convo compact --undo`
/// of it, a raw hand-over is what `convo show` shows: the agent sends the history the user
/// asked back, not the summary.
#[test]
fn an_undone_compaction_of_the_agent_is_not_handed_back_as_its_compaction() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let script = json!([
        {"tool": {"name": "Bash", "input": {"command": "cat notes.txt", "description": "Show notes.txt"}}},
        {"text": "The file says: hello from notes."}
    ]);
    let rec = Recorder::start(&env.root, "record", Some(&script));
    let run = run_agent(&agents.claude, &env.home(), &proj, rec.port, &["-p", "what is in notes.txt?"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(rec);
    let own = session_file(&env.home().join(".claude/projects"), "");
    let own_id = stem_id(&own);
    let rec = Recorder::start(&env.root, "compact", None);
    let run = run_agent(&agents.claude, &env.home(), &proj, rec.port, &["-p", "--resume", &own_id, "/compact"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(rec);
    let text = std::fs::read_to_string(&own).unwrap();
    assert!(text.contains("\"isCompactSummary\":true"), "{text}");
    env.run(&["import", own.to_str().unwrap()]).ok();
    let shown = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let compaction: Value = shown
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "compaction")
        .unwrap_or_else(|| panic!("no compaction imported: {shown}"));
    let summary = compaction["summary"]["text"].as_str().unwrap().to_owned();
    let sent = |name: &str| -> String {
        let session = convo_resume(&env, &proj, &["--in", "claude-code"]);
        claude_messages(&claude_resume(&env, &proj, name, &session, "and now?")).to_string()
    };
    let before = sent("before");
    assert!(before.contains(&summary[..40]) && !before.contains("what is in notes.txt?"), "{before}");
    let id = compaction["id"].as_str().unwrap();
    env.run(&["compact", "--undo", id]).ok();
    let after = sent("after");
    assert!(!after.contains(&summary[..40]), "the summary was sent after its undo: {after}");
    for history in ["what is in notes.txt?", "cat notes.txt", "hello from notes"] {
        assert!(after.contains(history), "{history:?} not sent: {after}");
    }
}

fn convo_project(dir: &Path) -> String {
    dir.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// A long session handed over compacted makes the agent send under half of what the raw
/// hand-over makes it send, and the summary arrives as Claude Code's own compaction.
#[test]
fn a_compacted_hand_over_sends_under_half_of_the_raw_one() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/claude-code/ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl");
    env.run(&["import", file.to_str().unwrap()]).ok();
    let raw = convo_resume(&env, &proj, &["--in", "claude-code"]);
    env.run(&["compact", "--digest", "--to", "-0"]).ok();
    let compacted = convo_resume(&env, &proj, &["--in", "claude-code", "--compacted"]);
    let size = |body: &Value| claude_messages(body).to_string().len();
    let raw_sent = claude_resume(&env, &proj, "raw", &raw, "and now?");
    let compacted_sent = claude_resume(&env, &proj, "compacted", &compacted, "and now?");
    let (r, c) = (size(&raw_sent), size(&compacted_sent));
    assert!(c * 2 < r, "compacted {c} bytes against raw {r}");
    let written = std::fs::read_to_string(session_file(&env.home().join(".claude/projects"), &compacted)).unwrap();
    assert!(written.contains("\"subtype\":\"compact_boundary\""), "{written}");
    assert!(written.contains("\"isCompactSummary\":true"), "{written}");
}

/// A Codex conversation carries on in Claude Code and a Claude Code one in Codex: each
/// agent takes the other's history, tool calls and results as text it reads.
#[test]
fn a_conversation_crosses_between_the_agents_with_its_tool_calls_as_text() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let codex_file = shared.join("corpus-current/codex/vibecodingtracker__codex-0.39.jsonl");
    let out = env.run(&["import", codex_file.to_str().unwrap()]);
    let codex_id = out.ok().trim().to_owned();
    let claude_file = shared.join("corpus/claude-code/ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl");
    let out = env.run(&["import", claude_file.to_str().unwrap()]);
    let claude_id = out.ok().lines().next().unwrap().trim().to_owned();

    let in_claude = convo_resume(&env, &proj, &[&codex_id, "--in", "claude-code"]);
    let sent = claude_messages(&claude_resume(&env, &proj, "codex-in-claude", &in_claude, "and now?")).to_string();
    assert!(sent.contains("go.mod"), "the Codex prompt is not in what Claude Code sent");
    assert!(sent.contains("[tool call: shell]") || sent.contains("[tool call: "), "no tool call as text");
    assert!(!sent.contains("\"tool_use\""), "a Codex call was sent as a Claude tool_use");

    // The user's Codex config names its provider, which the rollout must name too.
    codex_config(&env.home(), 0);
    let in_codex = convo_resume(&env, &proj, &[&claude_id, "--in", "codex"]);
    let sent = codex_items(&codex_resume(&env, &proj, "claude-in-codex", &in_codex, "and now?")).to_string();
    assert!(sent.contains("[tool result: "), "no tool result as text");
    assert!(!sent.contains("\"function_call\""), "a Claude call was sent as a Codex function_call");
}

/// Every file under `dir`, relative to it.
pub(crate) fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// A conversation that arrives by `pull` carrying hostile values (a cwd, session id, title
/// and branch made to climb out of the agent's folder) writes one file, under a fresh UUID,
/// in the folder of the directory the user named, 0600, and nowhere else.
#[test]
fn hostile_values_in_a_pulled_conversation_choose_no_path() {
    let a = TestEnv::new();
    let planted = a.root.join("planted.jsonl");
    let evil = "../../../../../../tmp/evil";
    let lines = [
        json!({"type": "summary", "summary": "../../../.bashrc", "leafUuid": "u2"}),
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": evil, "cwd": evil, "gitBranch": "../../x",
               "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": "hi"}}),
        json!({"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": evil, "cwd": evil,
               "timestamp": "2026-01-01T00:00:01Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}}),
    ];
    std::fs::write(&planted, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    a.run(&["import", planted.to_str().unwrap()]).ok();
    let hub = crate::common::bare(&a.root, "hub");
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();

    let b = TestEnv::bare_at(5);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    let work = b.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let before = files_under(&b.root);
    for agent in ["claude-code", "codex", "gemini-cli"] {
        let session = convo_resume(&b, &work, &["../../../.bashrc", "--in", agent]);
        assert_eq!(session.len(), 36, "{session}");
        assert!(session.chars().all(|c| c.is_ascii_hexdigit() || c == '-'), "{session}");
    }
    let mut made: Vec<String> = files_under(&b.root).into_iter().filter(|f| !before.contains(f)).collect();
    made.retain(|f| !f.starts_with("store/"));
    // Gemini CLI's project folder for the directory, marked as Gemini CLI marks it.
    let markers = ["home/.gemini/history/work/.project_root", "home/.gemini/tmp/work/.project_root"];
    assert_eq!(made.len(), 5, "{made:?}");
    let project = convo_project(&work);
    assert!(made.iter().any(|f| f.starts_with(&format!("home/.claude/projects/{project}/"))), "{made:?}");
    assert!(made.iter().any(|f| f.starts_with("home/.codex/sessions/")), "{made:?}");
    assert!(made.iter().any(|f| f.starts_with("home/.gemini/tmp/work/chats/session-")), "{made:?}");
    assert!(markers.iter().all(|m| made.iter().any(|f| f == m)), "{made:?}");
    assert!(!Path::new("/tmp/evil").exists());
    for f in &made {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(b.root.join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{f}");
        let text = std::fs::read_to_string(b.root.join(f)).unwrap();
        assert!(!text.contains("tmp/evil"), "the recorded cwd or session id was written: {text}");
        if markers.contains(&f.as_str()) {
            assert_eq!(text, work.to_str().unwrap());
        }
    }
}

/// A session file already at the name a hand-over would take is never replaced: the
/// command fails with one line, the file and the store stay as they were.
#[test]
fn an_existing_session_file_is_never_replaced() {
    let env = TestEnv::new();
    env.new_conversation("kept");
    env.run(&["append", "--user", "hi"]).ok();
    let work = env.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // The same instant makes the same id: the second hand-over meets the first one's file.
    let at = "2026-03-01T00:00:00Z";
    let mut cmd = env.command(&["resume", "--in", "claude-code"]);
    cmd.current_dir(&work).env("CONVO_NOW", at);
    let first = crate::common::run_command(cmd, "");
    let session = first.ok().trim().to_owned();
    let file = session_file(&env.home().join(".claude/projects"), &session);
    std::fs::write(&file, "someone else's session\n").unwrap();
    let store = env.snapshot();
    let mut cmd = env.command(&["resume", "--in", "claude-code"]);
    cmd.current_dir(&work).env("CONVO_NOW", at);
    let again = crate::common::run_command(cmd, "");
    let stderr = again.fails_with(5);
    assert!(stderr.contains("a session file of that name exists"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "someone else's session\n");
    assert_eq!(env.snapshot(), store, "the store changed");
}

/// The corpus's Codex rollouts from other machines, and the 0.169 fixture the real Codex
/// recorded against the recording server (`follow::CODEX_0169`: two commands, an answer,
/// then a resumed turn), placed where Codex looks as if they had run here (this directory
/// for the recorded one, the test's provider for `openai`, which cannot be pointed at
/// loopback), make Codex send what convo's hand-over of their import makes it send.
///
/// And the 0.39 rollout compacted as Codex 0.104 records it (`compacted_rollouts`): the
/// agent sends the replacement history, or the history it rebuilds from the summary, from
/// convo's file as from its own, whether a turn, part of one or nothing follows.
///
/// Not `corpus/codex/…SCHEMA-FIXTURE.jsonl` (0.146's schema, trimmed): Codex 0.169 refuses
/// to resume that file itself, its `history_mode` being `default`, so there is nothing of
/// its own to compare against; the refusal is checked, so a Codex that takes it shows up.
#[test]
fn the_corpus_codex_sessions_resume_from_convo_as_from_their_own_files() {
    let agents = agents_or_skip!();
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let mut files: Vec<PathBuf> = ["corpus-current/codex"]
        .iter()
        .flat_map(|d| std::fs::read_dir(shared.join(d)).unwrap().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(crate::follow::CODEX_0169));
    let mut rollouts: Vec<(PathBuf, String)> =
        files.iter().map(|f| (f.clone(), std::fs::read_to_string(f).unwrap())).collect();
    let base = rollouts[0].1.clone();
    for (name, text) in compacted_rollouts(&base) {
        rollouts.push((PathBuf::from(name), text));
    }
    for (file, text) in rollouts {
        let env = TestEnv::new();
        let proj = project(&env);
        codex_config(&env.home(), 0);
        let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let session = meta["payload"]["id"].as_str().unwrap().to_owned();
        let recorded_cwd = meta["payload"]["cwd"].as_str().unwrap().to_owned();
        let here = text
            .replace(&format!("\"{recorded_cwd}"), &format!("\"{}", proj.display()))
            .replace("\"model_provider\":\"openai\"", "\"model_provider\":\"rec\"");
        let folder = env.home().join(".codex/sessions/2026/01/01");
        std::fs::create_dir_all(&folder).unwrap();
        let placed = folder.join(format!("rollout-2026-01-01T00-00-00-{session}.jsonl"));
        std::fs::write(&placed, &here).unwrap();
        env.run(&["import", placed.to_str().unwrap()]).ok();
        let ours = convo_resume(&env, &proj, &["--in", "codex"]);
        let theirs = codex_resume(&env, &proj, "theirs", &session, "and now?");
        let mine = codex_resume(&env, &proj, "ours", &ours, "and now?");
        same_request(&codex_items(&mine), &codex_items(&theirs), &file.display().to_string());
    }

    let env = TestEnv::new();
    let proj = project(&env);
    codex_config(&env.home(), 0);
    let text =
        std::fs::read_to_string(shared.join("corpus/codex/agent-sessions__stage0_codex_small.SCHEMA-FIXTURE.jsonl"))
            .unwrap()
            .replace("\"/tmp/repo", &format!("\"{}", proj.display()))
            .replace("\"model_provider\":\"openai\"", "\"model_provider\":\"rec\"");
    let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let session = meta["payload"]["id"].as_str().unwrap().to_owned();
    let folder = env.home().join(".codex/sessions/2026/01/01");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(format!("rollout-2026-01-01T00-00-00-{session}.jsonl")), &text).unwrap();
    let args = ["exec", "--skip-git-repo-check", "resume", &session, "and now?"];
    let run = run_agent(&agents.codex, &env.home(), &proj, 0, &args);
    assert_ne!(run.code, 0, "Codex resumed the schema fixture: {}", run.stdout);
    assert!(run.stderr.contains("history_mode: unknown variant `default`"), "{}", run.stderr);
}

/// `rollout`, compacted as Codex 0.104 records it, then carried on for a turn: its local
/// compaction (`compacted` with the summary and the `replacement_history` it sends instead:
/// the user's messages and the summary), its remote one (no message, the history alone), and
/// the record of the versions before `replacement_history` (the summary alone, from which
/// Codex rebuilds the history itself).
fn compacted_rollouts(rollout: &str) -> Vec<(&'static str, String)> {
    let ts = "2025-09-30T12:00:00.000Z";
    let user =
        |text: &str| json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]});
    let prompts: Vec<Value> = rollout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "response_item" && l["payload"]["role"] == "user")
        .map(|l| l["payload"].clone())
        .filter(|p| !p["content"][0]["text"].as_str().unwrap_or("").starts_with('<'))
        .collect();
    let summary = "Another language model started to solve this problem and produced a summary of its thinking process.\nThe notes are in zh-TW and zh-CN now.";
    let mut history = prompts.clone();
    history.push(user(summary));
    let context = rollout.lines().rev().find(|l| l.contains("\"type\":\"turn_context\"")).unwrap().to_owned();
    let after = |compacted: Value, turn: usize| -> String {
        let mut text = rollout.trim_end().to_owned();
        for record in [
            json!({"timestamp": ts, "type": "compacted", "payload": compacted}),
            json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "context_compacted"}}),
        ] {
            text.push('\n');
            text.push_str(&record.to_string());
        }
        if turn == 2 {
            text.push('\n');
            text.push_str(&context);
        }
        let items = [
            user("and the release notes?"),
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "They are in docs/."}]}),
        ];
        for item in &items[items.len() - turn..] {
            text.push('\n');
            text.push_str(&json!({"timestamp": ts, "type": "response_item", "payload": item}).to_string());
        }
        text.push('\n');
        text
    };
    vec![
        ("codex-0.104-local-compaction.jsonl", after(json!({"message": summary, "replacement_history": history}), 2)),
        ("codex-0.104-remote-compaction.jsonl", after(json!({"message": "", "replacement_history": history}), 2)),
        ("codex-compaction-without-history.jsonl", after(json!({"message": summary}), 2)),
        ("codex-0.104-mid-turn.jsonl", after(json!({"message": summary, "replacement_history": history}), 1)),
        ("codex-0.104-last.jsonl", after(json!({"message": summary, "replacement_history": history}), 0)),
        ("codex-without-history-last.jsonl", after(json!({"message": summary}), 0)),
    ]
}

/// What `resume` records as imported from the file it wrote (`drafts`, which a capture
/// that reads the file whole skips) is what convo's importer makes of that file, for every
/// corpus session and a conversation made by `append`, raw and compacted, in each agent.
#[test]
fn the_events_a_hand_over_counts_as_imported_are_those_its_file_imports_as() {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let mut files: Vec<PathBuf> = [
        "corpus/claude-code",
        "corpus/codex",
        "corpus-current/claude-code",
        "corpus-current/codex",
        "corpus-current/gemini-cli",
        "corpus-older/claude-code",
    ]
    .iter()
    .flat_map(|d| std::fs::read_dir(shared.join(d)).unwrap().flatten().map(|e| e.path()))
    .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
    .collect();
    files.sort();
    files.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(crate::follow::GEMINI_061));
    files.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/login-bug.jsonl"));
    for file in files {
        let env = TestEnv::new();
        let work = env.root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        if file.ends_with("login-bug.jsonl") {
            env.new_conversation("appended");
            env.run_stdin(&["append"], &std::fs::read_to_string(&file).unwrap()).ok();
        } else {
            env.run(&["import", file.to_str().unwrap()]).ok();
        }
        env.run(&["compact", "--to", "-1"]);
        for agent in ["claude-code", "codex", "gemini-cli"] {
            for compacted in [false, true] {
                let mut args = vec!["--in", agent];
                if compacted {
                    args.push("--compacted");
                }
                let session = convo_resume(&env, &work, &args);
                let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
                let id = list.as_array().unwrap().iter().find(|c| c["subagent_of"].is_null()).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                // The hand-over waits, local, for its first capture: no commit yet.
                let meta = env.git(&["show", &format!("HEAD:{}/meta.json", crate::common::conversation_dir(&id))]);
                assert!(!meta.contains(&session), "a hand-over was committed");
                let handovers = std::fs::read_to_string(env.store.join(".git/convo/handovers")).unwrap();
                let last: Value = serde_json::from_str(handovers.lines().last().unwrap()).unwrap();
                assert_eq!(last["conversation"], json!(id));
                let record = last["record"].clone();
                // Gemini CLI names a session's file by its first eight characters.
                let name = if agent == "gemini-cli" { format!("-{}.jsonl", &session[..8]) } else { session.clone() };
                let written = session_file(&env.home(), &name);
                let other = TestEnv::new();
                let out = other.run(&["import", written.to_str().unwrap()]);
                let imported: u64 = if out.code == 0 {
                    let list: Value = serde_json::from_str(other.run(&["list", "--format", "json"]).ok()).unwrap();
                    list[0]["events"].as_u64().unwrap()
                } else {
                    0
                };
                assert_eq!(
                    record["drafts"].as_u64(),
                    Some(imported),
                    "{} in {agent}, compacted {compacted}: {}",
                    file.display(),
                    out.stderr
                );
            }
        }
    }
}

/// Gemini CLI, driven by the scripted server, records a natural session of its current
/// version (a thought, a file read, a command, an answer): convo imports it message by
/// message, each once however often Gemini CLI wrote it, with its usage, title and directory.
fn natural_gemini_session(env: &TestEnv, proj: &Path) -> (PathBuf, String) {
    let agents = agents().unwrap();
    gemini_config(&env.home());
    let script = json!([
        {"thought": "**Reading the notes** The user wants the notes: I will read the file.",
         "tool": {"name": "read_file", "input": {"file_path": "notes.txt"}},
         "usage": {"promptTokenCount": 1200, "cachedContentTokenCount": 1024, "candidatesTokenCount": 30,
                   "thoughtsTokenCount": 20, "totalTokenCount": 1250}},
        {"tool": {"name": "run_shell_command", "input": {"command": "wc -l notes.txt"}}},
        {"text": "The file says: hello from notes (one line)."}
    ]);
    let rec = Recorder::start(&env.root, "record", Some(&script));
    let run = run_agent(&agents.gemini, &env.home(), proj, rec.port, &gemini_args(&[], "what is in notes.txt?"));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let own = session_file(&env.home().join(".gemini/tmp"), "session-");
    let header: Value = serde_json::from_str(std::fs::read_to_string(&own).unwrap().lines().next().unwrap()).unwrap();
    (own, header["sessionId"].as_str().unwrap().to_owned())
}

#[test]
fn a_natural_gemini_cli_session_imports_message_by_message() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let (own, _) = natural_gemini_session(&env, &proj);
    env.run(&["import", "--follow", own.to_str().unwrap()]).ok();
    let events: Vec<Value> =
        env.run(&["show", "--format", "jsonl"]).ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            format!("{} {}", e["type"].as_str().unwrap(), e["name"].as_str().unwrap_or_default()).trim().to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "reasoning",
            "tool_call read_file",
            "tool_result",
            "tool_call run_shell_command",
            "tool_result",
            "assistant"
        ]
    );
    assert_eq!(events[1]["content"], "The user wants the notes: I will read the file.");
    assert_eq!(events[1]["subject"], "Reading the notes");
    assert_eq!(events[3]["content"], "hello from notes\n");
    assert!(events[5]["content"].as_str().unwrap().contains("1 notes.txt"), "{}", events[5]);
    assert_eq!(
        events[1]["usage"],
        json!({"input_tokens": 176, "output_tokens": 50, "cache_read_tokens": 1024, "reasoning_tokens": 20})
    );
    assert_eq!(events[1]["model"], "gemini-2.5-flash");
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    assert_eq!(list[0]["title"], "what is in notes.txt?");
    assert_eq!(list[0]["cwd"], proj.to_str().unwrap());
}

/// A natural Gemini CLI session handed back raw makes Gemini CLI send what its own file
/// makes it send; and what Gemini CLI adds to convo's file comes back into the same
/// conversation, once.
#[test]
fn a_gemini_cli_session_resumed_from_convo_sends_what_its_own_file_sends() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let (own, own_id) = natural_gemini_session(&env, &proj);
    env.run(&["import", "--follow", own.to_str().unwrap()]).ok();

    let ours = convo_resume_now(&env, &proj, &[]);
    let theirs = gemini_resume(&env, &proj, "theirs", &own_id, "and now?", None);
    let mine = gemini_resume(&env, &proj, "ours", &ours, "and now?", None);
    same_request(&gemini_contents(&mine), &gemini_contents(&theirs), "gemini-cli");

    // The loop closes: the turn Gemini CLI added to convo's file, and nothing convo wrote.
    let file = gemini_session(&env, &ours);
    let added = events_added(&env, || {
        env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
        let again = env.run(&["import", "--follow", file.to_str().unwrap()]);
        assert!(again.stderr.contains("nothing new"), "{}", again.stderr);
    });
    let kinds: Vec<&str> = added.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "assistant"], "{added:?}");
    assert_eq!(added[0]["content"], "and now?");
    assert_eq!(env.run(&["list", "--format", "json"]).ok().matches("\"id\"").count(), 1);
}

/// The corpus's Gemini CLI session (2026-04, from another machine: `/init`'s GEMINI.md
/// analysis, with its info line and tool calls) and the 0.61 fixture (`follow::GEMINI_061`:
/// thoughts, a file read, a command, then its history compressed), each placed where Gemini
/// CLI finds its own sessions for this directory and resumed, make it send what convo's
/// hand-over of their import makes it send.
#[test]
fn the_corpus_and_fixture_gemini_cli_sessions_resume_from_convo_as_from_their_own_files() {
    agents_or_skip!();
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let files = [
        manifest.join("../shared/corpus-current/gemini-cli/vibecodingtracker__gemini.jsonl"),
        manifest.join(crate::follow::GEMINI_061),
    ];
    for file in files {
        let env = TestEnv::new();
        let proj = project(&env);
        gemini_config(&env.home());
        let text = std::fs::read_to_string(&file).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let session = header["sessionId"].as_str().unwrap().to_owned();
        // The folder convo's own hand-over takes for this directory, which Gemini CLI finds
        // by its marker; the file named as Gemini CLI names it, in this minute.
        let gemini = env.home().join(".gemini");
        let slug = convo::agents::gemini_cli::project(&gemini, proj.to_str().unwrap()).unwrap();
        let chats = gemini.join("tmp").join(slug).join("chats");
        std::fs::create_dir_all(&chats).unwrap();
        let minute = chrono::Utc::now().format("%Y-%m-%dT%H-%M");
        let placed = chats.join(format!("session-{minute}-{}.jsonl", &session[..8]));
        std::fs::write(&placed, &text).unwrap();
        env.run(&["import", placed.to_str().unwrap()]).ok();
        let ours = convo_resume_now(&env, &proj, &[]);
        let theirs = gemini_contents(&gemini_resume(&env, &proj, "theirs", &session, "and now?", None));
        let mine = gemini_contents(&gemini_resume(&env, &proj, "ours", &ours, "and now?", None));
        // More than a fresh session's context and prompt: Gemini CLI took the placed file in.
        assert!(theirs.as_array().unwrap().len() > 3, "{}: {theirs}", file.display());
        same_request(&mine, &theirs, &file.display().to_string());
    }
}

/// A Gemini CLI session whose history Gemini CLI compressed (resumed, it was told it had
/// used a million tokens) hands over raw and compacted: Gemini CLI sends for either what it
/// sends for its own file, the summary and what it kept.
#[test]
fn a_compressed_gemini_cli_session_resumes_raw_and_compacted_as_from_its_own_file() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    gemini_config(&env.home());
    let script = json!([
        {"tool": {"name": "read_file", "input": {"file_path": "notes.txt"}}},
        {"text": "The file says: hello from notes."}
    ]);
    let rec = Recorder::start(&env.root, "record", Some(&script));
    let run = run_agent(&agents.gemini, &env.home(), &proj, rec.port, &gemini_args(&[], "what is in notes.txt?"));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(rec);
    let own = session_file(&env.home().join(".gemini/tmp"), "session-");
    let header: Value = serde_json::from_str(std::fs::read_to_string(&own).unwrap().lines().next().unwrap()).unwrap();
    let own_id = header["sessionId"].as_str().unwrap().to_owned();
    let compress = json!([
        {"tool": {"name": "read_file", "input": {"file_path": "notes.txt"}},
         "usage": {"promptTokenCount": 1000000, "candidatesTokenCount": 5, "totalTokenCount": 1000005}},
        {"text": "Still: hello from notes."}
    ]);
    gemini_resume(&env, &proj, "compress", &own_id, "read it again", Some(&compress));
    let own = gemini_session(&env, &own_id);
    env.run(&["import", "--follow", own.to_str().unwrap()]).ok();
    let shown = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    assert_eq!(shown.matches("\"type\":\"compaction\"").count(), 1, "{shown}");

    let raw = convo_resume_now(&env, &proj, &[]);
    let compacted = convo_resume_now(&env, &proj, &["--compacted"]);
    let theirs = gemini_contents(&gemini_resume(&env, &proj, "theirs", &own_id, "and now?", None));
    let raw_sent = gemini_contents(&gemini_resume(&env, &proj, "raw", &raw, "and now?", None));
    let compacted_sent = gemini_contents(&gemini_resume(&env, &proj, "compacted", &compacted, "and now?", None));
    same_request(&raw_sent, &theirs, "gemini-cli raw");
    same_request(&compacted_sent, &theirs, "gemini-cli compacted");
    assert!(theirs.to_string().contains("Got it. Thanks for the additional context!"), "{theirs}");
}

/// A Gemini CLI conversation carries on in Claude Code and Codex, and a Codex one in Gemini
/// CLI: each agent takes the other's history, tool calls and results as text it reads.
#[test]
fn a_conversation_crosses_between_gemini_cli_and_the_other_agents_with_its_tool_calls_as_text() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let gemini_file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(crate::follow::GEMINI_061);
    let gemini_id = env.run(&["import", gemini_file.to_str().unwrap()]).ok().trim().to_owned();
    let codex_file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus-current/codex/vibecodingtracker__codex-0.39.jsonl");
    let codex_id = env.run(&["import", codex_file.to_str().unwrap()]).ok().trim().to_owned();

    let in_claude = convo_resume(&env, &proj, &[&gemini_id, "--in", "claude-code"]);
    let sent = claude_messages(&claude_resume(&env, &proj, "gemini-in-claude", &in_claude, "and now?")).to_string();
    assert!(sent.contains("[tool call: read_file]"), "{sent}");
    assert!(!sent.contains("\"tool_use\""), "a Gemini call was sent as a Claude tool_use");

    codex_config(&env.home(), 0);
    let in_codex = convo_resume(&env, &proj, &[&gemini_id, "--in", "codex"]);
    let sent = codex_items(&codex_resume(&env, &proj, "gemini-in-codex", &in_codex, "and now?")).to_string();
    assert!(sent.contains("[tool result: read_file]"), "{sent}");
    assert!(!sent.contains("\"function_call\""), "a Gemini call was sent as a Codex function_call");

    let in_gemini = convo_resume_now(&env, &proj, &[&codex_id]);
    let sent =
        gemini_contents(&gemini_resume(&env, &proj, "codex-in-gemini", &in_gemini, "and now?", None)).to_string();
    assert!(sent.contains("go.mod"), "the Codex prompt is not in what Gemini CLI sent");
    assert!(sent.contains("[tool call: "), "no tool call as text: {sent}");
    assert!(!sent.contains("functionCall"), "a Codex call was sent as a Gemini functionCall");
}

/// A rewind planted in a session Gemini CLI wrote (what `/rewind` appends, then a new turn):
/// convo keeps the line taken back and goes on in a fork, which, handed back, makes Gemini
/// CLI send what its own file makes it send.
#[test]
fn a_rewound_gemini_cli_session_resumes_from_its_fork_as_from_its_own_file() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let (own, own_id) = natural_gemini_session(&env, &proj);
    let text = std::fs::read_to_string(&own).unwrap();
    let last = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["type"] == "gemini")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = "2026-01-01T00:00:00.000Z";
    let planted = [
        json!({"$rewindTo": last}),
        json!({"id": "u-after", "timestamp": at, "type": "user", "content": [{"text": "count the words instead"}]}),
        json!({"id": "g-after", "timestamp": at, "type": "gemini", "content": "Four words.", "thoughts": [], "model": "gemini-2.5-flash"}),
    ];
    std::fs::write(&own, text + &planted.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    env.run(&["import", "--follow", own.to_str().unwrap()]).ok();
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let fork = list.as_array().unwrap().iter().find(|c| c["forked_from"].is_object()).expect("a fork").clone();
    assert_eq!(fork["title"], "what is in notes.txt? (after rewind 1)");

    let ours = convo_resume_now(&env, &proj, &[fork["id"].as_str().unwrap()]);
    let theirs = gemini_contents(&gemini_resume(&env, &proj, "theirs", &own_id, "and now?", None));
    let mine = gemini_contents(&gemini_resume(&env, &proj, "ours", &ours, "and now?", None));
    same_request(&mine, &theirs, "gemini-cli after a rewind");
    assert!(theirs.to_string().contains("count the words instead"), "{theirs}");
    assert!(!theirs.to_string().contains("hello from notes (one line)"), "{theirs}");
}

/// The harness the opencode tests stand on: opencode from npm runs offline against the
/// recording server (Chat Completions), executes the scripted tool calls and keeps the
/// session in its own database, where its `export` finds it.
#[test]
fn opencode_runs_offline_and_keeps_its_session_in_its_database() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let script = json!([
        {"tool": {"name": "read", "input": {"filePath": proj.join("notes.txt").to_str().unwrap()}}},
        {"tool": {"name": "bash", "input": {"command": "wc -l notes.txt", "description": "count lines"}}},
        {"text": "The file says hello."}
    ]);
    let (id, rec) = crate::common::agents::natural_opencode_session(
        &agents.opencode,
        &env.home(),
        &proj,
        &env.root,
        &script,
        "what is in notes.txt?",
    );
    assert!(crate::common::agents::opencode_db(&env.home()).is_file());
    let last = rec.last_main_body();
    let tool_results: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(tool_results.len(), 2, "{last}");
    assert!(tool_results[0].contains("hello from notes"), "{tool_results:?}");
    assert!(tool_results[1].contains("1 notes.txt"), "{tool_results:?}");
    let export = run_agent(&agents.opencode, &env.home(), &proj, rec.port, &["export", &id]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    let exported: Value = serde_json::from_str(&export.stdout).unwrap();
    let tools: Vec<&str> = exported["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .filter(|p| p["type"] == "tool")
        .map(|p| p["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read", "bash"]);
}

/// Gemini CLI's own hooks (`AfterAgent`, `SessionEnd`) running `convo hook gemini-cli`
/// record its session as it goes: the first turn as a new conversation, a resumed turn
/// appended to the same one, nothing twice however often the hooks fire.
#[test]
fn gemini_cli_hooks_record_its_session_into_one_conversation() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let hook = format!(
        "CONVO_DIR='{}' CONVO_NOW=2026-01-02T03:04:05Z '{}' hook gemini-cli",
        env.store.display(),
        env!("CARGO_BIN_EXE_convo")
    );
    let command = json!([{"hooks": [{"type": "command", "command": hook}]}]);
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "hooks": {"AfterAgent": command, "SessionEnd": command},
    });
    std::fs::create_dir_all(env.home().join(".gemini")).unwrap();
    std::fs::write(env.home().join(".gemini/settings.json"), settings.to_string()).unwrap();
    let script = json!([
        {"tool": {"name": "read_file", "input": {"file_path": "notes.txt"}}},
        {"text": "The file says hello."},
        {"text": "Still hello."}
    ]);
    let rec = Recorder::start(&env.root, "hooked", Some(&script));
    let run = run_agent(&agents.gemini, &env.home(), &proj, rec.port, &gemini_args(&[], "what is in notes.txt?"));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let kinds = |env: &TestEnv| -> Vec<String> {
        env.run(&["show", "--format", "jsonl"])
            .ok()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_owned())
            .collect()
    };
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(kinds(&env), ["user", "tool_call", "tool_result", "assistant"]);

    let own = session_file(&env.home().join(".gemini/tmp"), "session-");
    let header: Value = serde_json::from_str(std::fs::read_to_string(&own).unwrap().lines().next().unwrap()).unwrap();
    let session = header["sessionId"].as_str().unwrap();
    let run = run_agent(&agents.gemini, &env.home(), &proj, rec.port, &gemini_args(&["--resume", session], "and now?"));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(kinds(&env), ["user", "tool_call", "tool_result", "assistant", "user", "assistant"]);

    // A hook naming another session than its transcript's: refused, nothing written.
    let before = env.snapshot();
    let other = json!({"session_id": "0badcafe-0000-4000-8000-000000000000", "transcript_path": own});
    let refused = env.run_stdin(&["hook", "gemini-cli"], &other.to_string());
    assert!(refused.fails_with(3).contains("not the transcript of session 0badcafe"), "{}", refused.stderr);
    assert!(env.snapshot() == before);
}

/// Gemini CLI runs a subagent (its `invoke_agent` tool, the codebase investigator) and
/// keeps the subagent's work in a file of its own under the session's folder: convo
/// imports it as its own conversation linked to the session's, titled by its task (not by
/// the report it returned), whether the folder comes in at once or file by file.
#[test]
fn a_gemini_cli_subagent_is_its_own_conversation_linked_to_its_session() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    gemini_config(&env.home());
    let report = json!({"SummaryOfFindings": "notes.txt says hello", "ExplorationTrace": ["read notes.txt"], "RelevantLocations": []});
    let script = json!([
        {"tool": {"name": "invoke_agent", "input": {"agent_name": "codebase_investigator", "prompt": "What does notes.txt say?"}}},
        {"tool": {"name": "read_file", "input": {"file_path": "notes.txt"}}},
        {"tool": {"name": "complete_task", "input": {"report": report}}},
        {"text": "The notes say hello."}
    ]);
    let rec = Recorder::start(&env.root, "subagent", Some(&script));
    let run = run_agent(&agents.gemini, &env.home(), &proj, rec.port, &gemini_args(&[], "investigate the notes"));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let chats = env.home().join(".gemini/tmp/proj/chats");
    let main = session_file(&chats, "session-");
    let sub = files_under(&chats).into_iter().map(|f| chats.join(f)).find(|f| *f != main).expect("the subagent's file");
    let linked = |env: &TestEnv| -> Vec<(String, String, Option<String>)> {
        let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        let ids: Vec<&str> = list.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        list.as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let parent = c["subagent_of"].as_str().map(|p| ids.iter().position(|i| *i == p).unwrap().to_string());
                (c["title"].as_str().unwrap().chars().take(24).collect(), c["events"].to_string(), parent)
            })
            .collect()
    };
    let expected = [
        ("investigate the notes".to_owned(), "4".to_owned(), None),
        ("Your task is to do a dee".to_owned(), "5".to_owned(), Some("0".to_owned())),
    ];
    env.run(&["import", chats.to_str().unwrap()]).ok();
    assert_eq!(linked(&env), expected);

    let one_by_one = TestEnv::new();
    one_by_one.run(&["import", "--follow", main.to_str().unwrap()]).ok();
    one_by_one.run(&["import", sub.to_str().unwrap()]).ok();
    assert_eq!(linked(&one_by_one), expected);
}

/// Claude Code's `Stop` hook, configured as the README says, records every turn of a
/// `claude -p` session with tool calls whole, once: the prompt, each call and its result,
/// the answer; a second turn (`--resume`) lands in the same conversation.
#[test]
fn the_claude_code_stop_hook_alone_records_whole_turns() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let command = format!("CONVO_DIR={} {} hook claude-code", env.store.display(), env!("CARGO_BIN_EXE_convo"));
    let settings = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}});
    std::fs::create_dir_all(env.home().join(".claude")).unwrap();
    std::fs::write(env.home().join(".claude/settings.json"), settings.to_string()).unwrap();
    let turn = |prompt: &str, args: &[&str]| {
        let script = json!([
            {"tool": {"name": "Bash", "input": {"command": "cat notes.txt", "description": "Show notes.txt"}}},
            {"tool": {"name": "Read", "input": {"file_path": proj.join("notes.txt")}}},
            {"text": format!("Answered: {prompt}")}
        ]);
        let rec = Recorder::start(&env.root, prompt, Some(&script));
        let run = run_agent(&agents.claude, &env.home(), &proj, rec.port, &[args, &["-p", prompt]].concat());
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    };
    turn("first question", &[]);
    let session = stem_id(&session_file(&env.home().join(".claude/projects"), ""));
    turn("second question", &["--resume", &session]);
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let id = list[0]["id"].as_str().unwrap();
    let events: Vec<Value> =
        env.run(&["show", id, "--format", "jsonl"]).ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let said: Vec<String> = events
        .iter()
        .filter(|e| e["type"] != "reasoning")
        .map(|e| match e["type"].as_str().unwrap() {
            "user" | "assistant" => format!("{}: {}", e["type"].as_str().unwrap(), e["content"].as_str().unwrap()),
            other => other.to_owned(),
        })
        .collect();
    let one = |prompt: &str| {
        vec![
            format!("user: {prompt}"),
            "tool_call".to_owned(),
            "tool_result".to_owned(),
            "tool_call".to_owned(),
            "tool_result".to_owned(),
            format!("assistant: Answered: {prompt}"),
        ]
    };
    assert_eq!(said, [one("first question"), one("second question")].concat(), "{events:?}");
}
