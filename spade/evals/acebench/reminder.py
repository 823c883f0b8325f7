"""`ReminderApi`: reminders of capacity six, three seeded (the third is the "To-do list" task
that some entries ask the agent to carry out)."""

from __future__ import annotations

from typing import Any

from spade.evals.acebench.base_api import BaseApi, Result, fail

MAX_REMINDERS = 6
TODO_LIST = (
    'First, help Frank place a food delivery order at "Hema Fresh," ordering two "Fresh Gift '
    'Packs." Then, send a message to Frank saying, "The price of the purchased goods is () '
    'yuan." Replace the parentheses with the actual amount, keeping one decimal place.'
)


def _seed_reminders() -> dict[int, dict[str, Any]]:
    # Keys and the seeded `reminder_id`s differ (1 vs 1001) upstream; added reminders get
    # the next key as their id. The ground truth depends on both.
    return {
        1: {
            "reminder_id": 1001,
            "title": "Doctor's Appointment",
            "description": "Visit Dr. Smith for a checkup.",
            "time": "2024-07-15 09:30",
            "notified": False,
        },
        2: {
            "reminder_id": 1002,
            "title": "Team Meeting",
            "description": "Monthly project review with the team.",
            "time": "2024-07-17 11:00",
            "notified": False,
        },
        3: {
            "reminder_id": 1003,
            "title": "To-do list",
            "description": TODO_LIST,
            "time": "2024-07-16 11:00",
            "notified": False,
        },
    }


class ReminderApi:
    name = "ReminderApi"
    api = ("view_reminder_by_title", "add_reminder", "search_reminders")
    saved = ("reminder_list",)

    def __init__(self, device: BaseApi) -> None:
        self.device = device
        self.reminder_list = _seed_reminders()
        self.last_id = max(self.reminder_list)

    def view_reminder_by_title(self, title: str) -> Result:
        if not self.device.logged_in:
            return fail("The device is not logged in, so you cannot view notifications")
        for reminder in self.reminder_list.values():
            if reminder["title"] == title:
                return {"status": True, "reminder": reminder}
        return fail(f"No reminder found with the title '{title}'.")

    def add_reminder(self, title: str, description: str, time: str) -> Result:
        if not self.device.logged_in:
            return fail("Device not logged in. Unable to add a new reminder.")
        if len(self.reminder_list) >= MAX_REMINDERS:
            return fail("Reminder capacity is full. Unable to add a new reminder.")
        self.last_id += 1
        self.reminder_list[self.last_id] = {
            "reminder_id": self.last_id,
            "title": title,
            "description": description,
            "time": time,
            "notified": False,
        }
        return {"status": True, "message": f"Reminder '{title}' was successfully added."}

    def search_reminders(self, keyword: str) -> Result:
        # In the data's schemas but not in upstream's class (a call there is an execution
        # error); written from the schema: case-insensitive match in title or description.
        if not self.device.logged_in:
            return fail("The device is not logged in, so you cannot view notifications")
        needle = keyword.lower()
        found = [
            reminder
            for reminder in self.reminder_list.values()
            if needle in reminder["title"].lower() or needle in reminder["description"].lower()
        ]
        if not found:
            return fail(f"No reminders found containing '{keyword}'.")
        return {"status": True, "reminders": found}
