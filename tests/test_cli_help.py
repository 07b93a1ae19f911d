"""``gebench COMMAND --help`` ends with examples of that command for every subcommand."""

from __future__ import annotations

import re

import pytest

from gebench import cli


def commands() -> list[str]:
    cli._load_extensions()
    return sorted(cli._COMMANDS)


def test_the_commands_a_user_needs_are_there():
    assert {"compile", "atc", "pyatc", "lab", "sweep"} <= set(commands())


@pytest.mark.parametrize("command", commands())
def test_help_shows_examples(command, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "\nexamples:\n" in text, text
    examples = text.split("\nexamples:\n", 1)[1].split("\n\n", 1)[0]  # the paragraph after "examples:"
    # each example is a command line of this very subcommand (environment settings may come first)
    lines = [line.strip() for line in examples.splitlines() if line.strip() and not line.startswith("      ")]
    assert lines and all(re.match(rf"([A-Z_]+=\S+ )*gebench {re.escape(command)} ", line) for line in lines), lines


def test_examples_keep_their_line_breaks(capsys):
    with pytest.raises(SystemExit):
        cli.main(["atc", "--help"])
    assert "--framework=5 \\\n      --soc_version=Ascend910B1" in capsys.readouterr().out


def test_top_level_help_points_to_the_commands_examples(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    text = capsys.readouterr().out
    assert done.value.code == 0 and "\nexamples:\n  gebench compile " in text and "gebench COMMAND --help" in text
