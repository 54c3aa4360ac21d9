//! `hooks.pre_compact` and `hooks.post_compact` end to end: the document a hook reads, a veto
//! (by exit status or timeout) that leaves the store byte for byte as it was, the post hook
//! after the commit, and hooks that content (a store's convo.toml) may never set.

use std::path::Path;

use crate::common::server::{Reply, Server};
use crate::common::{Run, TestEnv};

/// A conversation of four turns, each a user message, a tool call and its result, and an
/// answer.
fn record(env: &TestEnv) -> String {
    let id = env.new_conversation("hooked");
    let mut jsonl = String::new();
    for t in 0..4 {
        jsonl += &format!(
            "{{\"type\":\"user\",\"content\":\"request {t}\"}}\n\
             {{\"type\":\"reasoning\",\"content\":\"thinking about request {t}\"}}\n\
             {{\"type\":\"tool_call\",\"call_id\":\"c{t}\",\"name\":\"read\",\"arguments\":{{\"path\":\"f{t}\"}}}}\n\
             {{\"type\":\"tool_result\",\"call_id\":\"c{t}\",\"content\":\"{}\"}}\n\
             {{\"type\":\"assistant\",\"content\":\"done with {t}\"}}\n",
            "some output ".repeat(10)
        );
    }
    env.run_stdin(&["append", &id], &jsonl).ok();
    id
}

