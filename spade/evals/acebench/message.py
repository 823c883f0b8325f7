"""`MessageApi`: text messages between six users, an inbox of capacity six.

The six seeded messages are the ones every ground-truth end state keeps (ids 1-6, dated);
a sent message gets the next id and, as upstream, no `time` field: the ground truth's sent
messages have none, and `get_latest_message_id`/`get_earliest_message_id` then fail on it
(a KeyError, returned to the model as an execution error, as upstream's harness does).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from datetime import datetime
from typing import Any

from spade.evals.acebench.base_api import BaseApi, Result, fail

USER_IDS = {
    "Eve": "USR100",
    "Frank": "USR101",
    "Grace": "USR102",
    "Helen": "USR103",
    "Isaac": "USR104",
    "Jack": "USR105",
}
MAX_MESSAGES = 6


def _seed_inbox() -> dict[int, dict[str, Any]]:
    return {
        1: {
            "sender_id": "USR100",
            "receiver_id": "USR101",
            "message": (
                "Hey Frank, don't forget about our meeting on 2024-06-11 at 4 PM in "
                "Conference Room 1."
            ),
            "time": "2024-06-09",
        },
        2: {
            "sender_id": "USR101",
            "receiver_id": "USR102",
            "message": (
                'Can you help me order a "Margherita Pizza" delivery? The merchant is Domino\'s.'
            ),
            "time": "2024-03-09",
        },
        3: {
            "sender_id": "USR102",
            "receiver_id": "USR103",
            "message": (
                "Please check the milk tea delivery options available from Heytea and "
                "purchase a cheaper milk tea for me. After making the purchase, remember "
                'to reply to me with "Already bought."'
            ),
            "time": "2023-12-05",
        },
        4: {
            "sender_id": "USR103",
            "receiver_id": "USR102",
            "message": "No problem Helen, I can assist you.",
            "time": "2024-09-09",
        },
        5: {
            "sender_id": "USR104",
            "receiver_id": "USR105",
            "message": "Isaac, are you available for a call?",
            "time": "2024-06-06",
        },
        6: {
            "sender_id": "USR105",
            "receiver_id": "USR104",
            "message": "Yes Jack, let's do it in 30 minutes.",
            "time": "2024-01-15",
        },
    }


class MessageApi:
    name = "MessageApi"
    api = (
        "send_message",
        "delete_message",
        "view_messages_between_users",
        "search_messages",
        "get_latest_message_id",
        "get_earliest_message_id",
    )
    saved = ("inbox",)

    def __init__(self, device: BaseApi) -> None:
        self.device = device
        self.inbox = _seed_inbox()
        self.last_id = max(self.inbox)

    def send_message(self, sender_name: str, receiver_name: str, message: str) -> Result:
        if not self.device.logged_in:
            return fail("Device not logged in, unable to send message")
        if not self.device.wifi:
            return fail("Wi-Fi is turned off, cannot send messages at this time")
        if len(self.inbox) >= MAX_MESSAGES:
            return fail("Inbox capacity is full. You need to ask the user which message to delete.")
        if sender_name not in USER_IDS or receiver_name not in USER_IDS:
            return fail("Sender or receiver does not exist")
        self.last_id += 1
        self.inbox[self.last_id] = {
            "sender_id": USER_IDS[sender_name],
            "receiver_id": USER_IDS[receiver_name],
            "message": message,
        }
        return {"status": True, "message": f"Message successfully sent to {receiver_name}."}

    def delete_message(self, message_id: int) -> Result:
        if not self.device.logged_in:
            return fail("Device not logged in, unable to delete message")
        if message_id not in self.inbox:
            return fail("Message ID does not exist")
        del self.inbox[message_id]
        return {
            "status": True,
            "message": f"Message ID {message_id} has been successfully deleted.",
        }

    def view_messages_between_users(self, sender_name: str, receiver_name: str) -> Result:
        if not self.device.logged_in:
            return fail("Device not logged in, unable to view message information")
        if sender_name not in USER_IDS:
            return fail("Sender does not exist")
        if receiver_name not in USER_IDS:
            return fail("Receiver does not exist")
        found = [
            {
                "id": msg_id,
                "sender": sender_name,
                "receiver": receiver_name,
                "message": msg["message"],
            }
            for msg_id, msg in self.inbox.items()
            if msg["sender_id"] == USER_IDS[sender_name]
            and msg["receiver_id"] == USER_IDS[receiver_name]
        ]
        if not found:
            return fail("No related message records found")
        return {"status": True, "messages": found}

    def search_messages(self, user_name: str, keyword: str) -> Result:
        # Upstream does not require a logged-in device here; kept so.
        if user_name not in USER_IDS:
            return fail("User does not exist")
        user_id = USER_IDS[user_name]
        found = [
            {"id": msg_id, **{k: msg[k] for k in ("sender_id", "receiver_id", "message")}}
            for msg_id, msg in self.inbox.items()
            if user_id in (msg["sender_id"], msg["receiver_id"])
            and keyword.lower() in msg["message"].lower()
        ]
        if not found:
            return fail("No messages found containing the keyword")
        return {"status": True, "messages": found}

    def get_latest_message_id(self) -> Result:
        return self._by_time("latest", operator.gt)

    def get_earliest_message_id(self) -> Result:
        return self._by_time("earliest", operator.lt)

    def _by_time(self, which: str, later: Callable[[datetime, datetime], bool]) -> Result:
        if not self.device.logged_in:
            return fail(f"Device not logged in, unable to retrieve the {which} sent message ID.")
        if not self.inbox:
            return fail("No message records found")
        chosen, chosen_time = None, None
        for msg_id, msg in self.inbox.items():
            # KeyError for a sent message (it has no time), as upstream.
            time = datetime.strptime(msg["time"], "%Y-%m-%d")
            if chosen_time is None or later(time, chosen_time):  # ties keep the first id
                chosen, chosen_time = msg_id, time
        return {
            "status": True,
            "message": f"The {which} message ID is {chosen}",
            "message_id": chosen,
        }
