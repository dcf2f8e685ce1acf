"""The ``aqmlab`` command line.

Every user mistake ends in one line on stderr, ``aqmlab: error: <what and where>``, and exit
status 2 — never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import click

from . import api
from .exceptions import AqmlabError, ScenarioError
from .library import builtin_names, builtin_path, builtin_summary
from .metrics import jain_by_kind
from .output import refuse_unsafe_location
from .scenario_keys import with_overrides


def _fail(msg: str) -> None:
    click.echo(f"aqmlab: error: {msg}", err=True)
    sys.exit(2)


def _default_out(source: Path, prefix: str = "") -> Path:
    """results/<prefix><source's stem>, the default results directory; a name that is not UTF-8
    cannot be one (see output.check_output_dir), and the user did not write --out, so say why."""
    name = f"{prefix}{source.stem}"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(source.name).decode("utf-8", "backslashreplace")
        _fail(f"{shown}: the file name is not valid UTF-8, so it cannot name the default results directory "
              f"results/{prefix}<file name>; give one with --out")
    from .output import STAGING_NAME_EXTRA

    if len(os.fsencode(name)) > 255 - STAGING_NAME_EXTRA:
        _fail(f"{source.name[:24]}...: the file name is too long to name the default results directory "
              f"results/{prefix}<file name>; give one with --out")
    return Path("results") / name


@contextlib.contextmanager
def _user_facing_errors() -> Iterator[None]:
    """A run's errors as one line and exit status 2; Ctrl-C says that nothing was written."""
    try:
        yield
    except AqmlabError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted; nothing was written")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="aqmlab")
def cli() -> None:
    """aqmlab: simulate congested links under any queue discipline."""


def main() -> None:
    """Entry point: click's usage errors become the same one-line error as ours."""
    try:
        code = cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        _fail("interrupted; nothing was written")
    except click.ClickException as e:
        ctx = getattr(e, "ctx", None)
        command = ctx.command_path if ctx is not None else "aqmlab"
        _fail(f"{e.format_message()} (see: {command} --help)".replace("\n", " "))
    except BaseException as e:
        # A panic in the Rust core is a bug that validation missed: say so in one line, not a
        # traceback. (pyo3's PanicException derives from BaseException and is not importable.)
        if type(e).__name__ != "PanicException":
            raise
        click.echo(f"aqmlab: internal error (a bug in aqmlab, not a mistake in your input): {e}; "
                   "no results were written; please report it with the scenario", err=True)
        sys.exit(70)
    else:
        sys.exit(code if isinstance(code, int) else 0)


def _set_value(text: str) -> Any:
    """The value of ``--set KEY=VALUE`` as TOML reads it (``8``, ``0.1``, ``true``, ``["1ms", "2ms"]``,
    ``{ rate = "5Mbps" }``); anything TOML does not take as a value is the string itself (``fq_codel``)."""
    try:
        parsed = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    return parsed["v"] if list(parsed) == ["v"] else text


def _parse_sets(ctx, param, values: tuple[str, ...]) -> list[tuple[str, Any]]:
    out = []
    for item in values:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise click.BadParameter(f"{item!r}: write KEY=VALUE with a key path, e.g. queue.kind=fq_codel or "
                                     f"flows[0].count=8")
        try:
            out.append((key.strip(), _set_value(value)))
        except RecursionError:  # Python's TOML reader recurses per level of nesting
            raise click.BadParameter(f"{key.strip()}: {api._TOO_DEEP}") from None
    return out


_SET_OPTION = click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", callback=_parse_sets,
    help="Change one key of the scenario before running, e.g. --set queue.kind=fq_codel --set flows[0].count=8 "
         "(key paths as in sweep files; VALUE is read as a TOML value, else taken as a string). Repeatable.")


def _missing(path: Path) -> bool:
    """Whether no file of that name exists; other errors of the lookup are left for the reader to report."""
    try:
        path.stat()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def _scenario_source(scenario: Path | None, sets: list[tuple[str, Any]]) -> tuple[Path, api.ScenarioLike]:
    """SCENARIO as given (a file, else a built-in scenario's name, else the default) and what to run: the
    file, or with --set the scenario as a dict with those keys changed, validated here so that an error
    names the file and the changes."""
    if scenario is None:
        path = api.default_scenario_path()
    elif _missing(scenario) and builtin_path(str(scenario)) is not None:
        path = builtin_path(str(scenario))
    elif _missing(scenario):
        _fail(f"{scenario}: no such scenario file, and no built-in scenario has that name (built-in: "
              f"{', '.join(builtin_names())}; `aqmlab scenarios` describes them)")
    else:  # a file, or a name the system cannot look up (too long, a loop): reading it says which
        path = scenario
    if not sets:
        return path, path
    changed = with_overrides(path, sets, label="--set")
    try:
        api.validate(changed)
    except ScenarioError as e:
        shown = " ".join(f"--set {k}={json.dumps(v)}" for k, v in sets)
        raise ScenarioError(f"{path} with {shown}: {e}") from None
    return path, changed


