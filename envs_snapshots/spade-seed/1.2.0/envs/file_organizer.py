"""Tidy a small file system by rules that are written down only in a README file.

Teaches reading instructions before acting and inspecting contents before deciding: where a
file belongs depends on its extension, and whether it should be kept at all depends on what
is written inside it. Lower difficulty levels have fewer rules and files, a stated turn budget,
and show the README (and at the lowest two every file) in the intro.
"""

import json
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}

# category -> (extensions, candidate folder names)
_CATEGORIES = {
    "images": ([".jpg", ".png", ".gif"], ["/photos", "/images", "/pictures"]),
    "documents": ([".txt", ".md", ".doc"], ["/docs", "/notes", "/writing"]),
    "data": ([".csv", ".json", ".xlsx"], ["/data", "/tables", "/datasets"]),
    "audio": ([".mp3", ".wav", ".ogg"], ["/music", "/audio", "/sounds"]),
}
_OTHER_FOLDERS = ["/misc", "/other", "/unsorted"]
_MARKERS = ["DRAFT", "SCRATCH", "TEMP"]
# fmt: off
_STEMS = ["budget", "holiday", "report", "recipe", "invoice", "meeting", "garden", "trip", "thesis",
          "summary", "birthday", "sales", "plan", "song", "interview", "survey"]