/// `convo --config hooks.KEY=COMMAND ... ARGS`.
fn with_hooks(env: &TestEnv, hooks: &[(&str, String)], args: &[&str]) -> Run {
    let mut all = Vec::new();
    for (key, command) in hooks {
        all.push("--config".to_owned());
        all.push(format!("hooks.{key}={}", toml_string(command)));
    }
    all.extend(args.iter().map(|a| a.to_string()));
    env.run(&all.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_pre_hook_reads_the_planned_compaction_and_the_post_hook_its_commit() {
    let env = TestEnv::new();
    record(&env);
    let (pre, post) = (env.root.join("pre.json"), env.root.join("post.json"));
    let hooks = [
        ("pre_compact", format!("cat > {}; echo checked >&2", path(&pre))),
        ("post_compact", format!("cat > {}", path(&post))),
    ];
    let out = with_hooks(&env, &hooks, &["compact", "--keep-last", "2"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    checked
    [01KDVDQ4K00000000000000001 538d9b6] compact: "hooked" turns 0-1 [strip reasoning, strip tool calls, over 50 bytes] ~181 -> 124 tokens
    "#);
    let head = env.git(&["rev-parse", "HEAD"]);
    insta::assert_snapshot!(std::fs::read_to_string(&pre).unwrap(), @r#"
    {"hook":"pre_compact","conversation":"01KDVDQ4K00000000000000001","title":"hooked","range":{"from_turn":0,"to_turn":1,"from_event":"01KDVDRZ600000000000000001","to_event":"01KDVDRZ60000000000000000A"},"policies":"[strip reasoning, strip tool calls, over 50 bytes]","profile":"default","tokens_before":181,"tokens_after":124}
    "#);
    let post: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&post).unwrap()).unwrap();
    assert_eq!(post["hook"], "post_compact");
    assert_eq!(post["commit"], head.trim(), "the post hook names the compaction's commit");
    let pre: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&pre).unwrap()).unwrap();
    for key in ["conversation", "title", "range", "policies", "profile", "tokens_before", "tokens_after"] {
        assert_eq!(pre[key], post[key], "{key}");
    }
    // A dry run runs no hook.
    std::fs::remove_file(env.root.join("pre.json")).unwrap();
    with_hooks(&env, &hooks, &["compact", "--dry-run", "--to", "2"]).ok();
    assert!(!env.root.join("pre.json").exists(), "--dry-run ran the pre_compact hook");
}

#[test]
fn a_failing_pre_hook_vetoes_and_the_store_is_unchanged() {
    let env = TestEnv::new();
    record(&env);
    let head = env.git(&["rev-parse", "HEAD"]);
    let before = env.snapshot();
    // Its stderr is shown, escaped: a hook may quote stored text.
    let hooks = [("pre_compact", "cat >/dev/null; printf 'not now\\033[31m\\n' >&2; exit 2".to_owned())];
    let out = with_hooks(&env, &hooks, &["compact", "--keep-last", "2"]);
    insta::assert_snapshot!(env.transcript(&out), @"
    exit 3
    --- stderr
    not now^[[31m
    error: the pre_compact hook exited with status 2: nothing was written
    hint: hooks.pre_compact in your config vetoed it; `--config hooks.pre_compact=` runs without it once
    ");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    assert!(env.snapshot() == before, "a vetoed compaction changed the store");
    // A hook that cannot be run vetoes too.
    let hooks = [("pre_compact", "/nonexistent/hook".to_owned())];
    let out = with_hooks(&env, &hooks, &["compact", "--keep-last", "2"]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(env.snapshot() == before, "a vetoed compaction changed the store");
    // `--config hooks.pre_compact=` runs without it, as the hint says.
    let out = env.run(&["--config", "hooks.pre_compact=", "compact", "--keep-last", "2"]);
    out.ok();
    assert_ne!(env.git(&["rev-parse", "HEAD"]), head);
}

#[test]
fn a_hanging_pre_hook_times_out_and_the_store_is_unchanged() {
    let env = TestEnv::new();
    record(&env);
    let before = env.snapshot();
    let start = std::time::Instant::now();
    let out = env.run(&[
        "--config",
        "hooks.timeout_secs=1",
        "--config",
        "hooks.pre_compact=\"echo waiting >&2; sleep 30\"",
        "compact",
    ]);
    assert!(start.elapsed() < std::time::Duration::from_secs(10), "took {:?}", start.elapsed());
    insta::assert_snapshot!(env.transcript(&out), @"
    exit 3
    --- stderr
    waiting
    error: the pre_compact hook timed out after 1s: nothing was written
    hint: hooks.pre_compact in your config vetoed it; `--config hooks.pre_compact=` runs without it once
    ");
    assert!(env.snapshot() == before, "a timed-out hook changed the store");
}

#[test]
fn a_failing_post_hook_is_a_warning_the_compaction_has_landed() {
    let env = TestEnv::new();
    record(&env);
    let hooks = [("post_compact", "echo cannot notify >&2; exit 1".to_owned())];
    let out = with_hooks(&env, &hooks, &["compact", "--keep-last", "2"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    cannot notify
    warning: the post_compact hook exited with status 1; the compaction has landed
    [01KDVDQ4K00000000000000001 538d9b6] compact: "hooked" turns 0-1 [strip reasoning, strip tool calls, over 50 bytes] ~181 -> 124 tokens
    "#);
    assert_eq!(env.git_status(), "");
    env.run(&["fsck"]).ok();
}

#[test]
fn what_the_pre_hook_prints_joins_the_summary_focus() {
    let env = TestEnv::new();
    record(&env);
    let reply = serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Reads of f0 and f1."}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 2}
    });
    let server = Server::start(vec![Reply::Json(200, vec![], reply.to_string())]);
    let out = env.run(&[
        "--config",
        "providers.test.kind=\"openai\"",
        "--config",
        &format!("providers.test.base_url=\"{}/v1\"", server.url),
        "--config",
        "hooks.pre_compact=\"echo the file names\"",
        "compact",
        "--summarize",
        "--model",
        "test/small",
        "--keep-last",
        "2",
        "--focus",
        "errors",
    ]);
    out.ok();
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body: serde_json::Value = serde_json::from_str(&requests[0].body).unwrap();
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.ends_with("Pay particular attention to: errors\nthe file names"), "{system}");
}

#[test]
fn a_stores_hooks_never_run() {
    let env = TestEnv::new();
    record(&env);
    let marker = env.root.join("pwned");
    // What a hostile remote could publish: convo.toml committed by another tool (`config
    // set` refuses to write it, below).
    let toml = format!(
        "[hooks]\npre_compact = {}\npost_compact = {}\n",
        toml_string(&format!("touch {}", path(&marker))),
        toml_string(&format!("touch {}", path(&marker)))
    );
    std::fs::write(env.store.join("convo.toml"), toml).unwrap();
    env.git(&["add", "convo.toml"]);
    env.git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "hooks for you"]);
    // Untrusted, and trusted: a store may name providers once trusted, never commands.
    let out = env.run(&["compact", "--keep-last", "3"]);
    assert!(out.stderr.starts_with("warning: ignored hooks.post_compact from convo.toml"), "{}", out.stderr);
    out.ok();
    assert!(!marker.exists(), "an untrusted store's hook ran");
    env.run(&["config", "trust", path(&env.store)]).ok();
    let out = env.run(&["compact", "--keep-last", "2"]);
    // The commit line's hash depends on the time git committed convo.toml: left out.
    let (warnings, commit) = out.stderr.split_at(out.stderr.find("\n[").unwrap() + 1);
    insta::assert_snapshot!(warnings, @r#"
    warning: ignored hooks.post_compact from convo.toml (only your own config may set it)
    warning: ignored hooks.pre_compact from convo.toml (only your own config may set it)
    hint: hooks run commands: only your own config sets them (`convo config set --user KEY VALUE`)
    "#);
    assert!(commit.contains("] compact: \"hooked\" turns 0-1"), "{commit}");
    assert_eq!(out.code, 0);
    assert!(!marker.exists(), "a store's hook ran");

    // Nor does a conversation's config event.
    let refused = env.run(&["config", "set", "--conversation", "hooks.pre_compact", "touch x"]);
    assert_eq!(refused.code, 3, "{refused:?}");
}

#[test]
fn config_set_refuses_hooks_outside_the_user_file() {
    let env = TestEnv::new();
    let before = env.snapshot();
    let out = env.run(&["config", "set", "--shared", "hooks.pre_compact", "x"]);
    insta::assert_snapshot!(env.transcript(&out), @"
    exit 3
    --- stderr
    error: `hooks.pre_compact`: hooks is read only from your own config, never from a store or conversation
    hint: hooks run commands: only your own config sets them (`convo config set --user KEY VALUE`)
    ");
    assert!(env.snapshot() == before);
    let out = env.run(&["config", "set", "--user", "hooks.pre_compact", "x"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    hooks.pre_compact = "x" in [ROOT]/home/.config/convo/config.toml
    "#);
    assert_eq!(env.run(&["config", "get", "hooks.pre_compact"]).ok(), "\"x\"\n");
}
