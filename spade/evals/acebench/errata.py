"""Known defects of the ACEBench agent data (commit 56dd66c), and how they are scored here.

Upstream's scorer pairs a ground-truth class with the model's by exact class name and, when
none matches, silently skips it; so the misspelt names below were never compared there.
Here they are mapped to their class and compared, which their states allow, except where the
state is itself inconsistent with the apps (UNCHECKED), which stays uncompared as upstream.
"""

from __future__ import annotations

CLASS_ALIASES = {"ReminderAPI": "ReminderApi", "Reminderpi": "ReminderApi", "BaseAPI": "BaseApi"}
"""Misspelt class names in `ground_truth` (multi_step 0-1, multi_turn 7 and 9)."""

_STALE_REMINDERS = (
    "its ReminderApi state (key 'ReminderAPI', so never compared upstream) omits the seeded "
    "'To-do list' reminder that entries multi_step 14-17 and multi_turn 4-7 keep, and titles "
    "the new reminder differently from the question; it cannot be reached by any calls"
)
UNCHECKED: dict[str, dict[str, str]] = {
    "agent_multi_step_0": {"ReminderApi": _STALE_REMINDERS},
    "agent_multi_step_1": {"ReminderApi": _STALE_REMINDERS},
}
"""entry id -> {class: why its ground-truth state is not compared}."""

Fix = tuple[str, tuple[tuple[str, str], ...]]
_PIZZA: Fix = (
    "orders 'Super Supreme', which the menu lacks",
    (("'Super Supreme'", "'Super Supreme Pizza'"),),
)
_DEVICE = "the device starts logged out and the path never logs it in"
_DEVICE_LATE: Fix = (
    f"second path: {_DEVICE}",
    (("[get_latest_message_id()]", "[login_device(), get_latest_message_id()]"),),
)
_PLATFORM: Fix = (
    "never logs in to the food platform before ordering",
    (
        (
            "[add_food_delivery_order(",
            "[login_food_platform(username='Helen', "
            "password='password321'), add_food_delivery_order(",
        ),
    ),
)
_LATEST = (("get_earliest_message_id", "get_latest_message_id"), ("message_id=3", "message_id=4"))
_OLDEST: Fix = (
    "deletes the earliest message; the question and the end state delete the most "
    "recent one (id 4)",
    _LATEST,
)
MILESTONE_ERRATA: dict[str, Fix] = {
    "agent_multi_step_0": _PIZZA,
    "agent_multi_step_1": _PIZZA,
    "agent_multi_step_8": _DEVICE_LATE,
    "agent_multi_step_9": _DEVICE_LATE,
    "agent_multi_step_12": _PLATFORM,
    "agent_multi_step_13": _PLATFORM,
    "agent_multi_step_14": _OLDEST,
    "agent_multi_step_15": _OLDEST,
    "agent_multi_step_16": (
        f"{_OLDEST[0]}; {_DEVICE}",
        (*_LATEST, ("[view_reminder_by_title(", "[login_device(), view_reminder_by_title(")),
    ),
    "agent_multi_step_17": _OLDEST,
    "agent_multi_turn_6": (
        _DEVICE,
        (("[view_messages_between_users(", "[login_device(), view_messages_between_users("),),
    ),
}
"""entry id -> (what is wrong, substring replacements applied to every milestone string).

The `process` metric compares milestones as text, as the data gives them (as upstream);
these fixes only make each path reach the ground-truth end state when replayed, which is how
the apps are checked against the data (tests/evals/test_acebench.py)."""
