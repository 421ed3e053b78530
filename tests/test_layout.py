"""The shape of the code (issue 18): no module imports itself round a
circle, no source file outgrows one concept, nothing cites a file
outside the repository, and the decision records keep their form and
their index (issue 36)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from pbmserv.gamekit import Game, game_names, get_game

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pbmserv", "games")
#: a module longer than this holds more than one concept
MOST_LINES = 450


def _modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imported(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """What the module imports when it is loaded: not inside functions, not under TYPE_CHECKING."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    package = module.split(".")[: None if is_package else -1]
                    package = package[: len(package) - node.level + 1]
                    base = ".".join([*package, *([node.module] if node.module else [])])
                else:
                    base = node.module or ""
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.ClassDef):
                visit(node.body)
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(node, part, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return names


def test_no_module_imports_itself_round_a_circle() -> None:
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        imported = _imported(ast.parse(path.read_text()), module, path.name == "__init__.py")
        graph[module] = {name for name in imported if name in modules and name != module}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"an import circle: {' -> '.join(error.args[1])}")


def test_no_source_file_outgrows_one_concept() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _modules().values()
        if (lines := len(path.read_text().splitlines())) > MOST_LINES
    }
    assert long == {}, f"split these along their concepts (at most {MOST_LINES} lines each)"


#: what a board's record holds of its game, which only `Board`'s operations change
BOARD_PROGRESS = {"state", "move_count", "result"}
#: the store's functions that write a board, its moves or its queue, which only `board.save` and `board.create` call
BOARD_WRITERS = {"insert_board", "save_board", "record_moves", "remove_moves_after", "clear_queue"}
#: where a board is changed: the Board value's module, and the store, which reads and writes records
BOARD_KEEPERS = {"pbmserv.service.play.board", "pbmserv.store"}


def _changes_to_boards(tree: ast.Module) -> list[str]:
    """The lines of `tree` that set a record's state, move count or result
    (an assignment to the attribute, or `dataclasses.replace` with it), or
    that call one of the store's board writers."""
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
        found += [
            f"line {part.lineno}: sets .{part.attr}"
            for target in targets for part in ast.walk(target)
            if isinstance(part, ast.Attribute) and part.attr in BOARD_PROGRESS
        ]
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            replaced = BOARD_PROGRESS & {keyword.arg for keyword in node.keywords}
            if called == "replace" and replaced:
                found.append(f"line {node.lineno}: replaces {', '.join(sorted(replaced))}")
            if called in BOARD_WRITERS:
                found.append(f"line {node.lineno}: calls {called}")
    return found


def test_only_the_board_value_changes_a_board() -> None:
    """A board's state, move count and result change only by the operations
    of `service.board.Board`, and only `service.board` writes a board
    (issue 36): a handler that set them by hand, or saved a board itself,
    could forget a part of it (the move number, the queue, the save)."""
    changes = {
        module: found
        for module, path in _modules().items()
        if module.startswith("pbmserv.") and not BOARD_KEEPERS & {module, module.rpartition(".")[0]}
        and (found := _changes_to_boards(ast.parse(path.read_text())))
    }
    assert changes == {}, "change a board with the operations of service.board.Board, and write it with board.save"


def test_the_layout_check_sees_a_board_changed_by_hand() -> None:
    by_hand = """
board.state = game.encode(state)
board.move_count += 1
record = replace(record, result={"winners": []})
records.save_board(connection, record)
"""
    assert len(_changes_to_boards(ast.parse(by_hand))) == 4


def test_the_repository_cites_no_file_outside_it() -> None:
    """The docs and the code stand on their own (issue 36): every Markdown
    file they name is one of the repository's, and no relative link in a
    Markdown file leads out of the checkout."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    ours = {Path(name).name for name in tracked if name.endswith(".md")}
    cited = re.compile(r"[\w./-]*\b[\w-]+\.md\b")
    relative = re.compile(r"(?:\.\./)+[\w./-]*")
    strays = []
    for name in tracked:
        if not name.endswith((".py", ".md", ".toml", ".txt", ".cfg")):
            continue
        text = (ROOT / name).read_text(errors="replace")
        strays += [f"{name} names {file}" for file in cited.findall(text) if Path(file).name not in ours]
        if name.endswith(".md"):
            strays += [
                f"{name} links {link}" for link in relative.findall(text)
                if not (ROOT / name).parent.joinpath(link).resolve().is_relative_to(ROOT)
            ]
    assert strays == []


def test_every_decision_record_is_indexed_and_in_form() -> None:
    """Each record in docs/decisions/ is named by a four-digit number and a
    lower-case hyphenated title, opens with that number and its title, holds Context, Decision and Consequences in that order,
    and is linked from the index, which links no record that is not there."""
    folder = ROOT / "docs" / "decisions"
    index = (folder / "README.md").read_text()
    records = sorted(path for path in folder.glob("*.md") if path.name != "README.md")
    assert records, "no decision records"
    faults = []
    for path in records:
        text = path.read_text()
        if not re.fullmatch(r"(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md", path.name):
            faults.append(f"{path.name}: not named by a number and a lower-case title")
        if not text.startswith(f"# {path.name[:4]}. "):
            faults.append(f"{path.name}: does not open with '# {path.name[:4]}. <title>'")
        headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
        if headings != ["Context", "Decision", "Consequences"]:
            faults.append(f"{path.name}: its sections are {headings}, not Context, Decision, Consequences")
        if f"]({path.name})" not in index:
            faults.append(f"{path.name}: not listed in docs/decisions/README.md")
    numbers = [path.name[:4] for path in records]
    faults += [f"number {number} is used twice" for number in sorted(set(numbers)) if numbers.count(number) > 1]
    faults += [
        f"the index links {name}, which is not there"
        for name in re.findall(r"\]\(([^)/]+\.md)\)", index) if not (folder / name).is_file()
    ]
    assert faults == []


def test_the_wheel_names_every_package() -> None:
    """pyproject.toml lists the packages by name (the migrations are mapped in from the top, which
    setuptools' `find` cannot see), so a package left out of the list would be left out of the wheel."""
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    there = {
        ".".join(folder.relative_to(ROOT).parts)
        for package in PACKAGES for folder in [ROOT / package, *(ROOT / package).rglob("*")]
        if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py"))
    }
    assert set(listed) == there | {"pbmserv.migrations"}
    assert (ROOT / "migrations" / "env.py").is_file()


def _command_types() -> set[str]:
    """The concrete command values (`protocol.commands`): every subclass of Command but the two bases."""
    tree = ast.parse((ROOT / "pbmserv" / "protocol" / "commands.py").read_text())
    bases = {"Command"}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id in bases for b in node.bases):
            bases.add(node.name)
    return bases - {"Command", "GameCommand"}


