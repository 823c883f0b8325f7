"""`Travel`: an airline desk with three users, eleven flights and four seeded reservations.

Fees follow upstream: ticket price by cabin plus 50 yuan per bag beyond the free allowance
(by membership and cabin). Where upstream raises on a bad request (wrong password, unknown
flight or cabin) the state is left unchanged and an error is returned, so the end state is
the same. Its rules are kept even where they look odd: a cabin change is priced on the
reservation's *old* flight, and a modification applies even when the fee cannot be paid;
a cancellation refunds to cash and keeps the reservation.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from spade.evals.acebench.base_api import Result

ECONOMY, BUSINESS = "Economy Class", "Business Class"
FREE_BAGS = {
    "regular": {ECONOMY: 1, BUSINESS: 2},
    "silver": {ECONOMY: 2, BUSINESS: 3},
    "gold": {ECONOMY: 3, BUSINESS: 3},
}
BAG_FEE = 50
NOW = datetime(2024, 7, 14, 6, 0)
"""The clock cancellation rules are computed against (upstream's fixed value)."""
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
AIRLINE_CANCELED = "The airline has canceled the flight."
_FLIGHTS = [
    # flight_no, origin, destination, depart, arrive, seats, economy, business
    ("CA1234", "Beijing", "Shanghai", "2024-07-15 08:00", "2024-07-15 10:30", 5, 1200, 3000),
    ("MU5678", "Shanghai", "Beijing", "2024-07-16 09:00", "2024-07-16 11:30", 3, 1900, 3000),
    ("CZ4321", "Shanghai", "Beijing", "2024-07-16 20:00", "2024-07-16 22:00", 8, 2500, 4000),
    ("CZ4352", "Shanghai", "Beijing", "2024-07-17 20:00", "2024-07-17 22:00", 8, 1600, 2500),
    ("MU3561", "Beijing", "Nanjing", "2024-07-18 08:00", "2024-07-18 10:00", 8, 1500, 4000),
    ("MU1566", "Beijing", "Nanjing", "2024-07-18 20:00", "2024-07-18 22:00", 8, 1500, 4000),
    ("CZ1765", "Nanjing", "Shenzhen", "2024-07-17 20:30", "2024-07-17 22:00", 8, 1500, 2500),
    ("CZ1765", "Nanjing", "Shenzhen", "2024-07-18 12:30", "2024-07-18 15:00", 8, 1500, 2500),
    ("MH1765", "Xiamen", "Chengdu", "2024-07-17 12:30", "2024-07-17 15:00", 8, 1500, 2500),
    ("MH2616", "Chengdu", "Xiamen", "2024-07-18 18:30", "2024-07-18 21:00", 8, 1500, 2500),
    ("MH2616", "Chengdu", "Fuzhou", "2024-07-16 18:30", "2024-07-16 21:00", 8, 1500, 2500),
]


def _seed_flights() -> list[dict[str, Any]]:
    return [
        {
            "flight_no": no,
            "origin": origin,
            "destination": destination,
            "depart_time": f"{depart}:00",
            "arrival_time": f"{arrive}:00",
            "status": "available",
            "seats_available": seats,
            "economy_price": economy,
            "business_price": business,
        }
        for no, origin, destination, depart, arrive, seats, economy, business in _FLIGHTS
    ]


def _seed_users() -> dict[str, dict[str, Any]]:
    return {
        "user1": {
            "user_name": "Eve",
            "password": "password123",
            "cash_balance": 2000.0,
            "bank_balance": 50000.0,
            "membership_level": "regular",
        },
        "user2": {
            "user_name": "Frank",
            "password": "password456",
            "cash_balance": 8000.0,
            "bank_balance": 8000.0,
            "membership_level": "silver",
        },
        "user3": {
            "user_name": "Grace",
            "password": "password789",
            "cash_balance": 1000.0,
            "bank_balance": 5000.0,
            "membership_level": "gold",
        },
    }


def _seed_reservations() -> list[dict[str, Any]]:
    # res_4's flight "MU2616" is in no flight list upstream either (its lookups find nothing).
    seeded = [
        ("res_1", "user1", "CA1234", ECONOMY, "Beijing", "Shanghai"),
        ("res_2", "user1", "MU5678", BUSINESS, "Shanghai", "Beijing"),
        ("res_3", "user2", "MH1765", BUSINESS, "Xiamen", "Chengdu"),
        ("res_4", "user2", "MU2616", BUSINESS, "Chengdu", "Xiamen"),
    ]
    return [
        {
            "reservation_id": rid,
            "user_id": uid,
            "flight_no": no,
            "payment_method": "bank",
            "cabin": cabin,
            "baggage": 1,
            "origin": origin,
            "destination": destination,
        }
        for rid, uid, no, cabin, origin, destination in seeded
    ]


class Travel:
    name = "Travel"
    api = (
        "get_user_details",
        "get_flight_details",
        "get_reservation_details",
        "find_transfer_flights",
        "reserve_flight",
        "cancel_reservation",
        "modify_flight",
    )
    saved = ("users", "reservations")

    def __init__(self) -> None:
        self.users = _seed_users()
        self.flights = _seed_flights()
        self.reservations = _seed_reservations()

    # -- queries -------------------------------------------------------------------------------
    def get_user_details(self, user_id: str, password: str) -> Result:
        user = self.users.get(user_id)
        if user is None or user["password"] != password:
            return {"status": "error", "message": "Incorrect username or password."}
        return {key: value for key, value in user.items() if key != "password"}

    def get_flight_details(
        self, origin: str | None = None, destination: str | None = None
    ) -> list[dict[str, Any]] | str:
        found = [
            f
            for f in self.flights
            if (not origin or f["origin"] == origin)
            and (not destination or f["destination"] == destination)
        ]
        if not found:
            return "There are no direct flights that meet the criteria."
        return [dict(f) for f in found]

    def get_reservation_details(
        self, reservation_id: str | None = None, user_id: str | None = None
    ) -> list[dict[str, Any]] | Result:
        if reservation_id:
            chosen = [r for r in self.reservations if r["reservation_id"] == reservation_id]
        elif user_id:
            chosen = [r for r in self.reservations if r["user_id"] == user_id]
        else:
            return {
                "status": "error",
                "message": "Please provide a valid reservation ID or user ID",
            }
        return [{**r, "flight_info": self._flight(r["flight_no"])} for r in chosen]

    def find_transfer_flights(
        self, origin_city: str, transfer_city: str, destination_city: str
    ) -> list[dict[str, Any]] | str:
        first = [
            f
            for f in self.flights
            if f["origin"] == origin_city
            and f["destination"] == transfer_city
            and f["status"] == "available"
        ]
        second = [
            f
            for f in self.flights
            if f["origin"] == transfer_city
            and f["destination"] == destination_city
            and f["status"] == "available"
        ]
        pairs = [
            {"first_leg": a, "second_leg": b}
            for a in first
            for b in second
            if _time(a["arrival_time"]) < _time(b["depart_time"])
        ]
        return pairs or "No connecting flights that meet the criteria were found."

    # -- changes -------------------------------------------------------------------------------
    def reserve_flight(
        self,
        user_id: str,
        password: str,
        flight_no: str,
        cabin: str,
        payment_method: str,
        baggage_count: int,
    ) -> str:
        user = self.users.get(user_id)
        if user is None or user["password"] != password:
            return "Authentication failed. Please check your user ID and password."
        flight = next(
            (f for f in self.flights if f["flight_no"] == flight_no and f["status"] == "available"),
            None,
        )
        if flight is None:
            return f"Flight {flight_no} is not available."
        if cabin not in (ECONOMY, BUSINESS):
            return f"Unknown cabin {cabin!r}: use {ECONOMY!r} or {BUSINESS!r}."
        price = flight["economy_price"] if cabin == ECONOMY else flight["business_price"]
        total = price + _bag_fee(user["membership_level"], cabin, baggage_count)
        if payment_method not in ("cash", "bank"):
            return "Invalid payment method"
        balance = f"{payment_method}_balance"
        if total > user[balance]:
            return (
                f"Your {payment_method} balance is insufficient. "
                "Please consider using another payment method."
            )
        user[balance] -= total
        flight["seats_available"] -= 1
        reservation_id = f"res_{len(self.reservations) + 1}"
        self.reservations.append(
            {
                "reservation_id": reservation_id,
                "user_id": user_id,
                "flight_no": flight_no,
                "payment_method": payment_method,
                "cabin": cabin,
                "baggage": baggage_count,
            }
        )
        return (
            f"Booking successful. Reservation ID: {reservation_id}. "
            f"Total cost: {total} yuan (including baggage fees)."
        )

    def modify_flight(
        self,
        user_id: str,
        reservation_id: str,
        new_flight_no: str | None = None,
        new_cabin: str | None = None,
        add_baggage: int = 0,
        new_payment_method: str | None = None,
    ) -> str:
        reservation = self._reservation(user_id, reservation_id)
        if reservation is None:
            return "Reservation not found or user ID does not match."
        current = self._flight(reservation["flight_no"])
        if current is None:
            return "Flight information not found."
        payment = new_payment_method or reservation["payment_method"]
        user = self.users[user_id]
        notes = []
        if new_flight_no and new_flight_no != reservation["flight_no"]:
            new = self._flight(new_flight_no)
            route = (current["origin"], current["destination"])
            if new is None or (new["origin"], new["destination"]) != route:
                return "Flight change failed: Invalid new flight number or route does not match."
            reservation["flight_no"] = new_flight_no
            notes.append("Flight number has been changed.")
        if new_cabin and new_cabin != reservation["cabin"]:
            prices = {ECONOMY: current["economy_price"], BUSINESS: current["business_price"]}
            difference = prices.get(new_cabin, 0) - prices.get(reservation["cabin"], 0)
            reservation["cabin"] = new_cabin  # changed even when the difference is unpaid
            if difference > 0:
                notes.append(
                    f"Cabin change successful. Price difference paid: {difference}."
                    if _pay(user, payment, difference)
                    else "Insufficient balance to pay the cabin price difference."
                )
            elif difference < 0:
                _pay(user, payment, difference)
                notes.append(f"Cabin change successful. Price difference refunded: {-difference}.")
        if add_baggage > 0:
            total = reservation.get("baggage", 0) + add_baggage
            free = FREE_BAGS.get(user["membership_level"], {}).get(reservation["cabin"], 0)
            cost = max(0, total - free) * BAG_FEE
            if cost > 0:
                notes.append(
                    f"Baggage has been added. Additional fee to be paid: {cost}."
                    if _pay(user, payment, cost)
                    else "Insufficient balance to pay the additional baggage fees."
                )
            reservation["baggage"] = total
        return " ".join(notes) or "Modification completed with no additional fees."

    def cancel_reservation(self, user_id: str, reservation_id: str, reason: str) -> str:
        user = self.users.get(user_id)
        if user is None:
            return "Invalid user ID."
        reservation = self._reservation(user_id, reservation_id)
        if reservation is None:
            return "Invalid reservation ID or it does not belong to the user."
        flight = self._flight(reservation["flight_no"])
        if flight is None:
            return "Invalid flight information."
        depart = _time(flight["depart_time"])
        if depart < NOW:
            return "The flight segment has been used and cannot be canceled."
        price = flight["economy_price" if reservation["cabin"] == ECONOMY else "business_price"]
        if reason == AIRLINE_CANCELED:
            user["cash_balance"] += price
            return (
                f"The flight has been canceled. Your reservation will be canceled free of "
                f"charge, and {price} yuan has been refunded."
            )
        if depart - NOW > timedelta(days=1):
            user["cash_balance"] += price
            return (
                f"More than 24 hours before departure. Free cancellation successful, "
                f"{price} yuan has been refunded."
            )
        fee = price * 0.1
        user["cash_balance"] += price - fee
        return (
            f"Less than 24 hours before departure. A cancellation fee of {fee} yuan has "
            f"been deducted, and {price - fee} yuan has been refunded."
        )

    # -- lookups ------------------------------------------------------------------------------
    def _flight(self, flight_no: str) -> dict[str, Any] | None:
        return next((f for f in self.flights if f["flight_no"] == flight_no), None)

    def _reservation(self, user_id: str, reservation_id: str) -> dict[str, Any] | None:
        return next(
            (
                r
                for r in self.reservations
                if r["reservation_id"] == reservation_id and r["user_id"] == user_id
            ),
            None,
        )


def _time(text: str) -> datetime:
    return datetime.strptime(text, TIME_FORMAT)


def _bag_fee(membership: str, cabin: str, bags: int) -> int:
    return max(bags - FREE_BAGS[membership][cabin], 0) * BAG_FEE


def _pay(user: dict[str, Any], method: str, amount: float) -> bool:
    """Charge `amount` (a refund when negative); False, changing nothing, if it cannot be paid.
    An unknown method charges nothing and succeeds, as upstream."""
    if method not in ("cash", "bank"):
        return True
    balance = f"{method}_balance"
    if user[balance] - amount < 0:
        return False
    user[balance] -= amount
    return True
