//! A lazy store's push (issue 43, `sync::lazy::push`): a conversation fetched into a lazy
//! clone, carried on there and pushed, reaches the hub as one commit on its tip, and goes on
//! through whole and lazy stores alike with nothing dropped, interleaved or stored twice. A
//! push of a conversation the hub moved since its fetch is refused with nothing lost, and the
//! pull then merges it as a whole store's does; a catalog whose copy of the branch lies is
//! refused before anything is sent.

use crate::common::{TestEnv, conversation_dir, two_people};
use crate::hostile_remotes::{blob, git_in, git_str, read_tree, write_tree};
use crate::lazy::{Team, team};

fn lazy_clone(env: &TestEnv, url: &str) {
    env.run(&["clone", "--lazy", url, env.store.to_str().unwrap()]).ok();
}

/// The text of each event of conversation `id`, in order.
fn texts(env: &TestEnv, id: &str) -> Vec<String> {
    env.run(&["export", "--format", "jsonl", id])
        .ok()
        .lines()
        .map(|line| {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            event["content"].as_str().unwrap_or_default().to_owned()
        })
        .collect()
}

#[test]
fn a_conversation_carried_on_in_lazy_stores_reaches_everyone_whole_and_in_order() {
    let people = team(two_people()).cloned_lazily();
    let Team { a, b, first, second, .. } = &people;

    // b reads one conversation, carries it on and pushes: one commit on the hub's tip.
    b.run(&["config", "set", "user.name", "Bo Lazy"]).ok();
    b.run(&["config", "set", "user.email", "bo@example.com"]).ok();
    b.run(&["switch", second]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    let tip = git_str(&people.hub, &["rev-parse", "refs/heads/main"]);
    assert_eq!(
        b.run(&["push", "--dry-run"]).ok(),
        format!(
            "Would push to origin (as last fetched: {}): 1 conversation (1 updated), 1 event\n  {second} \"second talk\": 1 event\n",
            &tip[..7]
        )
    );
    let pushed = b.run(&["push"]);
    assert_eq!(pushed.ok_status(), "Pushed to origin: 1 conversation (1 updated), 1 event\n");
    assert_eq!(git_str(&people.hub, &["rev-parse", "refs/heads/main^"]), tip);
    assert_eq!(
        git_str(&people.hub, &["log", "-1", "--format=%B", "refs/heads/main"]),
        format!("convo: publish 1 shared conversation\n\n{second}")
    );
    // Signed by the person who pushed.
    assert_eq!(
        git_str(&people.hub, &["log", "-1", "--format=%an <%ae>", "refs/heads/main"]),
        "Bo Lazy <bo@example.com>"
    );
    git_in(&people.hub, &["fsck", "--strict", "--no-dangling"], b"");
    // The hub's branch, the conversation's ref and b's store hold the same folder, and the
    // other conversation is untouched.
    let folder = |rev: &str, id: &str| git_str(&people.hub, &["rev-parse", &format!("{rev}:{}", conversation_dir(id))]);
    assert_eq!(
        folder("refs/heads/main", second),
        b.git(&["rev-parse", &format!("HEAD:{}", conversation_dir(second))]).trim()
    );
    assert_eq!(folder(&format!("refs/convo/conversations/{second}"), second), folder("refs/heads/main", second));
    assert_eq!(folder("refs/heads/main", first), folder(&tip, first));
    assert!(b.run(&["push"]).ok_status().starts_with("Everything up-to-date"));
    assert!(!b.run(&["status"]).ok().contains("since fetched"), "{}", b.run(&["status"]).ok());

    // a pulls it, carries it on; b pulls that and goes on; a pulls again.
    a.run(&["pull"]).ok();
    assert_eq!(texts(a, second), ["hello two", "reply two", "from b"]);
    a.run(&["switch", second]).ok();
    a.run(&["append", "--assistant", "from a"]).ok();
    a.run(&["push"]).ok();
    assert_eq!(b.run(&["pull"]).ok_status(), format!("Updated {second} from origin\n"));
    b.run(&["append", "--user", "from b again"]).ok();
    // A conversation begun in the lazy store goes too.
    let third = b.new_conversation("begun by b");
    b.run(&["append", "--user", "new here"]).ok();
    assert_eq!(b.run(&["push"]).ok_status(), "Pushed to origin: 2 conversations (1 new, 1 updated), 2 events\n");
    a.run(&["pull"]).ok();
    let whole = ["hello two", "reply two", "from b", "from a", "from b again"];
    assert_eq!(texts(a, second), whole);
    assert_eq!(texts(b, second), whole);
    assert_eq!(texts(a, &third), ["new here"]);
    assert_eq!(
        a.run(&["export", "--format", "jsonl", second]).ok(),
        b.run(&["export", "--format", "jsonl", second]).ok()
    );
    // A third person's lazy clone sees the same.
    let c = TestEnv::bare_at(200);
    lazy_clone(&c, &people.url);
    assert_eq!(texts(&c, second), whole);
    assert_eq!(texts(&c, first), ["hello one"]);
    git_in(&people.hub, &["fsck", "--strict", "--no-dangling"], b"");
    for env in [a, b, &c] {
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "");
    }
    // b's store stays lazy: only what it read or began.
    let held = b.git(&["ls-tree", "--name-only", "-r", "-d", "HEAD", "conversations"]);
    assert!(!held.contains(first.as_str()), "{held}");
}

