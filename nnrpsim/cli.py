"""The ``nnrpsim`` command line: a thin shell over the public Python API.

Bad input of any kind ends with one line ``error: <field>: <reason>`` on stderr and exit status 2,
never a traceback; a study whose runs raised is written all the same, names them, and exits 1.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from . import __version__, frame_commands
from .plot_formats import (
    FORMATS,
    FORMATS_VARIABLE,
    KNOWN_FORMATS,
    NO_FORMAT,
    formats_text,
    plot_formats,
    redrawing_formats,
)
from .protocol import BLOCKS, WireError
from .quoted import quoted
from .usage_error import UsageError

if TYPE_CHECKING:  # (the study layer loads pandas: imported where a command runs one)
    from pathlib import Path

    from .study import StudyResult

EXIT_USAGE = 2
EXIT_RUNS_FAILED = 1
"""A study whose runs raised, or whose worker process died: what finished is written, and
``--resume`` runs the rest again."""
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
"""The reader of the output left early (``nnrpsim keys | head -1``): the status a shell gives
any other tool that SIGPIPE ends, 128 + 13, with nothing more said."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would print usage and a second line
        # (argparse names a bad argument by its repr, and arguments it does not know as they
        # are, however long: a shell's glob of a thousand files; cut short as ours are)
        long_repr = r"'([^'\\]{60,})'|\"([^\"\\]{60,})\""
        message = re.sub(long_repr, lambda m: quoted(m[1] or m[2]), message)
        unknown = "unrecognized arguments: "
        if message.startswith(unknown) and len(message) >= len(unknown) + 60:
            message = unknown + quoted(message.removeprefix(unknown))
        raise UsageError(message)


