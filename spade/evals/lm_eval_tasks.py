"""lm-eval task definitions for one declaration: render our templates, load them with lm-eval.

A template in `benchmarks/lm_eval_tasks/` `include:`s one of lm-eval's own task YAMLs and
overrides only the data source, so prompts, few-shot examples, filters and metrics stay
lm-eval's and our numbers stay comparable with its. Two paths are known only at run time
(lm-eval's install dir and --data-dir), so templates hold `${...}` placeholders and are
rendered into a temporary directory that lm-eval's `TaskManager` reads:

- `${lm_eval_tasks}`: lm-eval's `tasks/` directory (the include target);
- `${data_dir}`: the absolute --data-dir;
- `${subtask}`: one entry of `options.subtasks` (the template is rendered once per entry);
- `${slice_file}`: that subtask's rows of `options.slice.file`, written by us as JSONL.

Without --data-dir the template's data-source keys are dropped, so lm-eval's own hub
source applies (with the declaration's `hub` path, config name and split, when given).
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from spade.evals.declarations import BENCHMARKS_DIR, Declaration, DeclarationError

if TYPE_CHECKING:
    from lm_eval.tasks import TaskManager

TEMPLATES_DIR = BENCHMARKS_DIR / "lm_eval_tasks"
DATA_SOURCE_KEYS = ("dataset_path", "dataset_name", "dataset_kwargs")
AnswerReading = Literal["filter", "minerva", "math_verify", "aime"]


class SliceSource(BaseModel):
    """One local file holding every subtask's rows, told apart by a field."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="path relative to --data-dir")
    field: str = Field(description="the field whose value names a row's subtask")


class LmEvalOptions(BaseModel):
    """The `options:` of a `runner: lm_eval` declaration."""

    model_config = ConfigDict(extra="forbid")

    template: str = Field(description="task template file in benchmarks/lm_eval_tasks/")
    lm_eval_task: str = Field(
        description="the lm-eval task the template includes (checked at load; may use ${subtask})"
    )
    subtasks: list[str] = Field(
        default_factory=list, description="render the template once per subtask, in this order"
    )
    ids: Literal["row", "subtask/row", "concatenated"] = Field(
        "row",
        description="SAMPLE_IDs: row index (or id_field) of one task; SUBTASK/INDEX; or the "
        "row index over all subtasks concatenated in order",
    )
    id_field: str | None = Field(None, description="a doc field holding the dataset's own id")
    slice: SliceSource | None = Field(
        None, description="split one local file into per-subtask files (${slice_file})"
    )
    num_fewshot: int | None = Field(None, ge=0, description="override the task's few-shot count")
    fewshot_as_multiturn: bool = Field(
        True, description="few-shot examples as user/assistant turns (else one user turn)"
    )
    system_instruction: str | None = Field(None, description="system prompt lm-eval prepends")
    answer: AnswerReading = Field(
        "filter",
        description="where the parsed answer comes from: the primary filter's output, or the "
        "extraction a task's process_results does (minerva, math_verify, aime)",
    )
    invalid_answers: list[str] = Field(
        default_factory=lambda: ["[invalid]"],
        description="filter outputs that mean nothing was extracted (lm-eval's fallbacks)",
    )
    local_files: list[str] = Field(
        default_factory=list,
        description="files expected under --data-dir when the declaration pins no `data`",
    )


def parse_options(declaration: Declaration) -> LmEvalOptions:
    """The declaration's options, validated; errors name the file and the field."""
    where = declaration.source_file or declaration.name
    options = declaration.typed_options(LmEvalOptions)
    if (options.ids == "row") != (not options.subtasks):
        raise DeclarationError(
            f"{where}: options.ids {options.ids!r} needs "
            + ("no subtasks" if options.ids == "row" else "options.subtasks")
        )
    if options.id_field and options.ids != "row":
        raise DeclarationError(f"{where}: options.id_field works only with ids: row")
    if declaration.generation.n != 1:
        # lm-eval repeats a request through the task's `repeats`, not through n.
        raise DeclarationError(f"{where}: generation.n must be 1 for runner lm_eval")
    return options