#[test]
fn a_lazy_push_of_a_conversation_the_hub_moved_is_refused_and_the_pull_forks_it_as_a_whole_store_does() {
    let people = team(two_people()).cloned_lazily();
    let Team { a, b, second, .. } = &people;
    b.run(&["switch", second]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    a.run(&["switch", second]).ok();
    a.run(&["append", "--user", "from a"]).ok();
    a.run(&["push"]).ok();
    let hub = git_str(&people.hub, &["for-each-ref"]);
    let head = b.git(&["rev-parse", "HEAD"]);
    let refused = b.run(&["push"]);
    assert_eq!(
        refused.fails_with(6),
        format!(
            "error: the remote `origin` has events of a conversation not pulled here: {second}\n\
             hint: `convo pull` brings the hub's events in (nothing of yours is lost), then push again\n"
        )
    );
    assert_eq!(git_str(&people.hub, &["for-each-ref"]), hub, "the hub is as it was");
    assert_eq!(b.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(texts(b, second), ["hello two", "reply two", "from b"]);
    let tip = git_str(&people.hub, &["rev-parse", "refs/heads/main"]);
    assert_eq!(
        b.run(&["push", "--dry-run"]).ok(),
        format!(
            "Nothing to push to origin (as last fetched: {}).\norigin has what this store lacks: 1 conversation \
             (1 updated), 1 event; a push would be rejected until `convo pull` brings them in\n",
            &tip[..7]
        )
    );

    // The pull merges as a whole store's does: the hub's line keeps the id, b's goes on in
    // a fork, and the push then sends the fork.
    let pulled = b.run(&["pull"]);
    let said: Vec<&str> = pulled.ok_status().lines().collect();
    assert_eq!(said[0], format!("Merged {second} from origin: it changed here and there since it was fetched"));
    let fork = said[1].rsplit(' ').next().unwrap().to_owned();
    assert_eq!(
        said[1],
        format!("diverged: {second} \"second talk\": the remote's line keeps the id; your 1 event is in fork {fork}")
    );
    assert_eq!(said.len(), 2, "{said:?}");
    assert_eq!(texts(b, second), ["hello two", "reply two", "from a"]);
    assert_eq!(texts(b, &fork), ["hello two", "reply two", "from b"]);
    assert_eq!(b.run(&["push"]).ok_status(), "Pushed to origin: 1 conversation (1 new), 3 events\n");
    a.run(&["pull"]).ok();
    assert_eq!(texts(a, &fork), ["hello two", "reply two", "from b"]);
    assert_eq!(texts(a, second), ["hello two", "reply two", "from a"]);
    b.run(&["fsck"]).ok();
    assert_eq!(b.git_status(), "");
}

#[test]
fn a_catalog_whose_copy_of_the_branch_lies_is_refused_before_anything_is_sent() {
    type Lie = Box<dyn Fn(&std::path::Path, &str) -> (String, String)>;
    // Each lie: the name of the catalog file replaced and its new content's blob.
    let lies: Vec<(&str, Lie)> = vec![
        (
            "another commit as the branch",
            Box::new(|hub, _| {
                let older = git_in(hub, &["cat-file", "commit", "refs/heads/main^"], b"");
                ("branch.commit".into(), blob(hub, &older))
            }),
        ),
        (
            "another root tree",
            Box::new(|hub, _| {
                let empty = git_in(hub, &["cat-file", "tree", "refs/heads/main^^{tree}"], b"");
                ("branch.tree".into(), blob(hub, &empty))
            }),
        ),
        (
            "a line naming another folder for a conversation",
            Box::new(|hub, first| {
                let fan = &first[first.len() - 2..];
                let text = git_str(hub, &["cat-file", "blob", &format!("refs/convo/catalog:{fan}.jsonl")]);
                let head = git_str(hub, &["rev-parse", "refs/heads/main^{tree}"]);
                let line = text.lines().find(|l| l.contains(first)).unwrap();
                let tree = line.split("\"tree\":\"").nth(1).unwrap()[..40].to_owned();
                let lied = text.replace(&tree, &head);
                (format!("{fan}.jsonl"), blob(hub, format!("{lied}\n").as_bytes()))
            }),
        ),
    ];
    for (what, lie) in lies {
        let people = team(two_people());
        let Team { a, b, first, second, url, .. } = &people;
        // A second push, so the branch has a parent to lie with.
        a.run(&["switch", first]).ok();
        a.run(&["append", "--user", "more"]).ok();
        a.run(&["push"]).ok();
        lazy_clone(b, url);
        b.run(&["switch", second]).ok();
        b.run(&["append", "--user", "from b"]).ok();

        let (name, planted) = lie(&people.hub, first);
        let catalog = git_str(&people.hub, &["rev-parse", "refs/convo/catalog^{tree}"]);
        let entries: Vec<_> = read_tree(&people.hub, &catalog)
            .into_iter()
            .map(
                |(mode, file, id)| {
                    if file == name.as_bytes() { (mode, file, planted.clone()) } else { (mode, file, id) }
                },
            )
            .collect();
        let tree = write_tree(&people.hub, &entries);
        let message = git_in(&people.hub, &["log", "-1", "--format=%B", "refs/convo/catalog"], b"");
        let main = git_str(&people.hub, &["rev-parse", "refs/heads/main"]);
        let commit =
            git_str(&people.hub, &["commit-tree", &tree, "-p", &main, "-m", String::from_utf8_lossy(&message).trim()]);
        git_in(&people.hub, &["update-ref", "refs/convo/catalog", &commit], b"");

        let hub = git_str(&people.hub, &["for-each-ref"]);
        let head = b.git(&["rev-parse", "HEAD"]);
        let refused = b.run(&["push"]);
        assert_ne!(refused.code, 0, "{what}");
        assert!(refused.stderr.starts_with("error: refusing commit "), "{what}: {}", refused.stderr);
        assert_eq!(refused.stderr.lines().count(), 2, "{what}: one line and a hint: {}", refused.stderr);
        assert_eq!(git_str(&people.hub, &["for-each-ref"]), hub, "{what}: nothing reached the hub");
        assert_eq!(b.git(&["rev-parse", "HEAD"]), head, "{what}");
        assert_eq!(texts(b, second), ["hello two", "reply two", "from b"], "{what}");
    }
}