class _Version(argparse.Action):
    """``--version``: the release, and whether the model runs compiled (imported only here:
    the other commands that do not simulate stay light)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and the build")

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from .model import BUILD_STATUS

        print(f"nnrpsim {__version__}, model {BUILD_STATUS}")
        parser.exit()


class _Outcome(NamedTuple):
    """What a command prints, and its exit status when that is not 0."""

    text: str
    status: int


def _run(args: argparse.Namespace) -> str | _Outcome:
    from .display_units import counted
    from .printed_tables import summary_note, summary_table, terminal_width
    from .recorded import COMPLETE, auto_warmups_ms
    from .results import WARNINGS_FILE
    from .study import run
    from .warmup import describe_warmups

    result = run(
        args.scenario,
        out=args.out,
        overrides=args.set,
        jobs=args.jobs,
        executor=args.executor,
        scheduler=args.scheduler,
        resume=args.resume,
        progress=not args.quiet and sys.stderr.isatty(),
    )
    for warning in result.warnings:
        print(warning, file=sys.stderr)
    formats = plot_formats()
    drawn = (
        f"{counted(result.figures, 'plot')} in plots/ ({formats_text(formats)})"
        if formats
        else f"no plots ({FORMATS_VARIABLE}={NO_FORMAT})"
    )
    files = (
        ("summary.csv", not result.summary.empty),
        (WARNINGS_FILE, result.warnings),
        (drawn, result.figures or not formats),
    )
    written = [name for name, any_written in files if any_written]
    where = f": {', '.join(written)}" if written else ""
    width = terminal_width()
    table = summary_table(result.summary, width)
    if note := summary_note(result.summary, width, _compare_example(result)):
        table += f"\n{note}"
    text = f"{table}\nresults: {result.path} ({result.status}){where}"
    if result.kept_runs:
        moved = f", {result.moved_runs} of them moved to their points' new numbers"
        text += f"\nresumed: kept {counted(result.kept_runs, 'run')} the folder held"
        text += moved if result.moved_runs else ""
    if warmups := auto_warmups_ms(result.path):
        text += f"\n{describe_warmups(warmups)}"
    failed = "error" in result.runs and result.runs["error"].notna().any()
    stopped = result.status != COMPLETE  # (a worker died: Ctrl-C raises instead)
    return _Outcome(text, EXIT_RUNS_FAILED) if failed or stopped else text


def _compare_example(result: StudyResult) -> str:
    """A compare command for the study just run, to copy, with the baseline compare takes
    when none is named, written out (the general command where the manifest cannot tell how
    to write it: a hint never fails a study that ran)."""
    import shlex

    from .differences import default_baseline
    from .printed_tables import COMPARE_ANY
    from .scenario import ScenarioError

    try:
        item = default_baseline(result.path, result.runs)
    except ScenarioError:
        return COMPARE_ANY
    return f"nnrpsim compare {shlex.quote(str(result.path))} --baseline {shlex.quote(item)}"


def _compare(args: argparse.Namespace) -> str:
    from .differences import compare, replaceable_by_differences
    from .paths import given_path, is_folder
    from .printed_tables import differences_table, terminal_width
    from .results import among, study_output
    from .run_files import atomic_write

    differences = compare(args.results, args.baseline)
    written = ""
    if args.csv is not None:
        path = given_path(args.csv, "--csv")
        if is_folder(path):
            raise UsageError(f"--csv: {path} is a folder, not a file")
        owned = study_output(path)
        if owned is not None:
            raise UsageError(f"--csv: {path} {among(owned)}: choose another file")
        if not replaceable_by_differences(path):
            raise UsageError(
                f"--csv: {path} holds something other than compare's differences: choose "
                "another file, or remove it"
            )
        try:
            atomic_write(path, lambda p: differences.to_csv(p, index=False))
        except OSError as err:
            raise UsageError(f"--csv: cannot write {path}: {err.strerror or err}") from None
        written = f"\nevery metric's differences: {path}"
    return (
        f"{differences_table(differences, terminal_width())}\n"
        f"each point's metrics less its baseline point's, the point with "
        f"{', '.join(differences.attrs['baseline'])} and its other swept values, replication by "
        f"replication: the mean difference and its 95 % interval{written}"
    )


def _records(args: argparse.Namespace) -> str:
    import pandas as pd

    from .checks.outcomes import violation_warnings
    from .display_units import durations_text, sizes_text
    from .one_run import run_records
    from .paths import given_path

    folder = given_path(args.out, "--out") if args.out is not None else None
    records = run_records(
        args.scenario,
        args.point,
        args.replication,
        overrides=args.set,
        progress=not args.quiet and sys.stderr.isatty(),
        out=folder,
    )
    metrics = pd.DataFrame([{"point": records.point, **records.metrics}])
    for warning in [*records.setup_warnings, *violation_warnings(metrics)]:
        print(warning, file=sys.stderr)  # (as validate and run say them)
    heading = f"{records.title}; after the warm-up, "
    outcomes = records.outcomes()
    if outcomes.empty:
        lines = [f"{heading}none"]
    else:
        table = outcomes.to_string(index=False, formatters={"share": "{:.4f}".format})
        lines = [f"{heading}by outcome and cause:", table]
    metrics = records.metrics
    latencies = durations_text([metrics["p50_latency_ms"], metrics["p99_latency_ms"]])
    memory = sizes_text([metrics["mean_gpu_bytes"], metrics["peak_gpu_bytes"]])
    lines.append(
        f"hit_rate {metrics['hit_rate']:.4f}, wire_saving {metrics['wire_saving']:.4f}, "
        f"GPU memory held {memory} (mean/peak), p50/p99 latency {latencies}, "
        f"invariant violations {metrics['invariant_violations']:.0f}"
    )
    if folder is not None:
        try:
            written = records.write(folder)
        except OSError as err:
            raise UsageError(f"--out: cannot write {folder}: {err.strerror or err}") from None
        lines.append(f"records: {folder}: {', '.join(path.name for path in written)}")
    return "\n".join(lines)


def _validate(args: argparse.Namespace) -> str:
    from .validation import validate

    validation = validate(args.scenario, args.set, progress=sys.stderr.isatty())
    for warning in validation.warnings:
        print(warning, file=sys.stderr)
    return str(validation)


def _plot(args: argparse.Namespace) -> str:
    from contextlib import nullcontext

    from .folder_lock import LOCK_FILE, folder_held
    from .paths import file_problem, given_path

    redrawing_formats()  # (before the folder is looked at)
    folder = given_path(args.results, "results")
    # a study still running there draws the plots as it ends (an older study's folder has no
    # lock file, and is not made one by a look at it; a path the system refuses is said below)
    held = (
        nullcontext()
        if file_problem(folder / LOCK_FILE)
        else folder_held(
            folder, "results", "wait for it to end: its study draws the plots as it ends"
        )
    )
    with held:
        return _redrawn(folder)


def _redrawn(folder: Path) -> str:
    """The plots of a study's results, drawn again from its summary and tables."""
    from .display_units import counted
    from .paths import NO_SUCH_FILE, file_problem
    from .plots import draw_study
    from .recorded import recorded_scenario, unfinished_study_note
    from .run_files import finished_runs
    from .scenario import ScenarioError

    if problem := file_problem(folder / "summary.parquet"):
        if problem == NO_SUCH_FILE and (runs := finished_runs(folder)):
            # (the study its manifest records, written as it started; an earlier version's
            # killed study has none: its scenario file, then)
            again = f"nnrpsim run {folder} --resume runs the rest and draws the plots"
            try:
                recorded_scenario(folder, "to run")
            except ScenarioError:
                again = (
                    f"run its scenario again with --out {folder} --resume, which runs the rest "
                    "and draws the plots"
                )
            raise UsageError(
                f"results: {folder} holds {counted(runs, 'finished run')} but no "
                f"summary.parquet: its study did not finish; {again}"
            )
        if problem == NO_SUCH_FILE:
            raise UsageError(f"results: {folder} holds no summary.parquet (run a study first)")
        raise UsageError(f"results: cannot read {folder / 'summary.parquet'}: {problem}")
    written = draw_study(folder, None)
    if note := unfinished_study_note(folder):
        print(f"warning: {note}", file=sys.stderr)
    return "\n".join(str(path) for path in written) or "nothing to plot"


