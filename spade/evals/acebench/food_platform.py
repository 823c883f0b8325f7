"""`FoodPlatform`: a takeout platform with six user accounts (balances), six merchants and
their menus. Logging in needs Wi-Fi; ordering needs a logged-in platform user (not Wi-Fi,
as upstream)."""

from __future__ import annotations

from typing import Any

from spade.evals.acebench.base_api import BaseApi, Result, fail

MERCHANTS: dict[str, dict[str, float]] = {
    "Domino's": {"Margherita Pizza": 68.0, "Super Supreme Pizza": 88.0},
    "Rice Village Bibimbap": {"Stone Pot Bibimbap": 35.0, "Korean Beef Bibimbap": 45.0},
    "Haidilao": {"Beef Rolls": 68.0, "Seafood Platter": 88.0},
    "Heytea": {"Cheese Milk Tea": 25.0, "Four Seasons Spring Milk Tea": 22.0},
    "Hema Fresh": {"Organic Vegetable Pack": 15.0, "Fresh Gift Pack": 99.0},
    "Jiutian BBQ": {"Korean Grilled Beef": 128.0, "Grilled Pork Belly": 78.0},
}


def _seed_users() -> dict[str, dict[str, Any]]:
    return {
        "Eve": {"user_id": "U100", "password": "password123", "balance": 500.0},
        "Frank": {"user_id": "U101", "password": "password456", "balance": 300.0},
        "Grace": {"user_id": "U102", "password": "password789", "balance": 150.0},
        "Helen": {"user_id": "U103", "password": "password321", "balance": 800.0},
        "Isaac": {"user_id": "U104", "password": "password654", "balance": 400.0},
        "Jack": {"user_id": "U105", "password": "password654", "balance": 120.0},
    }


class FoodPlatform:
    name = "FoodPlatform"
    api = ("login_food_platform", "check_balance", "add_food_delivery_order", "get_products")
    saved = ("users", "logged_in_users", "orders")

    def __init__(self, device: BaseApi) -> None:
        self.device = device
        self.users = _seed_users()
        self.logged_in_users: list[str] = []
        self.orders: list[dict[str, Any]] = []

    def login_food_platform(self, username: str, password: str) -> Result:
        if not self.device.wifi:
            return fail("Wi-Fi is not enabled, unable to login")
        if username not in self.users:
            return fail("User does not exist")
        if self.users[username]["password"] != password:
            return fail("Incorrect password")
        if username in self.logged_in_users:
            return fail(f"{username} is already logged in")
        self.logged_in_users.append(username)
        return {"status": True, "message": f"User {username} has successfully logged in!"}

    def check_balance(self, user_name: str) -> float:
        # Upstream answers 0.0 for an unknown user.
        return float(self.users[user_name]["balance"]) if user_name in self.users else 0.0

    def add_food_delivery_order(
        self, username: str, merchant_name: str, items: list[dict[str, Any]]
    ) -> Result:
        if username not in self.logged_in_users:
            return fail(f"User {username} is not logged in to the food platform")
        if merchant_name not in MERCHANTS:
            return fail("Merchant does not exist")
        menu = MERCHANTS[merchant_name]
        total = 0.0
        ordered = []
        for item in items:
            product, quantity = item.get("product"), item.get("quantity", 1)
            if not isinstance(quantity, int) or quantity <= 0:
                return fail(f"Invalid quantity {quantity} for product {product}")
            if product not in menu:
                return fail(f"Product {product} does not exist in {merchant_name}'s menu")
            total += menu[product] * quantity
            ordered.append(
                {"product": product, "quantity": quantity, "price_per_unit": menu[product]}
            )
        if total > self.users[username]["balance"]:
            return fail("Insufficient balance to place the order")
        self.users[username]["balance"] -= total
        self.orders.append(
            {
                "user_name": username,
                "merchant_name": merchant_name,
                "items": ordered,
                "total_price": total,
            }
        )
        return {
            "status": True,
            "message": f"Food delivery order successfully placed with {merchant_name}. "
            f"Total amount: {total} yuan",
        }

    def get_products(self, merchant_name: str) -> list[dict[str, Any]] | Result:
        if merchant_name not in MERCHANTS:
            return fail(f"Merchant '{merchant_name}' does not exist")
        return [{"product": p, "price": price} for p, price in MERCHANTS[merchant_name].items()]
