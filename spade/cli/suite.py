"""spade-suite: validate env sources; freeze, verify, list, show and publish suites."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tabulate import tabulate

from spade.cli.errors import UsageError, fail, one_line_errors
from spade.cli.sandbox_choice import add_sandbox_argument, use_sandbox
from spade.envs.checks import ValidationReport, validate_source
from spade.sandbox import SandboxConfig, describe_backend, resolve_backend
from spade.suites import (
    KINDS,
    FreezeOptions,
    FreezeReport,
    SuiteError,
    VerifyReport,
    freeze_suite,
    list_suites,
    lookup_roots,
    publish_suite,
    read_manifest,
    resolve_suite,
    verify_suite,
)
from spade.suites.seeds import DEFAULT_EVAL_SEEDS

INVALID = 1


def read_source(path: str) -> str:
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read ({exc})") from None


def sandbox_config(args: argparse.Namespace) -> SandboxConfig:
    return SandboxConfig(backend=args.backend, call_timeout_s=args.timeout)


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def print_report(path: str, report: ValidationReport) -> None:
    rows = [("✓" if c.passed else "✗", c.name, c.detail) for c in report.checks]
    print(tabulate(rows, headers=["", "check", "detail"], tablefmt="simple"))
    verdict = "VALID" if report.valid else "INVALID"
    name = report.class_name or "?"
    ref = "n/a" if report.reference_return is None else f"{report.reference_return:.3f}"
    print(f"\n{path}: {verdict} ({name}, reference return {ref}, {report.seconds:.2f} s)")


def cmd_check(args: argparse.Namespace) -> int:
    source = read_source(args.file)
    if args.seeds < 1:
        raise UsageError(f"--seeds must be ≥ 1, got {args.seeds}")
    config = sandbox_config(args)
    report = validate_source(source, Path(args.file).name, seeds=args.seeds, config=config)
    if args.json:
        keys = ("valid", "class_name", "checks", "reference_return", "seconds")
        data = report.to_json()
        extra = {"metadata": data["metadata"], "sandbox": describe_backend(config)}
        print(json.dumps({k: data[k] for k in keys} | extra))
    else:
        print_report(args.file, report)
    return 0 if report.valid else 1


def cmd_freeze(args: argparse.Namespace) -> int:
    if args.eval_seeds < 1 or args.seeds < 1:
        raise UsageError("--eval-seeds and --seeds must be ≥ 1")
    options = FreezeOptions(
        eval_seeds=args.eval_seeds,
        check_seeds=args.seeds,
        default_kind=args.kind,
        description=args.description,
        license=args.license,
        strict=args.strict,
        sandbox=sandbox_config(args),
        progress=not args.json,
    )
    report = freeze_suite(args.src, args.name, args.version, args.root, options)
    if args.json:
        print_json(report.to_json())
    else:
        print_freeze(report)
    return 0


def print_freeze(report: FreezeReport) -> None:
    manifest = report.manifest
    kinds = ", ".join(f"{kind} {n}" for kind, n in manifest.counts_by_kind().items())
    per_source = sum(report.env_seconds.values()) / max(1, len(report.env_seconds))
    for rejection in report.rejected:
        print(f"rejected  {rejection.origin}: {rejection.reason}")
    for dup in report.duplicates:
        how = "identical" if dup.exact else "same code up to comments, docstrings and layout"
        print(f"duplicate {dup.origin}: of {dup.duplicate_of} ({how})")
    print(
        f"froze {manifest.ref} at {report.path}: {len(manifest.envs)} envs ({kinds}); "
        f"{len(report.rejected)} rejected, {len(report.duplicates)} duplicates; "
        f"{report.seconds:.1f} s ({per_source:.2f} s per checked source)"
    )


def cmd_verify(args: argparse.Namespace) -> int:
    report = verify_suite(
        args.suite,
        args.root,
        recheck=not args.no_recheck,
        config=sandbox_config(args),
        progress=not args.json,
    )
    if args.json:
        print_json(report.to_json())
    else:
        print_verify(report)
    return 0 if report.ok else INVALID


def print_verify(report: VerifyReport) -> None:
    name = report.ref or str(report.path)
    for problem in report.problems:
        print(f"error: {report.path / problem.file}: {problem.message}", file=sys.stderr)
    scope = "hashes and schema" if not report.rechecked else "hashes, schema and sandbox re-check"
    if report.ok:
        print(f"OK {name}: {report.envs} envs pass {scope} ({report.seconds:.1f} s)")
    else:
        print(f"FAILED {name}: {len(report.problems)} problems ({scope}, {report.seconds:.1f} s)")


def cmd_list(args: argparse.Namespace) -> int:
    listings = list_suites(args.root)
    rows = []
    for item in listings:
        counts = item.manifest.counts_by_kind() if item.manifest else {}
        rows.append(
            {
                "suite": item.name,
                "version": item.version,
                "envs": len(item.manifest.envs) if item.manifest else None,
                **{kind: counts.get(kind) for kind in KINDS},
                "created": item.manifest.created if item.manifest else None,
                "error": item.error,
            }
        )
    if args.json:
        print_json(rows)
    elif not rows:
        print(f"no suites under {' or '.join(map(str, lookup_roots(args.root)))}")
    else:
        if not any(row["error"] for row in rows):
            for row in rows:
                del row["error"]
        print(tabulate(rows, headers="keys", tablefmt="github"))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    # The manifest is enough to show (schema-checked); `verify` is what checks the files.
    path = resolve_suite(args.suite, args.root)
    manifest = read_manifest(path)
    if args.json:
        print_json(manifest.to_json() | {"path": str(path)})
        return 0
    print(f"{manifest.ref} ({path})")
    print(f"created {manifest.created}, spade {manifest.spade_version}, license {manifest.license}")
    if manifest.description:
        print(manifest.description)
    rows = [
        (
            env.id,
            env.kind,
            env.skill,
            env.difficulty,
            env.reference_scores.solution_return,
            env.reference_scores.random_return,
            env.reference_scores.random_success_rate,
            len(env.eval_seeds),
        )
        for env in manifest.envs
    ]
    headers = [
        "id",
        "kind",
        "skill",
        "difficulty",
        "solution return",
        "random return",
        "random solved",
        "#seeds",
    ]
    print(tabulate(rows, headers=headers, tablefmt="github", floatfmt=".3f"))
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    result = publish_suite(args.suite, args.out, args.root, hf_repo=args.hf_repo)
    if args.json:
        print_json(
            {
                "archive": str(result.archive),
                "sha256": result.sha256,
                "checksum_file": str(result.checksum_file),
                "hub_url": result.hub_url,
            }
        )
    else:
        print(f"archive {result.archive}")
        print(f"sha256  {result.sha256}")
        if result.hub_url:
            print(f"pushed  {result.hub_url}")
    return 0


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per env call")
    add_sandbox_argument(parser, "--backend")


def add_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        help="suites folder (default: $SPADE_SUITES_ROOT, else ./envs_snapshots, which lookups "
        "follow with the suites spade ships)",
    )


def build_parser() -> argparse.ArgumentParser:
    # @FILE arguments expand to the lines of FILE: `freeze @envs.txt` freezes a list of files.
    parser = argparse.ArgumentParser(
        prog="spade-suite", description=__doc__, fromfile_prefix_chars="@"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="validate one env source in the sandbox")
    check.add_argument("file", help="Python file defining one *Env class")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument("--seeds", type=int, default=3, help="seeds to play (default 3)")
    add_sandbox_options(check)
    check.set_defaults(run=cmd_check)

    freeze = commands.add_parser("freeze", help="check env sources and write a new suite version")
    freeze.add_argument(
        "src",
        nargs="+",
        help="env files, folders of them, a training run folder, or @LIST (one path per line)",
    )
    freeze.add_argument("--name", required=True, help="suite name, e.g. spade-seed")
    freeze.add_argument("--version", required=True, help="semantic version, e.g. 1.0.0")
    add_root_option(freeze)
    freeze.add_argument("--kind", choices=KINDS, help="kind for envs whose metadata has none")
    freeze.add_argument(
        "--eval-seeds",
        type=int,
        default=DEFAULT_EVAL_SEEDS,
        help=f"evaluation seeds per env (default {DEFAULT_EVAL_SEEDS})",
    )
    freeze.add_argument("--seeds", type=int, default=3, help="check seeds per env (default 3)")
    freeze.add_argument("--description", default="", help="one-line suite description")
    freeze.add_argument("--license", default="Apache-2.0", help="license of the env sources")
    freeze.add_argument(
        "--strict",
        action="store_true",
        help="write nothing if any source is rejected or a duplicate",
    )
    freeze.add_argument("--json", action="store_true", help="print the freeze report as JSON")
    add_sandbox_options(freeze)
    freeze.set_defaults(run=cmd_freeze)

    verify = commands.add_parser("verify", help="check a suite's schema, hashes and envs")
    verify.add_argument("suite", help="NAME@VERSION or a suite folder")
    add_root_option(verify)
    verify.add_argument("--no-recheck", action="store_true", help="skip the sandbox re-check")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    add_sandbox_options(verify)
    verify.set_defaults(run=cmd_verify)

    listing = commands.add_parser("list", help="list suites and versions with counts by kind")
    add_root_option(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(run=cmd_list)

    show = commands.add_parser("show", help="show a suite's envs and reference scores")
    show.add_argument("suite", help="NAME@VERSION or a suite folder")
    add_root_option(show)
    show.add_argument("--json", action="store_true", help="print the manifest as JSON")
    show.set_defaults(run=cmd_show)

    publish = commands.add_parser("publish", help="write a reproducible .tar.gz and its sha256")
    publish.add_argument("suite", help="NAME@VERSION or a suite folder")
    publish.add_argument("--out", required=True, help="folder for the archive")
    add_root_option(publish)
    publish.add_argument("--hf-repo", help="also push to this Hugging Face dataset repo (network)")
    publish.add_argument("--json", action="store_true", help="print JSON")
    publish.set_defaults(run=cmd_publish)
    return parser


@one_line_errors("spade-suite")
def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(args, "backend"):  # the commands that run env code
        use_sandbox("spade-suite", sandbox_config(args))
        if not getattr(args, "no_recheck", False):
            resolve_backend(sandbox_config(args))  # no usable sandbox: one line, exit 2
    try:
        return int(args.run(args))
    except SuiteError as exc:  # bad suite input: one line, exit 1 (usage errors exit 2)
        fail(f"spade-suite: {exc}", INVALID)


if __name__ == "__main__":
    sys.exit(main())