def _keys(args: argparse.Namespace) -> str:
    from .display_units import scenario_text
    from .inert_keys import INERT_RULES
    from .scenario.key_catalog import REQUIRED, describe

    word = (args.word or "").lower()
    rows = [
        (key, "required" if default is REQUIRED else scenario_text(key, default), text)
        for key, default, text in describe()
        if word in key.lower() or word in text.lower()
    ]
    # (what makes a key do nothing, from the rules validate warns by: said after the match)
    for i, (key, default, text) in enumerate(rows):
        if reasons := [rule.reason for rule in INERT_RULES if rule.in_help and key in rule.keys]:
            rows[i] = (key, default, f"{text} Changes nothing where {'; where '.join(reasons)}.")
    if not rows:
        raise UsageError(f"keys: no key or help text mentions {quoted(args.word)}")
    width = max(len(key) for key, _, _ in rows)
    return "\n".join(f"{key:<{width}}  {default:<14}  {text}" for key, default, text in rows)


def _command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    what: str,
    epilog: str | None = None,
) -> argparse.ArgumentParser:
    """A command, whose own ``--help`` opens with what the commands' list says of it."""
    description = f"{what[0].upper()}{what[1:]}."
    return commands.add_parser(name, help=what, description=description, epilog=epilog)


PLOT_FORMATS_NOTE = (
    f"figures are written as {formats_text(FORMATS)}; {FORMATS_VARIABLE} names others, "
    f"comma-separated, of {', '.join(KNOWN_FORMATS)} (png alone draws them faster), or "
    f"{NO_FORMAT}: a study draws none (nnrpsim plot draws them later)"
)


def _add_set_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a dotted key, e.g. --set study.replications=5",
    )