def _scenario_run_options(out_default: str, pcap_help: str):
    """The arguments `run` and `live` share: SCENARIO, --set, --out, --seed, --pcap, --no-plot, --quiet."""
    def decorate(f):
        for option in reversed([
            click.argument("scenario", required=False, type=click.Path(dir_okay=False, path_type=Path)),
            _SET_OPTION,
            click.option("--out", "out", type=str, default=None,
                         help=f"Results directory (default: {out_default}); replaced as a whole, and only "
                              "once the run is complete."),
            click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="Override run.seed (0 to 2^64-1)."),
            click.option("--pcap", is_flag=True, help=pcap_help),
            click.option("--no-plot", is_flag=True, help="Skip plot.png."),
            click.option("--quiet", "-q", is_flag=True, help="No progress bar, no summary lines."),
        ]):
            f = option(f)
        return f
    return decorate


@cli.command()
@_scenario_run_options("results/<scenario name>", "Also capture the forward bottleneck to bottleneck.pcap.")
def run(scenario: Path | None, sets: list[tuple[str, Any]], out: str | None, seed: int | None, pcap: bool,
        no_plot: bool, quiet: bool) -> None:
    """Run SCENARIO (a TOML file, or JSON if it ends in .json; or a built-in scenario's name, see `aqmlab
    scenarios`; default: the built-in 10-flow RED dumbbell)."""
    from tqdm import tqdm

    from .output import check_output_dir

    with _user_facing_errors():
        path, source = _scenario_source(scenario, sets)
        # Without --out the results directory is named after the scenario: read that first, so that
        # a scenario name the system cannot look up is reported as such, not as a bad --out.
        filled = api.validate(source) if out is None else None
        out_arg = _default_out(path) if out is None else out
        check_output_dir(out_arg)
        out = Path(out_arg)
        filled = filled or api.validate(source)
        warning = api.footprint_warning(filled)
        if warning:
            click.echo(f"aqmlab: warning: {warning}", err=True)
        total_s = api.seconds(filled["run"]["duration"])
        bar = tqdm(total=round(total_s, 3), unit="sim-s", delay=2.0, disable=quiet, leave=False,
                   bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} simulated s [{elapsed}<{remaining}]")

        def progress(now_s: float) -> None:
            bar.update(round(now_s - bar.n, 3))

        try:
            res = api.run(source, seed=seed, out=out, pcap=pcap, plot=not no_plot, progress=progress)
        finally:
            bar.close()
    if quiet:
        return
    agg = res.aggregate
    q = res.queues.iloc[0]
    click.echo(f"scenario: {path}" + "".join(f" --set {k}={json.dumps(v)}" for k, v in sets))
    click.echo(f"simulated {res.summary['simulated_s']:.1f} s in {res.wall_seconds:.3f} s wall "
               f"({res.summary['events']:,} events)")
    by_kind = jain_by_kind(res.flows) if res.flows["kind"].nunique() > 1 else {}
    per_kind = "".join(f"; {j:.4f} over the {kind} flows" for kind, j in by_kind.items())
    click.echo(f"goodput {agg['goodput_bps'] / 1e6:.3f} Mb/s over {agg['flows']} flows, Jain index {agg['jain_index']:.4f}"
               + per_kind)
    click.echo(f"bottleneck ({q['kind']}): mean queue {q['mean_len_packets']:.1f} pkts, drops {q['drops']:,} "
               f"(early {q['drops_early']:,}, forced {q['drops_forced']:,}, overflow {q['drops_overflow']:,}), "
               f"utilization {q['utilization']:.3f}")
    for warning in res.summary.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"results: {out}/summary.json, {out}/timeseries.parquet, {out}/flows.csv")
    if not no_plot:
        click.echo(f"plot:    {out}/plot.png")
    if pcap:
        click.echo(f"capture: {out}/bottleneck.pcap")


@cli.command()
@_scenario_run_options("results/live-<scenario name>",
                       "Also capture the real packets' headers at the forward bottleneck to bottleneck.pcap.")
@click.option("--compare", is_flag=True, help="Also simulate the scenario, its TCP modelled as Linux's "
              "(profile = \"linux\"; docs/live.md), and print both side by side.")
