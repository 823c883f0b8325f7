"""Ship a release by completing exactly the tasks it depends on, within a tight hour budget.

Teaches planning over a hidden dependency graph: only direct dependencies are visible, one
task at a time, so the agent must walk the graph backwards from the goal, then work in an
order that respects it. Hours spent on tasks the release does not need are never recovered.
Lower difficulty levels have fewer tasks, a smaller part of them needed, and a stated turn budget.
"""

import json
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
# fmt: off
_TITLES = ["Write API spec", "Set up CI", "Design database schema", "Implement login",
           "Write unit tests", "Security review", "Load testing", "Update user docs",
           "Translate UI", "Design new logo", "Set up staging server", "Migrate old data",
           "Beta feedback survey", "Fix critical bugs", "Performance tuning", "Write release notes",
           "Accessibility audit", "Marketing page", "Train support team", "Refactor billing module"]
# fmt: on
# Difficulty levels: (tasks besides the release, range of the release's direct dependencies,
# range of tasks the release needs besides itself, turn budget). The top level is the original
# task; level 0 is one dependency, a 3-call episode.
LEVELS = [
    (3, (1, 1), (1, 1), 6),
    (4, (1, 2), (2, 2), 9),
    (6, (2, 2), (3, 4), 15),
    (9, (2, 3), (4, 6), 24),
    (12, (2, 3), (5, 8), 35),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _tool(name, description, **params):
    """An OpenAI-style function schema; each keyword is a required parameter (type, description)."""
    properties = {key: {"type": kind, "description": text} for key, (kind, text) in params.items()}
    parameters = {"type": "object", "properties": properties, "required": list(params)}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _parse_call(action, tools):
    """Check a JSON tool call against the schemas; return (name, arguments, error message)."""
    try:
        call = json.loads(action)
    except (TypeError, ValueError, RecursionError):
        call = None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None, None, 'Error: send one tool call as JSON {"name": ..., "arguments": {...}}.'
    specs = {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}
    name, args = call["name"], call.get("arguments")
    if name not in specs:
        return None, None, f"Error: unknown tool {name!r}; available: {', '.join(specs)}."
    if isinstance(args, str):  # some clients send the arguments as a JSON-encoded string
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            args = None
    args = {} if args is None and not specs[name]["required"] else args
    if not isinstance(args, dict):
        return None, None, f"Error: the arguments of {name} must be a JSON object."
    props = specs[name]["properties"]
    problems = [f"missing argument {key!r}" for key in specs[name]["required"] if key not in args]
    problems += [f"unknown argument {key!r}" for key in args if key not in props]
    problems += [
        f"argument {key!r} must be of type {props[key]['type']}"
        for key, value in args.items()
        if key in props
        and (isinstance(value, bool) or not isinstance(value, _TYPES[props[key]["type"]]))
    ]
    if problems:
        return None, None, f"Error in {name}: {'; '.join(problems)}."
    return name, args, None


class ProjectPlannerEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "train",
        "skill": "planning",
        "difficulty": "medium",
        "hint": "Do not complete anything until you know the whole set of tasks the release "
        "needs: start at the release task, read its dependencies, then theirs, until nothing new "
        "appears. Everything outside that set wastes hours. Then complete the set so that every "
        "task comes after all of its dependencies, finishing with the release.",
    }
    tools = [
        _tool("list_tasks", "List all tasks with their status."),
        _tool(
            "get_task",
            "Show a task's hours and its direct dependencies.",
            task_id=("string", "e.g. 'T4'."),
        ),
        _tool(
            "complete_task",
            "Do a task now, spending its hours; its dependencies must be done.",
            task_id=("string", "e.g. 'T4'."),
        ),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.size, self.release_deps, (low, high), turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        rng = self._rng
        while True:  # resample until the release needs a medium-sized part of the project
            self._make_graph()
            if low <= len(self.needed) - 1 <= high:
                break
        spare = min(self.hours[t] for t in self.tasks if t not in self.needed)
        self.budget = sum(self.hours[t] for t in self.needed) + rng.randint(0, spare - 1)
        self.done, self.used = set(), 0
        self.turns, self.finished, self.solved = 0, False, False
        intro = (
            f"Ship '{self.titles[self.release]}' ({self.release}). You have {self.budget} "
            "work hours in total. A task can be completed only after all of its "
            "dependencies; completing it spends its hours. The project fails as soon as the "
            "hours left cannot cover the release's remaining tasks. The episode ends when "
            "the release task is completed (or the project fails). Tools: list_tasks, "
            "get_task, complete_task."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        return intro, {"tasks": len(self.tasks)}

    def _make_graph(self):
        """Tasks in a random topological order; ids are shuffled so the order stays hidden."""
        rng, size = self._rng, self.size
        titles = rng.sample(_TITLES, size)
        ids = [f"T{n}" for n in rng.sample(range(1, size + 2), size + 1)]
        self.tasks = ids
        self.titles = dict(zip(ids, titles + [f"Release v{rng.randint(2, 9)}.0"], strict=True))
        self.hours = {t: rng.randint(1, 8) for t in ids}
        self.deps = {}
        for i, task in enumerate(ids[:size]):
            self.deps[task] = sorted(rng.sample(ids[:i], min(i, rng.choice([0, 1, 1, 2, 2]))))
        self.release = ids[size]
        release_deps = rng.sample(ids[size // 2 : size], rng.randint(*self.release_deps))
        self.deps[self.release] = sorted(release_deps)
        self.needed = self._closure(self.release)

    def _closure(self, task):
        needed, stack = set(), [task]
        while stack:
            current = stack.pop()
            if current not in needed:
                needed.add(current)
                stack.extend(self.deps[current])
        return needed

    # -- tools -----------------------------------------------------------------------------
    def _do_list_tasks(self):
        return "\n".join(
            f"{t} {self.titles[t]} [{'done' if t in self.done else 'todo'}]"
            for t in sorted(self.tasks, key=lambda t: int(t[1:]))
        )

    def _do_get_task(self, task_id):
        task = task_id.strip().upper()
        if task not in self.deps:
            return f"Error: no task {task_id!r}."
        deps = ", ".join(self.deps[task]) or "nothing"
        status = "done" if task in self.done else "todo"
        title, hours = self.titles[task], self.hours[task]
        return f"{task} '{title}': {hours} h, depends on {deps}. Status: {status}."

    def _do_complete_task(self, task_id):
        task = task_id.strip().upper()
        if task not in self.deps:
            return f"Error: no task {task_id!r}."
        if task in self.done:
            return f"{task} is already done."
        if not set(self.deps[task]) <= self.done:
            return f"Blocked: {task} still has unfinished dependencies."
        self.done.add(task)
        self.used += self.hours[task]
        left = self.budget - self.used
        if task == self.release:
            self.finished = self.solved = True
            return f"{self.titles[task]} shipped with {left} h to spare. Well done!"
        still_needed = sum(self.hours[t] for t in self.needed - self.done)
        if still_needed > left:
            self.finished = True
            return (
                f"Completed {task}, but only {left} h are left and the release still needs "
                f"{still_needed} h: the project has failed."
            )
        return f"Completed {task} ({self.hours[task]} h). Hours left: {left}."

    # -- goal ------------------------------------------------------------------------------
    def _reward(self):
        if self.solved:
            return 1.0
        return round(min(0.95, len(self.done & self.needed) / len(self.needed)), 4)

    def step(self, action):
        if self.finished or self.turns >= self.max_turns:
            obs = "The episode is over."
        else:
            self.turns += 1
            name, args, error = _parse_call(action, self.tools)
            obs = error or getattr(self, f"_do_{name}")(**args)
        if self.turns >= self.max_turns and self.level < len(LEVELS) - 1:
            self.finished = True  # a stated budget: running out of it ends the episode
        truncated = not self.finished and self.turns >= self.max_turns
        return obs, self._reward(), self.finished, truncated, {"turn": self.turns}

    def solution(self):
        explored, frontier, calls = [], [self.release], []
        while frontier:  # walk the graph backwards from the release, as an agent would
            task = frontier.pop(0)
            if task not in explored:
                explored.append(task)
                calls.append(("get_task", {"task_id": task}))
                frontier.extend(self.deps[task])
        order = [t for t in self.tasks if t in self.needed]  # generation order is topological
        calls += [("complete_task", {"task_id": t}) for t in order]
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
