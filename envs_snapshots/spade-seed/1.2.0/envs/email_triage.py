"""Triage an inbox by rules stated in a pinned memo, reading each email before filing it.

Teaches gathering information before acting: the rules are in one email, senders that look
alike differ in their address, and the words that decide a folder are in the bodies, not the
subjects. Rules apply in order, so a message matching two rules follows the earlier one.
Lower difficulty levels have fewer kinds of email, a stated turn budget, and show the memo (and
at the lowest two every email) in the intro.
"""

import json
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
_VIPS = [
    ("Dana Whitfield", "northwind.co"),
    ("Marco Bellini", "bellini-foods.it"),
    ("Priya Raman", "ramanlabs.io"),
    ("Tom Okafor", "okafor-build.com"),
]
_ACCOUNTANTS = ["ledgerline.com", "taxwise.net", "clearbooks.org"]
_VENDORS = [
    ("Sparkle Cleaning", "sparkleclean.com", "office cleaning"),
    ("NetHost", "nethost.io", "web hosting"),
    ("Copy Corner", "copycorner.biz", "printing"),
]
_NEWSLETTERS = [
    ("Gadget Weekly", "gadgetweekly.com"),
    ("Garden Digest", "gardendigest.org"),
    ("Startup Brief", "startupbrief.news"),
]
_FRIENDS = [
    ("Lena Fischer", "Lunch on Friday? I found a new ramen place near the office."),
    ("Sam Ortiz", "Here are the photos from the team hike, enjoy!"),
    ("Kai Tanaka", "Can you send me the slides from yesterday's talk?"),
]
_SUBJECTS = ["Quick note", "Following up", "This month", "Hello again", "Update", "A question"]
_FOLDERS = {
    "vip": ["Clients", "Priority"],
    "finance": ["Finance", "Accounts"],
    "news": ["Newsletters", "Reading"],
    "rest": ["Archive", "Later"],
}
# Difficulty levels: (ranges of key-client emails, newsletters and friends' emails; whether the
# look-alike sender, the vendor invoice and the accountant's newsletter (the rule-order trap)
# are there; what the intro shows (0 nothing, 1 the memo, 2 the memo and every email); turn
# budget). The accountant always writes. The top level is the original task; level 0 is two
# emails filed in a 3-call episode.
LEVELS = [
    ((0, 0), (0, 0), (1, 1), (0, 0, 0), 2, 5),
    ((1, 1), (1, 1), (1, 1), (0, 0, 0), 2, 9),
    ((1, 1), (1, 1), (1, 1), (1, 1, 0), 1, 22),
    ((1, 1), (1, 1), (1, 1), (1, 1, 1), 0, 30),
    ((1, 2), (1, 2), (1, 2), (1, 1, 1), 0, 40),
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


class EmailTriageEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "heldout",
        "skill": "information gathering",
        "difficulty": "medium",
        "hint": "Read the pinned rules memo first and note the order of its rules. Then open "
        "every email: compare full sender addresses, not display names, and look for the "
        "deciding words in the body. File each email by the first rule it matches, and for the "
        "key client reply quoting the reference code from their own message.",
    }
    tools = [
        _tool(
            "list_emails",
            "List the emails in a folder (id, sender, subject).",
            folder=("string", "Folder name, e.g. 'Inbox'."),
        ),
        _tool(
            "read_email",
            "Show an email's sender, subject and body.",
            email_id=("integer", "The email id."),
        ),
        _tool(
            "move_email",
            "Move an email into a folder (created if needed).",
            email_id=("integer", "The email id."),
            folder=("string", "Destination folder."),
        ),
        _tool(
            "reply",
            "Send a reply to an email.",
            email_id=("integer", "The email id."),
            body=("string", "The reply text."),
        ),
        _tool("finish", "Declare the triage done; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        *self.counts, self.shown, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        rng = self._rng
        self.folder_names = {kind: rng.choice(names) for kind, names in _FOLDERS.items()}
        self.vip_name, vip_domain = rng.choice(_VIPS)
        self.vip_address = f"{self.vip_name.split()[0].lower()}@{vip_domain}"
        self.accountant = rng.choice(_ACCOUNTANTS)
        self.news_first = rng.random() < 0.5
        messages = self._make_messages()
        rng.shuffle(messages)
        self.emails = {1: self._memo()}
        self.emails.update({i: m for i, m in enumerate(messages, start=2)})
        for email in self.emails.values():
            email["folder"] = "Inbox"
        self.replies = []
        self.turns, self.finished, self.solved = 0, False, False
        intro = (
            "You are triaging your inbox. The rules are in the pinned memo from your manager "
            "(email 1); leave the memo in the Inbox. Tools: list_emails, read_email, "
            "move_email, reply, finish. Call finish when done; the episode ends then."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            intro += f"\nThe memo says:\n{self.emails[1]['body']}"
        if self.shown == 2:
            intro += "\nThe Inbox:" + "".join(
                f"\n{i}: {e['sender']} | {e['subject']} | {e['body']}"
                for i, e in self.emails.items()
                if i != 1
            )
        return intro, {"emails": len(self.emails)}

    def _memo(self):
        f = self.folder_names
        news = f"- Newsletters (any email whose body has an unsubscribe line) go to {f['news']}."
        finance = (
            f"- Email from our accountants (any address @{self.accountant}) or whose body "
            f"mentions an invoice goes to {f['finance']}."
        )
        middle = [news, finance] if self.news_first else [finance, news]
        body = "\n".join(
            [
                "Triage rules. Apply the FIRST rule that matches each email:",
                f"- Email from our key client {self.vip_name} <{self.vip_address}>: reply quoting "
                f"the reference code (REF-...) from their message, then move it to {f['vip']}.",
                *middle,
                f"- Everything else goes to {f['rest']}.",
            ]
        )
        return {
            "sender": "Ruth Meyer <ruth@ourcompany.com>",
            "subject": "PINNED: triage rules",
            "body": body,
            "expected": "Inbox",
            "code": None,
        }

    def _make_messages(self):
        rng, f = self._rng, self.folder_names
        vips, news, friends, (decoys, vendors, tips) = self.counts
        first = self.vip_name.split()[0]
        messages = []
        for mentions_invoice in rng.sample([False, True], rng.randint(*vips)):
            code = f"REF-{rng.randint(1000, 9999)}"
            topic = "the invoice you sent" if mentions_invoice else "our next delivery"
            body = (
                f"Hi, could you confirm the details of {topic}? "
                f"Our reference is {code}. Thanks, {first}"
            )
            messages.append(
                self._email(f"{self.vip_name} <{self.vip_address}>", body, f["vip"], code)
            )
        decoy = f"{self.vip_name} <{first.lower()}.{self.vip_name.split()[1].lower()}@freemail.com>"
        for _ in range(decoys):
            messages.append(
                self._email(
                    decoy,
                    f"Hey, it's {first} from the book club. Are we still on for Thursday?",
                    f["rest"],
                )
            )
        messages.append(
            self._email(
                f"Accounts Team <team@{self.accountant}>",
                "Attached are the quarterly figures for your review.",
                f["finance"],
            )
        )
        for _ in range(vendors):
            vendor, domain, service = rng.choice(_VENDORS)
            messages.append(
                self._email(
                    f"{vendor} <billing@{domain}>",
                    f"Please find attached our invoice for last month's {service}. "
                    "Payment is due in 30 days.",
                    f["finance"],
                )
            )
        for name, domain in rng.sample(_NEWSLETTERS, rng.randint(*news)):
            messages.append(
                self._email(
                    f"{name} <news@{domain}>",
                    "This week's top stories and tips. To unsubscribe, use the link below.",
                    f["news"],
                )
            )
        both = f["news"] if self.news_first else f["finance"]
        for _ in range(tips):
            messages.append(
                self._email(
                    f"Tax Tips <tips@{self.accountant}>",
                    "Five ways to get ready for tax season. To unsubscribe, reply STOP.",
                    both,
                )
            )
        for name, body in rng.sample(_FRIENDS, rng.randint(*friends)):
            address = f"{name.split()[0].lower()}@{rng.choice(['mailbox.org', 'example.net'])}"
            messages.append(self._email(f"{name} <{address}>", body, f["rest"]))
        return messages

    def _email(self, sender, body, expected, code=None):
        return {
            "sender": sender,
            "subject": self._rng.choice(_SUBJECTS),
            "body": body,
            "expected": expected,
            "code": code,
        }

    # -- tools -----------------------------------------------------------------------------
    def _do_list_emails(self, folder):
        rows = [
            f"{i}: {e['sender']} | {e['subject']}"
            for i, e in self.emails.items()
            if e["folder"].lower() == folder.strip().lower()
        ]
        return "\n".join(rows) if rows else f"Folder {folder!r} is empty."

    def _do_read_email(self, email_id):
        email = self.emails.get(email_id)
        if email is None:
            return f"Error: no email {email_id}."
        return f"From: {email['sender']}\nSubject: {email['subject']}\n\n{email['body']}"

    def _do_move_email(self, email_id, folder):
        if email_id not in self.emails:
            return f"Error: no email {email_id}."
        if email_id == 1:
            return "Error: the rules memo is pinned to the Inbox."
        if not folder.strip():
            return "Error: the folder name is empty."
        self.emails[email_id]["folder"] = folder.strip()
        return f"Moved email {email_id} to {folder.strip()}."

    def _do_reply(self, email_id, body):
        if email_id not in self.emails:
            return f"Error: no email {email_id}."
        self.replies.append((email_id, body))
        return f"Reply to email {email_id} sent."

    def _do_finish(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "Inbox zero, by the rules. Well done!"
        return f"Finished with {sum(met)} of {len(met)} triage requirements met."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        """Each email in its folder, plus one condition per key-client reply quoting the code."""
        placed = [
            e["folder"].lower() == e["expected"].lower()
            for i, e in sorted(self.emails.items())
            if i != 1
        ]
        replied = [
            any(i == target and e["code"].lower() in body.lower() for i, body in self.replies)
            for target, e in sorted(self.emails.items())
            if e["code"]
        ]
        return placed + replied

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
        calls = [] if self.shown == 2 else [("list_emails", {"folder": "Inbox"})]
        if self.shown < 2:  # read what the intro does not show
            calls += [("read_email", {"email_id": i}) for i in self.emails if i > self.shown]
        for i, email in self.emails.items():
            if email["code"]:
                calls.append(("reply", {"email_id": i, "body": f"Confirming {email['code']}."}))
            if i != 1:
                calls.append(("move_email", {"email_id": i, "folder": email["expected"]}))
        calls.append(("finish", {}))
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
