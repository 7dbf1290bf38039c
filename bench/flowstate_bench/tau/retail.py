"""The retail domain, written from its policy.md: users, orders and products.

The API enforces what the policy states as facts of the system (order status, same product for
an exchange, available items, gift card balances, refund targets); authenticating the user
and getting an explicit "yes" remain the agent's job.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from flowstate_bench.tau.env import Environment, ToolError

CancelReason = Literal["no longer needed", "ordered by mistake"]


class RetailEnv(Environment):
    domain = "retail"
    TOOLS = (
        "find_user_id_by_email",
        "find_user_id_by_name_zip",
        "get_user_details",
        "get_order_details",
        "get_product_details",
        "get_item_details",
        "list_all_product_types",
        "cancel_pending_order",
        "modify_pending_order_address",
        "modify_pending_order_payment",
        "modify_pending_order_items",
        "return_delivered_order_items",
        "exchange_delivered_order_items",
        "modify_user_address",
        "calculate",
        "transfer_to_human_agents",
    )
    WRITE_TOOLS = frozenset(
        {
            "cancel_pending_order",
            "modify_pending_order_address",
            "modify_pending_order_payment",
            "modify_pending_order_items",
            "return_delivered_order_items",
            "exchange_delivered_order_items",
            "modify_user_address",
        }
    )

    # -- look-ups ---------------------------------------------------------------------------

    def find_user_id_by_email(self, email: str) -> str:
        """The user id of the user with this email address."""
        for user in self.db["users"].values():
            if user["email"].lower() == email.strip().lower():
                return user["user_id"]
        raise ToolError(f"no user with email {email}")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """The user id of the user with this first name, last name and address zip code."""
        wanted = (first_name.strip().lower(), last_name.strip().lower(), zip.strip())
        for user in self.db["users"].values():
            name = user["name"]
            found = (name["first_name"].lower(), name["last_name"].lower(), user["address"]["zip"])
            if found == wanted:
                return user["user_id"]
        raise ToolError(f"no user {first_name} {last_name} with zip code {zip}")

    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """A user's profile: name, email, default address, payment methods (gift card balances
        included) and order ids."""
        return self._user(user_id)

    def get_order_details(self, order_id: str) -> dict[str, Any]:
        """An order (id like "#W0000000"): items, status, address, fulfilments, payments."""
        return self._order(order_id)

    def get_product_details(self, product_id: str) -> dict[str, Any]:
        """A product type and all its variant items: options, availability, price. Product
        ids and item ids are different things."""
        product = self.db["products"].get(product_id)
        if product is None:
            raise ToolError(f"product {product_id} not found")
        return product

    def get_item_details(self, item_id: str) -> dict[str, Any]:
        """One variant item by item id, with the id and name of its product."""
        for product in self.db["products"].values():
            item = product["variants"].get(item_id)
            if item is not None:
                return {**item, "product_id": product["product_id"], "name": product["name"]}
        raise ToolError(f"item {item_id} not found")

    def list_all_product_types(self) -> dict[str, str]:
        """Every product type's name and product id."""
        return dict(sorted((p["name"], p["product_id"]) for p in self.db["products"].values()))

    # -- pending orders ---------------------------------------------------------------------

    def cancel_pending_order(self, order_id: str, reason: CancelReason) -> dict[str, Any]:
        """Cancel a pending order. Refunds go to the original payment methods (gift cards at
        once, others in 5 to 7 business days)."""
        order = self._in_status(order_id, "pending", "cancelled")
        user = self._user(order["user_id"], edit=True)
        for p in [p for p in order["payment_history"] if p["transaction_type"] == "payment"]:
            order["payment_history"].append({**p, "transaction_type": "refund"})
            self._credit_gift_card(user, p["payment_method_id"], p["amount"])
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        return order

    def modify_pending_order_address(
        self,
        order_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> dict[str, Any]:
        """Change the shipping address of a pending order."""
        order = self._in_status(order_id, "pending", "modified")
        order["address"] = _address(address1, address2, city, state, country, zip)
        return order

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict:
        """Pay a pending order with another single method from the profile; the original one
        is refunded (a gift card at once). A gift card must cover the whole total."""
        order = self._in_status(order_id, "pending", "modified")
        payments = [p for p in order["payment_history"] if p["transaction_type"] == "payment"]
        if len(payments) != 1:
            raise ToolError("only an order paid with a single method can change its payment")
        old = payments[0]
        if old["payment_method_id"] == payment_method_id:
            raise ToolError("the new payment method must differ from the original one")
        user = self._user(order["user_id"], edit=True)
        self._debit(user, payment_method_id, old["amount"])
        self._credit_gift_card(user, old["payment_method_id"], old["amount"])
        order["payment_history"] += [
            {**old, "payment_method_id": payment_method_id},
            {**old, "transaction_type": "refund"},
        ]
        return order

    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Change items of a pending order to other available options of the same products,
        ALL in this one call (it can be made once per order). The price difference is paid or
        refunded with a method from the profile."""
        order = self._in_status(order_id, "pending", "modified")
        changes = self._swaps(order, item_ids, new_item_ids)
        user = self._user(order["user_id"], edit=True)
        difference = round(sum(new["price"] - old["price"] for old, new in changes), 2)
        self._debit(user, payment_method_id, difference)
        if difference:
            kind = "payment" if difference > 0 else "refund"
            order["payment_history"].append(
                {
                    "transaction_type": kind,
                    "amount": abs(difference),
                    "payment_method_id": payment_method_id,
                }
            )
        for old, new in changes:
            old.update(item_id=new["item_id"], price=new["price"], options=dict(new["options"]))
        order["status"] = "pending (item modified)"
        return order

    # -- delivered orders -------------------------------------------------------------------

    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Request the return of items of a delivered order. The refund goes to the original
        payment method or to a gift card of the user."""
        order = self._in_status(order_id, "delivered", "returned")
        self._order_items(order, item_ids)
        user = self._user(order["user_id"])
        method = self._method(user, payment_method_id)
        original = order["payment_history"][0]["payment_method_id"]
        if payment_method_id != original and method["source"] != "gift_card":
            raise ToolError("a refund goes to the original payment method or a gift card")
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return order

    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Exchange items of a delivered order for other available options of the same
        products, ALL in this one call. The price difference is paid or refunded with a method
        from the profile."""
        order = self._in_status(order_id, "delivered", "exchanged")
        changes = self._swaps(order, item_ids, new_item_ids)
        difference = round(sum(new["price"] - old["price"] for old, new in changes), 2)
        user = self._user(order["user_id"])
        method = self._method(user, payment_method_id)
        if method["source"] == "gift_card" and difference > method["balance"]:
            raise ToolError(f"gift card {payment_method_id} cannot cover {difference}")
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = difference
        return order

    def modify_user_address(
        self,
        user_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> dict[str, Any]:
        """Change a user's default address."""
        user = self._user(user_id, edit=True)
        user["address"] = _address(address1, address2, city, state, country, zip)
        return user

    # -- helpers ----------------------------------------------------------------------------

    # `edit=True` hands out the environment's own copy of a record, to be changed.

    def _user(self, user_id: str, edit: bool = False) -> dict[str, Any]:
        if user_id not in self.db["users"]:
            raise ToolError(f"user {user_id} not found")
        return self.edit("users", user_id) if edit else self.db["users"][user_id]

    def _order(self, order_id: str) -> dict[str, Any]:
        order = self.db["orders"].get(order_id)
        if order is None:
            raise ToolError(f"order {order_id} not found")
        return order

    def _in_status(self, order_id: str, status: str, verb: str) -> dict[str, Any]:
        """The order, for a write: it must be in `status`; the copy returned may be changed."""
        order = self._order(order_id)
        if order["status"] != status:
            raise ToolError(
                f"order {order_id} is {order['status']}; only a {status} order can be {verb}"
            )
        return self.edit("orders", order_id)

    def _order_items(self, order: dict[str, Any], item_ids: list[str]) -> list[dict[str, Any]]:
        """The order's item entries for `item_ids`, each entry used at most once."""
        if not item_ids:
            raise ToolError("no items given")
        if Counter(item_ids) - Counter(i["item_id"] for i in order["items"]):
            raise ToolError(f"not all of {item_ids} are items of order {order['order_id']}")
        free = list(order["items"])
        picked = []
        for item_id in item_ids:
            entry = next(i for i in free if i["item_id"] == item_id)
            free.remove(entry)
            picked.append(entry)
        return picked

    def _swaps(
        self, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        if len(item_ids) != len(new_item_ids):
            raise ToolError("item_ids and new_item_ids must have the same length")
        pairs = []
        for old, new_id in zip(self._order_items(order, item_ids), new_item_ids, strict=True):
            product = self.db["products"][old["product_id"]]
            new = product["variants"].get(new_id)
            if new is None:
                raise ToolError(f"item {new_id} is not a variant of {product['name']}")
            if new_id == old["item_id"]:
                raise ToolError(f"item {new_id} is the same option as the ordered one")
            if not new["available"]:
                raise ToolError(f"item {new_id} is not available")
            pairs.append((old, new))
        return pairs

    def _method(self, user: dict[str, Any], payment_method_id: str) -> dict[str, Any]:
        method = user["payment_methods"].get(payment_method_id)
        if method is None:
            raise ToolError(f"payment method {payment_method_id} is not in the user's profile")
        return method

    def _debit(self, user: dict[str, Any], payment_method_id: str, amount: float) -> None:
        """Charge `amount` (refund when negative); only gift cards carry a balance here."""
        method = self._method(user, payment_method_id)
        if method["source"] != "gift_card":
            return
        if amount > method["balance"] + 1e-9:
            raise ToolError(f"gift card {payment_method_id} has only {method['balance']} left")
        method["balance"] = round(method["balance"] - amount, 2)

    def _credit_gift_card(
        self, user: dict[str, Any], payment_method_id: str, amount: float
    ) -> None:
        method = user["payment_methods"].get(payment_method_id)
        if method is not None and method["source"] == "gift_card":
            method["balance"] = round(method["balance"] + amount, 2)


def _address(
    address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, str]:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "country": country,
        "state": state,
        "zip": zip,
    }
