//! Fixing mistakes: `rename`, `rm` and `restore` (each one commit, synced like any other),
//! and `redact` (the one rewrite of history, for commits no remote has). Refused input
//! changes nothing; removals never lose an event through a pull; a hostile remote cannot use
//! a removal to replace events.

use crate::common::{TestEnv, bare};
use crate::hostile_remotes::{World, commit, edit_segment, event_lines, read_tree, write_tree};

/// A store with two conversations: "first" (two events) and "second" (active, one event).
fn two_conversations() -> (TestEnv, String, String) {
    let env = TestEnv::new();
    let first = env.new_conversation("first");
    env.run(&["append", "--user", "hello"]).ok();
    env.run(&["append", "--assistant", "hi"]).ok();
    let second = env.new_conversation("second");
    env.run(&["append", "--user", "another"]).ok();
    (env, first, second)
}

#[test]
fn rename_commits_a_new_title_and_refused_renames_change_nothing() {
    let (env, first, _) = two_conversations();
    let out = env.run(&["rename", "second take"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDWMC00000000000000001 e351027] rename: "second" -> "second take"
    renamed the active conversation 01KDVDWM: "second" -> "second take"
    "#);
    let out = env.run(&["rename", &first[..12], "first, renamed"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 6742e72] rename: "first" -> "first, renamed"
    "#);
    insta::assert_snapshot!(env.run(&["list"]).ok(), @"
      01KDVDQ4 first, renamed  1 turn  2 events  ~2 tok  2026-01-01 00:03
    * 01KDVDWM second take     1 turn   1 event  ~2 tok  2026-01-01 00:05
    ");
    insta::assert_snapshot!(env.git(&["log", "--format=%s", "-2"]), @r#"
    rename: "first" -> "first, renamed"
    rename: "second" -> "second take"
    "#);

    let before = env.snapshot();
    let empty = env.run(&["rename", &first, "  "]);
    insta::assert_snapshot!(env.transcript(&empty), @"
    exit 3
    --- stderr
    error: a title must not be empty
    hint: nothing was written
    ");
    let unknown = env.run(&["rename", "nosuch", "x"]);
    insta::assert_snapshot!(env.transcript(&unknown), @r#"
    exit 4
    --- stderr
    error: no conversation matches `nosuch`
    hint: recent conversations: 01KDVDWMC00000000000000001 "second take", 01KDVDQ4K00000000000000001 "first, renamed"
    hint: name one by id or title, or a unique prefix of either; `convo list` shows all
    "#);
    let missing = env.run(&["rename"]);
    assert_eq!(missing.code, 2, "{missing:?}");
    // The same title again is a no-op, not an error.
    let same = env.run(&["rename", &first, "first, renamed"]);
    insta::assert_snapshot!(env.transcript(&same), @r#"
    exit 0
    --- stderr
    01KDVDQ4K00000000000000001 is already titled "first, renamed"; nothing to do
    "#);
    assert!(env.snapshot() == before, "a refused or empty rename changed the store");
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

#[test]
fn rm_takes_a_conversations_subagents_with_it_and_never_draws_an_orphan_under_a_stranger() {
    let env = TestEnv::new();
    let session = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl");
    let parent = env.run(&["import", session.to_str().unwrap()]).ok().trim().to_owned();
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let subagents: Vec<String> = rows
        .iter()
        .filter(|r| r["subagent_of"] == parent.as_str())
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(subagents.len(), 2);
    env.new_conversation("unrelated");

    let rm = env.run(&["rm", &parent]);
    rm.ok();
    assert!(
        rm.stderr.contains(&format!("Also removed 2 subagent conversations: {}, {}", subagents[0], subagents[1])),
        "{}",
        rm.stderr
    );
    assert!(rm.stderr.contains(&format!("`convo restore {parent}` brings it back")), "{}", rm.stderr);
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    assert_eq!(rows.iter().map(|r| r["title"].as_str().unwrap()).collect::<Vec<_>>(), ["unrelated"]);
    env.run(&["fsck"]).ok();

    // One subagent brought back alone has no parent to sit under: it is not drawn as the
    // work of the conversation listed above it.
    env.run(&["restore", &subagents[0]]).ok();
    let listed = env.run(&["list"]).ok().to_owned();
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(!listed.contains('└'), "{listed}");
}

#[test]
fn rm_hides_a_conversation_and_restore_brings_it_back_as_it_was() {
    let (env, first, second) = two_conversations();
    let shown = env.run(&["show", &second, "--format", "jsonl"]).ok().to_owned();
    let rm = env.run(&["rm", "second"]);
    insta::assert_snapshot!(env.transcript(&rm), @r#"
    exit 0
    --- stderr
    [01KDVDWMC00000000000000001 bd3e912] rm: "second"
    `convo restore 01KDVDWMC00000000000000001` brings it back
    "#);
    insta::assert_snapshot!(env.run(&["list"]).ok(), @"  01KDVDQ4 first  1 turn  2 events  ~2 tok  2026-01-01 00:03");
    // It no longer resolves, and the active pointer (it was active) does not dangle.
    assert_eq!(env.run(&["show", &second]).code, 4);
    insta::assert_snapshot!(env.transcript(&env.run(&["show"])), @"
    exit 4
    --- stderr
    error: no active conversation
    hint: name a conversation, `convo switch ID`, or start one with `convo new`
    ");
    assert_eq!(env.git_status(), "");
    env.run(&["fsck"]).ok();

    insta::assert_snapshot!(env.run(&["restore", "--list"]).ok(), @r#"01KDVDWMC00000000000000001 16bce7f "second""#);
    let restore = env.run(&["restore", &second[..12]]);
    insta::assert_snapshot!(env.transcript(&restore), @r#"
    exit 0
    --- stderr
    [01KDVDWMC00000000000000001 10c2c34] restore: "second" from 16bce7f
    "#);
    assert_eq!(env.run(&["show", &second, "--format", "jsonl"]).ok(), shown);
    insta::assert_snapshot!(env.run(&["log", &second, "--oneline"]).ok(), @r#"
    10c2c34 2026-01-01 restore: "second" from 16bce7f [1 turn, 1 event, ~2 tokens (chars/4)]
    bd3e912 2026-01-01 rm: "second"
    16bce7f 2026-01-01 append: "second" turn 0 (+1 event) [1 turn, 1 event, ~2 tokens (chars/4)]
    f4ee8e0 2026-01-01 new: "second" [0 turns, 0 events, ~0 tokens (chars/4)]
    "#);
    assert_eq!(env.run(&["restore", "--list"]).ok(), "");
    assert_eq!(env.git_status(), "");
    env.run(&["fsck"]).ok();
    // The other conversation was never touched.
    assert_eq!(env.run(&["show", &first, "--format", "jsonl"]).ok().lines().count(), 2);
}

#[test]
fn rm_of_several_is_one_commit_and_an_unknown_name_removes_nothing() {
    let (env, first, second) = two_conversations();
    let before = env.snapshot();
    let bad = env.run(&["rm", &first, "nosuch"]);
    insta::assert_snapshot!(env.transcript(&bad), @r#"
    exit 4
    --- stderr
    error: no conversation matches `nosuch`
    hint: recent conversations: 01KDVDWMC00000000000000001 "second", 01KDVDQ4K00000000000000001 "first"
    hint: name one by id or title, or a unique prefix of either; `convo list` shows all
    "#);
    assert!(env.snapshot() == before, "a refused rm changed the store");
    let restore = env.run(&["restore", &first]);
    insta::assert_snapshot!(env.transcript(&restore), @"
    exit 3
    --- stderr
    error: conversation 01KDVDQ4K00000000000000001 is in the store; there is nothing to restore
    hint: `convo restore` brings back a conversation `convo rm` removed
    ");
    let unknown = env.run(&["restore", "nosuch"]);
    insta::assert_snapshot!(env.transcript(&unknown), @"
    exit 4
    --- stderr
    error: no removed conversation matches `nosuch`
    hint: `convo restore --list` shows the removed conversations history still holds
    ");
    assert!(env.snapshot() == before, "a refused restore changed the store");

    let both = env.run(&["rm", &first, &second]);
    insta::assert_snapshot!(env.transcript(&both), @r#"
    exit 0
    --- stderr
    [cf0b07b] rm: 2 conversations ("first", "second")
    `convo restore ID` brings one back; `convo restore --list` lists them
    "#);
    assert_eq!(env.run(&["list"]).ok(), "");
    assert_eq!(env.git(&["ls-tree", "HEAD"]), "");
    assert_eq!(env.git_status(), "");
    env.run(&["fsck"]).ok();
}

#[test]
fn a_removal_travels_through_push_and_pull_and_stays_restorable() {
    let w = World::new();
    let ours = event_lines(&w.b);
    w.a.run(&["rm", "shared"]).ok();
    w.a.run(&["push"]).ok();
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @"
    exit 0
    --- stderr
    Fast-forward to 27fa7c3
    removed: 01KDVDQ4K00000000000000001: the remote's line removes it; `convo restore 01KDVDQ4K00000000000000001` brings it back
    ");
    assert_eq!(w.b.run(&["list"]).ok(), "");
    assert_eq!(w.b.git_status(), "");
    w.b.run(&["fsck"]).ok();
    w.b.run(&["restore", &w.id]).ok();
    assert_eq!(event_lines(&w.b), ours);
    w.b.run(&["push"]).ok();
    // And the restore travels back.
    let pull = w.a.run(&["pull"]);
    insta::assert_snapshot!(w.a.transcript(&pull), @"
    exit 0
    --- stderr
    Fast-forward to fa054ef: 1 conversation (1 new), 3 events
    ");
    assert_eq!(event_lines(&w.a), ours);
}

#[test]
fn a_removal_there_and_appends_here_keep_the_appends() {
    let w = World::new();
    w.a.run(&["rm", "shared"]).ok();
    w.a.run(&["push"]).ok();
    w.b.run(&["append", "--user", "still talking"]).ok();
    let ours = event_lines(&w.b);
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @"
    exit 0
    --- stderr
    Merged 87fde8a
    kept: 01KDVDQ4K00000000000000001: the remote's line removes this conversation; yours stays
    ");
    assert_eq!(event_lines(&w.b), ours);
    w.b.run(&["fsck"]).ok();
}

#[test]
fn a_removal_here_and_appends_there_bring_it_back_with_the_appends() {
    let w = World::new();
    w.a.run(&["append", "--user", "more from a"]).ok();
    w.a.run(&["push"]).ok();
    w.b.run(&["rm", "shared"]).ok();
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @"
    exit 0
    --- stderr
    Merged de40773: 1 conversation (1 updated), 1 event
    restored: 01KDVDQ4K00000000000000001: you removed it and the remote's line appended to it; it is back
    ");
    assert_eq!(event_lines(&w.b), event_lines(&w.a));
    w.b.run(&["fsck"]).ok();
    assert_eq!(w.b.git_status(), "");
}

#[test]
fn a_rename_on_each_side_keeps_the_remotes_title_and_a_rename_meets_appends_without_a_fork() {
    let w = World::new();
    // Renamed here, appended there: both kept, no fork.
    w.a.run(&["append", "--user", "from a"]).ok();
    w.a.run(&["push"]).ok();
    w.b.run(&["rename", "b's title"]).ok();
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @"
    exit 0
    --- stderr
    Merged 3b35849: 1 conversation (1 updated), 1 event
    ");
    insta::assert_snapshot!(w.b.run(&["list"]).ok(), @"* 01KDVDQ4 b's title  3 turns  4 events  ~6 tok  2026-01-01 00:07");
    assert_eq!(event_lines(&w.b), event_lines(&w.a));
    w.b.run(&["push"]).ok();
    w.a.run(&["pull"]).ok();

    // Renamed on both sides: the remote's title wins (as convo.toml does).
    w.a.run(&["rename", &w.id, "a's title"]).ok();
    w.a.run(&["push"]).ok();
    w.b.run(&["rename", "b's second title"]).ok();
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @r#"
    exit 0
    --- stderr
    Merged 9a51aff: 1 conversation (1 updated), 0 events
    renamed: 01KDVDQ4K00000000000000001: both sides renamed it; the remote's title "a's title" replaced yours, "b's second title"
    "#);
    insta::assert_snapshot!(w.b.run(&["list"]).ok(), @"* 01KDVDQ4 a's title  3 turns  4 events  ~6 tok  2026-01-01 00:07");
    w.b.run(&["fsck"]).ok();
}

#[test]
fn a_remote_that_removes_and_re_adds_a_conversation_with_other_events_is_diverted_into_a_fork() {
    let w = World::new();
    let ours = event_lines(&w.b);
    // Two commits made with plumbing: the conversation removed (as `convo rm` would), then
    // put back under the same id with its first event's content replaced.
    let conversations = read_tree(&w.hub, &format!("{}:conversations", w.tip));
    let without: Vec<_> = conversations.into_iter().filter(|(_, name, _)| *name != w.id.as_bytes()).collect();
    let emptied = write_tree(&w.hub, &[("040000".into(), b"conversations".to_vec(), write_tree(&w.hub, &without))]);
    let removal = commit(&w.hub, &emptied, Some(&w.tip), &format!("rm: \"shared\"\n\nConvo-Id: {}\n", w.id));
    let forged = edit_segment(&w, &w.tip_tree(), |text| text.replacen("\"first\"", "\"forged\"", 1));
    let re_added = commit(&w.hub, &forged, Some(&removal), "restore: \"shared\"");
    w.publish(&re_added);

    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @r#"
    exit 0
    --- stderr
    Merged a32ef49: 1 conversation (1 updated), 0 events; 1 fork made
    diverged: 01KDVDQ4K00000000000000001 "shared": the remote's line rewrites 1 of your events and keeps the id; your 1 event is in fork 01KE656YW00000000000000001
    "#);
    let after = event_lines(&w.b);
    assert!(ours.is_subset(&after), "a local event was lost: {:?}", ours.difference(&after).collect::<Vec<_>>());
}

#[test]
fn a_remote_that_rewrites_a_conversation_we_removed_does_not_bring_it_back() {
    let w = World::new();
    w.b.run(&["rm", "shared"]).ok();
    let forged = edit_segment(&w, &w.tip_tree(), |text| text.replacen("\"first\"", "\"forged\"", 1));
    w.publish(&commit(&w.hub, &forged, Some(&w.tip), "append: fix typo"));
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @"
    exit 0
    --- stderr
    Merged 8d58aa3: 1 conversation (1 updated), 0 events
    kept removed: 01KDVDQ4K00000000000000001: the remote's line rewrites events of this conversation you removed
    ");
    assert_eq!(w.b.run(&["list"]).ok(), "");
    // Ours is still what restore brings back.
    w.b.run(&["restore", &w.id]).ok();
    assert!(w.b.run(&["show", &w.id, "--format", "jsonl"]).ok().contains("\"first\""));
}

#[test]
fn a_clone_made_after_a_removal_does_not_list_it_and_can_restore_it() {
    // A clone made after the removal does not list the conversation, and can restore it.
    let w = World::new();
    w.a.run(&["rm", "shared"]).ok();
    w.a.run(&["push"]).ok();
    let c = TestEnv::bare_at(200);
    c.run(&["clone", w.hub.to_str().unwrap(), c.store.to_str().unwrap()]).ok();
    assert_eq!(c.run(&["list"]).ok(), "");
    c.run(&["restore", "shared"]).ok();
    assert_eq!(event_lines(&c), event_lines(&w.b));
}

/// A GitHub token as the push scan knows them (not a real one).
const TOKEN: &str = "ghp_R8x2Lq9ZtW4mNc7Vb1Hs6Jk3Pd5Fy0GaEuQi";

/// Every object of the store's repository, loose and packed, as one text.
fn all_objects(env: &TestEnv) -> String {
    let out = std::process::Command::new("git")
        .args(["cat-file", "--batch-all-objects", "--batch", "--unordered"])
        .current_dir(&env.store)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A store pushed once to a fresh hub, then three unpushed commits, the token in the middle
/// one (in an event, inside a tool call's JSON arguments) and in a title.
fn with_an_unpushed_secret() -> (TestEnv, tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let env = TestEnv::new();
    let id = env.new_conversation("keys");
    env.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    env.run(&["append", "--user", "clean text only"]).ok();
    env.run(&["push"]).ok();
    env.run(&["append", "--user", &format!("my token is {TOKEN}, use it")]).ok();
    let args = format!(r#"{{"cmd":"curl -H 'token: {TOKEN}'"}}"#);
    env.run(&["append", "--tool-call", "shell", "--args", &args, "--call-id", "c1"]).ok();
    env.run(&["append", "--tool-result", "c1", "--content", "ok"]).ok();
    (env, dir, hub, id)
}

#[test]
fn redact_secrets_rewrites_the_unpushed_commits_and_the_push_then_succeeds() {
    let (env, _dir, hub, id) = with_an_unpushed_secret();
    let push = env.run(&["push"]);
    insta::assert_snapshot!(env.transcript(&push), @"
    exit 3
    --- stderr
    error: refusing to push: 1 secret found in what the push would publish
    hint: conversation 01KDVDQ4K00000000000000001 event 01KDVDYEZ00000000000000001 content: github-pat
    hint: conversation 01KDVDQ4K00000000000000001 event 01KDVE09J00000000000000001 arguments.cmd: curl-auth-header, generic-api-key, github-pat, secret-assignment
    hint: nothing was pushed; `convo redact --secrets` replaces them in the unpushed commits
    hint: --allow-secrets pushes anyway
    ");
    let pushed_before = env.git(&["rev-parse", "origin/main"]);
    let log_before = env.run(&["log", &id, "--oneline"]).ok().to_owned();

    let redact = env.run(&["redact", "--secrets"]);
    insta::assert_snapshot!(env.transcript(&redact), @"
    exit 0
    --- stderr
    Redacted 1 secret in 3 of 3 unpushed commits (3 files): HEAD 1fd866b -> 6e54e49
    Expired the reflog and pruned the old objects (git reflog expire --expire=now --all; git repack; git prune --expire=now): the old commits are gone from this repository
    ");
    // Gone from every object, loose or packed, and from the working tree.
    assert!(!all_objects(&env).contains(TOKEN), "the token is still in an object");
    assert!(!all_objects(&env).contains(&TOKEN[4..]), "part of the token is still in an object");
    let holding: Vec<_> = env
        .snapshot()
        .into_iter()
        .filter(|(_, bytes)| String::from_utf8_lossy(bytes).contains(TOKEN))
        .map(|(path, _)| path)
        .collect();
    assert!(holding.is_empty(), "files of the store still hold the token: {holding:?}");
    let worktree = env.git(&["grep", "-c", "REDACTED"]);
    assert!(!worktree.is_empty());
    assert_eq!(env.git_status(), "");
    // Published history is untouched, every line still valid JSON, the log chain whole.
    assert_eq!(env.git(&["rev-parse", "origin/main"]), pushed_before);
    insta::assert_snapshot!(env.run(&["show", &id, "--format", "jsonl"]).ok(), @r#"
    {"id":"01KDVDTSS00000000000000001","ts":"2026-01-01T00:03:00.000Z","type":"user","content":"clean text only"}
    {"id":"01KDVDYEZ00000000000000001","ts":"2026-01-01T00:05:00.000Z","type":"user","content":"my token is [REDACTED], use it"}
    {"id":"01KDVE09J00000000000000001","ts":"2026-01-01T00:06:00.000Z","type":"tool_call","call_id":"c1","name":"shell","arguments":{"cmd":"curl -H 'token: [REDACTED]'"}}
    {"id":"01KDVE24500000000000000001","ts":"2026-01-01T00:07:00.000Z","type":"tool_result","call_id":"c1","content":"ok","is_error":false}
    "#);
    let log_after = env.run(&["log", &id, "--oneline"]).ok().to_owned();
    assert_eq!(log_after.lines().count(), log_before.lines().count());
    // The sizes `log` shows are those of the redacted events: the marker is shorter.
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let tokens = rows[0]["tokens"].as_u64().unwrap();
    assert!(log_after.lines().next().unwrap().contains(&format!(" ~{tokens} tokens")), "{log_after}");
    assert_ne!(log_after.lines().next(), log_before.lines().next());
    rm_log_cache(&env);
    assert_eq!(env.run(&["log", &id, "--oneline"]).ok(), log_after, "the trailer chain and the index disagree");
    assert_eq!(env.git(&["reflog"]).lines().count(), 0);
    env.run(&["fsck"]).ok();

    let push = env.run(&["push"]);
    insta::assert_snapshot!(env.transcript(&push), @"
    exit 0
    --- stderr
    Pushed to origin: 1 conversation (1 updated), 3 events
    ");
    let hub_objects = std::process::Command::new("git")
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .current_dir(&hub)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&hub_objects.stdout).contains(TOKEN));
}

fn rm_log_cache(env: &TestEnv) {
    let _ = std::fs::remove_dir_all(env.store.join(".git/convo/log"));
    let _ = std::fs::remove_dir_all(env.store.join(".git/convo/cache"));
}

#[test]
fn redact_of_a_named_text_replaces_it_in_titles_and_messages_too() {
    let env = TestEnv::new();
    let id = env.new_conversation("about hunter2-secret");
    env.run(&["append", "--user", "the password is hunter2-secret"]).ok();
    env.run(&["append", "--assistant", "noted \"hunter2-secret\" \u{e9}"]).ok();
    let redact = env.run(&["redact", "hunter2-secret"]);
    insta::assert_snapshot!(env.transcript(&redact), @"
    exit 0
    --- stderr
    Redacted 1 text in 3 of 3 unpushed commits (3 files): HEAD 88496b2 -> bc08e1b
    Expired the reflog and pruned the old objects (git reflog expire --expire=now --all; git repack; git prune --expire=now): the old commits are gone from this repository
    ");
    assert!(!all_objects(&env).contains("hunter2-secret"));
    insta::assert_snapshot!(env.run(&["show", &id, "--format", "jsonl"]).ok(), @r#"
    {"id":"01KDVDRZ600000000000000001","ts":"2026-01-01T00:02:00.000Z","type":"user","content":"the password is [REDACTED]"}
    {"id":"01KDVDTSS00000000000000001","ts":"2026-01-01T00:03:00.000Z","type":"assistant","content":"noted \"[REDACTED]\" é"}
    "#);
    insta::assert_snapshot!(env.git(&["log", "--format=%s"]), @r#"
    append: "about [REDACTED]" turn 0 (+1 event)
    append: "about [REDACTED]" turn 0 (+1 event)
    new: "about [REDACTED]"
    "#);
    assert_eq!(env.git_status(), "");
    env.run(&["fsck"]).ok();
}

#[test]
fn redact_refuses_what_a_remote_already_has_and_changes_nothing() {
    let (env, _dir, _hub, _id) = with_an_unpushed_secret();
    env.run(&["push", "--allow-secrets"]).ok();
    // The same token again, unpushed: it has already left, so hiding it here is no help.
    env.run(&["append", "--user", &format!("again: {TOKEN}")]).ok();
    let before = env.snapshot();
    let refused = env.run(&["redact", "--secrets"]);
    insta::assert_snapshot!(env.transcript(&refused), @"
    exit 3
    --- stderr
    error: refusing to redact: commit 1fd866b conversations/01/01KDVDQ4K00000000000000001/events/0000/000000.jsonl already holds it, and a remote has that commit
    hint: it has left this machine: rotate the key (revoke it where it was issued and make a new one)
    hint: nothing was rewritten; redact rewrites only commits no remote has
    ");
    let named = env.run(&["redact", TOKEN]);
    insta::assert_snapshot!(env.transcript(&named), @"
    exit 3
    --- stderr
    error: refusing to redact: commit 1fd866b conversations/01/01KDVDQ4K00000000000000001/events/0000/000000.jsonl already holds it, and a remote has that commit
    hint: it has left this machine: rotate the key (revoke it where it was issued and make a new one)
    hint: nothing was rewritten; redact rewrites only commits no remote has
    ");
    let short = env.run(&["redact", "abc"]);
    insta::assert_snapshot!(env.transcript(&short), @"
    exit 3
    --- stderr
    error: a text to redact must be at least 4 characters
    hint: nothing was written
    ");
    let nothing = env.run(&["redact", "not in any commit"]);
    insta::assert_snapshot!(env.transcript(&nothing), @"
    exit 0
    --- stderr
    Nothing to redact: no unpushed commit holds it
    ");
    let neither = env.run(&["redact"]);
    assert_eq!(neither.code, 2);
    assert!(env.snapshot() == before, "a refused redact changed the store");
}

#[test]
fn redact_in_a_store_never_pushed_rewrites_from_the_first_commit() {
    let env = TestEnv::new();
    let id = env.new_conversation("s");
    env.run(&["append", "--user", &format!("key {TOKEN}")]).ok();
    env.run(&["append", "--user", "after"]).ok();
    let redact = env.run(&["redact", "--secrets"]);
    insta::assert_snapshot!(env.transcript(&redact), @"
    exit 0
    --- stderr
    Redacted 1 secret in 2 of 3 unpushed commits (2 files): HEAD 7f3c1b7 -> 55ce3c4
    Expired the reflog and pruned the old objects (git reflog expire --expire=now --all; git repack; git prune --expire=now): the old commits are gone from this repository
    ");
    assert!(!all_objects(&env).contains(TOKEN));
    assert_eq!(env.run(&["show", &id, "--format", "jsonl"]).ok().lines().count(), 2);
    env.run(&["fsck"]).ok();
}

/// Every kind of secret the push scan knows, each in a user event: `redact --secrets` takes
/// out all it can locate and names what is left (a secret only URL-encoded).
#[test]
fn redact_secrets_takes_out_every_kind_the_push_scan_finds() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let env = TestEnv::new();
    env.new_conversation("keys");
    env.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    env.run(&["push"]).ok();
    let planted = crate::sync::planted(3);
    for (text, _) in &planted {
        env.run(&["append", "--user", text]).ok();
    }
    let redact = env.run(&["redact", "--secrets"]);
    insta::assert_snapshot!(env.transcript(&redact), @"
    exit 0
    --- stderr
    Redacted 12 secrets in 13 of 13 unpushed commits (13 files): HEAD c9546d2 -> 44bb3d0
    Expired the reflog and pruned the old objects (git reflog expire --expire=now --all; git repack; git prune --expire=now): the old commits are gone from this repository
    warning: still found: conversation 01KDVDQ4K00000000000000001 event 01KDVEJKG00000000000000001 content: url-credentials (URL-encoded)
    hint: name the text itself: `convo redact TEXT`
    ");
    let objects = all_objects(&env);
    for (text, kind) in &planted {
        if kind.ends_with("(URL-encoded)") {
            continue;
        }
        // The random part of each planted secret: long words with a digit.
        let words = text.split(|c: char| c.is_whitespace() || "'\"=:@".contains(c));
        for word in words.filter(|w| w.len() >= 12 && w.chars().any(|c| c.is_ascii_digit())) {
            assert!(!objects.contains(word), "{kind}: `{word}` is still in an object");
        }
    }
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}
