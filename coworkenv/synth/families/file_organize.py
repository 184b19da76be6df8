"""file_organize: file a messy folder by type, project or month, drop only temporary files, write an index."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

# Extension → candidate destination folders (type mode).
TYPE_FOLDERS = {
    "csv": ["data", "spreadsheets", "tables"],
    "md": ["docs", "writeups", "notes-md"],
    "txt": ["notes", "text", "plain"],
    "json": ["config", "json"],
    "log": ["logs", "logfiles"],
    "yaml": ["settings", "yaml"],
}
CONTENT = {
    "csv": "id,value\n1,{n}\n",
    "md": "# {w}\n\nDraft.\n",
    "txt": "{w} notes\n",
    "json": '{{"name": "{w}"}}\n',
    "log": "{w} started\n{w} finished\n",
    "yaml": "name: {w}\n",
    "html": "<p>{w}</p>\n",
}
WORDS = sorted(set(vocab.PRODUCTS) | set(vocab.MEETING_TOPICS))


@family(
    "file_organize",
    capabilities=("authoring",),
    services=("files",),
    knobs=("effects", "distractors", "ambiguity"),
)
def file_organize(d: Draft) -> TaskSpec:
    """Move the files of a messy folder into folders by type, project or month; delete only *.tmp; write an index."""
    e = d.knobs.effects
    src = d.pick(["downloads", "inbox", "desktop", "unsorted", "scratch", "incoming", "to-file", "dump"])
    mode = d.pick(["type", "project", "month"])
    n_moves = 3 + e
    words = iter(d.sample(WORDS, 60))
    names: set[str] = set()

    def fresh(stem: str, ext: str) -> str:
        name = f"{stem}.{ext}"
        while name in names:
            name = f"{stem}-{next(words)}.{ext}"
        names.add(name)
        return name

    def content(ext: str, word: str) -> str:
        return CONTENT[ext].format(w=word, n=d.amount(1, 999))

    moves: list[tuple[str, str]] = []  # (file name, destination folder)
    stays: list[str] = []  # names in src that no rule covers
    if mode == "type":
        exts = d.sample(list(TYPE_FOLDERS), 2 if e <= 2 else 3)
        folder_of = {x: d.pick(TYPE_FOLDERS[x]) for x in exts}
        for i in range(n_moves):
            x = exts[i % len(exts)]
            moves.append((fresh(f"{next(words)}-{next(words)}", x), folder_of[x]))
        for _ in range(1 + d.knobs.distractors // 4):
            stays.append(fresh(next(words), "html"))
        rules = [f"*.{x} files go to {folder_of[x]}/" for x in exts]
    elif mode == "project":
        projects = [p.lower() for p in d.sample(vocab.PROJECTS, 2 if e <= 2 else 3 + d.knobs.distractors // 9)]
        for i in range(n_moves):
            p = projects[i % len(projects)]
            moves.append((fresh(f"{p}_{next(words)}", d.pick(["md", "csv", "txt"])), f"projects/{p}"))
        outsider = d.pick([p.lower() for p in vocab.PROJECTS if p.lower() not in projects])
        for _ in range(1 + d.knobs.distractors // 4):
            stays.append(fresh(f"{outsider}_{next(words)}", d.pick(["md", "txt"])))
        rules = [f"files whose name starts with '{p}_' go to projects/{p}/" for p in projects]
        exts = ["md", "csv", "txt"]
    else:  # files dated before a cut-off day are archived by month; newer and undated ones stay
        back = d.amount(8, 40)
        cutoff = (d.today - timedelta(days=back)).strftime("%Y-%m-%d")
        for i in range(n_moves + 1 + d.knobs.distractors // 4):
            day = d.today - timedelta(days=d.amount(back + 1, back + 120) if i < n_moves else d.amount(0, back))
            name = fresh(f"{next(words)}_{day.strftime('%Y-%m-%d')}", d.pick(["csv", "md", "txt"]))
            if i < n_moves:
                moves.append((name, f"archive/{day.strftime('%Y-%m')}"))
            else:
                stays.append(name)
        stays.append(fresh(f"{next(words)}-undated", d.pick(["md", "txt"])))
        rules = [
            f"files with a date (YYYY-MM-DD) in their name that is before {cutoff} go to archive/<YYYY-MM>/ for that date's month"
        ]
        exts = ["md", "csv", "txt"]
    if d.knobs.ambiguity >= 2:  # near-duplicates: looks temporary but ends in a kept extension; look-alike project
        twin, folder = moves[0]
        stem, x = twin.rsplit(".", 1)
        moves.append((fresh(f"{stem}.tmp", x), folder))
        if mode == "project":
            stays.append(fresh(f"{projects[0]}-archive_{next(words)}", "md"))
    temps = [fresh(next(words), "tmp") for _ in range(1 + d.knobs.distractors // 4)]

    files = {}
    for name, _ in moves:
        files[name] = content(name.rsplit(".", 1)[1], name.split(".")[0])
    for name in stays:
        files[name] = content(name.rsplit(".", 1)[1], name.split(".")[0])
    for name in temps:
        files[name] = f"~lock {d.amount(1000, 9999)}\n"
    for name in d.sample(sorted(files), len(files)):  # creation order is not filing order
        d.add_file(f"{src}/{name}", files[name])
    outside = [
        d.add_file(f"shared/{next(words)}-{i}.md", "# Shared\nDo not move.\n")
        for i in range(1 + d.knobs.distractors // 6)
    ]

    conventions = (
        d.pick(["docs", "handbook", "wiki", "team", "ops"])
        + "/"
        + d.pick(["filing-rules.md", "filing.md", "folder-conventions.md", "how-we-file.md"])
    )
    if d.knobs.ambiguity >= 1:
        d.add_file(
            conventions,
            f"# Filing rules for {src}/\n\n"
            + "".join(f"- {r}\n" for r in rules)
            + "- keep file names as they are; anything no rule covers stays where it is\n",
        )
        d.call("files_read", path=conventions)
    d.call("files_list", dir=src)

    # --- oracle and checks ---------------------------------------------------------------------------
    new_paths = []
    for name, folder in sorted(moves):
        dst = f"{folder}/{name}"
        d.call("files_move", src=f"{src}/{name}", dst=dst)
        d.check("file_equals", weight=1.0, id=f"moved-{name}", path=dst, content=files[name])
        d.check("file_absent", weight=0.5, id=f"gone-{name}", path=f"{src}/{name}")
        new_paths.append(dst)
    for name in stays:
        d.check("unchanged", weight=0.5, id=f"kept-{name}", path=f"{src}/{name}")
    d.check("unchanged", weight=0.5, id="shared-untouched", path=outside[0])
    d.allow("files_delete")
    if e >= 2:
        for name in temps:
            d.call("files_delete", path=f"{src}/{name}")
            d.check("file_absent", weight=1.0, id=f"deleted-{name}", path=f"{src}/{name}")
        for x in sorted({*exts, *(n.rsplit(".", 1)[1] for n in stays)}):
            d.forbid("files_delete", "only the temporary *.tmp files may be deleted", path=f"*.{x}")
    else:
        for name in temps:
            d.check("file_exists", weight=0.5, id=f"temp-kept-{name}", path=f"{src}/{name}")
        d.forbid("files_delete", "nothing was to be deleted")
    index = d.pick(["INDEX.txt", "index.md", "moved.txt", "filing-index.txt"])
    if e >= 3:
        listing = "".join(f"{p}\n" for p in sorted(new_paths))
        d.call("files_write", path=index, content=listing)
        d.check("file_equals", weight=2.0, id="index", path=index, content=listing)

    # --- the instruction -----------------------------------------------------------------------------
    if d.knobs.ambiguity >= 1:
        how = d.variant(
            "following the filing rules in {c}",
            "the way {c} says",
            "according to {c}",
            c=conventions,
            held_out=(
                "as laid out in {c}",
                "using the conventions described in {c}",
                "by the rules written down in {c}",
            ),
        )
    else:
        how = "so that " + "; ".join(rules)
    ask = d.variant(
        "Please tidy up my {src}/ folder {how}.",
        "My {src}/ folder is a mess. Sort its files {how}.",
        "Clean up {src}/ by moving its files {how}.",
        "Could you file away everything in {src}/ {how}?",
        "Time to organise {src}/: move the files {how}.",
        src=src,
        how=how,
        held_out=(
            "Could you sort out my {src}/ folder {how}?",
            "Please go through {src}/ and move each file {how}.",
            "I need {src}/ cleaned up: relocate its files {how}.",
            "Get my {src}/ folder in order by moving the files {how}.",
        ),
    )
    # Context sentence: surface variety only, nothing in it changes the task.
    colleague = d.person(in_contacts=False)["name"]
    context = d.variant(
        "",
        "{who} takes over this machine on {day}. ",
        "I'm cleaning up before the {project} {topic} on {day}. ",
        "Quick chore before {day}: ",
        "{who} asked me to get my files in order. ",
        held_out=(
            "{who} is taking over my laptop on {day}. ",
            "Getting ready for the {project} {topic} on {day}. ",
            "Small task before {day}: ",
            "{who} wants my files tidy. ",
        ),
        who=colleague,
        day=d.day_name(d.amount(1, 9)),
        project=d.pick(vocab.PROJECTS),
        topic=d.pick(vocab.MEETING_TOPICS),
    )
    if context.endswith(": "):
        ask = ask[0].lower() + ask[1:]
    parts = [
        context + ask,
        d.variant(
            "Keep the file names unchanged and leave files no rule covers where they are.",
            "Don't rename anything; files that match no rule stay put.",
            held_out=(
                "File names must stay as they are, and any file not covered by a rule remains where it is.",
                "No renaming, please; anything the rules don't mention stays in place.",
            ),
        ),
    ]
    if e >= 2:
        parts.append(
            d.variant(
                "Delete the temporary files (names ending in .tmp) but nothing else.",
                "The .tmp files are leftovers; delete those and only those.",
                held_out=(
                    "Remove the .tmp files (they're temporary), and don't delete anything else.",
                    "Only the temporary .tmp files should be deleted; everything else is kept.",
                ),
            )
        )
    else:
        parts.append("Don't delete anything.")
    if e >= 3:
        parts.append(
            d.variant(
                "Then write {index} listing the new path of every file you moved, one per line, sorted alphabetically, nothing else.",
                "Finally create {index} with just the new paths of the moved files, one per line in alphabetical order.",
                index=index,
                held_out=(
                    "Afterwards, create {index} containing only the new path of each moved file, one per line, alphabetically sorted.",
                    "Last step: write {index} with the moved files' new paths in alphabetical order, one per line and nothing else.",
                ),
            )
        )
    done = f"Moved {len(moves)} files out of {src}/" + (
        f" and deleted {len(temps)} temporary files." if e >= 2 else "."
    )
    return d.build(" ".join(parts), done)