# fmt: on
# Difficulty levels: (folder rules by extension, range of inbox files, range of leftover files
# to delete, what the intro shows (0 nothing, 1 the README, 2 the README and every file), turn
# budget). The top level is the original task; level 0 is two files in a 3-call episode.
LEVELS = [
    (1, (2, 2), (1, 1), 2, 5),
    (2, (3, 3), (1, 1), 2, 7),
    (2, (4, 4), (1, 2), 1, 14),
    (3, (5, 5), (1, 2), 0, 20),
    (3, (6, 8), (1, 2), 0, 30),
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


class FileOrganizerEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "heldout",
        "skill": "rule following",
        "difficulty": "easy",
        "hint": "Read the README first and write its rules down. Then open every file in the "
        "inbox before moving it: a rule about contents overrides the rules about extensions. "
        "Deleting is permanent, so only delete what the README says to delete.",
    }
    tools = [
        _tool(
            "list_dir",
            "List the folders and files directly inside a folder.",
            path=("string", "Absolute folder path, e.g. '/'."),
        ),
        _tool("read_file", "Return the text of a file.", path=("string", "Absolute file path.")),
        _tool(
            "move_file",
            "Move a file into a folder (the folder is created if needed).",
            path=("string", "Absolute path of the file."),
            folder=("string", "Absolute path of the destination folder."),
        ),
        _tool("delete_file", "Delete a file permanently.", path=("string", "Absolute file path.")),
        _tool("finish", "Declare the organising done; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        rules, files, self.drafts, self.shown, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        rng = self._rng
        ruled = rng.sample(sorted(_CATEGORIES), rules)
        self.folders = {cat: rng.choice(_CATEGORIES[cat][1]) for cat in ruled}
        self.other_folder = rng.choice(_OTHER_FOLDERS)
        self.marker = rng.choice(_MARKERS)
        self.files = {"/README.txt": self._readme(ruled)}
        self.expected = {}  # original inbox path -> final path (None: must be deleted)
        self.location = {}  # original inbox path -> current path (None: deleted)
        self._make_inbox(rng.randint(*files))
        self.turns, self.finished, self.solved = 0, False, False
        intro = (
            "Your home folder is a mess. Organise every file in /inbox according to the "
            "rules in /README.txt. Tools: list_dir, read_file, move_file, delete_file, "
            "finish. Call finish when you are done; the episode ends then."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            intro += f"\n{self._do_read_file('/README.txt')}"
        if self.shown == 2:
            intro += "".join(f"\n{self._do_read_file(path)}" for path in self.location)
        return intro, {"files_in_inbox": len(self.location)}

    def _readme(self, ruled):
        lines = ["HOUSE RULES FOR FILES", ""]
        for cat in ruled:
            exts = " or ".join(_CATEGORIES[cat][0])
            lines.append(f"- Files ending in {exts} go to {self.folders[cat]}.")
        lines.append(f"- Every other file goes to {self.other_folder}.")
        lines.append(
            f"- A file whose FIRST line is exactly '{self.marker}' is a leftover: delete "
            "it, whatever its extension. This rule comes before all others."
        )
        lines.append("- Keep file names unchanged. Leave this README where it is.")
        return "\n".join(lines)

    def _make_inbox(self, count):
        rng = self._rng
        stems = rng.sample(_STEMS, count)
        drafts = set(rng.sample(range(count), rng.randint(*self.drafts)))
        all_exts = [ext for exts, _ in _CATEGORIES.values() for ext in exts]
        for i, stem in enumerate(stems):
            ext = rng.choice(all_exts)
            path = f"/inbox/{stem}{ext}"
            if i in drafts:
                body = f"{self.marker}\n{stem} work in progress, not needed any more."
            elif rng.random() < 0.3:  # decoy: the marker appears, but not on the first line
                body = f"{stem.title()} final version\nReplaces the old {self.marker} copy."
            else:
                body = f"{stem.title()} notes\nLast edited by the household."
            self.files[path] = body
            self.location[path] = path
            self.expected[path] = None if i in drafts else f"{self._folder_for(ext)}/{stem}{ext}"

    def _folder_for(self, ext):
        for cat, folder in self.folders.items():
            if ext in _CATEGORIES[cat][0]:
                return folder
        return self.other_folder

    # -- tools -----------------------------------------------------------------------------
    @staticmethod
    def _norm(path):
        return "/" + "/".join(part for part in path.strip().split("/") if part)

    def _do_list_dir(self, path):
        folder = self._norm(path)
        prefix = "" if folder == "/" else folder
        subdirs, names = set(), []
        for file_path in self.files:
            if not file_path.startswith(prefix + "/"):
                continue
            rest = file_path[len(prefix) + 1 :]
            if "/" in rest:
                subdirs.add(rest.split("/")[0] + "/")
            else:
                names.append(rest)
        entries = sorted(subdirs) + sorted(names)
        if not entries:
            return f"{folder} is empty or does not exist."
        return f"{folder}: " + ", ".join(entries)

    def _do_read_file(self, path):
        path = self._norm(path)
        if path not in self.files:
            return f"Error: no file {path}."
        return f"--- {path} ---\n{self.files[path]}"

    def _do_move_file(self, path, folder):
        path, folder = self._norm(path), self._norm(folder)
        if path not in self.files:
            return f"Error: no file {path}."
        if path == "/README.txt":
            return "Error: the README is read-only."
        target = ("" if folder == "/" else folder) + "/" + path.rsplit("/", 1)[1]
        if target in self.files:
            return f"Error: {target} already exists."
        self.files[target] = self.files.pop(path)
        self._relocate(path, target)
        return f"Moved {path} -> {target}."

    def _do_delete_file(self, path):
        path = self._norm(path)
        if path not in self.files:
            return f"Error: no file {path}."
        if path == "/README.txt":
            return "Error: the README is read-only."
        del self.files[path]
        self._relocate(path, None)
        return f"Deleted {path}."

    def _relocate(self, old, new):
        for origin, current in self.location.items():
            if current == old:
                self.location[origin] = new

    def _do_finish(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "Every file is where the rules want it. Well done!"
        return f"Finished with {sum(met)} of {len(met)} files handled correctly."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        return [self.location[origin] == self.expected[origin] for origin in sorted(self.expected)]

    def _reward(self):
        if self.solved:
            return 1.0
        met = self._conditions()
        return round(min(0.95, sum(met) / len(met)), 4)

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
        calls = [] if self.shown else [("read_file", {"path": "/README.txt"})]
        for origin, target in sorted(self.expected.items()):
            if target is None:
                calls.append(("delete_file", {"path": origin}))
            else:
                calls.append(("move_file", {"path": origin, "folder": target.rsplit("/", 1)[0]}))
        calls.append(("finish", {}))
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
