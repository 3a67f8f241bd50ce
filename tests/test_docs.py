"""The documentation keeps its promises: links resolve, README's commands exist and answer
`--help`, README's "Strength and speed" table is the newest rows of docs/results.md,
`usi-engine --help` names every subcommand, the docs name each one, and every script left in
scripts/ is a wrapper of one."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from usi_engine.cli import SUBCOMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results.md"
PAGES = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
HELP_TIMEOUT_S = 60  # a script's --help imports its modules; numba stays cold

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def without_code(text: str) -> str:
    """Markdown text without fenced code blocks and inline code spans."""
    text = _FENCE.sub("", text)
    return re.sub(r"`[^`\n]*`", "", text)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`|\*|_(?=\W)|(?<=\W)_", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a page, with GitHub's -1, -2 ... for repeated headings."""
    seen: dict[str, int] = {}
    out = set()
    for line in _FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = github_slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def broken_links(page: Path) -> list[str]:
    """The relative links of a page that name a missing file or heading."""
    problems = []
    for target in _LINK.findall(without_code(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            problems.append(f"{page.name}: {target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{page.name}: {target}: no heading #{anchor} in {dest.name}")
    return problems


def test_the_slug_rule_matches_githubs():
    assert (
        github_slug("Engine start-up: what the first `isready` compiles")
        == "engine-start-up-what-the-first-isready-compiles"
    )
    assert github_slug("engine.cfg") == "enginecfg"
    assert github_slug("Matches (equal time)") == "matches-equal-time"
    assert github_slug("Real engines at 1 s") == "real-engines-at-1-s"


def test_every_relative_link_in_readme_and_docs_resolves():
    problems = [problem for page in PAGES if page.exists() for problem in broken_links(page)]
    assert problems == []


def test_a_broken_link_is_reported(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## A part\n", encoding="utf-8")
    page.write_text(
        "[ok](other.md#a-part) [gone](missing.md) [bad](other.md#no-part)\n`[in code](nowhere.md)`\n",
        encoding="utf-8",
    )
    problems = broken_links(page)
    assert len(problems) == 2
    assert "missing.md" in problems[0] and "no heading #no-part" in problems[1]


def fence_problems(text: str) -> list[str]:
    """Code blocks that do not close: a closing fence is the fence alone on its line (text
    after it leaves the block open, and the page below it shows as code)."""
    problems, fence, opened = [], None, 0
    for number, line in enumerate(text.splitlines(), 1):
        mark = line[:3]
        if mark not in ("```", "~~~"):
            continue
        if fence is None:
            fence, opened = mark, number
        elif mark == fence and line.strip() == fence:
            fence = None
        elif mark == fence:
            problems.append(
                f"line {number}: text after a closing fence, so it does not close the block of line {opened}"
            )
    if fence is not None:
        problems.append(f"the code block of line {opened} never closes")
    return problems


def test_every_code_block_closes():
    problems = [
        f"{page.name}: {p}"
        for page in PAGES
        if page.exists()
        for p in fence_problems(page.read_text("utf-8"))
    ]
    assert problems == []


def test_a_fence_with_text_after_it_is_caught():
    text = "```sh\nusi-engine bench\n``` Commands:\n\n```sh\nusi-engine perft\n```\n"
    assert fence_problems(text) == [
        "line 3: text after a closing fence, so it does not close the block of line 1",
        "line 5: text after a closing fence, so it does not close the block of line 1",
    ]
    assert fence_problems("```sh\nusi-engine bench\n") == ["the code block of line 1 never closes"]


# --- README's commands -------------------------------------------------------------------

# Commands that set up the environment: they name no tool of this project.
_SETUP = ("python3 -m venv", ". ", "pip install", "source ")


def readme_commands() -> list[str]:
    """Every command of README's `sh` blocks: continuation lines joined, `&&` chains split."""
    blocks = re.findall(r"^```sh\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)
    commands = []
    for block in blocks:
        text = re.sub(r"\\\n\s*", " ", block)
        for line in text.splitlines():
            line = line.split(" #")[0].strip()
            if line and not line.startswith("#"):
                commands += [part.strip() for part in re.split(r"&&|;", line) if part.strip()]
    return commands


def help_call(command: str) -> list[str] | None:
    """The `--help` call that shows `command` names something that exists; None for the
    environment's own set-up commands. AssertionError for anything else."""
    if command.startswith(_SETUP):
        return None
    words = shlex.split(command)
    if words[:2] == ["python", "-m"] and words[2] == "pytest":
        return [sys.executable, "-m", "pytest", "--version"]
    if words[0] == "python" and words[1].startswith("scripts/"):
        script = ROOT / words[1]
        assert script.is_file(), f"README names {words[1]}, which does not exist"
        return [sys.executable, str(script), "--help"]
    if words[0] == "usi-engine":
        sub = [w for w in words[1:2] if not w.startswith("-")]
        return [sys.executable, "-m", "usi_engine", *sub, "--help"]
    raise AssertionError(f"README command names no known tool: {command}")


def test_readme_commands_name_tools_that_answer_help():
    calls = {tuple(call) for call in map(help_call, readme_commands()) if call}
    assert any("match" in " ".join(call) for call in calls)  # the parser found them

    def run(call):
        done = subprocess.run(call, cwd=ROOT, capture_output=True, text=True, timeout=HELP_TIMEOUT_S)
        return call, done

    with ThreadPoolExecutor(max_workers=4) as pool:
        for call, done in pool.map(run, sorted(calls)):
            assert done.returncode == 0, f"{' '.join(call)}: {done.stderr[-500:]}"
            assert done.stdout.strip(), f"{' '.join(call)} printed nothing"


def test_an_unknown_readme_command_is_refused():
    with pytest.raises(AssertionError, match="no known tool"):
        help_call("make all")
    with pytest.raises(AssertionError, match="does not exist"):
        help_call("python scripts/no_such_tool.py --fast")


def test_readme_is_at_most_250_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


# --- the strength table ------------------------------------------------------------------


def table_rows(text: str, first_header: str) -> list[dict[str, str]]:
    """The rows of the Markdown table whose first column is `first_header`, as dicts."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_header:
            header, rows = cells, []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(dict(zip(header, (c.strip() for c in row.strip().strip("|").split("|")))))
            return rows
    raise AssertionError(f"no table with the column {first_header!r}")


def stale_rows(readme_text: str, results_text: str) -> list[str]:
    """README's strength rows that are not the newest row of their measure in results.md."""
    # README's "result (95% interval)" is results.md's "result"
    readme = [
        {key.split(" (")[0]: value for key, value in row.items()}
        for row in table_rows(readme_text, "opponent or measure")
    ]
    log = table_rows(results_text, "date")
    problems = []
    for row in readme:
        measure = row["opponent or measure"]
        newest = next((r for r in log if r["measure"] == measure), None)
        if newest is None:
            problems.append(f"docs/results.md has no row for {measure}")
            continue
        problems += [
            f"{measure}: {column} {row[column]!r} in README, {newest[column]!r} in docs/results.md"
            for column in ("result", "games", "time control", "date")
            if row[column] != newest[column]
        ]
    return problems


def test_readme_strength_table_is_the_newest_rows_of_results():
    readme_text = README.read_text(encoding="utf-8")
    results_text = RESULTS.read_text(encoding="utf-8")
    assert len(table_rows(readme_text, "opponent or measure")) >= 8
    dates = [row["date"] for row in table_rows(results_text, "date")]
    assert dates == sorted(dates, reverse=True), "docs/results.md is newest first"
    assert stale_rows(readme_text, results_text) == []


def test_a_stale_readme_figure_is_caught():
    readme_text = README.read_text(encoding="utf-8")
    results_text = RESULTS.read_text(encoding="utf-8")
    row = table_rows(readme_text, "opponent or measure")[0]
    result = row["result (95% interval)"]
    stale = readme_text.replace(f"| {result} |", "| 1-0-0, 100% [21, 100] |", 1)
    assert stale_rows(stale, results_text) == [
        f"{row['opponent or measure']}: result '1-0-0, 100% [21, 100]' in README, "
        f"{result!r} in docs/results.md"
    ]


# --- usi-engine --help, the subcommands and the scripts --------------------------------------

_WRAPPER = re.compile(r'^    sys\.exit\(main\(\["([a-z-]+)", \*sys\.argv\[1:\]\]\)\)$', re.M)


def wrapped_subcommand(script: Path) -> str | None:
    """The subcommand a scripts/*.py wrapper runs, or None when the file is not such a wrapper
    (it does more than `main(["NAME", *sys.argv[1:]])`, or it edits sys.path)."""
    text = script.read_text(encoding="utf-8")
    found = _WRAPPER.findall(text)
    if len(found) != 1 or "sys.path" in text or "from usi_engine.cli import main" not in text:
        return None
    return found[0]


def test_help_lists_every_subcommand():
    done = subprocess.run(
        [sys.executable, "-m", "usi_engine", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HELP_TIMEOUT_S,
    )
    assert done.returncode == 0
    for word, (_, what) in SUBCOMMANDS.items():
        assert re.search(rf"^  usi-engine {re.escape(word)}\s+{re.escape(what)}$", done.stdout, re.M), word
    assert "--warmup" in done.stdout and "--config" in done.stdout


def test_every_script_is_a_wrapper_of_a_subcommand():
    runs = {script.name: wrapped_subcommand(script) for script in (ROOT / "scripts").glob("*.py")}
    assert {name: word for name, word in runs.items() if word not in SUBCOMMANDS} == {}


def test_a_script_that_is_more_than_a_wrapper_is_caught(tmp_path):
    wrapper = (
        'import sys\n\nfrom usi_engine.cli import main\n\nif __name__ == "__main__":\n'
        '    sys.exit(main(["bench", *sys.argv[1:]]))\n'
    )
    (tmp_path / "bench.py").write_text(wrapper, encoding="utf-8")
    (tmp_path / "path.py").write_text(
        wrapper.replace("import sys\n", "import sys\nsys.path.insert(0, '.')\n"), encoding="utf-8"
    )
    assert wrapped_subcommand(tmp_path / "bench.py") == "bench"
    assert wrapped_subcommand(tmp_path / "path.py") is None
    assert wrapped_subcommand(ROOT / "usi_engine" / "commands" / "bench.py") is None


def test_every_subcommand_is_documented():
    """README or a page of docs/ names each subcommand: as `usi-engine NAME`, or as the
    script that runs it in recorded commands."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in [README, *ROOT.glob("docs/*.md")])
    names = {word: [f"usi-engine {word}"] for word in SUBCOMMANDS}
    for script in (ROOT / "scripts").glob("*.py"):
        if wrapped_subcommand(script) in names:
            names[wrapped_subcommand(script)].append(f"scripts/{script.name}")
    missing = [
        word
        for word, forms in names.items()
        if not any(re.search(rf"{re.escape(form)}(?![\w-])", text) for form in forms)
    ]
    assert missing == []


# --- the project speaks of itself ------------------------------------------------------

_NARRATION = re.compile(r"\bsessions? \d|\bissue #?\d|\bsitting\b|stopped by the end", re.IGNORECASE)


def test_docs_name_versions_and_commits_not_work_periods():
    found = [
        f"{page.name}:{n}: {line.strip()[:80]}"
        for page in PAGES
        if page.exists()
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if _NARRATION.search(line)
    ]
    assert found == []


# --- README's options table ------------------------------------------------------------


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def test_readme_options_table_is_the_engines():
    from usi_engine.server.options import Options, builtin_options

    options = Options.create()
    options.load_cfg(ROOT / "engine.cfg")  # README gives engine.cfg's defaults
    rows = {row["option"].strip("`"): row for row in table_rows(README.read_text(encoding="utf-8"), "option")}
    names = [opt.name for opt in builtin_options()]
    assert sorted(rows) == sorted(names)
    for name in names:
        opt = options.get_option(name)
        assert rows[name]["type"] == opt.type, name
        assert rows[name]["default"].strip("`") == _cell(opt.default), name


def test_readme_switch_table_names_every_search_switch():
    from usi_engine.search.switches import SWITCHES as switches

    rows = table_rows(README.read_text(encoding="utf-8"), "switch")
    listed = {name.strip(" `"): row["default"] for row in rows for name in row["switch"].split(",")}
    assert listed == {name: ("on" if value else "off") for name, value in switches.items()}


def test_every_docs_page_shows_a_command_near_its_top():
    late = [
        page.name
        for page in sorted((ROOT / "docs").glob("*.md"))
        if "```" not in "\n".join(page.read_text(encoding="utf-8").splitlines()[:30])
    ]
    assert late == []
