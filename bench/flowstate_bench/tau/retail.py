"""The retail domain, behaving as the original τ³ environment does, call for call.

The API checks only what the original's checks: ids exist, the order is in the right
status, items are in the order, new items exist and are available, gift cards cover what
they pay. What the policy leaves to the agent executes: an address or payment change after
an item change, a return of no items, an exchange for the very same item. Those are the
agent's failures, which the benchmark's database comparison catches.

The original has a bug kept here by default: in `modify_pending_order_items` with several
items, every changed item takes the price and options of the LAST new item. The option
`EnvOptions(fix_multi_item_modify=True)` (`--fix-multi-item-modify`) gives each its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from flowstate_bench.tau.env import Environment, ToolError
from flowstate_bench.tau.records import OrderPayment, UserAddress, dump

CancelReason = Literal["no longer needed", "ordered by mistake"]
CANCEL_REASONS = frozenset({"no longer needed", "ordered by mistake"})


@dataclass(frozen=True)
class SwapRules:
    """Where the original's modification and exchange of items differ: the status, the
    wording, whether a swap for the same id is refused, whether the difference is rounded."""

    status: str
    wrong_status: str
    missing: str  # with {item_id}
    lengths_differ: str
    short_gift_card: str
    distinct: bool
    rounded: bool


MODIFY = SwapRules(
    status="pending",
    wrong_status="Non-pending order cannot be modified",
    missing="{item_id} not found",
    lengths_differ="The number of items to be exchanged should match",
    short_gift_card="Insufficient gift card balance to pay for the new item",
    distinct=True,
    rounded=False,
)
EXCHANGE = SwapRules(
    status="delivered",
    wrong_status="Non-delivered order cannot be exchanged",
    missing="Number of {item_id} not found.",
    lengths_differ="The number of items to be exchanged should match.",
    short_gift_card="Insufficient gift card balance to pay for the price difference",
    distinct=False,
    rounded=True,
)


class RetailEnv(Environment):
    domain = "retail"
    TOOLKIT = "RetailTools"
    TOOLS = (
        "calculate",
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "find_user_id_by_name_zip",
        "find_user_id_by_email",
        "get_order_details",
        "get_product_details",
        "get_item_details",
        "get_user_details",
        "list_all_product_types",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
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
        for user_id, user in self.db["users"].items():
            if user["email"].lower() == email.lower():
                return user_id
        raise ToolError("User not found")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """The user id of the user with this first name, last name and address zip code. By
        default find the user by email; use this only when the email is not known."""
        for user_id, user in self.db["users"].items():
            if (
                user["name"]["first_name"].lower() == first_name.lower()
                and user["name"]["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip
            ):
                return user_id
        raise ToolError("User not found")

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
        if product_id not in self.db["products"]:
            raise ToolError("Product not found")
        return self.db["products"][product_id]

    def get_item_details(self, item_id: str) -> dict[str, Any]:
        """One variant item by item id: options, availability, price."""
        for product in self.db["products"].values():
            if item_id in product["variants"]:
                return product["variants"][item_id]
        raise ToolError("Item not found")

    def list_all_product_types(self) -> str:
        """Every product type's name and product id (50 types), sorted by name."""
        names = {p["name"]: p["product_id"] for p in self.db["products"].values()}
        return json.dumps(names, sort_keys=True)

    # -- pending orders ---------------------------------------------------------------------

    def cancel_pending_order(self, order_id: str, reason: CancelReason) -> dict[str, Any]:
        """Cancel a pending order. Refunds go to the original payment methods (gift cards at
        once, others in 5 to 7 business days)."""
        if self._order(order_id)["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ToolError("Invalid reason")
        order = self.edit("orders", order_id)
        refunds = []
        for payment in order["payment_history"]:
            method_id = payment["payment_method_id"]
            refund = OrderPayment(
                transaction_type="refund", amount=payment["amount"], payment_method_id=method_id
            )
            refunds.append(dump(refund))
            self._move_gift_card(order["user_id"], method_id, payment["amount"])
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
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
        if "pending" not in self._order(order_id)["status"]:
            raise ToolError("Non-pending order cannot be modified")
        address = _address(address1, address2, city, state, country, zip)
        order = self.edit("orders", order_id)
        order["address"] = address
        return order

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict:
        """Pay a pending order with another single method from the profile; the original one
        is refunded (a gift card at once). A gift card must cover the whole total."""
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        method = self._method(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        old_id = history[0]["payment_method_id"]
        if old_id == payment_method_id:
            raise ToolError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if method["source"] == "gift_card" and method["balance"] < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")
        order = self.edit("orders", order_id)
        order["payment_history"].extend(
            [
                dump(
                    OrderPayment(
                        transaction_type="payment",
                        amount=amount,
                        payment_method_id=payment_method_id,
                    )
                ),
                dump(
                    OrderPayment(transaction_type="refund", amount=amount, payment_method_id=old_id)
                ),
            ]
        )
        self._move_gift_card(order["user_id"], payment_method_id, -amount)
        self._move_gift_card(order["user_id"], old_id, amount)
        return order

    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Change items of a pending order to other available options of the same products,
        ALL in this one call (it can be made once per order). The price difference is paid or
        refunded with a method from the profile."""
        order, difference, variants = self._priced_swaps(
            MODIFY, order_id, item_ids, new_item_ids, payment_method_id
        )
        payment = OrderPayment(
            transaction_type="payment" if difference > 0 else "refund",
            amount=abs(difference),
            payment_method_id=payment_method_id,
        )
        order["payment_history"].append(dump(payment))
        self._move_gift_card(order["user_id"], payment_method_id, -difference)
        for k, (item_id, new_item_id) in enumerate(zip(item_ids, new_item_ids, strict=False)):
            item = self._first_item(order, item_id)
            # The original's bug, kept by default: every item takes the LAST new variant.
            variant = variants[k] if self.options.fix_multi_item_modify else variants[-1]
            item["item_id"] = new_item_id
            item["price"] = variant["price"]
            item["options"] = dict(variant["options"])
        order["status"] = "pending (item modified)"
        return order

    # -- delivered orders -------------------------------------------------------------------

    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Request the return of items of a delivered order. The refund goes to the original
        payment method or to a gift card of the user."""
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        method = self._method(order["user_id"], payment_method_id)
        original = order["payment_history"][0]["payment_method_id"]
        if method["source"] != "gift_card" and payment_method_id != original:
            raise ToolError("Payment method should be the original payment method")
        self._check_items(order, item_ids, "Some item not found")
        order = self.edit("orders", order_id)
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
        order, difference, _ = self._priced_swaps(
            EXCHANGE, order_id, item_ids, new_item_ids, payment_method_id
        )
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
        self._user(user_id)
        address = _address(address1, address2, city, state, country, zip)
        user = self.edit("users", user_id)
        user["address"] = address
        return user

    # -- helpers ----------------------------------------------------------------------------

    def _user(self, user_id: str) -> dict[str, Any]:
        if user_id not in self.db["users"]:
            raise ToolError("User not found")
        return self.db["users"][user_id]

    def _order(self, order_id: str) -> dict[str, Any]:
        if order_id not in self.db["orders"]:
            raise ToolError("Order not found")
        return self.db["orders"][order_id]

    def _method(self, user_id: str, payment_method_id: str) -> dict[str, Any]:
        methods = self._user(user_id)["payment_methods"]
        if payment_method_id not in methods:
            raise ToolError("Payment method not found")
        return methods[payment_method_id]

    def _move_gift_card(self, user_id: str, payment_method_id: str, amount: Any) -> None:
        """Add `amount` (negative: take it) to the method's balance when it is a gift card,
        rounded to cents; other methods carry no balance here."""
        if self._method(user_id, payment_method_id)["source"] != "gift_card":
            return
        method = self.edit("users", user_id)["payment_methods"][payment_method_id]
        method["balance"] = round(method["balance"] + amount, 2)

    @staticmethod
    def _check_items(order: dict[str, Any], item_ids: list[str], problem: str) -> None:
        """Every id asked for is in the order at least as many times as it is asked for."""
        in_order = [i["item_id"] for i in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > in_order.count(item_id):
                raise ToolError(problem.format(item_id=item_id))

    def _priced_swaps(
        self,
        rules: SwapRules,
        order_id: str,
        item_ids: list[str],
        new_item_ids: list[str],
        payment_method_id: str,
    ) -> tuple[dict[str, Any], Any, list[dict[str, Any]]]:
        """The checks a modification or an exchange makes, in the original's order; then the
        order (this environment's copy), the price difference and the new variants."""
        order = self._order(order_id)
        if order["status"] != rules.status:
            raise ToolError(rules.wrong_status)
        self._check_items(order, item_ids, rules.missing)
        if len(item_ids) != len(new_item_ids):
            raise ToolError(rules.lengths_differ)
        difference, variants = self._swaps(order, item_ids, new_item_ids, rules.distinct)
        if rules.rounded:
            difference = round(difference, 2)
        method = self._method(order["user_id"], payment_method_id)
        if method["source"] == "gift_card" and method["balance"] < difference:
            raise ToolError(rules.short_gift_card)
        return self.edit("orders", order_id), difference, variants

    def _swaps(
        self, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str], distinct: bool
    ) -> tuple[Any, list[dict[str, Any]]]:
        """The price difference of swapping each item (its first entry in the order) for its
        new variant, and those variants; `distinct`: a swap for the same id is refused."""
        difference: Any = 0
        variants = []
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            if distinct and item_id == new_item_id:
                raise ToolError("The new item id should be different from the old item id")
            item = self._first_item(order, item_id)
            product = self.db["products"].get(item["product_id"])
            if product is None:
                raise ToolError("Product not found")
            if new_item_id not in product["variants"]:
                raise ToolError("Variant not found")
            variant = product["variants"][new_item_id]
            if not variant["available"]:
                raise ToolError(f"New item {new_item_id} not found or available")
            difference += variant["price"] - item["price"]
            variants.append(variant)
        return difference, variants

    @staticmethod
    def _first_item(order: dict[str, Any], item_id: str) -> dict[str, Any]:
        item = next((i for i in order["items"] if i["item_id"] == item_id), None)
        if item is None:
            raise ToolError(f"Item {item_id} not found")
        return item


def _address(
    address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, Any]:
    return dump(
        UserAddress(
            address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
        )
    )