@dataclass(frozen=True)
class RenderedTask:
    name: str
    """The lm-eval task name of the rendered YAML (e.g. `spade_bbh_snarks`)."""
    subtask: str | None


@dataclass
class TaskSet:
    """Rendered task YAMLs in a directory, and lm-eval's view of them."""

    directory: Path
    tasks: list[RenderedTask]

    def task_manager(self) -> TaskManager:
        from lm_eval.tasks import TaskManager

        # Our YAMLs include lm-eval's by absolute path, so its 20-second index of every
        # built-in task is not needed.
        return TaskManager(include_path=str(self.directory), include_defaults=False)

    @property
    def names(self) -> list[str]:
        return [task.name for task in self.tasks]


def lm_eval_tasks_dir() -> Path:
    import lm_eval.tasks

    return Path(lm_eval.tasks.__file__).resolve().parent


def render_tasks(
    declaration: Declaration, options: LmEvalOptions, data_dir: Path | None, out_dir: Path
) -> TaskSet:
    """Render the declaration's template into `out_dir`, once per subtask (or once)."""
    template_path = TEMPLATES_DIR / options.template
    try:
        template = yaml.safe_load(template_path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DeclarationError(f"{declaration.name}: cannot read {template_path}: {exc}") from None
    slices: dict[str, Path] = {}
    if data_dir is None:
        template = _hub_source(template, declaration)
    else:
        _check_local_files(declaration, options, data_dir)
        if options.slice is not None:
            slices = _write_slices(data_dir, options.slice, options.subtasks, out_dir)
    subtasks: list[str | None] = list(options.subtasks) or [None]
    tasks = []
    for subtask in subtasks:
        mapping = {
            "lm_eval_tasks": str(lm_eval_tasks_dir()),
            "data_dir": str(data_dir.resolve()) if data_dir else "",
            "subtask": subtask or "",
            "slice_file": str(slices.get(subtask or "", "")),
        }
        config = _render_one(template, mapping, options, template_path, local=bool(data_dir))
        config["generation_kwargs"] = _generation_kwargs(config, declaration)
        # The datasets cache goes with the rendered files: slice files live in a temp dir,
        # and cache entries for them would otherwise pile up in ~/.cache/huggingface.
        if data_dir is not None:
            config["dataset_kwargs"]["cache_dir"] = str(out_dir / "hf-datasets")
        name = str(config["task"])
        (out_dir / f"{name}.yaml").write_text(yaml.safe_dump(config, sort_keys=False), "utf-8")
        tasks.append(RenderedTask(name, subtask))
    return TaskSet(out_dir, tasks)


def _render_one(
    template: dict[str, Any],
    mapping: dict[str, str],
    options: LmEvalOptions,
    template_path: Path,
    local: bool,
) -> dict[str, Any]:
    config: dict[str, Any] = _substitute(template, mapping, template_path)
    if local and not isinstance(config.get("dataset_kwargs"), dict):
        raise DeclarationError(f"{template_path}: no local data source (dataset_kwargs)")
    if options.num_fewshot is not None:
        # In the task config rather than simple_evaluate's num_fewshot, which logs a warning
        # per task even when the count is the task's own.
        config["num_fewshot"] = options.num_fewshot
    expected_task = _substitute(options.lm_eval_task, mapping, template_path)
    upstream = _included_task(config, expected_task, template_path)
    config.setdefault("generation_kwargs", upstream.get("generation_kwargs") or {})
    return config


def _generation_kwargs(config: dict[str, Any], declaration: Declaration) -> dict[str, Any]:
    """lm-eval's generation_kwargs (its `until` stops) with the declared budget and decoding.

    Written into the task config (not passed as simple_evaluate's gen_kwargs, which warns as
    if set on a command line) so lm-eval's own record of the task shows the explicit budget:
    its default of 256 tokens silently truncates reasoning.
    """
    generation = declaration.generation
    return {
        **config["generation_kwargs"],
        "max_gen_toks": generation.max_gen_toks,
        "temperature": generation.temperature,
        "do_sample": generation.temperature > 0,
    }


def _hub_source(template: dict[str, Any], declaration: Declaration) -> dict[str, Any]:
    """Drop the local data source: lm-eval's own (hub) source applies, or the declared hub."""
    config = {k: v for k, v in template.items() if k not in DATA_SOURCE_KEYS}
    hub = declaration.hub
    if hub is not None:
        config["dataset_path"] = hub.path
        if hub.name is not None:
            config["dataset_name"] = hub.name
        config["test_split"] = hub.split
    return config


def _substitute(value: Any, mapping: dict[str, str], template_path: Path) -> Any:
    # Substituting into parsed values (not YAML text) keeps odd characters in paths harmless.
    if isinstance(value, str):
        try:
            return string.Template(value).substitute(mapping)
        except (KeyError, ValueError) as exc:
            raise DeclarationError(
                f"{template_path}: bad placeholder in {value!r} ({exc})"
            ) from None
    if isinstance(value, list):
        return [_substitute(v, mapping, template_path) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, mapping, template_path) for k, v in value.items()}
    return value