def live(scenario: Path | None, sets: list[tuple[str, Any]], out: str | None, seed: int | None, pcap: bool,
         no_plot: bool, quiet: bool, compare: bool) -> None:
    """Run SCENARIO on real Linux traffic: two network namespaces joined by aqmlab's router, which
    runs the scenario's queue discipline on every packet (needs root; takes the scenario's duration
    in wall time; docs/live.md)."""
    from tqdm import tqdm

    from .live import run_live, simulated_twin
    from .output import check_output_dir

    with _user_facing_errors():
        path, source = _scenario_source(scenario, sets)
        out_arg = _default_out(path, "live-") if out is None else out
        check_output_dir(out_arg)
        filled = api.validate(source)
        warning = api.footprint_warning(filled)
        if warning:
            click.echo(f"aqmlab: warning: {warning}", err=True)
        total_s = api.seconds(filled["run"]["duration"])
        bar = tqdm(total=round(total_s, 1), unit="s", disable=quiet, leave=False,
                   bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} s live")

        def progress(now_s: float) -> None:
            bar.update(round(min(now_s, total_s) - bar.n, 1))

        try:
            res = run_live(source, seed=seed, out=out_arg, pcap=pcap, plot=not no_plot, progress=progress)
        finally:
            bar.close()
        sim = api.run(simulated_twin(source, seed=seed)) if compare else None
    if quiet:
        return
    click.echo(f"scenario: {path} (live, kernel {res.summary['kernel']})")
    rows = [("live", res)] + ([("simulated", sim)] if sim is not None else [])
    for label, r in rows:
        agg, q = r.aggregate, r.queues.iloc[0]
        click.echo(f"{label:>9}: goodput {agg['goodput_bps'] / 1e6:.3f} Mb/s over {agg['flows']} flows, "
                   f"Jain {agg['jain_index']:.4f}; {q['kind']}: mean queue {q['mean_len_packets']:.1f} pkts, "
                   f"mean sojourn {q['mean_sojourn_s'] * 1e3:.1f} ms, drop rate {q['drop_rate']:.4f}, "
                   f"marks {q['marks']:,}, utilization {q['utilization']:.3f}")
    click.echo(f"results: {out_arg}/summary.json, {out_arg}/timeseries.parquet, {out_arg}/flows.csv")
    if pcap:
        click.echo(f"capture: {out_arg}/bottleneck.pcap")