def _add_scenario_commands(commands) -> None:
    run = _command(
        commands, "run", "run a study: every sweep point, every replication", PLOT_FORMATS_NOTE
    )
    run.add_argument(
        "scenario",
        help="a scenario YAML file, or a results folder (the scenario its manifest records, "
        "its runs written there: with --resume, to add replications or sweep values)",
    )
    run.add_argument("--out", help="results folder (default results/<study name>)")
    _add_set_option(run)
    run.add_argument(
        "--jobs", type=int, help="worker processes (default: every core this process may use)"
    )
    run.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="where runs go: local processes (default) or a Dask cluster",
    )
    run.add_argument(
        "--scheduler",
        help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (default: a LocalCluster here)",
    )
    run.add_argument(
        "--resume",
        action="store_true",
        help="skip runs already finished; with study.replications raised, or other values "
        "of the swept keys (and nothing else a run reads changed), run only the new runs",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(handler=_run)
    validate = _command(commands, "validate", "check a scenario without running it")
    validate.add_argument(
        "scenario", help="a scenario YAML file, or a results folder (its manifest's scenario)"
    )
    _add_set_option(validate)
    validate.set_defaults(handler=_validate)
    plot = _command(commands, "plot", "redraw the plots of a results folder", PLOT_FORMATS_NOTE)
    plot.add_argument("results", help="a results folder written by run (its summary.parquet)")
    plot.set_defaults(handler=_plot)
    compare = _command(
        commands, "compare", "compare each sweep point with a baseline point, run by run"
    )
    compare.add_argument("results", help="a results folder written by run (its runs.parquet)")
    compare.add_argument(
        "--baseline",
        action="append",
        metavar="KEY=VALUE",
        help="a swept key (in full, or as the summary names it) and its value at the baseline, "
        "e.g. --baseline host_policy.name=never or --baseline gpu_memory=512MiB (once for each "
        "key to hold); by default policy never where the study sweeps it, else the first "
        "swept key at its last point's value",
    )
    compare.add_argument(
        "--csv", metavar="FILE", help="also write every metric's differences to FILE (CSV)"
    )
    compare.set_defaults(handler=_compare)
    records = _command(
        commands, "records", "run one run of a study again and show or keep its records"
    )
    records.add_argument(
        "scenario",
        help="a scenario YAML file, or a results folder (the scenario its manifest records)",
    )
    records.add_argument(
        "--point", type=int, default=0, help="the sweep point, as runs.parquet numbers it"
    )
    records.add_argument("--replication", type=int, default=0, help="the replication (from 0)")
    _add_set_option(records)
    records.add_argument(
        "--out",
        metavar="FOLDER",
        help="write its references, operations, memory (and by kind) and accepted TTLs "
        "(Parquet) and run.json there",
    )
    records.add_argument("--quiet", action="store_true", help="no progress bar")
    records.set_defaults(handler=_records)
    keys = _command(commands, "keys", "list every scenario key with its default and help")
    keys.add_argument(
        "word", nargs="?", help="only the keys whose name or help mentions it (any case)"
    )
    keys.set_defaults(handler=_keys)


DESCRIPTION = (
    "A discrete-event simulator of the NNRP/1 cache capability and lease protocol:\n"
    "run scenario studies, check them first, redraw their plots, compare their points\n"
    "with a baseline, look into one run's records, list the scenario keys, and encode\n"
    "or decode cache frames."
)
EPILOG = (
    "start with: nnrpsim run scenarios/quickstart.yaml\n"
    "each command's options: nnrpsim COMMAND --help"
)


def _command_needed(names: list[str], prog: str) -> Callable[[argparse.Namespace], str]:
    """The handler of a parser given none of its commands ``names``: argparse would name its
    ``dest`` (``required: frames_command``) where the reader needs the commands."""
    listed = f"{', '.join(names[:-1])} or {names[-1]}"

    def refuse(args: argparse.Namespace) -> str:
        raise UsageError(f"{prog}: a command is required: {listed} ({prog} --help)")

    return refuse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nnrpsim",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    frames = _command(commands, "frames", "encode and decode NNRP/1 cache frames")
    frame_parsers = frames.add_subparsers(dest="frames_command", metavar="COMMAND")
    decode = _command(
        frame_parsers,
        "decode",
        "decode a packet, a FRAME_SUBMIT's body too, or a bare block, as JSON",
    )
    decode.add_argument("--block", choices=sorted(BLOCKS), help="decode a bare block, no header")
    decode.add_argument(
        "--all",
        action="store_true",
        help="packets (or blocks) back to back, as a capture holds them: one JSON object a "
        "line, a packet (or block) each",
    )
    decode.add_argument(
        "hex", help="the bytes as hexadecimal (whitespace allowed); - reads them from stdin"
    )
    decode.set_defaults(handler=frame_commands.decode)
    encode = _command(
        frame_parsers, "encode", "encode a bare block or a packet from JSON, print hex"
    )
    encode.add_argument(
        "block",
        choices=[*sorted(BLOCKS), frame_commands.PACKET],
        help="the block to encode, or packet: a whole packet, as decode prints it (its lengths "
        "worked out again)",
    )
    encode.add_argument(
        "json",
        help="field values, e.g. '{\"object_kind\": 7, ...}'; bytes_* fields as hexadecimal",
    )
    encode.set_defaults(handler=frame_commands.encode)
    frames.set_defaults(handler=_command_needed(list(frame_parsers.choices), "nnrpsim frames"))
    _add_scenario_commands(commands)
    parser.set_defaults(handler=_command_needed(list(commands.choices), "nnrpsim"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from .scenario import ScenarioError

    # The command line writes its plots to files: a backend the shell's environment names for
    # interactive work (or misspells, which fails matplotlib's import) has no say in them.
    os.environ["MPLBACKEND"] = "Agg"
    # An output encoding without a character the tables use (compare's "±", with
    # PYTHONIOENCODING=ascii) shows it as "?", not a traceback after the work is done.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace")
    command = None
    try:
        args = build_parser().parse_args(argv)
        command = args.command
        outcome = args.handler(args)
        if not isinstance(outcome, _Outcome):
            outcome = _Outcome(outcome, 0)
        print(outcome.text)
        sys.stdout.flush()  # (a closed pipe raises here, not at the interpreter's exit)
        return outcome.status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (nothing left to fail)
        return EXIT_BROKEN_PIPE
    except (UsageError, WireError, ScenarioError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        # (only a study keeps what finished; another command has nothing to resume)
        kept = ": finished runs are saved; rerun with --resume" if command == "run" else ""
        print(f"interrupted{kept}", file=sys.stderr)
        return EXIT_INTERRUPTED
