"""spade-train designer-probe: how often a checkpoint's designer writes valid, new envs.

spade-train designer-probe [--config FILE] [--set KEY=VALUE ...] [--checkpoint CKPT]
                           [--rounds N] [--out FILE.jsonl] [--json]

Runs the designer step of a training run's first iteration N times (the config's prompts,
sampling, sandbox checks with repairs, the near-duplicate guard against
`designer.known_designs`, hints) with the config's model, or CKPT (any `spade-eval` form:
`vllm:DIR`, a HF dir, an alias). Nothing is played or trained. Prints the validity and why the
rest failed; --out keeps every reply and its verdict. Default CKPT: `vllm:MODEL` when the
config generates with vLLM (`generation.backend: vllm|server`, or `auto` with vLLM
installed), else MODEL.
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from pathlib import Path

from spade.cli.errors import UsageError
from spade.cli.settings import command_parser, set_overrides


def build_parser() -> argparse.ArgumentParser:
    prog = "spade-train designer-probe"
    parser = command_parser(prog, __doc__, "spade-train YAML config", "designer.temperature=0.5")
    parser.add_argument("--checkpoint", help="model to probe (default: the config's model)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=8,
        help="designer steps, each designs_per_iteration x group_size replies (default 8)",
    )
    parser.add_argument("--out", type=Path, help="write every candidate here (JSON lines)")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    return parser


def designer_probe(argv: list[str]) -> int:
    from spade.cli.sandbox_choice import use_sandbox
    from spade.corpus import CorpusError, CorpusOptions, open_corpus
    from spade.models import BuiltinModelError, ModelSpecError, load_policy
    from spade.models.policy import PolicyError
    from spade.rollout import PolicyResponder
    from spade.sandbox import resolve_backend
    from spade.selfplay.config import ConfigError, load_config
    from spade.selfplay.design_step import known_designs
    from spade.selfplay.designer_probe import probe_designer, write_designs
    from spade.selfplay.generation import resolved_backend
    from spade.selfplay.memory import cold_start_envs
    from spade.suites import SuiteError

    args = build_parser().parse_args(argv)
    if args.rounds < 1:
        raise UsageError(f"--rounds must be >= 1, got {args.rounds}")
    overrides = set_overrides(args.set)
    try:
        config = load_config(args.config, overrides)
        known = known_designs(config.designer.known_designs)
        cold_start = cold_start_envs(config.memory.cold_start_suite)
        corpus = None
        if not config.no_corpus:
            corpus = open_corpus(
                config.corpus.source,
                CorpusOptions(min_words=config.corpus.min_words, max_words=config.corpus.max_words),
            )
    except (ConfigError, CorpusError, SuiteError) as exc:
        raise UsageError(str(exc)) from None
    use_sandbox("spade-train designer-probe", config.sandbox)
    resolve_backend(config.sandbox)  # no usable sandbox: one line now, before the model loads
    vllm = resolved_backend(config.generation.backend, world_size=1) in ("vllm", "server")
    spec = args.checkpoint or (f"vllm:{config.model}" if vllm else config.model)
    try:
        policy = load_policy(spec)
        respond = PolicyResponder(policy, f"probe/{spec}", None, config.generation_batch_size)
        # --out is rewritten after every round, so a stopped probe keeps its finished rounds.
        save = None if args.out is None else partial(write_designs, args.out)
        result = probe_designer(
            config,
            respond,
            corpus,
            cold_start,
            known,
            config.sandbox,
            args.rounds,
            progress=True,
            after_round=save,
        )
    except (ModelSpecError, BuiltinModelError, PolicyError) as exc:
        raise UsageError(str(exc)) from None
    summary = {"checkpoint": spec, **result.summary()}
    if args.json:
        print(json.dumps(summary))
        return 0
    failures = ", ".join(f"{n} {kind}" for kind, n in summary["failures"].items()) or "none"
    first = ", ".join(f"{n} {kind}" for kind, n in summary["first_failures"].items()) or "none"
    print(
        f"{spec}: {result.valid} of {len(result.candidates)} designs valid "
        f"({100 * result.validity:.0f}%); failed: {failures}; cut off at "
        f"{config.designer.max_gen_toks} tokens: {summary['cut_off']}"
    )
    print(f"first replies, before repairs, failed: {first}")
    print(f"seconds: {summary['seconds']}")
    if args.out is not None:
        print(f"designs: {args.out}")
    return 0