@cli.command()
@click.argument("sweep_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", type=str, default=None,
              help="Sweep directory (default: results/<sweep file name>): runs/<id>/ per run, sweep.parquet, "
                   "sweep.csv, sweep_flows.parquet, delay_goodput.png, flow_goodput.png. Runs already complete there are "
                   "reused.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="A running Dask scheduler (tcp://host:8786); default: a local cluster of worker processes.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes of the local cluster (default: the CPU count).")
@click.option("--retries", type=click.IntRange(min=0), default=1, show_default=True,
              help="Times a run is retried when it or its worker fails.")
@click.option("--no-plot", is_flag=True, help="Skip delay_goodput.png and flow_goodput.png (and remove earlier ones).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no summary lines.")
def sweep(sweep_file: Path, out: str | None, scheduler: str | None, workers: int | None, retries: int,
          no_plot: bool, quiet: bool) -> None:
    """Run the grid of SWEEP_FILE (a base scenario and a [sweep] table of key paths with lists of values) on Dask."""
    from tqdm import tqdm

    from .sweep import load_sweep, params_text, run_sweep

    if out is not None and out.strip() == "":
        _fail("--out '': the sweep directory must not be empty; give a directory such as results/my-sweep")
    out_dir = _default_out(sweep_file) if out is None else Path(out)
    bar = None
    done = 0

    def on_start(todo: int, reused: int, stale: int) -> None:
        nonlocal bar
        if not quiet:
            click.echo(f"{len(loaded.runs)} runs: {reused} reused from {out_dir}, {todo} to compute{_stale_note(stale)}")
        bar = tqdm(total=todo, unit="run", disable=quiet or todo == 0, leave=False)

    def on_run() -> None:
        nonlocal done
        done += 1
        if bar is not None:
            bar.update(1)

    try:
        loaded = load_sweep(sweep_file)
        try:
            outcome = run_sweep(loaded, out=out_dir, scheduler=scheduler, workers=workers,
                                          retries=retries, plot=not no_plot, on_start=on_start, on_run=on_run)
        finally:
            if bar is not None:
                bar.close()
    except AqmlabError as e:
        _fail(str(e))
        return
    except KeyboardInterrupt:
        _fail(f"interrupted; {done} run(s) finished in this session are kept in {out_dir / 'runs'}; "
              f"rerun the same command to compute the rest")
        return
    if outcome.failed:
        run, why = outcome.failed[0]
        _fail(f"{len(outcome.failed)} of {len(loaded.runs)} runs failed (the others are kept and in "
              f"{out_dir / 'sweep.parquet'}); first: run {run.run_id} ({params_text(run)}): {why}")
    for warning in outcome.warnings:
        click.echo(f"warning: {warning}", err=True)
    if not quiet:
        click.echo(f"computed {outcome.computed}, reused {outcome.reused}; "
                   f"table: {out_dir / 'sweep.parquet'}, {out_dir / 'sweep.csv'}; runs: {out_dir / 'runs'}/<id>/"
                   + ("" if no_plot else f"; plots: {out_dir / 'delay_goodput.png'}, {out_dir / 'flow_goodput.png'}"))


def _stale_note(stale: int) -> str:
    """What a resumed sweep says about stored runs it recomputes because another aqmlab made them."""
    return f" ({stale} of them stored by another aqmlab build: recomputed)" if stale else ""


def _split_list(values: tuple[str, ...]) -> list[str]:
    """Repeated options and comma-separated lists alike: ``--aqm red,codel --aqm pie``."""
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


@cli.command()
@click.argument("suite_name", metavar="SUITE")
@click.option("--aqm", "aqms", multiple=True, metavar="NAME[,NAME...]",
              help="AQMs to compare (repeatable or comma-separated; default: all of fifo, red, ared, feng-ared, nlred, "
                   "codel, pie, fq_codel).")
@click.option("--scenarios", "scenarios", multiple=True, metavar="NAME[,NAME...]",
              help="Scenarios to run: names (heavy_congestion, rtt_fairness, rtt_fairness_3, ...) or RFC 7928 "
                   "sections (8.2.4, 6.2); default: all (with --quick: unresponsive, heavy_congestion, "
                   "vary_capacity_uno).")
@click.option("--seeds", type=click.IntRange(min=1), default=None,
              help="Runs per scenario and AQM, seeds 1..N (default 5; 3 with --quick). 3 or more draw ellipses.")
@click.option("--quick", is_flag=True, help="60-s runs, 3 seeds, 3 scenarios: about half a minute on 2 cores.")
@click.option("--out", "out", type=str, default="results/rfc7928", show_default=True,
              help="Directory for report.md, <scenario>/delay_goodput.png, sweep.parquet and runs/ (reused when "
                   "run again).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the CPU count).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no summary lines.")
def suite(suite_name: str, aqms: tuple[str, ...], scenarios: tuple[str, ...], seeds: int | None, quick: bool,
          out: str, workers: int | None, quiet: bool) -> None:
    """Run SUITE (rfc7928: the ns-3 AQM Evaluation Suite's RFC 7928 scenarios) under each AQM: per scenario a
    delay-goodput ellipse plot, and report.md."""
    from tqdm import tqdm

    from . import suite as suite_mod

    if suite_name not in suite_mod.SUITES:
        _fail(f"suite {suite_name!r} is not a suite; allowed: {', '.join(suite_mod.SUITES)}")
    with _user_facing_errors():
        refuse_unsafe_location(out, example="results/rfc7928")
    bar = None

    def on_start(todo: int, reused: int, stale: int) -> None:
        nonlocal bar
        if not quiet:
            click.echo(f"{todo + reused} runs: {reused} reused from {out}, {todo} to compute{_stale_note(stale)}")
        bar = tqdm(total=todo, unit="run", disable=quiet or todo == 0, leave=False)

    def on_run() -> None:
        if bar is not None:
            bar.update(1)

    try:
        names = _split_list(scenarios)
        cases = suite_mod.select_cases(names) if names else None
        chosen = _split_list(aqms) or list(suite_mod.DEFAULT_AQMS)
        for aqm in chosen:
            suite_mod.aqm_queue(aqm, 1)
        if len(set(chosen)) != len(chosen):
            _fail(f"--aqm: an AQM is listed twice ({', '.join(chosen)})")
        try:
            outcome, report = suite_mod.run_suite(Path(out), cases=cases, aqms=chosen, seeds=seeds, quick=quick,
                                                  workers=workers, on_start=on_start, on_run=on_run)
        finally:
            if bar is not None:
                bar.close()
    except AqmlabError as e:
        _fail(str(e))
        return
    except KeyboardInterrupt:
        _fail(f"interrupted; finished runs are kept in {Path(out) / 'runs'}; rerun the same command for the rest")
        return
    if outcome.failed:
        run, why = outcome.failed[0]
        _fail(f"{len(outcome.failed)} runs failed (the others are in {report}); first: {run.params}: {why}")
    if not quiet:
        click.echo(f"computed {outcome.computed}, reused {outcome.reused}; report: {report}")


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@_SET_OPTION
@click.option("--show", is_flag=True, help="Print the scenario with every default filled in (JSON).")
def validate(scenario: Path, sets: list[tuple[str, Any]], show: bool) -> None:
    """Check SCENARIO (a file or a built-in scenario's name) without running it."""
    with _user_facing_errors():
        path, source = _scenario_source(scenario, sets)
        filled = api.validate(source)
    if show:
        click.echo(json.dumps(filled, indent=2))
    else:
        n = sum(int(f.get("count", 1)) for f in filled["flows"])
        click.echo(f"{path}: ok ({n} flows, queue {filled['queue']['kind']})")
        warning = api.footprint_warning(filled)
        if warning:
            click.echo(f"aqmlab: warning: {warning}", err=True)


@cli.command()
@click.argument("name", required=False)
def scenarios(name: str | None) -> None:
    """List the built-in scenarios, or print NAME's file (its comment says what it is; redirect it to a
    file to start your own: aqmlab scenarios rrul > my.toml)."""
    if name is None:
        width = max(map(len, builtin_names()))
        for n in builtin_names():
            click.echo(f"{n:<{width}}  {builtin_summary(n)}")
        click.echo("\nrun one with `aqmlab run NAME`; print its file with `aqmlab scenarios NAME`")
        return
    path = builtin_path(name)
    if path is None:
        _fail(f"no built-in scenario named {name!r}; built-in: {', '.join(builtin_names())}")
    click.echo(path.read_text(encoding="utf-8"), nl=False)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def qdiscs(as_json: bool) -> None:
    """List the queue disciplines with their parameters, defaults and sources."""
    catalog = json.loads(api._native.qdiscs())
    if as_json:
        click.echo(json.dumps(catalog, indent=2))
        return
    for q in catalog:
        aliases = f" (aliases: {', '.join(q['aliases'])})" if q["aliases"] else ""
        click.echo(f"{q['kind']}{aliases}: {q['summary']}")
        click.echo(f"  source: {q['source']}")
        aliases_of: dict[str, list[str]] = {}
        for alias, key in q["key_aliases"].items():
            aliases_of.setdefault(key, []).append(alias)
        for key, default in q["params"].items():
            also = f" (also spelt {', '.join(aliases_of[key])})" if key in aliases_of else ""
            click.echo(f"  {key:<18} default {json.dumps(default):<10} {q['docs'].get(key, '')}{also}")
        click.echo()


_RATE_UNITS = {"bps": 1.0, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "B/s": 8.0, "KB/s": 8e3, "MB/s": 8e6,
               "KiB/s": 8 * 1024.0, "MiB/s": 8 * 1024.0**2}
_SIZE_UNITS = {"B": 1.0, "KB": 1e3, "KiB": 1024.0}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def _quantity(text: str, units: dict[str, float], what: str, option: str) -> float:
    """`"10Mbps"` → 1e7 with the unit table; a one-line error naming the option otherwise."""
    import re

    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]+)\s*", text)
    if not m or m.group(2) not in units or float(m.group(1)) <= 0:
        _fail(f"{option} {text!r}: expected a positive {what} with a unit, one of {', '.join(units)}")
    return float(m.group(1)) * units[m.group(2)]


