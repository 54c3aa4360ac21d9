//! Agents' scaffolding (Codex's environment and permissions, Claude Code's `isMeta` caveat
//! and its `<synthetic>` "No response requested.") is kept and marked `meta`: it starts no
//! turn, the compacted view makes no `[no reply]` after it, and it is handed back to its own
//! agent only.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::follow::CODEX_0169;
use crate::handoff::{project, session_file};

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The one conversation's id.
fn only_id(env: &TestEnv) -> String {
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    list[0]["id"].as_str().unwrap().to_owned()
}

fn lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn texts(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap()
}

#[test]
fn codex_environment_and_permissions_are_no_turn_and_stay_with_codex() {
    let env = TestEnv::new();
    env.run(&["import", fixture(CODEX_0169).to_str().unwrap()]).ok();
    let id = only_id(&env);
    let events = lines(env.run(&["show", &id, "--format", "jsonl"]).ok());
    let meta: Vec<&str> = events
        .iter()
        .filter(|e| e["meta"] == json!(true))
        .map(|e| e["content"].as_str().unwrap().lines().next().unwrap())
        .collect();
    assert_eq!(meta, ["<skills_instructions>", "<environment_context>"]);

    // The environment is not turn 0: the first prompt is.
    let shown = env.run(&["show", &id]).ok().to_owned();
    let turn0 = shown.find("── turn 0 ──").unwrap();
    assert!(shown.find("<environment_context>").unwrap() < turn0, "{shown}");
    assert!(shown[turn0..].lines().nth(2).unwrap().contains("what is in notes.txt?"), "{shown}");
    assert!(!shown.contains("── turn 2 ──"), "{shown}");
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    assert_eq!(list[0]["turns"], json!(2), "{list}");
    assert_eq!(list[0]["title"], json!("what is in notes.txt?"));
    // Turn 0 holds what comes before it, the environment included, and starts at the prompt.
    let turn0 = lines(env.run(&["show", &id, "--turn", "0", "--format", "jsonl"]).ok());
    let prompt = turn0.iter().find(|e| e["type"] == json!("user") && e.get("meta").is_none()).unwrap();
    assert_eq!(prompt["content"], json!("what is in notes.txt?"));
    let turn1 = lines(env.run(&["show", &id, "--turn", "1", "--format", "jsonl"]).ok());
    assert_eq!(turn1[0]["content"], json!("anything else?"));

    // The compacted view keeps it as context: no placeholder reply after it.
    let view = env.run(&["show", &id, "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert!(!view.contains("[no reply]"), "{view}");
    assert_eq!(lines(&view).len(), events.len());

    // Claude Code makes its own environment: Codex's is not handed to it.
    let cwd = project(&env);
    let cwd_arg = cwd.to_str().unwrap();
    let session = env.run(&["resume", "--in", "claude-code", &id, "--cwd", cwd_arg]).ok().trim().to_owned();
    let claude = texts(&session_file(&env.home().join(".claude/projects"), &session));
    for tag in ["<environment_context>", "<permissions instructions>", "<skills_instructions>"] {
        assert!(!claude.contains(tag), "{tag} handed to Claude Code:\n{claude}");
    }
    assert!(claude.contains("what is in notes.txt?"));

    // Codex gets its own back as it wrote it.
    let session = env.run(&["resume", "--in", "codex", &id, "--cwd", cwd_arg]).ok().trim().to_owned();
    let rollout = lines(&texts(&session_file(&env.home().join(".codex/sessions"), &session)));
    let message = |role: &str, starts: &str| {
        rollout.iter().any(|r| {
            r["payload"]["role"] == json!(role)
                && r["payload"]["content"][0]["text"].as_str().is_some_and(|t| t.starts_with(starts))
        })
    };
    assert!(message("user", "<environment_context>"), "{rollout:?}");
    assert!(message("developer", "<skills_instructions>"), "{rollout:?}");
}

/// Claude Code's lines about lines: the caveat before a local command (`isMeta`) and the
/// "No response requested." it writes in the model's place (model `<synthetic>`).
#[test]
fn claude_code_caveats_and_synthetic_replies_are_no_turns() {
    let env = TestEnv::new();
    let cwd = project(&env);
    let line = |uuid: &str, parent: Option<&str>, kind: &str, message: Value, extra: Value| {
        let mut l = json!({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1",
            "timestamp": "2026-03-01T10:00:00.000Z", "cwd": cwd, "isSidechain": false, "message": message});
        l.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        l.to_string()
    };
    let user = |text: &str| json!({"role": "user", "content": text});
    let said = |model: &str, text: &str| {
        json!({"id": format!("msg_{}", text.len()), "role": "assistant", "model": model,
               "content": [{"type": "text", "text": text}]})
    };
    let session = [
        line("u1", None, "user", user("fix the parser"), json!({})),
        line("a1", Some("u1"), "assistant", said("claude-opus-4-1", "Fixed."), json!({})),
        line(
            "m1",
            Some("a1"),
            "user",
            user(
                "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
            ),
            json!({"isMeta": true}),
        ),
        line("c1", Some("m1"), "user", user("<command-name>/model</command-name>"), json!({})),
        line("s1", Some("c1"), "assistant", said("<synthetic>", "No response requested."), json!({})),
        line("u2", Some("s1"), "user", user("now the lexer"), json!({})),
        line("a2", Some("u2"), "assistant", said("claude-opus-4-1", "Done."), json!({})),
    ];
    let file = env.root.join("s1.jsonl");
    std::fs::write(&file, session.join("\n") + "\n").unwrap();
    env.run(&["import", file.to_str().unwrap()]).ok();
    let id = only_id(&env);
    let events = lines(env.run(&["show", &id, "--format", "jsonl"]).ok());
    let meta: Vec<&str> =
        events.iter().filter(|e| e["meta"] == json!(true)).map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(meta, ["m1", "s1"]);
    assert!(events.iter().all(|e| e.get("claude_meta").is_none()));
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    // The prompts and the command the user typed; not the caveat.
    assert_eq!(list[0]["turns"], json!(3), "{list}");
    let view = env.run(&["show", &id, "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert!(!view.contains("[no reply]"), "{view}");

    // Handed back to Claude Code as it was: the caveat still `isMeta`.
    let session =
        env.run(&["resume", "--in", "claude-code", &id, "--cwd", cwd.to_str().unwrap()]).ok().trim().to_owned();
    let written = lines(&texts(&session_file(&env.home().join(".claude/projects"), &session)));
    let caveat = written.iter().find(|l| l["message"]["content"].to_string().contains("Caveat:")).unwrap();
    assert_eq!(caveat["isMeta"], json!(true));
    assert!(written.iter().any(|l| l["message"]["model"] == json!("<synthetic>")));

    // Codex has no such lines: neither is handed to it.
    let session = env.run(&["resume", "--in", "codex", &id, "--cwd", cwd.to_str().unwrap()]).ok().trim().to_owned();
    let rollout = texts(&session_file(&env.home().join(".codex/sessions"), &session));
    assert!(!rollout.contains("Caveat:") && !rollout.contains("No response requested."), "{rollout}");
    assert!(rollout.contains("now the lexer"));
}

/// A real session of Claude Code 1.0.56 that opens with the caveat of a local command.
#[test]
fn an_older_claude_code_sessions_caveat_is_no_turn() {
    let file = fixture("../shared/corpus-older/claude-code/12a546d1-83a7-49a6-abba-5400db340b43.jsonl");
    if !file.exists() {
        return;
    }
    let env = TestEnv::new();
    env.run(&["import", file.to_str().unwrap()]).ok();
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let main = list.as_array().unwrap().iter().find(|c| c["subagent_of"].is_null()).unwrap();
    let id = main["id"].as_str().unwrap();
    let events = lines(env.run(&["show", id, "--format", "jsonl"]).ok());
    let caveats: Vec<&Value> =
        events.iter().filter(|e| e["content"].as_str().is_some_and(|c| c.starts_with("Caveat:"))).collect();
    assert_eq!(caveats.len(), 1);
    assert_eq!(caveats[0]["meta"], json!(true));
    let users = events.iter().filter(|e| e["type"] == json!("user")).count() as u64;
    assert_eq!(main["turns"], json!(users - 1), "{main}");
    let shown = env.run(&["show", id]).ok().to_owned();
    assert!(shown.find("Caveat:").unwrap() < shown.find("── turn 0 ──").unwrap());
}

/// A slash command's expanded template (a line Claude Code marks `isMeta`, not its caveat)
/// is what the model was asked: another agent is handed it as the user's words, and Claude
/// Code gets it back marked `isMeta`.
#[test]
fn a_commands_expanded_template_reaches_another_agent_and_stays_meta_for_claude_code() {
    let env = TestEnv::new();
    let proj = project(&env);
    let file = fixture("../shared/corpus/claude-code/ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl");
    let id = env.run(&["import", file.to_str().unwrap()]).ok().lines().next().unwrap().trim().to_owned();
    let template = "Split complex tasks into independent subtasks";
    let events = lines(env.run(&["show", &id, "--format", "jsonl"]).ok());
    let kept = events.iter().find(|e| e["content"].as_str().is_some_and(|c| c.starts_with(template))).unwrap();
    assert_eq!((&kept["type"], &kept["claude_meta"], kept.get("meta")), (&json!("user"), &json!(true), None));
    let resume = |agent: &str| {
        let mut cmd = env.command(&["resume", &id, "--in", agent]);
        cmd.current_dir(&proj);
        crate::common::run_command(cmd, "").ok().trim().to_owned()
    };
    std::fs::create_dir_all(env.home().join(".codex")).unwrap();
    std::fs::write(env.home().join(".codex/config.toml"), "model_provider = \"openai\"\n").unwrap();
    let codex = resume("codex");
    assert!(texts(&session_file(&env.home().join(".codex/sessions"), &codex)).contains(template));
    let claude = resume("claude-code");
    let written = lines(&texts(&session_file(&env.home().join(".claude/projects"), &claude)));
    let line = written.iter().find(|l| l.to_string().contains(template)).unwrap();
    assert_eq!(line["isMeta"], json!(true), "{line}");
}
