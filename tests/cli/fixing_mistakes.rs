//! Fixing mistakes: `rename`, `rm` and `restore` (each one commit, synced like any other),
//! and `redact` (the one rewrite of history, for commits no remote has). Refused input
//! changes nothing; removals never lose an event through a pull; a hostile remote cannot use
//! a removal to replace events.

use crate::common::TestEnv;
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
    [01KDVDWMC00000000000000001 4fd82a8] rename: "second" -> "second take"
    "#);
    let out = env.run(&["rename", &first[..12], "first, renamed"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 0947d29] rename: "first" -> "first, renamed"
    "#);
    insta::assert_snapshot!(env.run(&["list"]).ok(), @"
      01KDVDQ4K00000000000000001 first, renamed     1 turn    2 events          ~2 tok  2026-01-01 00:03
    * 01KDVDWMC00000000000000001 second take        1 turn     1 event          ~2 tok  2026-01-01 00:05
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
    hint: name one by id, unique id prefix or title; `convo list` shows all
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
fn rm_hides_a_conversation_and_restore_brings_it_back_as_it_was() {
    let (env, first, second) = two_conversations();
    let shown = env.run(&["show", &second, "--format", "jsonl"]).ok().to_owned();
    let rm = env.run(&["rm", "second"]);
    insta::assert_snapshot!(env.transcript(&rm), @r#"
    exit 0
    --- stderr
    [01KDVDWMC00000000000000001 50191c0] rm: "second"
    `convo restore 01KDVDWMC00000000000000001` brings it back
    "#);
    insta::assert_snapshot!(env.run(&["list"]).ok(), @"  01KDVDQ4K00000000000000001 first     1 turn    2 events          ~2 tok  2026-01-01 00:03");
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

    insta::assert_snapshot!(env.run(&["restore", "--list"]).ok(), @r#"01KDVDWMC00000000000000001 3bebacc "second""#);
    let restore = env.run(&["restore", &second[..12]]);
    insta::assert_snapshot!(env.transcript(&restore), @r#"
    exit 0
    --- stderr
    [01KDVDWMC00000000000000001 a42a036] restore: "second" from 3bebacc
    "#);
    assert_eq!(env.run(&["show", &second, "--format", "jsonl"]).ok(), shown);
    insta::assert_snapshot!(env.run(&["log", &second, "--oneline"]).ok(), @r#"
    a42a036 2026-01-01 restore: "second" from 3bebacc [1 turn, 1 event, ~2 tokens (chars/4)]
    50191c0 2026-01-01 rm: "second"
    3bebacc 2026-01-01 append: "second" turn 0 (+1 event) [1 turn, 1 event, ~2 tokens (chars/4)]
    c291c99 2026-01-01 new: "second" [0 turns, 0 events, ~0 tokens (chars/4)]
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
    hint: name one by id, unique id prefix or title; `convo list` shows all
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
    [bdeab28] rm: 2 conversations ("first", "second")
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
    --- stdout
    Fast-forward to a6b4bb6 (0 conversations)
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
    --- stdout
    Fast-forward to 37d43c3 (1 conversations)
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
    --- stdout
    Merged 4580d66 (0 conversations updated)
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
    --- stdout
    Merged f459d06 (1 conversation updated)
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
    --- stdout
    Merged 8f64f80 (1 conversation updated)
    ");
    insta::assert_snapshot!(w.b.run(&["list"]).ok(), @"* 01KDVDQ4K00000000000000001 b's title    3 turns    4 events          ~6 tok  2026-01-01 00:07");
    assert_eq!(event_lines(&w.b), event_lines(&w.a));
    w.b.run(&["push"]).ok();
    w.a.run(&["pull"]).ok();

    // Renamed on both sides: the remote's title wins (as convo.toml does).
    w.a.run(&["rename", &w.id, "a's title"]).ok();
    w.a.run(&["push"]).ok();
    w.b.run(&["rename", "b's second title"]).ok();
    let pull = w.b.run(&["pull"]);
    insta::assert_snapshot!(w.b.transcript(&pull), @"
    exit 0
    --- stdout
    Merged 68ae611 (1 conversation updated)
    ");
    insta::assert_snapshot!(w.b.run(&["list"]).ok(), @"* 01KDVDQ4K00000000000000001 a's title    3 turns    4 events          ~6 tok  2026-01-01 00:07");
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
    --- stdout
    Merged ff7f2b4 (1 conversation updated)
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
    --- stdout
    Merged be03438 (0 conversations updated)
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