def _included_task(
    config: dict[str, Any], expected_task: str, template_path: Path
) -> dict[str, Any]:
    """lm-eval's task config that the template includes; it must be the declared task."""
    from lm_eval.tasks._yaml_loader import load_yaml

    include = Path(str(config.get("include", "")))
    if not include.is_file():
        raise DeclarationError(
            f"{template_path}: includes {include}, which this lm-eval install does not have"
        )
    upstream: dict[str, Any] = load_yaml(include, resolve_func=False)
    if upstream.get("task") != expected_task:
        raise DeclarationError(
            f"{template_path}: {include} defines task {upstream.get('task')!r}, "
            f"expected {expected_task!r}"
        )
    return upstream


def _check_local_files(declaration: Declaration, options: LmEvalOptions, data_dir: Path) -> None:
    declaration.verify_data(data_dir)
    for relative in options.local_files:
        if not (data_dir / relative).is_file():
            raise DeclarationError(
                f"{declaration.name}: needs {data_dir / relative} under --data-dir "
                "(or run without --data-dir to read it from the Hugging Face hub)"
            )


def _write_slices(
    data_dir: Path, source: SliceSource, subtasks: list[str], out_dir: Path
) -> dict[str, Path]:
    """Split `source.file` into one JSONL per subtask (original lines, unchanged).

    Subtask ids are concatenated row indices, so they equal the file's own row indices only
    if the file holds the subtasks as contiguous blocks in `subtasks` order: checked.
    """
    path = data_dir / source.file
    blocks: dict[str, list[str]] = {name: [] for name in subtasks}
    order: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        value = json.loads(line).get(source.field)
        if value not in blocks:
            raise DeclarationError(
                f"{path}:{number}: {source.field}={value!r} is not in options.subtasks"
            )
        blocks[value].append(line)
        order.append(value)
    if order != [name for name in subtasks for _ in blocks[name]]:
        raise DeclarationError(
            f"{path}: rows are not grouped by {source.field!r} in the order of "
            "options.subtasks, so concatenated row indices would not be the file's row indices"
        )
    slices_dir = out_dir / "slices"
    slices_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, lines in blocks.items():
        written[name] = slices_dir / f"{name}.jsonl"
        written[name].write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return written


@dataclass(frozen=True)
class DocRef:
    """Where a SAMPLE_ID lives: the rendered task and the doc's index in its eval split."""

    sample_id: str
    task: str
    index: int


def catalog(task_set: TaskSet, options: LmEvalOptions) -> list[DocRef]:
    """Every sample of the task set in dataset order, read through lm-eval's own loading
    (so doc indices are exactly lm-eval's `doc_id`s)."""
    loaded = task_set.task_manager().load(task_set.names)["tasks"]
    refs: list[DocRef] = []
    for task in task_set.tasks:
        docs = loaded[task.name].eval_docs
        for index in range(len(docs)):
            if options.ids == "subtask/row":
                sample_id = f"{task.subtask}/{index}"
            elif options.ids == "concatenated":
                sample_id = str(len(refs))
            elif options.id_field:
                sample_id = str(docs[index][options.id_field])
            else:
                sample_id = str(index)
            refs.append(DocRef(sample_id, task.name, index))
    if len({ref.sample_id for ref in refs}) != len(refs):
        raise DeclarationError(f"{task_set.tasks[0].name}: sample ids are not unique")
    return refs