def _commands_taken(tree: ast.Module, commands: set[str]) -> list[tuple[str, str]]:
    """(function, command type) for each parameter of a function annotated with a command's type."""
    local_names: dict[str, str] = {}
    module_aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "pbmserv.protocol.commands":
            local_names |= {alias.asname or alias.name: alias.name for alias in node.names if alias.name in commands}
        elif isinstance(node, ast.ImportFrom) and node.module == "pbmserv.protocol":
            module_aliases |= {alias.asname or alias.name for alias in node.names if alias.name == "commands"}
    taken = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for argument in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            for part in ast.walk(argument.annotation) if argument.annotation is not None else ():
                if isinstance(part, ast.Name) and part.id in local_names:
                    taken.append((node.name, local_names[part.id]))
                elif isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and (
                    part.value.id in module_aliases and part.attr in commands
                ):
                    taken.append((node.name, part.attr))
    return taken


def test_only_the_command_handlers_handle_a_command() -> None:
    """A function that takes a command (a parameter annotated with a
    command's type) is a handler, and the handlers live in
    `service/commands/`, one module per command family (issue 36)."""
    commands = _command_types()
    handlers_home = ROOT / "pbmserv" / "service" / "commands"
    handlers, strays = 0, []
    for module, path in _modules().items():
        taken = _commands_taken(ast.parse(path.read_text()), commands)
        if path.is_relative_to(handlers_home):
            handlers += len(taken)
        else:
            strays += [f"{module}.{function} takes {command}" for function, command in taken]
    assert len(commands) > 20 and handlers > 20  # the check sees the commands and their handlers
    assert strays == []


def test_every_command_has_one_handler() -> None:
    from pbmserv.protocol import commands
    from pbmserv.service.commands.dispatch import HANDLERS

    declared = {
        value for value in vars(commands).values()
        if isinstance(value, type) and issubclass(value, commands.Command)
        and value not in (commands.Command, commands.GameCommand)
    }
    assert declared == set(HANDLERS)
    assert all(Path(sys.modules[h.__module__].__file__ or "").parent.name == "commands" for h in HANDLERS.values())


def test_what_a_viewer_sees_is_decided_in_draw_alone() -> None:
    """Every game's text board is `text(draw(...))`: none overrides
    `render`, and a game's `text` reads the drawing, never a state."""
    for name in game_names():
        game_class = type(get_game(name))
        assert game_class.render is Game.render, f"{name} overrides render: draw and text make the board"
        assert game_class.draw is not Game.draw, f"{name} does not draw its position"
        text = game_class.text
        if text is not Game.text:
            names = text.__code__.co_varnames[: text.__code__.co_argcount]
            assert names == ("self", "drawing"), f"{name}'s text takes {names}: it reads the drawing alone"


#: what a server keeps beside its SQLite database, where the README's first command runs it: the checkout
SERVER_FILES = ["pbmserv.db", "pbmserv.db-wal", "pbmserv.db-spool", "pbmserv.db-key", "pbmserv.db-drain.log", "pbmserv.key"]


def test_a_servers_files_are_ignored_by_git() -> None:
    """Before, `git add .` in a checkout that ran the server committed its key."""
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *SERVER_FILES], cwd=ROOT, capture_output=True, text=True,
    ).stdout.split()
    assert ignored == SERVER_FILES


def docker_ignores(path: str) -> bool:
    """Whether .dockerignore keeps `path` out of the build context: the last pattern that matches decides."""
    from fnmatch import fnmatch

    ignored = False
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negated, pattern = pattern.startswith("!"), pattern.lstrip("!").rstrip("/")
        pattern = pattern.removeprefix("**/")
        if any(fnmatch(part, pattern) for part in (path, *Path(path).parts)) or path.startswith(pattern + "/"):
            ignored = not negated
    return ignored


def test_the_docker_build_context_holds_what_the_image_needs_and_no_server_files() -> None:
    """Before, with no .dockerignore, the context was 209 MB: .git, .venv, the database and its key."""
    for needed in ("pyproject.toml", "README.md", "pbmserv/config.py", "games/majorities/game.py",
                   "migrations/versions/0001_initial_schema.py", "deploy/docker/entrypoint", "deploy/postfix/main.cf"):
        assert not docker_ignores(needed), needed
    for kept_out in (*SERVER_FILES, "data/pbmserv.db-key", ".git/config", ".venv/bin/python", "tests/conftest.py",
                     "pbmserv/__pycache__/config.cpython-311.pyc"):
        assert docker_ignores(kept_out), kept_out