@cli.command("cbt-config")
@click.option("--link", "link", required=True, help="Link rate, e.g. 10Mbps or 1225KiB/s.")
@click.option("--latency", "latency", required=True, help="Target worst-case queueing latency, e.g. 100ms.")
@click.option("--class", "classes", multiple=True, required=True, metavar="NAME:PACKET:ALLOC[:MATCH[@TAGS]]",
              help="A class: name, mean packet size (1500B), allocation as a rate (5Mbps) or a share "
                   "of the link (40%), and which packets it takes: tcp (responsive: gets a RED band), "
                   "udp or any (default any), optionally only flows with these class tags (udp@1 or udp@1,2). "
                   "Repeat per class, in classifier order; the last should take everything left (any).")
@click.option("--limit", type=click.IntRange(min=1), default=240, show_default=True, help="Shared queue limit, packets.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def cbt_config(link: str, latency: str, classes: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Configure a CBT queue (Parris 2001 Sec. IV.4): per-class thresholds and drain rates from the
    allocations, packet sizes and a latency target; prints them and a ready [queue] table."""
    from .models import cbt

    link_bps = _quantity(link, _RATE_UNITS, "rate", "--link")
    latency_s = _quantity(latency, _TIME_UNITS, "duration", "--latency")
    specs, matches = [], []
    for c in classes:
        parts = c.split(":")
        if len(parts) not in (3, 4) or not parts[0]:
            _fail(f"--class {c!r}: expected NAME:PACKET:ALLOC[:MATCH], e.g. tcp:1500B:60%:tcp")
        name, size, alloc = parts[:3]
        match, _, tag_text = (parts[3] if len(parts) == 4 else "any").partition("@")
        if match not in ("tcp", "udp", "any"):
            _fail(f"--class {c!r}: MATCH must be tcp, udp or any, got {match!r}")
        try:
            tags = [int(t) for t in tag_text.split(",")] if tag_text else []
        except ValueError:
            tags = [-1]
        if any(not 0 <= t <= 255 for t in tags):
            _fail(f"--class {c!r}: TAGS must be integers 0-255 separated by commas, got {tag_text!r}")
        packet = _quantity(size, _SIZE_UNITS, "size", f"--class {name}")
        if alloc.endswith("%"):
            try:
                share = float(alloc[:-1]) / 100
            except ValueError:
                share = -1.0
            if not 0 < share <= 1:
                _fail(f"--class {c!r}: a share must be in (0%, 100%], got {alloc!r}")
            spec = cbt.ClassSpec(name, packet, share=share, responsive=match == "tcp")
        else:
            spec = cbt.ClassSpec(name, packet, rate_bps=_quantity(alloc, _RATE_UNITS, "rate", f"--class {name}"),
                                 responsive=match == "tcp")
        specs.append(spec)
        matches.append((match, tags))
    try:
        configured = cbt.configure(link_bps, specs, latency_s)
    except ValueError as e:
        _fail(f"cbt-config: {e}")
    if as_json:
        click.echo(json.dumps([c._asdict() | {"match": m, "tags": t} for c, (m, t) in zip(configured, matches)], indent=2))
        return
    click.echo(f"{'class':<12} {'alloc Mb/s':>10} {'share':>6} {'packet B':>8} {'ThMin':>7} {'ThMax':>7} {'max_p':>6} {'drain pkt/s':>11}")
    for c in configured:
        max_p = f"{c.max_p:g}" if c.max_p is not None else "-"
        click.echo(f"{c.name:<12} {c.rate_bps / 1e6:>10.3f} {c.share:>6.1%} {c.mean_packet_bytes:>8.0f} "
                   f"{c.th_min_pkts:>7.2f} {c.th_max_pkts:>7.2f} {max_p:>6} {c.drain_rate_pps:>11.1f}")
    click.echo("\n[queue]\nkind = \"cbt\"\nlimit = %d\nclasses = [" % limit)
    for c, (m, t) in zip(configured, matches):
        extra = f", min_th = {c.th_min_pkts:.4g}, max_p = {c.max_p:g}" if c.max_p is not None else ""
        tags = f", tags = {t}" if t else ""
        click.echo(f'  {{ name = "{c.name}", match = "{m}"{tags}, max_th = {c.th_max_pkts:.4g}{extra}, '
                   f'mean_packet_size = "{c.mean_packet_bytes:.0f}B", allocation = "{c.rate_bps:.0f}bps" }},')
    click.echo("]")


# ---- TSQ (Kumar 2003): PI designer ----

@cli.command("pi-design")
@click.option("--link", "link", required=True, help="Bottleneck rate, e.g. 15Mbps.")
@click.option("--flows", "flows", type=click.FloatRange(min=0, min_open=True), required=True,
              help="Fewest TCP flows expected to share the link (N-), > 0.")
@click.option("--rtt", "rtt", required=True, help="Largest round-trip time expected (R+), e.g. 250ms.")
@click.option("--packet", "packet", default="1000B", show_default=True, help="Mean packet size.")
@click.option("--q-ref", "q_ref", type=click.FloatRange(min=0), default=200, show_default=True, help="Target queue, packets.")
@click.option("--limit", type=click.IntRange(min=1), default=800, show_default=True, help="Buffer, packets.")
@click.option("--sample-rate", "sample_rate", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Controller updates per second (default: 40 per R+).")
@click.option("--crossover", "crossover", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Loop crossover frequency, rad/s (default: the controller zero z = 2N-/(R+^2 C)).")
@click.option("--kind", "kind", type=click.Choice(["pi", "tsq"]), default="pi", show_default=True,
              help="The [queue] kind to print: PI alone or TSQ over PI.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def pi_design(link: str, flows: float, rtt: str, packet: str, q_ref: float, limit: int, sample_rate: float | None,
              crossover: float | None, kind: str, as_json: bool) -> None:
    """Design a PI AQM (Hollot, Misra, Towsley & Gong 2001) for a link: a, b and the sampling
    frequency from the TCP fluid model; prints them and a ready [queue] table (kind = "pi" or "tsq").
    An unstable design (phase margin <= 0) or one with b < 0 is refused; one outside the fluid
    model's range is printed with a warning on stderr."""
    from .models import pi_design as pd_

    link_bps = _quantity(link, _RATE_UNITS, "rate", "--link")
    rtt_s = _quantity(rtt, _TIME_UNITS, "duration", "--rtt")
    packet_b = _quantity(packet, _SIZE_UNITS, "size", "--packet")
    if q_ref >= limit:
        _fail(f"--q-ref {q_ref:g}: must be below --limit ({limit})")
    try:
        d = pd_.design_for_link(link_bps, flows, rtt_s, packet_bytes=packet_b, sample_rate=sample_rate,
                                crossover=crossover)
    except ValueError as e:
        _fail(f"pi-design: {e}")
    for w in d.warnings:
        click.echo(f"pi-design: warning: {w}", err=True)
    if as_json:
        click.echo(json.dumps(d.as_dict() | {"queue": d.queue_table(q_ref, limit, kind)}, indent=2))
        return
    click.echo(f"capacity {d.capacity_pps:.1f} pkt/s, N- = {d.flows:g}, R+ = {d.rtt_s * 1e3:.1f} ms")
    click.echo(f"K = {d.k:.4g}, z = {d.z:.4g} rad/s, crossover = {d.crossover_rad_s:.4g} rad/s, "
               f"phase margin = {d.phase_margin_deg:.1f} deg")
    click.echo(f"\n[queue]\nkind = \"{kind}\"\na = {d.a:.6g}\nb = {d.b:.6g}\nsample_rate = {d.sample_rate_hz:.6g}\n"
               f"q_ref = {q_ref:g}\nlimit = {limit}")


_fresh_option = click.option("--fresh", is_flag=True,
                             help="Discard the runs an interrupted reproduction into --out left (in --out/.runs) "
                                  "and run everything again.")


@cli.group()
def repro() -> None:
    """Reproduce a thesis's experiments: figures and a claims report."""


@repro.command("fpq")
@click.option("--out", "out", type=str, default="results/repro/fpq",
              show_default=True, help="Directory for report.md, figures and CSV tables.")
@click.option("--quick", is_flag=True, help="100 s runs, fewer points, one seed: a few minutes on 2 cores.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@click.option("--only", multiple=True, help="Run only this experiment (repeatable): "
              "single_flow, tail_drop, red_sweeps, fpq_validation, t_clear_sweep, ppf_sweep, delay_analysis.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@_fresh_option
def repro_fpq(out: str, quick: bool, jobs: int | None, only: tuple[str, ...], quiet: bool, fresh: bool) -> None:
    """Morris 1999, Scalable TCP Congestion Control (FPQ): loss vs flows, RED rules, FPQ, delays."""
    from .repro import fpq

    known = [fn.__name__ for _, fn in fpq.EXPERIMENTS]
    unknown = [x for x in only if x not in known]
    if unknown:
        _fail(f"--only {unknown[0]!r} is not an experiment; allowed: {', '.join(known)}")
    out = _writable_dir(out)
    _reproduce(out, fresh, quiet, lambda: fpq.reproduce(out, quick=quick, workers=jobs, quiet=quiet, only=list(only) or None))


@repro.command("cbt")
@click.option("--out", "out", type=str, default="results/repro/cbt",
              show_default=True, help="Directory for report.md, figures and results.csv.")
@click.option("--quick", is_flag=True, help="One seed instead of five.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@_fresh_option
def repro_cbt(out: str, quick: bool, jobs: int | None, quiet: bool, fresh: bool) -> None:
    """Parris 2001, Class-Based Thresholds: FIFO, RED, FRED, CBT, CBQ on the BULK mixes (HTTP mixes not yet)."""
    from .repro import cbt

    out = _writable_dir(out)
    _reproduce(out, fresh, quiet, lambda: cbt.reproduce(out, quick=quick, workers=jobs, quiet=quiet))


@repro.command("white")
@click.option("--out", "out", type=str, default="results/repro/white",
              show_default=True, help="Directory for report.md, figures and CSV tables.")
@click.option("--quick", is_flag=True, help="One seed, a coarse alpha/beta grid on Exp 1, fewer calibration candidates.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@_fresh_option
def repro_white(out: str, quick: bool, jobs: int | None, quiet: bool, fresh: bool) -> None:
    """Lee 2002, WHITE: RED, FRED, CSFQ, DRR, Chardonnay, Chablis on Exps 1-6, and the alpha/beta grid."""
    from .repro import white

    out = _writable_dir(out)
    _reproduce(out, fresh, quiet, lambda: white.reproduce(out, quick=quick, workers=jobs, quiet=quiet))


@repro.command("bmre")
@click.option("--out", "out", type=str, default="results/repro/bmre",
              show_default=True, help="Directory for report.md, figures and results.csv.")
@click.option("--quick", is_flag=True, help="5 values of N, 30-s runs, one seed: a few minutes.")
@click.option("--seeds", type=click.IntRange(min=1), default=None, help="Seeds per point (default: 1 quick, 2 full).")
@click.option("--duration", "duration_s", type=click.FloatRange(min=5.0), default=None,
              help="Run length in seconds (default: 30 quick, 100 full = the thesis's T).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@_fresh_option
def repro_bmre(out: str, quick: bool, seeds: int | None, duration_s: float | None, jobs: int | None, quiet: bool,
               fresh: bool) -> None:
    """Cho 2002, BMRE: BMRE, RED, FRED, DRR on E1-E7 (fairness, CBR protection, queue, CoV, weights)."""
    from .repro import bmre

    out = _writable_dir(out)
    _reproduce(out, fresh, quiet,
               lambda: bmre.reproduce(out, quick=quick, workers=jobs, quiet=quiet, seeds=seeds, duration_s=duration_s))


@repro.command("tsq")
@click.option("--out", "out", type=str, default="results/repro/tsq",
              show_default=True, help="Directory for report.md, figures and CSV tables.")
@click.option("--quick", is_flag=True, help="One seed, 40 s runs, hints 1, 3, 6, 10, 16: a few minutes.")
@click.option("--seeds", type=click.IntRange(min=1), default=None, help="Seeds per point (default 10; 1 with --quick).")
@click.option("--duration", type=click.FloatRange(min=25), default=None,
              help="Seconds per run, warm-up 20 s included (default 100; 40 with --quick).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Parallel runs (default: all cores).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@_fresh_option
def repro_tsq(out: str, quick: bool, seeds: int | None, duration: float | None, jobs: int | None, quiet: bool,
              fresh: bool) -> None:
    """Kumar 2003, TSQ over PI: E1-E5 (audio and video hint sweeps, audio/FTP and UDP/FTP mixes), quality vs hint."""
    from .repro import tsq

    out = _writable_dir(out)
    _reproduce(out, fresh, quiet,
               lambda: tsq.reproduce(out, quick=quick, seeds=seeds, duration_s=duration, workers=jobs, quiet=quiet))


def _reproduce(out: Path, fresh: bool, quiet: bool, reproduce: Callable[[], list]) -> None:
    """Runs a reproduction with its finished runs kept in ``out/.runs`` until it completes, so an
    interrupted one resumes (repro/run_store.py), and prints the one-line summary."""
    from .repro.common import tally
    from .repro.run_store import STORE_DIR, resumable

    kept = out / STORE_DIR
    if kept.is_dir() and not quiet:
        state = "discarding" if fresh else "resuming from"
        click.echo(f"{state} the runs an interrupted reproduction left in {kept}"
                   + ("" if fresh else " (--fresh starts over)"), err=True)
    try:
        with resumable(out, fresh=fresh) as store:
            claims = reproduce()
    except KeyboardInterrupt:
        _fail(f"interrupted; {len(list(kept.glob('*.pkl')))} finished run(s) are kept in {kept}: "
              "rerun the same command to resume")
        return
    except BaseException:
        if any(kept.glob("*.pkl")):  # an error in the analysis: its runs are not lost
            click.echo(f"aqmlab: the finished runs are kept in {kept}; a rerun reuses them", err=True)
        raise
    total = store.reused + store.shared + store.computed
    reused = f"; {store.reused} of {total} runs reused" if store.reused else ""
    click.echo(f"{tally(claims)}; report: {out / 'report.md'}{reused}")
    others = store.others() if kept.is_dir() else 0
    if others and not quiet:
        click.echo(f"{others} finished run(s) of another reproduction into {out} (other options or another aqmlab "
                   f"build) are kept in {kept} for it; --fresh discards them", err=True)


def _writable_dir(out_arg: str) -> Path:
    """Creates `out_arg` and returns it, or ends with a one-line error saying why it cannot be written."""
    with _user_facing_errors():
        out = refuse_unsafe_location(out_arg, example="results/repro/<thesis>")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".aqmlab-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        _fail(f"--out {out}: cannot write there ({e.strerror})")
    return out


if __name__ == "__main__":
    main()
